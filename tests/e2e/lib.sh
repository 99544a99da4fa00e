# Shared by the end-to-end tests: a private directory, a real `ferry serve`
# on 127.0.0.1 (a kernel-chosen port), a client key, and assertions.
#
# Environment (set by CTest, or by scripts/cross/check.sh for emulated runs):
#   FERRY          the ferry binary
#   FERRY_SERVER   command used for `ferry serve` (default $FERRY; may be "qemu-mips -L ... ferry")
#   FERRY_CLIENT   command used for push/pull/ls/keygen (default $FERRY)
#   FERRY_TOOLS    directory with the test tools (ferry-evil, ferry-proxy)
# shellcheck shell=bash
set -euo pipefail

: "${FERRY:?FERRY must name the ferry binary}"
FERRY_SERVER=${FERRY_SERVER:-$FERRY}
FERRY_CLIENT=${FERRY_CLIENT:-$FERRY}
FERRY_TOOLS=${FERRY_TOOLS:-$(dirname "$FERRY")/tests}
T=$(mktemp -d "${TMPDIR:-/tmp}/ferry-e2e.XXXXXX")
SERVER_PID=
PORT=
export FERRY_HOME=$T/clienthome
mkdir -p "$T/clienthome" "$T/serverhome"
chmod 700 "$T/clienthome" "$T/serverhome"

cleanup() {
  local rc=$?
  stop_server || true
  if [ $rc -ne 0 ] && [ -f "$T/server.log" ]; then
    echo "--- server log (last 30 lines) ---" >&2
    tail -n 30 "$T/server.log" >&2
  fi
  # FERRY_KEEP_LOGS=DIR keeps every test's server log (e.g. to look for
  # sessions the sandbox ended: "sandbox: system call N")
  if [ -n "${FERRY_KEEP_LOGS:-}" ] && [ -f "$T/server.log" ]; then
    mkdir -p "$FERRY_KEEP_LOGS"
    cat "$T/server.old.log" "$T/server.log" > "$FERRY_KEEP_LOGS/$(basename "$0" .sh).$$.log" 2> /dev/null || true
  fi
  rm -rf "$T"
  exit $rc
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "== $*"; }

# The client's key, accepted by every module unless a test writes its own list.
# shellcheck disable=SC2086
$FERRY_CLIENT keygen -f "$T/clienthome/id_ferry" -C test-client > /dev/null 2>&1 ||
  fail "keygen failed"
cp "$T/clienthome/id_ferry.pub" "$T/serverhome/authorized_keys"

# write_config [MODULE-SECTION-TEXT...]: a config with [global] on port 0 and
# module "m" at $T/mod (created), plus whatever the caller appends.
write_config() {
  mkdir -p "$T/mod"
  {
    echo "[global]"
    echo "listen = 127.0.0.1:0"
    echo "host key = $T/serverhome/host_key"
    echo "authorized keys = $T/serverhome/authorized_keys"
    echo "nice = 0"
    echo "max connections = ${MAXCONN:-8}"
    echo "[m]"
    echo "path = $T/mod"
    echo "protection = ${MODPROT:-none}"
    for extra in "$@"; do echo "$extra"; done
  } > "$T/ferry.conf"
}

# start_server [extra serve args...]: starts the daemon on $T/ferry.conf and
# waits until it listens; sets SERVER_PID and PORT.
start_server() {
  [ -f "$T/ferry.conf" ] || write_config
  [ -f "$T/server.log" ] && cat "$T/server.log" >> "$T/server.old.log"
  : > "$T/server.log"   # a restart must not read the old server's port
  # shellcheck disable=SC2086
  FERRY_HOME=$T/serverhome $FERRY_SERVER serve --config "$T/ferry.conf" -v "$@" \
    > "$T/server.out" 2> "$T/server.log" &
  SERVER_PID=$!
  wait_listening
}

# wait_listening: waits until the server started as SERVER_PID (logging to
# $T/server.log) listens, and sets PORT from its log line.
wait_listening() {
  for _ in $(seq 1 200); do
    # the background job may not have made the file yet
    PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/server.log" 2> /dev/null |
      head -n1 || true)
    [ -n "$PORT" ] && return 0
    kill -0 "$SERVER_PID" 2> /dev/null || { cat "$T/server.log" >&2; fail "server did not start"; }
    sleep 0.05
  done
  fail "server did not report its port"
}

stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  kill -TERM "$SERVER_PID" 2> /dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$SERVER_PID" 2> /dev/null || break
    sleep 0.05
  done
  kill -KILL "$SERVER_PID" 2> /dev/null || true
  wait "$SERVER_PID" 2> /dev/null || true
  SERVER_PID=
}

