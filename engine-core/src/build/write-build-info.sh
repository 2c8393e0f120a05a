#!/usr/bin/env bash
# Writes build-info.properties (version, git commit, build time) for `tiffin --version`.
# Usage: write-build-info.sh OUTPUT_FILE VERSION. Outside a git work tree (a source tarball) the commit is
# "unknown"; TIFFIN_GIT_COMMIT overrides it (e.g. a packager that knows it).
set -euo pipefail
out=$1 version=$2
commit="${TIFFIN_GIT_COMMIT:-}"
if [ -z "$commit" ] && command -v git >/dev/null 2>&1 && git -C "$(dirname "$0")" rev-parse --git-dir >/dev/null 2>&1; then
  commit=$(git -C "$(dirname "$0")" rev-parse --short=12 HEAD 2>/dev/null || true)
  if [ -n "$commit" ] && ! git -C "$(dirname "$0")" diff --quiet HEAD -- 2>/dev/null; then commit="$commit-dirty"; fi
fi
mkdir -p "$(dirname "$out")"
printf 'version=%s\ncommit=%s\ntime=%s\n' "$version" "${commit:-unknown}" "$(date -u +%Y-%m-%dT%H:%MZ)" > "$out"
