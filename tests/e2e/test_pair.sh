#!/usr/bin/env bash
# Issue 15, item 6: pairing without copying keys. On the box `ferry pair
# MODULE` shows a one-time code; on the PC `ferry pair HOST CODE` proves it
# (CPace inside the Noise session). The right code adds the PC's key to the
# module's authorized keys and pins the box's key; a wrong code, an expired
# one, a used one and a man in the middle with keys of his own add nothing
# and pin nothing; three wrong codes end the code.
. "$(dirname "$0")/lib.sh"

AK=$T/serverhome/pair_keys
: > "$AK"
chmod 640 "$AK"
mkdir -p "$T/pmod" "$T/pc"
write_config "[p]" "path = $T/pmod" "authorized keys = $AK"
start_server
# shellcheck disable=SC2086
$FERRY_CLIENT keygen -f "$T/pc/id_ferry" -C pc > "$T/keygen.out" 2> "$T/keygen.err" ||
  fail "keygen failed"
grep -q "ferry pair MODULE" "$T/keygen.err" || { cat "$T/keygen.err"; fail "keygen does not name the next step"; }
PCKEY=$(cut -d' ' -f1 "$T/pc/id_ferry.pub")
KH=$T/pc/known_hosts
PAIR_PID=

# box_pair [--valid D]: `ferry pair p` on the box, in the background; sets CODE.
box_pair() {
  # shellcheck disable=SC2086
  FERRY_HOME=$T/serverhome $FERRY_SERVER pair p --config "$T/ferry.conf" "$@" \
    > "$T/pair.out" 2> "$T/pair.err" &
  PAIR_PID=$!
  CODE=
  for _ in $(seq 1 200); do
    CODE=$(sed -n "s/^Pairing code for module 'p': \([0-9A-Z-]*\)$/\1/p" "$T/pair.out")
    [ -n "$CODE" ] && return 0
    kill -0 $PAIR_PID 2> /dev/null || { cat "$T/pair.err"; fail "ferry pair on the box ended"; }
    sleep 0.05
  done
  fail "ferry pair showed no code"
}

# box_done RC: the box's `ferry pair` ended with RC.
box_done() {
  local rc=0
  for _ in $(seq 1 100); do kill -0 $PAIR_PID 2> /dev/null || break; sleep 0.05; done
  wait $PAIR_PID || rc=$?
  [ "$rc" = "$1" ] || { cat "$T/pair.err"; fail "ferry pair on the box: exit $rc, want $1"; }
}

# pc RC ARGS...: ferry pair on the PC with its own key and known hosts; a
# refusal for the address's earlier failures (the daemon's growing penalty)
# is waited out.
pc() {
  local want=$1 rc; shift
  for _ in $(seq 1 20); do
    rc=0
    # shellcheck disable=SC2086
    $FERRY_CLIENT pair --identity "$T/pc/id_ferry" --known-hosts "$KH" "$@" \
      > "$T/last.out" 2> "$T/last.err" || rc=$?
    grep -q "too many failed attempts" "$T/last.err" || break
    sleep "$(sed -n 's/.*retry in \([0-9]*\) s.*/\1/p' "$T/last.err" | head -n1)" ||
      sleep 1
  done
  [ "$rc" = "$want" ] || { cat "$T/last.out" "$T/last.err"; fail "ferry pair $*: exit $rc, want $want"; }
}

not_added() {
  [ ! -s "$AK" ] || { cat "$AK"; fail "$1: a key was added"; }
  [ ! -s "$KH" ] || { cat "$KH"; fail "$1: a host key was pinned"; }
}


note "no pairing waiting: refused, nothing added"
pc 5 "$(url p)" ZZZZ-ZZZZ
grep -q "no pairing is waiting" "$T/last.err" || { cat "$T/last.err"; fail "no reason given"; }
not_added "no pairing"

note "a code that is not one is a usage error, before any connection"
pc 1 "$(url p)" 12-34
grep -q "is not a pairing code" "$T/last.err" || fail "no message for a malformed code"

note "a man in the middle with keys of his own: the code does not carry over"
box_pair
: > "$T/mitm.out"   # as start_proxy: the loop may read before the & opens it
"$FERRY_TOOLS/ferry-mitm" "$PORT" --timeout 20 > "$T/mitm.out" 2> "$T/mitm.err" &
MITM=$!
for _ in $(seq 1 100); do MPORT=$(sed -n 's/^PORT //p' "$T/mitm.out"); [ -n "$MPORT" ] && break; sleep 0.05; done
pc 5 "ferry://127.0.0.1:$MPORT" "$CODE"
wait $MITM || true
grep -q "wrong pairing code (2 tries left)" "$T/last.err" || { cat "$T/last.err" "$T/mitm.err"; fail "the middle was not caught"; }
grep -q "relayed" "$T/mitm.err" || { cat "$T/mitm.err"; fail "the man in the middle did not relay"; }
not_added "man in the middle"
# the box tells the client before it logs
for _ in $(seq 1 100); do grep -q "wrong code from" "$T/pair.err" && break; sleep 0.05; done
grep -q "wrong code from" "$T/pair.err" || fail "the box did not log the failed try"

