#!/usr/bin/env bash
# End-to-end smoke test of the Tiffin distribution: unpacks tiffin-*.tar.gz into a temporary directory,
# starts `bin/tiffin standalone` on free ports, drives it with the client commands, checks the admin
# HTTP endpoints and stops it. Prints one line per check and a final `smoke: N passed, M failed`;
# exits non-zero if any check failed.
#
# Usage: smoke.sh [TARGET_DIR]   (default: the distribution module's target/, next to src/)
# Run by `./mvnw verify` in the integration-test phase of the distribution module (skipped with -DskipTests).
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
target="${1:-$here/../../target}"
tarball=$(ls "$target"/tiffin-*.tar.gz 2>/dev/null | head -n 1)
if [ -z "$tarball" ]; then
  echo "smoke: no tiffin-*.tar.gz in $target; build it first with ./mvnw -DskipTests package" >&2
  echo "smoke: 0 passed, 1 failed"
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/tiffin-smoke.XXXXXX")
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "smoke: PASS $1"; }
fail() {
  failed=$((failed + 1)); echo "smoke: FAIL $1"
  if [ $# -gt 1 ]; then echo "$2" | sed 's/^/    /'; fi
}

# A TCP port nobody listens on (a connect to it is refused).
free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  echo "smoke: no free port found" >&2; return 1
}

# HTTP GET with curl, or plain bash when curl is missing; prints the body.
http_get() {
  local host=$1 port=$2 path=$3
  if command -v curl >/dev/null 2>&1; then
    curl -sf --max-time 10 "http://$host:$port$path"
  else
    exec 4<>"/dev/tcp/$host/$port" || return 1
    printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$path" "$host" >&4
    sed '1,/^\r$/d' <&4
    exec 4<&-
  fi
}

tar -xzf "$tarball" -C "$work"
home=$(ls -d "$work"/tiffin-*/ | head -n 1)
tiffin="${home%/}/bin/tiffin"
port=$(free_port) || exit 1
admin=$(free_port) || exit 1
master="127.0.0.1:$port"
echo "smoke: $tarball unpacked in $work; master $master, admin port $admin"

# ---------------------------------------------------------------------------------- start
# With the SSD tier on (the bucket backend is loaded from plugins/bucket-storage, RocksDB included):
# every completed put is also written to SSD. The segment is a shared-memory file (in the work
# directory here, /dev/shm in production) that the client commands below map.
mkdir -p "$work/shm"
"$tiffin" standalone --port "$port" --admin-port "$admin" --segment-size 64MiB \
  -D node.storage-backend=bucket -D node.storage-path="$work/ssd" -D offload.mode=write-through \
  -D node.shared-memory-dir="$work/shm" \
  >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
for _ in $(seq 1 300); do
  grep -q '^Ready\.' "$work/server.out" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if grep -q '^Ready\.' "$work/server.out" && grep -q "^Tiffin master listening on $master" "$work/server.out" \
    && grep -q '^Tiffin node .* segment .* (64.0 MiB) on ' "$work/server.out"; then
  pass "standalone started: $(head -n 1 "$work/server.out")"
else
  fail "standalone did not print its listeners and Ready within 30 s" \
    "$(cat "$work/server.out" "$work/server.err" 2>/dev/null | tail -n 20)"
  echo "smoke: $passed passed, $failed failed"
  exit 1
fi

shm_file=$(ls "$work/shm" 2>/dev/null)
# 64 MiB of segment, then one page holding the segment's mount epoch
if [ -n "$shm_file" ] && [ "$(stat -c '%a %s' "$work/shm/$shm_file")" = "600 67112960" ]; then
  pass "the segment is a private shared-memory file ($shm_file)"
else fail "shared-memory segment file" "$(ls -l "$work/shm" 2>&1)"; fi

# ---------------------------------------------------------------------------------- put / get
head -c 200000 /dev/urandom >"$work/data.bin"
out=$("$tiffin" put --master "$master" --replicas 1 smoke/file "$work/data.bin" 2>&1); rc=$?
if [ $rc -eq 0 ] && [ "$out" = "OK put smoke/file (200000 bytes)" ]; then pass "put FILE"
else fail "put FILE (exit $rc)" "$out"; fi

out=$("$tiffin" get --master "$master" smoke/file "$work/back.bin" 2>&1); rc=$?
if [ $rc -eq 0 ] && cmp -s "$work/data.bin" "$work/back.bin"; then pass "get FILE returns the same bytes"
else fail "get FILE (exit $rc)" "$out"; fi

