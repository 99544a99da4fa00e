#!/usr/bin/env bash
# Issue 15, item 2: every daemon session is confined once it knows its
# module (no new privileges, Landlock to the module's tree, read-only for a
# session that only sends, no TCP; a seccomp allow-list). The test build's
# hook (FERRY_TEST_ESCAPE, compiled in with -DFERRY_TEST_HOOKS=ON only) makes
# each session try one escape right after that: reading /etc/passwd,
# creating a file in /tmp, connecting to a TCP listener here, writing into
# the module during a pull: each fails with its error in the log and the
# transfer still completes, byte for byte. Exec is outside the allow-list:
# that session dies of SIGSYS with a line naming the call, and the daemon
# serves the next client. (Every other e2e test runs its transfers -
# delta, resume, -aHAX with owner names, filters, compression - through the
# same sandboxed sessions.)
. "$(dirname "$0")/lib.sh"

landlock=$(python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(max(libc.syscall(444, None, 0, 1), 0))' 2> /dev/null || echo 0)
mkdir -p "$T/src/d"
head -c 300000 /dev/urandom > "$T/src/big"
echo small > "$T/src/d/small"

# start_with HOW: a daemon whose sessions try HOW
start_with() {
  stop_server
  FERRY_TEST_ESCAPE=$1 start_server
}

note "the daemon says what its sessions get"
start_with ""
grep -q "sandbox per session: no new privileges" "$T/server.log" || fail "no sandbox line"
if [ "$landlock" -gt 0 ]; then
  grep -q "Landlock ABI $landlock (the module's tree only" "$T/server.log" ||
    fail "the kernel has Landlock ABI $landlock, the daemon does not use it"
fi
grep -q "a seccomp allow-list" "$T/server.log" ||
  fail "no seccomp allow-list (this build has libseccomp: make deps)"

note "reading /etc/passwd from a session fails; the push completes"
start_with open
ferry_c push -r "$T/src/" "$(url m/)" > /dev/null 2>&1 || fail "push with the open hook"
same_tree "$T/src" "$T/mod"
grep -q "escape test: open /etc/passwd: Permission denied" "$T/server.log" ||
  { grep escape "$T/server.log"; fail "/etc/passwd was not refused"; }

note "creating a file outside the module fails; the pull completes"
rm -f /tmp/ferry-escape-test
start_with create
ferry_c pull -r "$(url m/)" "$T/back" > /dev/null 2>&1 || fail "pull with the create hook"
same_tree "$T/src" "$T/back"
grep -q "escape test: create /tmp/ferry-escape-test: Permission denied" "$T/server.log" ||
  { grep escape "$T/server.log"; fail "creating in /tmp was not refused"; }
[ ! -e /tmp/ferry-escape-test ] || fail "/tmp/ferry-escape-test exists"

note "connecting to a TCP port fails, and nothing reaches the listener"
python3 - "$T/listener" << 'EOF' &
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8); s.settimeout(20)
open(sys.argv[1] + ".port", "w").write(str(s.getsockname()[1]))
try:
    c, _ = s.accept(); open(sys.argv[1] + ".accepted", "w").write("yes")
except socket.timeout:
    pass
EOF
LPID=$!
for _ in $(seq 1 100); do [ -s "$T/listener.port" ] && break; sleep 0.05; done
LPORT=$(cat "$T/listener.port")
start_with "connect:$LPORT"
head -c 1000 /dev/urandom > "$T/src/d/new"
ferry_c push -r "$T/src/" "$(url m/)" > /dev/null 2>&1 || fail "push with the connect hook"
same_tree "$T/src" "$T/mod"
grep -q "escape test: connect to 127.0.0.1:$LPORT: Operation not permitted" "$T/server.log" ||
  { grep escape "$T/server.log"; fail "the connection was not refused"; }
sleep 0.3
[ ! -e "$T/listener.accepted" ] || fail "the listener accepted a connection from a session"
kill $LPID 2> /dev/null || true

note "a pull's session cannot write into its module; a push's can"
start_with module
ferry_c pull -r "$(url m/)" "$T/back2" > /dev/null 2>&1 || fail "pull with the module hook"
grep -q "escape test: create .ferry-escape-test in the module: Permission denied" "$T/server.log" ||
  { grep escape "$T/server.log"; fail "a pull session wrote into its module"; }
echo changed > "$T/src/d/small"
ferry_c push -r "$T/src/" "$(url m/)" > /dev/null 2>&1 || fail "push with the module hook"
grep -q "escape test: create .ferry-escape-test in the module: created" "$T/server.log" ||
  { grep escape "$T/server.log"; fail "a push session could not write into its module"; }
same_tree "$T/src" "$T/mod"

if [ "$(id -u)" = 0 ]; then
  note "a root session may make device nodes only when it receives -D"
  start_with mknod
  ferry_c push -r -D "$T/src/" "$(url m/)" > /dev/null 2>&1 || fail "push -D with the mknod hook"
  grep -q "escape test: mknod a character device in the module: created" "$T/server.log" ||
    { grep escape "$T/server.log"; fail "a root -D session could not make a device"; }
  expect_rc 10 ferry_c push -r "$T/src/" "$(url m/)"
  for _ in $(seq 1 100); do grep -q "died of signal 31" "$T/server.log" && break; sleep 0.05; done
  grep -q "session process [0-9]* died of signal 31" "$T/server.log" ||
    { cat "$T/server.log"; fail "a session without -D made a device node"; }
  [ ! -e "$T/mod/.ferry-escape-dev" ] || fail "a device node was left in the module"
else
  echo "(not root: the device-node check needs root and runs in make check, which is root)"
fi

note "exec is outside the allow-list: that session dies, the daemon goes on"
start_with exec
expect_rc 10 ferry_c push -r "$T/src/" "$(url m/)"
for _ in $(seq 1 100); do grep -q "died of signal" "$T/server.log" && break; sleep 0.05; done
grep -q "sandbox: system call [0-9]* is not allowed: session ended" "$T/server.log" ||
  { cat "$T/server.log"; fail "no line naming the refused call"; }
grep -q "session process [0-9]* died of signal 31" "$T/server.log" || fail "the session did not die of SIGSYS"
grep -q "escape test: exec /bin/true: " "$T/server.log" && fail "exec returned instead of ending the session"
kill -0 "$SERVER_PID" || fail "the daemon died"
start_with ""
ferry_c ls "$(url m/)" > /dev/null 2>&1 || fail "no serving after the killed session"
no_temp_files "$T/mod"
echo "sandbox: ok"