# wait_sessions: until no child of the daemon still runs (a session outlives
# its client for a moment: it reads the last message, cleans up, exits). A
# zombie is not waited for: that the daemon reaps at once is tested.
wait_sessions() {
  for _ in $(seq 1 200); do
    [ -z "$(ps --ppid "$SERVER_PID" -o stat= | grep -v '^Z' || true)" ] && return 0
    sleep 0.05
  done
  fail "a session of the daemon still runs 10 s later"
}

# url MODULE[/PATH]
url() { echo "ferry://127.0.0.1:$PORT/$1"; }

# start_ns [ENV=VALUE...]: the daemon on $T/ferry.conf inside the network
# namespace $NS, listening on $B (the tests that make one: test_faults,
# test_bench_verdict); sets SERVER_PID and PORT.
start_ns() {
  stop_server
  [ -f "$T/server.log" ] && cat "$T/server.log" >> "$T/server.old.log"
  : > "$T/server.log"
  env "$@" FERRY_HOME="$T/serverhome" ip netns exec "$NS" $FERRY_SERVER serve \
    --config "$T/ferry.conf" -v > /dev/null 2> "$T/server.log" &
  SERVER_PID=$!
  for _ in $(seq 1 200); do
    PORT=$(sed -n "s/.*listening on ${B//./\\.}:\([0-9]*\).*/\1/p" "$T/server.log" | head -n1)
    [ -n "$PORT" ] && return 0
    sleep 0.02
  done
  cat "$T/server.log" >&2; fail "the daemon did not start in the namespace"
}


# ferry_c ARGS...: the client with the test's key and known-hosts file.
ferry_c() {
  local cmd=$1; shift
  # shellcheck disable=SC2086
  $FERRY_CLIENT "$cmd" --identity "$T/clienthome/id_ferry" --known-hosts "$T/clienthome/known_hosts" \
    --accept-new "$@"
}

# expect_rc CODE CMD...: runs CMD, fails unless it exits with CODE.
expect_rc() {
  local want=$1; shift
  local rc=0
  "$@" > "$T/last.out" 2> "$T/last.err" || rc=$?
  if [ "$rc" != "$want" ]; then
    cat "$T/last.out" "$T/last.err" >&2
    fail "expected exit $want, got $rc: $*"
  fi
}

# tree_manifest DIR: one line per entry with type, mode, size, mtime (ns) and link target.
tree_manifest() {
  (cd "$1" && find . -mindepth 1 \( -type f -printf 'f %m %s %T@ %p\n' \) -o \
      \( -type d -printf 'd %m - %T@ %p\n' \) -o \( -type l -printf 'l - - %T@ %p -> %l\n' \) |
    LC_ALL=C sort)
}

# same_tree A B: contents and metadata equal (root directory mode/mtime excluded).
same_tree() {
  diff -r --no-dereference "$1" "$2" > "$T/diff.out" 2>&1 || { cat "$T/diff.out" >&2; fail "contents differ: $1 $2"; }
  diff <(tree_manifest "$1") <(tree_manifest "$2") > "$T/diff.out" ||
    { cat "$T/diff.out" >&2; fail "metadata differ: $1 $2"; }
}

# no_temp_files DIR: nothing named like ferry's temporary files is left.
no_temp_files() {
  local left
  left=$(find "$1" -name '.ferry-*' | head -n 5)
  [ -z "$left" ] || fail "temporary files left: $left"
}
# no_temp_but_partials DIR: the same, except the hidden partial files an
# interrupted transfer keeps for the next run (resume, fs/partial.h)
no_temp_but_partials() {
  local left
  left=$(find "$1" -name '.ferry-*' ! -name '.ferry-part.*' | head -n 5)
  [ -z "$left" ] || fail "temporary files left: $left"
}

