#!/usr/bin/env bash
# Audit finding 4: a peer cannot make a receiver (the daemon on a push, the
# client on a pull) hold unbounded memory. Entry names are never stored,
# outstanding WANTs and waiting DIR_METAs are protocol limits; a peer past a
# limit gets a protocol error, the daemon goes on serving, and the peak RSS
# of the session and of the pulling client stays under 8 MiB.
# The RSS bound is checked on native, unsanitized builds (ASan's shadow
# memory and qemu-user's own pages are not the program's); the protocol
# checks run everywhere.
. "$(dirname "$0")/lib.sh"

EVIL=$FERRY_TOOLS/ferry-evil
LIMIT_KIB=8192
measure=1
[ "${FERRY_SANITIZED:-0}" = 1 ] && measure=0
case "$FERRY_SERVER $FERRY_CLIENT" in *qemu*) measure=0 ;; esac

# The daemon under ferry-maxrss: at its exit, the peak RSS of the daemon and
# of every session it reaped (wait4 reports the largest of the tree).
write_config
FERRY_SERVER="$FERRY_TOOLS/ferry-maxrss $T/daemon.rss $FERRY_SERVER" start_server

evil_push() {   # evil_push SCRIPT FLAGS: prints the tool's output into $T/evil-push.out
  local rc=0
  "$EVIL" push-script 127.0.0.1 "$PORT" "$T/clienthome/id_ferry" m "" "$1" "$2" \
    > "$T/evil-push.out" 2>&1 || rc=$?
  echo "$rc"
}

note "2049 files wanted at once: the daemon stops the session with a protocol error"
{ echo 'DIR_BEGIN 0 ""'; echo 'REPEAT 3000 ENTRY file f%d'; echo DIR_END; echo END; } > "$T/wants.script"
rc=$(EVIL_NO_DATA=1 evil_push "$T/wants.script" 0x10)
[ "$rc" = 6 ] || { cat "$T/evil-push.out"; fail "expected the session to end with ERROR (6), got $rc"; }
grep -q "more than 2048 files" "$T/evil-push.out" || { cat "$T/evil-push.out"; fail "no protocol error naming the window"; }
expect_rc 0 ferry_c ls "$(url m)"

note "1025 directories' metadata waiting for a file: protocol error"
{ echo 'DIR_BEGIN 0 ""'; echo 'ENTRY file a'; echo DIR_END; echo 'REPEAT 1100 DIR_META 0755 ""'; echo END; } > "$T/meta.script"
rc=$(EVIL_NO_DATA=1 evil_push "$T/meta.script" 0x10)
[ "$rc" = 6 ] || { cat "$T/evil-push.out"; fail "DIR_META flood: expected ERROR (6), got $rc"; }
grep -q "directories' metadata" "$T/evil-push.out" || { cat "$T/evil-push.out"; fail "no error naming the metadata limit"; }

note "...and 1 MiB of waiting metadata paths (long paths) likewise"
long=$(printf 'a%.0s' $(seq 1 255)); lp=$long; for _ in $(seq 1 14); do lp="$lp/$long"; done
{ echo 'DIR_BEGIN 0 ""'; echo 'ENTRY file a'; echo DIR_END; echo "REPEAT 400 DIR_META 0755 $lp"; echo END; } > "$T/metalong.script"
rc=$(EVIL_NO_DATA=1 evil_push "$T/metalong.script" 0x10)
[ "$rc" = 6 ] || { cat "$T/evil-push.out"; fail "long DIR_META paths: expected ERROR (6), got $rc"; }

note "400,000 entries in one listing with --delete (dry run): nothing of them is stored"
{ echo 'DIR_BEGIN 0 ""'; echo 'REPEAT 400000 ENTRY file name-number-%d'; echo DIR_END; echo END; } > "$T/names.script"
rc=$(evil_push "$T/names.script" 0x03)
[ "$rc" = 0 ] || { tail -5 "$T/evil-push.out"; fail "400,000 entries: expected a RESULT without errors, got $rc"; }
expect_rc 0 ferry_c ls "$(url m)"
stop_server
daemon_kib=$(cat "$T/daemon.rss")
echo "daemon and sessions: peak RSS $daemon_kib KiB"
if [ "$measure" = 1 ]; then
  [ "$daemon_kib" -lt "$LIMIT_KIB" ] || fail "a session reached $daemon_kib KiB (limit $LIMIT_KIB)"
fi

note "a malicious server sends 400,000 entries to a pulling client"
{ echo 'DIR_BEGIN 0 ""'; echo 'REPEAT 400000 ENTRY file f%d'; echo DIR_END; echo END; } > "$T/pull.script"
EVIL_NO_DATA=1 start_evil_server "$T/pull.script"
rc=0
"$FERRY_TOOLS/ferry-maxrss" "$T/client.rss" $FERRY_CLIENT pull --identity "$T/clienthome/id_ferry" \
  --known-hosts "$T/evil_known_hosts" --accept-new "$(eurl m/x)" "$T/dest" > "$T/pull.out" 2>&1 || rc=$?
[ "$rc" = 12 ] || [ "$rc" = 2 ] || { cat "$T/pull.out"; fail "expected a protocol error (2 or 12), got $rc"; }
grep -q "more than 2048 files" "$T/pull.out" || { cat "$T/pull.out"; fail "the client did not name the limit"; }
client_kib=$(cat "$T/client.rss")
echo "pulling client: peak RSS $client_kib KiB"
if [ "$measure" = 1 ]; then
  [ "$client_kib" -lt "$LIMIT_KIB" ] || fail "the client reached $client_kib KiB (limit $LIMIT_KIB)"
fi
stop_evil_server
