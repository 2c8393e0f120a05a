#!/usr/bin/env bash
# End-to-end smoke test of the Tiffin distribution: unpacks tiffin-*.tar.gz into a temporary directory,
# checks how the launcher finds Java, its logging configuration and log directory, starts
# `bin/tiffin standalone` on free ports, drives it with the client commands and over RESP (its Redis
# gateway on --redis-port, with bash's /dev/tcp and redis-cli), checks the admin HTTP endpoints and stops
# it (SIGTERM), kills a node of an SSD tier with SIGKILL and restarts it beside its running master, stops it with
# SIGTERM and removes one of its objects while it is away, kills leaders
# and a node of two masters on `tiffin coordinator`, then runs `bin/tiffin master` with an unwritable log directory
# and stops it with SIGINT. Prints one line per check and a final `smoke: N passed, M failed`; exits
# non-zero if any check failed.
#
# Usage: smoke.sh [TARGET_DIR]   (default: the distribution module's target/, next to src/)
# Run by `./mvnw verify` in the integration-test phase of the distribution module (skipped with -DskipTests).
set -uo pipefail
# A pipe into `grep -q` may fail a check under pipefail: grep exits at the first match and bash's echo, which
# writes a line per call, then dies of SIGPIPE on the next line (seen once in a loaded `verify`). Pipes end in
# `grep >/dev/null`, which reads all its input.

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
master_pid=""
node_pid=""
zk_pid=""
m2_pid=""
cleanup() {
  local p
  for p in "$server_pid" "$master_pid" "$node_pid" "$zk_pid" "$m2_pid"; do
    if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then kill -KILL "$p" 2>/dev/null; fi
  done
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
    # below the kernel's ephemeral range (32768+ by default), where outgoing connections take their local
    # ports: a port seen free there can be taken by a client socket before the server binds it
    p=$((20000 + RANDOM % 12000))
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

# The Java feature version of a java binary (e.g. 25), empty if it does not run.
java_major() {
  local v
  v=$("$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  echo "${v%%.*}"
}

# True if $1 is exactly the two lines `tiffin --version` prints: the version, then the build and its commit.
is_version() {
  [ "$(printf '%s\n' "$1" | wc -l)" -eq 2 ] && [[ "$(printf '%s\n' "$1" | head -n 1)" =~ ^Tiffin\ [^[:space:]]+$ ]] \
    && [[ "$(printf '%s\n' "$1" | sed -n 2p)" =~ ^build\ [^[:space:]]+,\ commit\ ([0-9a-f]{12}(-dirty)?|unknown)(,\ built\ .*)?$ ]]
}

# Waits up to 30 s until file $2 has a line matching $3 or process $1 has ended.
wait_for_line() {
  for _ in $(seq 1 300); do
    grep -q "$3" "$2" 2>/dev/null && return 0
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  grep -q "$3" "$2" 2>/dev/null
}

# Sends signal $2 to process $1 (a child of this shell) and waits up to 15 s for it to end; sets
# stop_rc to its exit code (empty if it still runs).
stop_and_wait() {
  kill "-$2" "$1"
  for _ in $(seq 1 150); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  stop_rc=""
  if ! kill -0 "$1" 2>/dev/null; then wait "$1"; stop_rc=$?; fi
}

tar -xzf "$tarball" -C "$work"
home=$(ls -d "$work"/tiffin-*/ | head -n 1)
tiffin="${home%/}/bin/tiffin"
port=$(free_port) || exit 1
admin=$(free_port) || exit 1
rport=$(free_port) || exit 1
master="127.0.0.1:$port"
echo "smoke: $tarball unpacked in $work; master $master, admin port $admin"

# Error hints name docs/CONFIGURATION.md: it ships with the tarball.
if [ -f "${home%/}/docs/CONFIGURATION.md" ] && [ -f "${home%/}/docs/PLUGINS.md" ] && [ -f "${home%/}/README.md" ]; then
  pass "the tarball carries README.md and docs/ (CONFIGURATION.md, PLUGINS.md)"
else fail "the tarball lacks README.md or docs/" "$(ls "$home" "$home/docs" 2>&1)"; fi

# any user may run an installation unpacked by another (root in /opt, a service user running it): every file of the
# tarball is readable by all, bin/tiffin executable by all
unreadable=$(tar -tvzf "$tarball" | awk '$1 !~ /^d/ && substr($1, 8, 1) != "r" {print $1, $NF}')
if [ -z "$unreadable" ] && tar -tvzf "$tarball" | awk '$NF ~ /\/bin\/tiffin$/ {print $1}' | grep >/dev/null '^-rwx.-x.-x'; then
  pass "every file of the tarball is readable by all users, bin/tiffin executable by all"
else fail "files of the tarball other users cannot read" "$unreadable"; fi

# ---------------------------------------------------------------------------------- operator files
comp="${home%/}/conf/completion"
if grep -q 'complete -F _complete_tiffin' "$comp/tiffin.bash" 2>/dev/null && grep -q 'bench' "$comp/tiffin.bash" \
    && grep -q 'stat' "$comp/tiffin.bash" && grep -q 'bashcompinit' "$comp/tiffin.zsh" 2>/dev/null \
    && bash -c "source '$comp/tiffin.bash' && complete -p tiffin" >/dev/null 2>&1; then
  pass "conf/completion/tiffin.bash (every command, bench too; loads in bash) and tiffin.zsh"
else fail "shell completion in conf/completion" "$(ls -l "$comp" 2>&1)"; fi

# the one-shot commands use the ahead-of-time cache built with the tarball (when this JDK made it)
out=$(TIFFIN_OPTS="-Xlog:aot=info:stderr" "$tiffin" --version 2>&1 >/dev/null); rc=$?
if [ -f "${home%/}/lib/tiffin-cli.aot" ] && [ $rc -eq 0 ] && echo "$out" | grep >/dev/null "Opened AOT cache"; then
  pass "client commands run with lib/tiffin-cli.aot (built for JDK $(cat "${home%/}/lib/tiffin-cli.aot.jdk"))"
else fail "the AOT cache is not used (exit $rc)" "$(echo "$out" | grep -i aot | head -n 5)"; fi

# the command-line parser (picocli, class files of Java 5) comes from that cache too: the build rewrote its class
# files with stack maps, which the cache requires (distribution/src/build/UpgradeOldClassFiles.java)
TIFFIN_OPTS="-Xlog:class+load=info:file=$work/classes.log" "$tiffin" --version >/dev/null 2>&1
if grep -q "picocli.CommandLine source: shared objects file" "$work/classes.log" 2>/dev/null; then
  pass "picocli's classes come from lib/tiffin-cli.aot"
else fail "picocli is loaded from its jar, not from the AOT cache" "$(grep -m 3 'picocli' "$work/classes.log" 2>&1)"; fi

# a cache that does not fit this JDK: the first one-shot command makes one per user, the next uses it
stamp="${home%/}/lib/tiffin-cli.aot.jdk"
cp "$stamp" "$work/stamp.bak" && echo "another-jdk-build" > "$stamp"
out=$(XDG_CACHE_HOME="$work/xdg" "$tiffin" --version 2>&1); rc=$?
made=$(ls "$work"/xdg/tiffin/cli-*/tiffin-cli.aot 2>/dev/null | head -n 1)
out2=$(XDG_CACHE_HOME="$work/xdg" TIFFIN_OPTS="-Xlog:aot=info:stderr" "$tiffin" --version 2>&1 >/dev/null); rc2=$?
cp "$work/stamp.bak" "$stamp"
if [ $rc -eq 0 ] && echo "$out" | grep >/dev/null "creating the start-up cache" && [ -n "$made" ] \
    && [ $rc2 -eq 0 ] && echo "$out2" | grep >/dev/null "Opened AOT cache $made"; then
  pass "with a cache for another JDK, the first command makes one per user ($made) and the next uses it"
else fail "the per-user start-up cache (exit $rc, $rc2)" "$out
$(echo "$out2" | grep -i aot | head -n 5)"; fi

# ---------------------------------------------------------------------------------- finding java
# A JDK 25 to put on the PATH: the one running this test (JAVA_HOME or PATH), else one in /usr/lib/jvm.
jdk25=""
for j in "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java || true)" /usr/lib/jvm/*25*/bin/java; do
  if [ -n "$j" ] && [ -x "$j" ] && [ "$(java_major "$j")" -ge 25 ] 2>/dev/null; then jdk25=$(readlink -f "$j"); break; fi
done
if [ -n "$jdk25" ]; then
  mkdir -p "$work/java25-bin" && ln -s "$jdk25" "$work/java25-bin/java"
  out=$(JAVA_HOME="$work/nonexistent" PATH="$work/java25-bin:$PATH" "$tiffin" --version 2>"$work/err"); rc=$?
  if [ $rc -eq 0 ] && is_version "$out" && [ "$(wc -l <"$work/err")" -eq 1 ] \
      && grep -q "JAVA_HOME=$work/nonexistent" "$work/err"; then
    pass "an invalid JAVA_HOME is reported in one line and java on the PATH is used"
  else fail "invalid JAVA_HOME with a JDK 25 on the PATH (exit $rc)" "$out$(cat "$work/err")"; fi
else
  echo "smoke: SKIP invalid JAVA_HOME with a JDK 25 on the PATH (no JDK 25 found to put on the PATH)"
fi

# No java on the PATH at all (a copy of the PATH's commands without java), no JAVA_HOME: the launcher
# must find the JDK 25 in /usr/lib/jvm, if there is one.
usr_lib_jdk25=""
for d in /usr/lib/jvm/temurin-25-jdk-amd64 /usr/lib/jvm/*25*; do
  if [ -x "$d/bin/java" ] && [ "$(java_major "$d/bin/java")" -ge 25 ] 2>/dev/null; then usr_lib_jdk25=$d; break; fi
done
if [ -n "$usr_lib_jdk25" ]; then
  mkdir -p "$work/nojava-bin"
  IFS=: read -ra path_dirs <<<"$PATH"
  for d in "${path_dirs[@]}"; do
    if [ -n "$d" ] && [ -d "$d" ]; then ln -s "$d"/* "$work/nojava-bin/" 2>/dev/null; fi
  done
  rm -f "$work/nojava-bin/java"
  out=$(env -u JAVA_HOME PATH="$work/nojava-bin" "$tiffin" --version 2>&1); rc=$?
  out2=$(JAVA_HOME=/nonexistent PATH="$work/nojava-bin" "$tiffin" --version 2>"$work/err"); rc2=$?
  if [ $rc -eq 0 ] && is_version "$out" && [ $rc2 -eq 0 ] && is_version "$out2" \
      && [ "$(wc -l <"$work/err")" -eq 1 ]; then
    pass "without java on the PATH (JAVA_HOME unset or invalid) the launcher finds $usr_lib_jdk25"
  else fail "no java on the PATH (exit $rc, $rc2)" "$out
$out2
$(cat "$work/err")"; fi
else
  echo "smoke: SKIP no java on the PATH (no JDK 25 in /usr/lib/jvm for the launcher to find)"
fi

# ---------------------------------------------------------------------------------- logging
# A conf dir holding only tiffin.properties: the launcher falls back to the shipped conf/log4j2.xml.
mkdir -p "$work/myconf" && cp "${home%/}/conf/tiffin.properties" "$work/myconf/"
out=$(TIFFIN_CONF_DIR="$work/myconf" "$tiffin" --version 2>"$work/err"); rc=$?
if [ $rc -eq 0 ] && is_version "$out" && [ ! -s "$work/err" ]; then
  pass "TIFFIN_CONF_DIR without log4j2.xml: the shipped log4j2.xml is used (no log4j error)"
else fail "TIFFIN_CONF_DIR without log4j2.xml (exit $rc)" "$out$(head -n 5 "$work/err")"; fi

# A log directory that cannot be created (under a regular file, so even root cannot): CLI commands do
# not need it.
touch "$work/not-a-dir"
out=$(TIFFIN_LOG_DIR="$work/not-a-dir/logs" "$tiffin" --version 2>"$work/err"); rc=$?
if [ $rc -eq 0 ] && is_version "$out" && [ ! -s "$work/err" ]; then
  pass "--version with an unwritable log directory prints only the version"
else fail "--version with an unwritable log directory (exit $rc)" "$out$(head -n 5 "$work/err")"; fi

# A server command when no fallback log directory is writable either: one line, then stderr only.
out=$(TIFFIN_LOG_DIR="$work/not-a-dir/logs" XDG_STATE_HOME="$work/not-a-dir/state" TMPDIR="$work/not-a-dir/tmp" \
  "$tiffin" master --port abc 2>&1); rc=$?
if [ $rc -eq 2 ] && [ "$(echo "$out" | head -n 1)" = \
    "tiffin: log directory $work/not-a-dir/logs is not writable; logging to stderr only" ] \
    && echo "$out" | grep >/dev/null '^error: INVALID_PARAMS' && ! echo "$out" | grep >/dev/null 'FileNotFoundException'; then
  pass "a server command without a writable log directory says so in one line and logs to stderr only"
else fail "server command without any writable log directory (exit $rc)" "$(echo "$out" | head -n 10)"; fi

# ---------------------------------------------------------------------------------- start
# With the SSD tier on (the bucket backend is loaded from plugins/bucket-storage, RocksDB included):
# every completed put is also written to SSD. The segment is a shared-memory file (in the work
# directory here, /dev/shm in production) that the client commands below map.
# start_standalone SHM_DIR LOG: on $port, $admin and $rport, its output in $work/LOG.out and .err; sets server_pid.
start_standalone() {
  mkdir -p "$1"
  "$tiffin" standalone --port "$port" --admin-port "$admin" --redis-port "$rport" --segment-size 64MiB \
    --storage-path "$work/ssd" -D offload.mode=write-through \
    -D node.shared-memory-dir="$1" \
    >"$work/$2.out" 2>"$work/$2.err" &
  server_pid=$!
}
start_standalone "$work/shm" server
for _ in $(seq 1 300); do
  grep -q '^Ready\.' "$work/server.out" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if grep -q '^Ready\.' "$work/server.out" && grep -q "^Tiffin master listening on $master" "$work/server.out" \
    && grep -q '^Tiffin node .* segment .* (64.0 MiB) on ' "$work/server.out"; then
  pass "standalone started: $(head -n 1 "$work/server.out")"
  # the launcher's collector for the standalone (docs/OPERATIONS.md, "JVM flags per command")
  jvm_flags=$(tr '\0' ' ' <"/proc/$server_pid/cmdline" 2>/dev/null)
  if [[ "$jvm_flags" == *" -XX:+UseG1GC "* && "$jvm_flags" != *"UseZGC"* ]]; then
    pass "the standalone runs G1, as the launcher chooses for it"
  else
    fail "the standalone's JVM flags do not choose G1" "$jvm_flags"
  fi
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
if [ $rc -eq 0 ] && echo "$out" | grep >/dev/null '^Keys: *2$' && echo "$out" | grep >/dev/null -- '-seg0-[0-9a-f]* .*64.0 MiB'; then
  pass "stat shows the segment and 2 keys"
else fail "stat (exit $rc)" "$out"; fi

# Servers write logs/tiffin.log; client commands only log to stderr and create no log file.
out=$(TIFFIN_LOG_DIR="$work/client-logs" "$tiffin" ls --master "$master" smoke/ 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q "Tiffin master listening on .*$port" "${home%/}/logs/tiffin.log" 2>/dev/null \
    && [ ! -e "$work/client-logs/tiffin.log" ]; then
  pass "the standalone logs to logs/tiffin.log, client commands create no log file"
else fail "log files (ls exit $rc)" "$out$(ls -l "${home%/}/logs" "$work/client-logs" 2>&1)"; fi

# ---------------------------------------------------------------------------------- Redis protocol
# The standalone's RESP gateway (--redis-port), driven with inline commands over bash's /dev/tcp; a value
# set through it is an object the Tiffin client commands read.
resp_out=$( (exec 5<>"/dev/tcp/127.0.0.1/$rport" && printf 'PING\r\nSET smoke/resp via-redis\r\nGET smoke/resp\r\nQUIT\r\n' >&5 \
  && cat <&5) 2>&1 | tr -d '\r'); rc=$?
got=$("$tiffin" get --master "$master" smoke/resp 2>&1)
if grep -q "^Tiffin Redis gateway listening on 127.0.0.1:$rport " "$work/server.out" \
    && [ "$resp_out" = "$(printf '+PONG\n+OK\n$9\nvia-redis\n+OK')" ] && [ "$got" = "via-redis" ]; then
  pass "the standalone serves RESP on --redis-port; a SET through it is a Tiffin object"
else fail "RESP on --redis-port (exit $rc)" "$resp_out
$got"; fi
"$tiffin" rm --master "$master" --force smoke/resp >/dev/null 2>&1

# redis-cli (Debian's redis-tools; .ci/run installs it): a binary value SET through RESP reads back byte for
# byte with `tiffin get`, a value put with `tiffin put` is a GET through RESP, DEL removes it for both.
if command -v redis-cli >/dev/null 2>&1; then
  rcli() { redis-cli -h 127.0.0.1 -p "$rport" "$@" 2>&1; }
  set_out=$(rcli -x SET smoke/resp-bin <"$work/data.bin")
  "$tiffin" get --master "$master" smoke/resp-bin "$work/resp-back.bin" >"$work/resp-get.out" 2>&1; rc=$?
  if [ "$set_out" = "OK" ] && [ $rc -eq 0 ] && cmp -s "$work/data.bin" "$work/resp-back.bin"; then
    pass "redis-cli -x SET of 200000 random bytes; tiffin get returns them"
  else fail "redis-cli SET, tiffin get (exit $rc)" "$set_out$(cat "$work/resp-get.out")"; fi
  get_out=$(rcli GET smoke/stdin); dbsize=$(rcli DBSIZE); strlen=$(rcli STRLEN smoke/resp-bin)
  if [ "$get_out" = "hello, tiffin" ] && [ "$dbsize" = "3" ] && [ "$strlen" = "200000" ]; then
    pass "redis-cli GET of a tiffin put value, DBSIZE, STRLEN"
  else fail "redis-cli GET/DBSIZE/STRLEN" "GET: $get_out; DBSIZE: $dbsize; STRLEN: $strlen"; fi
  del_out=$(rcli DEL smoke/resp-bin smoke/never-set); exists_out=$(rcli -3 EXISTS smoke/resp-bin)
  out=$("$tiffin" get --master "$master" smoke/resp-bin 2>&1 >/dev/null); rc=$?
  if [ "$del_out" = "1" ] && [ "$exists_out" = "0" ] && [ $rc -eq 1 ] && echo "$out" | grep >/dev/null OBJECT_NOT_FOUND; then
    pass "redis-cli DEL removes the object for RESP and for tiffin get"
  else fail "redis-cli DEL (get exit $rc)" "DEL: $del_out; EXISTS: $exists_out; $out"; fi
else
  fail "redis-cli not found: install Debian's redis-tools (.ci/run does when missing)"
fi

# A second standalone on the same --redis-port stops start-up with a message naming the flag.
port2=$(free_port) || exit 1
out=$(timeout 60 "$tiffin" standalone --port "$port2" --admin-port 0 --redis-port "$rport" --segment-size 16MiB 2>&1); rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && echo "$out" | grep >/dev/null "^error: INVALID_PARAMS: --redis-port $rport .*--redis-port"; then
  pass "a --redis-port in use stops start-up naming the flag (exit $rc)"
else fail "standalone on a --redis-port in use (exit $rc)" "$(echo "$out" | tail -n 5)"; fi

# ---------------------------------------------------------------------------------- errors, rm
out=$("$tiffin" get --master "$master" smoke/missing 2>&1 >/dev/null); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep >/dev/null '^error: OBJECT_NOT_FOUND: ' && echo "$out" | grep >/dev/null '^hint: '; then
  pass "get of a missing key exits 1 with OBJECT_NOT_FOUND and a hint"
else fail "get of a missing key (exit $rc)" "$out"; fi

out=$("$tiffin" put --master "$master" --replicas abc smoke/x - </dev/null 2>&1); rc=$?
if [ $rc -eq 2 ] && echo "$out" | grep >/dev/null "^error: INVALID_PARAMS: .*--replicas"; then
  pass "a wrongly typed flag is a usage error (exit 2)"
else fail "usage error (exit $rc)" "$out"; fi

# A get takes a read lease (10 s): a plain rm right after it must refuse, --force must remove.
"$tiffin" get --master "$master" smoke/file >/dev/null 2>&1
out=$("$tiffin" rm --master "$master" smoke/file 2>&1); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep >/dev/null '^error: OBJECT_HAS_LEASE: .*--force'; then
  pass "rm of a key read just now exits 1 with OBJECT_HAS_LEASE"
else fail "rm of a leased key (exit $rc)" "$out"; fi

out=$("$tiffin" rm --master "$master" --force smoke/file 2>&1); rc=$?
out2=$("$tiffin" get --master "$master" smoke/file 2>&1 >/dev/null); rc2=$?
if [ $rc -eq 0 ] && [ "$out" = "OK removed smoke/file" ] && [ $rc2 -eq 1 ] && echo "$out2" | grep >/dev/null OBJECT_NOT_FOUND; then
  pass "rm --force, then get fails with OBJECT_NOT_FOUND"
else fail "rm --force (exit $rc, then get exit $rc2)" "$out
$out2"; fi

# ---------------------------------------------------------------------------------- admin HTTP
out=$(http_get 127.0.0.1 "$admin" /health 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep >/dev/null '"status":"ok"'; then pass "GET /health"
else fail "GET /health (exit $rc)" "$out"; fi

out=$(http_get 127.0.0.1 "$admin" /metrics 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep >/dev/null '^tiffin_master_requests_total'; then pass "GET /metrics has tiffin_master_requests_total"
else fail "GET /metrics (exit $rc)" "$(echo "$out" | head -n 20)"; fi

# every metric the shipped Grafana dashboard queries is in /metrics (engine-core's GrafanaDashboardTest checks
# it against a test cluster; this checks the file in the tarball against the tarball's server)
dash="${home%/}/conf/grafana/tiffin.json"
missing_metrics=""
if [ -f "$dash" ] && python3 -m json.tool "$dash" >/dev/null 2>&1; then
  for m in $(grep -o '"expr": "[^"]*' "$dash" | grep -o 'tiffin_[a-z0-9_]*' | sort -u); do
    echo "$out" | grep >/dev/null "^$m[{ ]" || missing_metrics="$missing_metrics $m"
  done
  if [ -z "$missing_metrics" ]; then pass "conf/grafana/tiffin.json is JSON and queries only exported metrics"
  else fail "the dashboard queries metrics /metrics lacks:$missing_metrics"; fi
else fail "conf/grafana/tiffin.json missing or not JSON" "$(ls "${home%/}/conf" 2>&1)"; fi

status=$(http_get 127.0.0.1 "$admin" /api/status 2>&1); rc=$?
page=$(http_get 127.0.0.1 "$admin" / 2>&1); rc2=$?
if [ $rc -eq 0 ] && echo "$status" | python3 -c 'import json,sys; s=json.load(sys.stdin); assert s["summary"]["nodes"]==1 and s["nodes"][0]["state"]=="live" and s["master"]["role"]=="leader"' 2>/dev/null \
    && [ $rc2 -eq 0 ] && echo "$page" | grep >/dev/null '<title>Tiffin status</title>'; then
  pass "GET /api/status (1 live node, leader) and the status page at /"
else fail "/api/status or / (exit $rc, $rc2)" "$(echo "$status" | head -c 600)"; fi

offloads=$(echo "$out" | sed -n 's/^tiffin_master_offloads_total \([0-9.E]*\)$/\1/p')
if [ -n "$offloads" ] && [ "${offloads%%.*}" -ge 1 ] 2>/dev/null && [ -d "$work/ssd/buckets" ]; then
  pass "write-through copied puts to the SSD tier (tiffin_master_offloads_total $offloads)"
else fail "SSD tier offload (offloads_total '$offloads')" "$(ls -R "$work/ssd" 2>&1 | head; tail -n 20 "$work/server.err")"; fi

# ---------------------------------------------------------------------------------- crash, restart from SSD
# Values set through RESP with a time to live and copied to SSD (write-through) survive a SIGKILL of the standalone:
# a new standalone on the same storage path (a new master that knows nothing) lists them again from the SSD copies,
# with their deadlines (kept on disk with each copy); one whose deadline passed while nothing ran is gone.
shm_dir="$work/shm"
server_log=server
if command -v redis-cli >/dev/null 2>&1; then
  before=${offloads%%.*}
  ttl_set=$(rcli SET smoke/ttl-long kept EX 600; rcli SET smoke/ttl-short gone PX 1500)
  copied=""
  for _ in $(seq 1 100); do
    now=$(http_get 127.0.0.1 "$admin" /metrics 2>/dev/null | sed -n 's/^tiffin_master_offloads_total \([0-9.E]*\)$/\1/p')
    if [ -n "$now" ] && [ "${now%%.*}" -ge $((before + 2)) ] 2>/dev/null; then copied=yes; break; fi
    sleep 0.1
  done
  kill -KILL "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null
  sleep 2 # smoke/ttl-short's 1.5 s pass while nothing runs
  port=$(free_port) || exit 1; admin=$(free_port) || exit 1; rport=$(free_port) || exit 1
  master="127.0.0.1:$port"
  shm_dir="$work/shm2" # the killed process's segment file stays in $work/shm
  server_log=server2
  start_standalone "$shm_dir" "$server_log"
  wait_for_line "$server_pid" "$work/$server_log.out" '^Ready\.' || true
  back=""
  for _ in $(seq 1 100); do
    back=$(rcli GET smoke/ttl-long)
    [ "$back" = "kept" ] && break
    sleep 0.1
  done
  ttl=$(rcli TTL smoke/ttl-long); short=$(rcli EXISTS smoke/ttl-short)
  plain=$("$tiffin" get --master "$master" smoke/stdin 2>&1)
  if [ "$ttl_set" = "$(printf 'OK\nOK')" ] && [ -n "$copied" ] && [ "$back" = "kept" ] \
      && [ "$ttl" -ge 560 ] 2>/dev/null && [ "$ttl" -le 600 ] && [ "$short" = "0" ] && [ "$plain" = "hello, tiffin" ]; then
    pass "after a SIGKILL, a new standalone on the same SSD lists the copies again with their deadlines (TTL $ttl)"
  else fail "restart from SSD after SIGKILL (copied: '$copied')" "SET: $ttl_set; GET: $back; TTL: $ttl; EXISTS short: $short;
get smoke/stdin: $plain
$(tail -n 20 "$work/$server_log.err")"; fi
fi

# ---------------------------------------------------------------------------------- stop
stop_and_wait "$server_pid" TERM; rc=$stop_rc
if [ -z "$rc" ]; then
  fail "standalone still running 15 s after SIGTERM" "$(tail -n 20 "$work/$server_log.err")"
elif [ "$(tail -n 1 "$work/$server_log.out")" = "Stopped." ] && [ -z "$(ls "$shm_dir")" ] && [ "$rc" -eq 0 ]; then
  pass "SIGTERM stops the standalone, which prints Stopped., deletes its shared-memory file and exits 0"
else
  fail "standalone did not stop in order with exit 0 (exit $rc)" \
    "$(cat "$work/$server_log.out"; tail -n 20 "$work/$server_log.err")"
fi
server_pid=""

# ---------------------------------------------------------------------------------- node SIGKILL, restart
# A master and a node with an SSD tier on the flags a user starts with (node.id empty, node.port 0): the node is
# killed with SIGKILL, one of its objects removed while it is down, and the node started again on the same storage
# path while the master runs. It comes back under the id it wrote beside its SSD tier (storage-path/node.id), its
# SSD copies read back from its new port, and the removed object stays gone. (Under a new generated id, the master
# deleted the copies it knew and adopted the removed one's.)
kport=$(free_port) || exit 1
kadmin=$(free_port) || exit 1
"$tiffin" master --port "$kport" --admin-port "$kadmin" -D offload.mode=write-through \
  >"$work/kmaster.out" 2>"$work/kmaster.err" &
master_pid=$!
kmaster="127.0.0.1:$kport"
start_node() {
  "$tiffin" node --master "$kmaster" --segment-size 32MiB --storage-path "$work/node-ssd" \
    >"$work/$1.out" 2>"$work/$1.err" &
  node_pid=$!
  wait_for_line "$node_pid" "$work/$1.out" '^Tiffin node ' || true
}
if wait_for_line "$master_pid" "$work/kmaster.out" "^Tiffin master listening on $kmaster"; then
  start_node node1
  first_id=$(cat "$work/node-ssd/node.id" 2>/dev/null)
  for k in a b c; do
    head -c 200000 /dev/urandom >"$work/value-$k"
    "$tiffin" put --master "$kmaster" "smoke/$k" "$work/value-$k" >/dev/null 2>&1
  done
  for _ in $(seq 1 100); do # write-through: the three copies on SSD
    now=$(http_get 127.0.0.1 "$kadmin" /metrics 2>/dev/null | sed -n 's/^tiffin_master_offloads_total \([0-9.E]*\)$/\1/p')
    [ -n "$now" ] && [ "${now%%.*}" -ge 3 ] 2>/dev/null && break
    sleep 0.1
  done
  kill -KILL "$node_pid" 2>/dev/null; wait "$node_pid" 2>/dev/null
  rm_out=$("$tiffin" rm --master "$kmaster" --force smoke/b 2>&1)
  start_node node2
  got=""
  for k in a c; do
    for _ in $(seq 1 100); do
      "$tiffin" get --master "$kmaster" "smoke/$k" "$work/back-$k" >/dev/null 2>&1 && break
      sleep 0.1
    done
    cmp -s "$work/value-$k" "$work/back-$k" && got="$got$k"
  done
  gone=$("$tiffin" get --master "$kmaster" smoke/b "$work/back-b" 2>&1)
  if [ -n "$first_id" ] && [ "$(cat "$work/node-ssd/node.id")" = "$first_id" ] && [ "$got" = "ac" ] \
      && [[ "$gone" == *OBJECT_NOT_FOUND* ]] && grep -q "Node $first_id re-registered" "$work/node2.out" "$work/node2.err"; then
    pass "a node killed with SIGKILL comes back as $first_id: its SSD objects read back, the one removed meanwhile stays gone"
  else fail "node restart after SIGKILL" "id: '$first_id' then '$(cat "$work/node-ssd/node.id" 2>/dev/null)'; read back: '$got'; rm: $rm_out
get smoke/b: $gone
$(tail -n 5 "$work/node2.out" "$work/node2.err")"; fi
  # the bucket plugin logs through System.Logger: its lines come out through Log4j, as every other line
  if grep -h ' INFO .*BucketStorageBackend - Opened bucket storage' "$work/node2.out" "$work/node2.err" >/dev/null \
      && ! grep -h '^INFO: Opened bucket storage' "$work/node2.out" "$work/node2.err" >/dev/null; then
    pass "a plugin's log lines (System.Logger) come out through Log4j"
  else fail "plugin logging through Log4j" "$(grep -h 'bucket storage' "$work/node2.out" "$work/node2.err")"; fi
  # A graceful stop (SIGTERM unmounts the node): its SSD-only objects read as missing while it is away, the master
  # keeps their keys, and a removal meanwhile reaches the copy when the node returns; the other object comes back.
  kill -TERM "$node_pid" 2>/dev/null; wait "$node_pid" 2>/dev/null; node_pid=""
  away=""
  for _ in $(seq 1 50); do
    away=$(http_get 127.0.0.1 "$kadmin" /metrics 2>/dev/null | sed -n 's/^tiffin_master_ssd_away_copies \([0-9.E]*\)$/\1/p')
    [ "${away%%.*}" = "2" ] && break
    sleep 0.1
  done
  missing=$("$tiffin" get --master "$kmaster" smoke/c "$work/back-c2" 2>&1)
  rm_away=$("$tiffin" rm --master "$kmaster" --force smoke/a 2>&1)
  start_node node3
  rm -f "$work/back-c2"
  for _ in $(seq 1 100); do
    "$tiffin" get --master "$kmaster" smoke/c "$work/back-c2" >/dev/null 2>&1 && break
    sleep 0.1
  done
  gone_a=$("$tiffin" get --master "$kmaster" smoke/a "$work/back-a2" 2>&1)
  if [ "${away%%.*}" = "2" ] && [[ "$missing" == *OBJECT_NOT_FOUND* ]] && cmp -s "$work/value-c" "$work/back-c2" \
      && [[ "$gone_a" == *OBJECT_NOT_FOUND* ]]; then
    pass "a node stopped with SIGTERM: its SSD objects missing meanwhile, one removed then stays gone, the other returns"
  else fail "removal while a node is stopped" "away copies: '$away'; get c while away: $missing; rm a: $rm_away
get a after: $gone_a
$(tail -n 5 "$work/node3.out" "$work/node3.err")"; fi
  kill -TERM "$node_pid" 2>/dev/null; wait "$node_pid" 2>/dev/null; node_pid=""
else
  fail "master for the node restart did not start" "$(tail -n 20 "$work/kmaster.err")"
fi
kill -TERM "$master_pid" 2>/dev/null; wait "$master_pid" 2>/dev/null; master_pid=""

# ---------------------------------------------------------------------------------- failover, SIGKILLs
# Two masters on an embedded ZooKeeper (`tiffin coordinator`) and a node with an SSD tier. The leader is killed
# (SIGKILL) and the other takes over; the node is killed, one object removed while it is down (its FORGET refused:
# the key is listed in the cluster facts before the removal answers), and the new leader killed too before the node
# returns. The node comes back to the first master, restarted: the removed object stays gone, the others read back
# from the node's SSD.
zport=$(free_port) || exit 1; p1=$(free_port) || exit 1; p2=$(free_port) || exit 1
"$tiffin" coordinator --port "$zport" --data-dir "$work/zk" >"$work/zk.out" 2>"$work/zk.err" &
zk_pid=$!
zk="zk://127.0.0.1:$zport"
fmasters="127.0.0.1:$p1,127.0.0.1:$p2"
start_fmaster() { # start_fmaster PORT LOG [ADMIN_PORT]: sets fm_pid
  "$tiffin" master --port "$1" --admin-port "${3:-0}" --coordinator "$zk" -D offload.mode=write-through \
    >"$work/$2.out" 2>"$work/$2.err" &
  fm_pid=$!
  wait_for_line "$fm_pid" "$work/$2.out" "^Tiffin master listening on 127.0.0.1:$1" || true
}
until_ok() { # until_ok SECONDS CMD...: runs CMD every 0.2 s until it succeeds
  local n=$(($1 * 5)); shift
  for _ in $(seq 1 "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  return 1
}
if wait_for_line "$zk_pid" "$work/zk.out" '^Tiffin coordinator'; then
  fadmin=$(free_port) || exit 1
  start_fmaster "$p1" fm1 "$fadmin"; master_pid=$fm_pid
  start_fmaster "$p2" fm2; m2_pid=$fm_pid
  "$tiffin" node --master "$fmasters" --segment-size 32MiB --storage-path "$work/fo-ssd" >"$work/fnode1.out" \
    2>"$work/fnode1.err" &
  node_pid=$!
  wait_for_line "$node_pid" "$work/fnode1.out" '^Tiffin node ' || true
  put_ok=0
  for k in a b c d; do
    head -c 150000 /dev/urandom >"$work/fo-$k"
    until_ok 30 "$tiffin" put --master "$fmasters" "fo/$k" "$work/fo-$k" && put_ok=$((put_ok + 1))
  done
  for _ in $(seq 1 100); do # write-through: the four copies on the node's SSD before the leader dies
    now=$(http_get 127.0.0.1 "$fadmin" /metrics 2>/dev/null | sed -n 's/^tiffin_master_offloads_total \([0-9.E]*\)$/\1/p')
    [ -n "$now" ] && [ "${now%%.*}" -ge 4 ] 2>/dev/null && break
    sleep 0.1
  done
  kill -KILL "$master_pid" 2>/dev/null; wait "$master_pid" 2>/dev/null
  until_ok 40 "$tiffin" get --master "$fmasters" fo/a "$work/fo-a.mid"; after_takeover=$?
  kill -KILL "$node_pid" 2>/dev/null; wait "$node_pid" 2>/dev/null
  until_ok 40 "$tiffin" rm --master "$fmasters" --force fo/b; removed=$?
  start_fmaster "$p1" fm1b; master_pid=$fm_pid
  kill -KILL "$m2_pid" 2>/dev/null; wait "$m2_pid" 2>/dev/null; m2_pid=""
  "$tiffin" node --master "$fmasters" --segment-size 32MiB --storage-path "$work/fo-ssd" >"$work/fnode2.out" \
    2>"$work/fnode2.err" &
  node_pid=$!
  got=""
  for k in a c d; do
    until_ok 60 "$tiffin" get --master "$fmasters" "fo/$k" "$work/fo-$k.back"
    cmp -s "$work/fo-$k" "$work/fo-$k.back" && got="$got$k"
  done
  gone=$("$tiffin" get --master "$fmasters" fo/b "$work/fo-b.back" 2>&1)
  if [ "$put_ok" = 4 ] && [ "$after_takeover" = 0 ] && [ "$removed" = 0 ] && [ "$got" = "acd" ] \
      && [[ "$gone" == *OBJECT_NOT_FOUND* ]]; then
    pass "failover: after SIGKILLs of both leaders and the node, a removal made while the node was down holds"
  else fail "failover with SIGKILLs" "puts: $put_ok; get after the takeover: $after_takeover; rm: $removed; read back: '$got'
get fo/b: $gone
$(tail -n 5 "$work/fnode2.err" "$work/fm1b.err")"; fi
  kill -TERM "$node_pid" 2>/dev/null; wait "$node_pid" 2>/dev/null; node_pid=""
  kill -TERM "$master_pid" 2>/dev/null; wait "$master_pid" 2>/dev/null; master_pid=""
else
  fail "coordinator did not start" "$(tail -n 20 "$work/zk.err")"
fi
kill -TERM "$zk_pid" 2>/dev/null; wait "$zk_pid" 2>/dev/null; zk_pid=""

# ---------------------------------------------------------------------------------- a corrupt master.state-dir
# a master whose state file does not decode cannot take over: it ends (exit 75, as a deposed leader), saying why,
# instead of running on refusing every request while /health said ok
mkdir -p "$work/bad-state" && echo garbage > "$work/bad-state/cluster-state.pb"
bport=$(free_port) || exit 1
(TIFFIN_LOG_DIR="$work/bad-state-logs" exec "$tiffin" master --port "$bport" --admin-port 0 \
  --state-dir "$work/bad-state" >"$work/bad-state.out" 2>"$work/bad-state.err") &
bad_pid=$!
for _ in $(seq 1 300); do kill -0 "$bad_pid" 2>/dev/null || break; sleep 0.1; done
if ! kill -0 "$bad_pid" 2>/dev/null; then wait "$bad_pid"; rc=$?; else rc=running; kill -9 "$bad_pid"; fi
if [ "$rc" = 75 ] && grep >/dev/null "Taking over failed" "$work/bad-state.err" "$work"/bad-state-logs/* 2>/dev/null; then
  pass "a master whose master.state-dir file is corrupt exits 75 and says it could not take over"
else fail "a master with a corrupt state file (exit $rc)" "$(tail -n 10 "$work/bad-state.err")"; fi

# ---------------------------------------------------------------------------------- master, SIGINT
# A conf dir with only tiffin.properties and a log directory that cannot be created: the master logs
# through the shipped log4j2.xml to a per-user directory (XDG_STATE_HOME) and says so in one line.
# SIGINT (Ctrl-C) stops it with exit 0. The subshell undoes bash's SIG_IGN of SIGINT for background jobs.
mport=$(free_port) || exit 1
madmin=$(free_port) || exit 1
(trap - INT; TIFFIN_CONF_DIR="$work/myconf" TIFFIN_LOG_DIR="$work/not-a-dir/logs" XDG_STATE_HOME="$work/state" \
  exec "$tiffin" master --port "$mport" --admin-port "$madmin" >"$work/master.out" 2>"$work/master.err") &
master_pid=$!
if wait_for_line "$master_pid" "$work/master.out" "^Tiffin master listening on 127.0.0.1:$mport"; then
  pass "master started: $(head -n 1 "$work/master.out")"
else
  fail "master did not print its listener within 30 s" "$(cat "$work/master.out"; head -n 20 "$work/master.err")"
fi

mlog="$work/state/tiffin/logs/tiffin.log"
if [ "$(head -n 1 "$work/master.err")" = "tiffin: log directory $work/not-a-dir/logs is not writable; logging to $mlog" ] \
    && wait_for_line "$master_pid" "$mlog" "Tiffin master listening on .*$mport" \
    && ! grep -q 'FileNotFoundException' "$work/master.err"; then
  pass "unwritable TIFFIN_LOG_DIR: the master says in one line where it logs and logs there"
else fail "master log directory fallback" "$(head -n 10 "$work/master.err"; ls -lR "$work/state" 2>&1 | head)"; fi

if wait_for_line "$master_pid" "$work/master.err" ' INFO .*MasterServer - Tiffin master listening' \
    && ! grep -q 'No configuration found' "$work/master.err"; then
  pass "the master with a conf dir holding only tiffin.properties logs through the shipped log4j2.xml"
else fail "master logging with TIFFIN_CONF_DIR without log4j2.xml" "$(head -n 10 "$work/master.err")"; fi

# SIGINT, unless this test runs with SIGINT ignored (then the JVM keeps ignoring it): SIGTERM again.
sig=INT
ignored=$(sed -n 's/^SigIgn:[[:space:]]*//p' "/proc/$master_pid/status" 2>/dev/null)
if [ -n "$ignored" ] && (( 16#$ignored & 2 )); then
  echo "smoke: SIGINT is ignored in this environment; stopping the master with SIGTERM instead"
  sig=TERM
fi
stop_and_wait "$master_pid" "$sig"; rc=$stop_rc
if [ -z "$rc" ]; then
  fail "master still running 15 s after SIG$sig" "$(tail -n 20 "$work/master.err")"
elif [ "$rc" -eq 0 ] && [ "$(tail -n 1 "$work/master.out")" = "Stopped." ]; then
  pass "SIG$sig stops the master, which prints Stopped. and exits 0"
else fail "master stop by SIG$sig (exit $rc)" "$(cat "$work/master.out"; tail -n 20 "$work/master.err")"; fi
master_pid=""

echo "smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