# The byte-flipping / line-editing proxy (tests/tools/ferry-proxy.c) between
# a client and the server. start_proxy ARGS...: one connection, gives up
# after PROXY_TIMEOUT seconds (default 30); sets PPORT. purl is url() via it.
PROXY=$FERRY_TOOLS/ferry-proxy
PROXY_PID=
PPORT=
start_proxy() {
  : > "$T/proxy.out"
  "$PROXY" "$PORT" --conns 1 --timeout "${PROXY_TIMEOUT:-30}" "$@" > "$T/proxy.out" 2> "$T/proxy.err" &
  PROXY_PID=$!
  for _ in $(seq 1 100); do
    PPORT=$(sed -n 's/^PORT \([0-9]*\)$/\1/p' "$T/proxy.out")
    [ -n "$PPORT" ] && return 0
    sleep 0.05
  done
  fail "ferry-proxy did not report its port"
}
stop_proxy() {
  [ -n "$PROXY_PID" ] || return 0
  for _ in $(seq 1 100); do
    kill -0 "$PROXY_PID" 2> /dev/null || break
    sleep 0.05
  done
  kill "$PROXY_PID" 2> /dev/null || true
  wait "$PROXY_PID" 2> /dev/null || true
  PROXY_PID=
}
purl() { echo "ferry://127.0.0.1:$PPORT/$1"; }

# evil_script MODULE FLAGS LINES...: the malicious client (ferry-evil
# push-script) pushes to MODULE/ev with REQUEST flags FLAGS, sending LINES in
# its script language; its output goes to $T/evil.out, its exit code to $rc.
evil_script() {
  local mod=$1 flags=$2
  shift 2
  printf '%s\n' "$@" > "$T/evil.script"
  rc=0
  EVIL_PROTECTION=0 "$FERRY_TOOLS/ferry-evil" push-script 127.0.0.1 "$PORT" "$T/clienthome/id_ferry" \
    "$mod" ev "$T/evil.script" "$flags" > "$T/evil.out" 2>&1 || rc=$?
}

# The malicious server (tests/tools/ferry-evil.c, mode serve): one connection,
# a script of crafted messages (see the tool's header for the language), its
# output in $T/evil.out. start_evil_server SCRIPTFILE sets EPID and EPORT;
# the environment (EVIL_REFUSE, EVIL_ACCEPT_PROT, EVIL_TIMEOUT, ...) is the
# caller's. Its host key is made once; ferry_e keeps it in its own
# known-hosts file so it never clashes with the real server's key.
EPID=
EPORT=
start_evil_server() {
  if [ ! -f "$T/evilhost_key" ]; then
    # shellcheck disable=SC2086
    $FERRY_CLIENT keygen -f "$T/evilhost_key" -C evil-host > /dev/null 2>&1 ||
      fail "keygen of the evil host key failed"
  fi
  if [ -z "${EVIL_TRAP:-}" ]; then
    EVIL_TRAP=1
    trap cleanup_with_evil EXIT
  fi
  : > "$T/evil.out"
  "$FERRY_TOOLS/ferry-evil" serve "$T/evilhost_key" "$1" > "$T/evil.out" 2> "$T/evil.err" &
  EPID=$!
  for _ in $(seq 1 200); do
    EPORT=$(sed -n 's/^PORT \([0-9]*\)$/\1/p' "$T/evil.out")
    [ -n "$EPORT" ] && return 0
    kill -0 "$EPID" 2> /dev/null || { cat "$T/evil.err" >&2; EPID=; fail "ferry-evil serve did not start"; }
    sleep 0.05
  done
  fail "ferry-evil serve did not report its port"
}

# stop_evil_server: waits (up to ~12 s: it waits 10 s for a client to close)
# for the evil server to finish, else kills it; its exit code in $ERC.
stop_evil_server() {
  ERC=
  [ -n "$EPID" ] || return 0
  for _ in $(seq 1 240); do
    kill -0 "$EPID" 2> /dev/null || break
    sleep 0.05
  done
  kill "$EPID" 2> /dev/null || true
  ERC=0
  wait "$EPID" 2> /dev/null || ERC=$?
  EPID=
}

# lib.sh's cleanup, after the evil server is gone (its output shown on failure).
cleanup_with_evil() {
  local rc=$?
  set +e
  if [ -n "$EPID" ]; then
    kill "$EPID" 2> /dev/null
    wait "$EPID" 2> /dev/null
    EPID=
  fi
  if [ "$rc" != 0 ] && [ -s "$T/evil.out" ]; then
    echo "--- ferry-evil output (last 20 lines) ---" >&2
    tail -n 20 "$T/evil.out" | cat -v >&2
  fi
  (exit "$rc")
  cleanup
}

# eurl MODULE[/PATH]: a URL of the evil server.
eurl() { echo "ferry://127.0.0.1:$EPORT/$1"; }

# ferry_e ARGS...: ferry_c against the evil server (its own known-hosts file).
ferry_e() {
  local cmd=$1; shift
  # shellcheck disable=SC2086
  $FERRY_CLIENT "$cmd" --identity "$T/clienthome/id_ferry" --known-hosts "$T/evil_known_hosts" \
    --accept-new "$@"
}