printf 'hello, tiffin\n' | "$tiffin" put --master "$master" smoke/stdin - >"$work/put2.out" 2>&1; rc=$?
"$tiffin" get --master "$master" smoke/stdin >"$work/stdin.back" 2>"$work/get2.err"; rc2=$?
if [ $rc -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(cat "$work/stdin.back")" = "hello, tiffin" ]; then
  pass "put - (stdin) and get to stdout"
else fail "put -/get stdout (exit $rc, $rc2)" "$(cat "$work/put2.out" "$work/get2.err")"; fi

# ---------------------------------------------------------------------------------- ls / stat
out=$("$tiffin" ls --master "$master" smoke/ 2>&1); rc=$?
expected=$(printf 'smoke/file\t200000\nsmoke/stdin\t14')
if [ $rc -eq 0 ] && [ "$out" = "$expected" ]; then pass "ls PREFIX"
else fail "ls PREFIX (exit $rc)" "$out"; fi

out=$("$tiffin" stat --master "$master" 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q '^Keys: *2$' && echo "$out" | grep -q -- '-seg0-[0-9a-f]* .*64.0 MiB'; then
  pass "stat shows the segment and 2 keys"
else fail "stat (exit $rc)" "$out"; fi

# ---------------------------------------------------------------------------------- errors, rm
out=$("$tiffin" get --master "$master" smoke/missing 2>&1 >/dev/null); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q '^error: OBJECT_NOT_FOUND: ' && echo "$out" | grep -q '^hint: '; then
  pass "get of a missing key exits 1 with OBJECT_NOT_FOUND and a hint"
else fail "get of a missing key (exit $rc)" "$out"; fi

out=$("$tiffin" put --master "$master" --replicas abc smoke/x - </dev/null 2>&1); rc=$?
if [ $rc -eq 2 ] && echo "$out" | grep -q "^error: INVALID_PARAMS: .*--replicas"; then
  pass "a wrongly typed flag is a usage error (exit 2)"
else fail "usage error (exit $rc)" "$out"; fi

# A get takes a read lease (10 s): a plain rm right after it must refuse, --force must remove.
"$tiffin" get --master "$master" smoke/file >/dev/null 2>&1
out=$("$tiffin" rm --master "$master" smoke/file 2>&1); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -q '^error: OBJECT_HAS_LEASE: .*--force'; then
  pass "rm of a key read just now exits 1 with OBJECT_HAS_LEASE"
else fail "rm of a leased key (exit $rc)" "$out"; fi

out=$("$tiffin" rm --master "$master" --force smoke/file 2>&1); rc=$?
out2=$("$tiffin" get --master "$master" smoke/file 2>&1 >/dev/null); rc2=$?
if [ $rc -eq 0 ] && [ "$out" = "OK removed smoke/file" ] && [ $rc2 -eq 1 ] && echo "$out2" | grep -q OBJECT_NOT_FOUND; then
  pass "rm --force, then get fails with OBJECT_NOT_FOUND"
else fail "rm --force (exit $rc, then get exit $rc2)" "$out
$out2"; fi

# ---------------------------------------------------------------------------------- admin HTTP
out=$(http_get 127.0.0.1 "$admin" /health 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q '"status":"ok"'; then pass "GET /health"
else fail "GET /health (exit $rc)" "$out"; fi

out=$(http_get 127.0.0.1 "$admin" /metrics 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q '^tiffin_master_requests_total'; then pass "GET /metrics has tiffin_master_requests_total"
else fail "GET /metrics (exit $rc)" "$(echo "$out" | head -n 20)"; fi

offloads=$(echo "$out" | sed -n 's/^tiffin_master_offloads_total \([0-9.E]*\)$/\1/p')
if [ -n "$offloads" ] && [ "${offloads%%.*}" -ge 1 ] 2>/dev/null && [ -d "$work/ssd/buckets" ]; then
  pass "write-through copied puts to the SSD tier (tiffin_master_offloads_total $offloads)"
else fail "SSD tier offload (offloads_total '$offloads')" "$(ls -R "$work/ssd" 2>&1 | head; tail -n 20 "$work/server.err")"; fi

# ---------------------------------------------------------------------------------- stop
kill -TERM "$server_pid"
for _ in $(seq 1 150); do
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$server_pid" 2>/dev/null; then
  fail "standalone still running 15 s after SIGTERM" "$(tail -n 20 "$work/server.err")"
elif [ "$(tail -n 1 "$work/server.out")" = "Stopped." ] && [ -z "$(ls "$work/shm")" ]; then
  pass "SIGTERM stops the standalone, which prints Stopped. and deletes its shared-memory file"
else
  fail "standalone did not print Stopped." "$(cat "$work/server.out"; tail -n 20 "$work/server.err")"
fi
server_pid=""

echo "smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
