#!/usr/bin/env bash
# Finishes the distribution the assembly plugin laid out in TARGET/tiffin-VERSION/tiffin-VERSION, then packs
# it again as TARGET/tiffin-VERSION.tar.gz:
#   conf/completion/tiffin.bash, tiffin.zsh  shell completion, generated from the CLI (picocli AutoComplete)
#   lib/*.jar                                class files older than Java 6 rewritten with stack maps
#                                            (UpgradeOldClassFiles.java), so that the cache below can hold them
#   lib/tiffin-cli.aot (+ .jdk)              the one-shot commands' ahead-of-time cache: a standalone from this
#                                            tree, and `tiffin aot-training` against it under -XX:AOTCacheOutput
# Usage: finish-dist.sh TARGET VERSION JAVA_HOME. Run by the distribution module's package phase, after the
# assembly; JAVA_HOME is the JDK that runs the build (25).
set -euo pipefail
target=$1 version=$2 java_home=$3
home="$target/tiffin-$version/tiffin-$version"
tiffin="$home/bin/tiffin"
[ -x "$tiffin" ] || { echo "finish-dist: no $tiffin; the assembly runs first" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/tiffin-finish.XXXXXX")
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# ------------------------------------------------------------------ completion
mkdir -p "$home/conf/completion"
TIFFIN_AOT_CACHE=off "$tiffin" generate-completion > "$home/conf/completion/tiffin.bash"
grep -q "complete -F _complete_tiffin" "$home/conf/completion/tiffin.bash"
cat > "$home/conf/completion/tiffin.zsh" <<'ZSH'
# zsh completion for tiffin: the bash completion through zsh's bashcompinit.
# Use: source <tiffin home>/conf/completion/tiffin.zsh (e.g. in ~/.zshrc).
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
source "${${(%):-%x}:A:h}/tiffin.bash"
ZSH
echo "finish-dist: conf/completion/tiffin.bash and tiffin.zsh"

# ------------------------------------------------------------------ old class files
"$java_home/bin/java" "$(dirname "$0")/UpgradeOldClassFiles.java" "$home/lib" | sed 's/^/finish-dist: lib\//'

# ------------------------------------------------------------------ ahead-of-time cache
# The master and node on ports the kernel picks; the address is read from the standalone's output.
TIFFIN_LOG_DIR="$work/logs" "$tiffin" standalone --port 0 --admin-port 0 --redis-port 0 --segment-size 64MiB \
  > "$work/standalone.out" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  grep -q "^Ready" "$work/standalone.out" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1 # polls the standalone's output
done
master=$(sed -n 's/^Ready. Try: tiffin put --master \([^ ]*\) .*/\1/p' "$work/standalone.out" | head -n 1)
if [ -z "$master" ] || ! grep -q "^Ready" "$work/standalone.out"; then
  echo "finish-dist: the training standalone did not start:" >&2; cat "$work/standalone.out" >&2; exit 1
fi
rm -f "$home/lib/tiffin-cli.aot" "$home/lib/tiffin-cli.aot.jdk"
TIFFIN_AOT_CACHE_OUTPUT="$work/tiffin-cli.aot" "$tiffin" aot-training --master "$master" \
  > "$work/training.out" 2>&1 || { cat "$work/training.out" >&2; exit 1; }
[ -s "$work/tiffin-cli.aot" ] || { echo "finish-dist: no cache written" >&2; cat "$work/training.out" >&2; exit 1; }
# the JDK build it fits (java.runtime.version of the training JVM), as bin/tiffin compares it
sed -n 's/^aot-training: .* on JDK \(.*\)$/\1/p' "$work/training.out" > "$home/lib/tiffin-cli.aot.jdk"
[ -s "$home/lib/tiffin-cli.aot.jdk" ] || { echo "finish-dist: training named no JDK" >&2; cat "$work/training.out" >&2; exit 1; }
mv "$work/tiffin-cli.aot" "$home/lib/tiffin-cli.aot"
echo "finish-dist: lib/tiffin-cli.aot ($(du -h "$home/lib/tiffin-cli.aot" | cut -f1), JDK $(cat "$home/lib/tiffin-cli.aot.jdk"))"

# ------------------------------------------------------------------ the tarball again, with the new files
tar -czf "$target/tiffin-$version.tar.gz.tmp" -C "$target/tiffin-$version" "tiffin-$version"
mv "$target/tiffin-$version.tar.gz.tmp" "$target/tiffin-$version.tar.gz"
echo "finish-dist: $target/tiffin-$version.tar.gz"