note "the right code, through the real box: key added, host pinned"
pc 0 "ferry://127.0.0.1:$PORT" "$(echo "$CODE" | tr 'A-Z' 'a-z')"   # typed in lower case
box_done 0
grep -q "Paired with 127.0.0.1:$PORT: module 'p'" "$T/last.out" || { cat "$T/last.out"; fail "no summary"; }
grep -q "^$PCKEY paired " "$AK" || { cat "$AK"; fail "the key is not in the module's list"; }
[ "$(stat -c %a "$AK")" = 640 ] || fail "the keys file lost its mode"
grep -q "^127.0.0.1:$PORT " "$KH" || fail "the host key was not pinned"
grep -q "paired: key .* added to" "$T/pair.err" || fail "the box did not log the pairing"
grep -q "paired: key .* added to module 'p'" "$T/server.log" || fail "the daemon did not log the pairing"
echo hello > "$T/f.txt"
expect_rc 0 $FERRY_CLIENT push --identity "$T/pc/id_ferry" --known-hosts "$KH" "$T/f.txt" "$(url p)"
cmp "$T/f.txt" "$T/pmod/f.txt" || fail "the paired client could not push"
expect_rc 5 $FERRY_CLIENT ls --identity "$T/pc/id_ferry" --known-hosts "$KH" "$(url m)"

note "the code is single-use"
pc 5 "$(url p)" "$CODE"
grep -q "no pairing is waiting" "$T/last.err" || { cat "$T/last.err"; fail "a used code was not refused"; }
[ "$(grep -c . "$AK")" = 1 ] || fail "the list changed"

# a daemon afresh: the failures so far would hold this address back for seconds
restart() { stop_server; start_server; }

note "wrong codes: refused with the tries left; the third ends the code"
restart
: > "$AK"
rm -f "$KH"
box_pair
pc 5 "$(url p)" 0000-0001
grep -q "wrong pairing code (2 tries left)" "$T/last.err" || { cat "$T/last.err"; fail "1st wrong code"; }
pc 5 "$(url p)" 0000-0002
grep -q "wrong pairing code (1 try left)" "$T/last.err" || { cat "$T/last.err"; fail "2nd wrong code"; }
pc 5 "$(url p)" 0000-0003
grep -q "no longer valid" "$T/last.err" || { cat "$T/last.err"; fail "3rd wrong code"; }
box_done 5
grep -q "3 wrong codes" "$T/pair.err" || fail "the box did not say why it ended"
pc 5 "$(url p)" "$CODE"
not_added "wrong codes"

note "a session that takes the code and never answers counts as a wrong code"
# (a slow session's client could learn whether its code was right while the
# box had given up on it uncounted: unlimited tries, found by a security
# review); here three bare connections to the pair socket play such sessions
restart
box_pair
for _ in 1 2 3; do
  python3 - "$T/serverhome/pair.sock" <<'PY' || fail "could not reach the pair socket"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.recv(200)   # "PAIR p CODE": then silence, and gone
s.close()
PY
done
box_done 5
grep -q "3 wrong codes" "$T/pair.err" || { cat "$T/pair.err"; fail "sessions without an answer were not counted"; }
grep -q "no answer (counted as a wrong code)" "$T/pair.err" || { cat "$T/pair.err"; fail "not said why"; }

note "the code expires"
restart
box_pair --valid 1s
box_done 30
grep -q "expired" "$T/pair.err" || fail "the box did not say the code expired"
pc 5 "$(url p)" "$CODE"
grep -q "no pairing is waiting" "$T/last.err" || fail "an expired code was not refused"
not_added "expired"

note "a pairing for another module than the one asked for"
restart
box_pair
pc 5 "$(url m)" "$CODE"
grep -q "for another module" "$T/last.err" || { cat "$T/last.err"; fail "the module was not checked"; }
kill $PAIR_PID; box_done 5
not_added "another module"

note "one ferry pair at a time; a module without a keys file is refused"
box_pair
expect_rc 3 env FERRY_HOME="$T/serverhome" $FERRY_SERVER pair p --config "$T/ferry.conf"
grep -q "another 'ferry pair' is waiting" "$T/last.err" || fail "two at once"
kill $PAIR_PID; box_done 5
printf '[closed]\npath = %s\nauthorized keys = none\n' "$T/pmod" >> "$T/ferry.conf"
expect_rc 3 env FERRY_HOME="$T/serverhome" $FERRY_SERVER pair closed --config "$T/ferry.conf"
grep -q "no authorized keys file" "$T/last.err" || fail "a closed module was offered"

note "a keys file other modules read too is refused: the key would open them"
# 'm' reads the [global] file; a module that inherits it shares it with 'm'
printf '[inherits]\npath = %s\n' "$T/pmod" >> "$T/ferry.conf"
expect_rc 3 env FERRY_HOME="$T/serverhome" $FERRY_SERVER pair inherits --config "$T/ferry.conf"
grep -q "module 'inherits' shares its authorized keys file .* with 1 other module ('m')" "$T/last.err" ||
  { cat "$T/last.err"; fail "pairing a module whose keys file is the global one was offered"; }
# the same file under another name, next to 'p'
ln -sf "$AK" "$T/serverhome/alias_keys"
printf '[alias]\npath = %s\nauthorized keys = %s\n' "$T/pmod" "$T/serverhome/alias_keys" >> "$T/ferry.conf"
expect_rc 3 env FERRY_HOME="$T/serverhome" $FERRY_SERVER pair p --config "$T/ferry.conf"
grep -q "shares its authorized keys file .* with 1 other module ('alias')" "$T/last.err" ||
  { cat "$T/last.err"; fail "a keys file shared under another name was not seen"; }
not_added "a shared keys file"
kill -0 "$SERVER_PID" || fail "the daemon died"
echo "test_pair: ok"
