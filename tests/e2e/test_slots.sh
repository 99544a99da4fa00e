#!/usr/bin/env bash
# The daemon against slot squatters (issue 9: F2, F10, F9): connections that
# never get a request authorized are cut at the handshake deadline and never
# take a session's slot; an authorized session that trickles a record is cut
# at the I/O timeout; one address gets only so many unauthenticated
# connections; a client that rejects the host key is not a failure, unknown
# keys are; peer text in the log is quoted.
. "$(dirname "$0")/lib.sh"

HOLD=$FERRY_TOOLS/ferry-hold
HS=2        # handshake timeout: accept to authorized REQUEST
IO=3        # I/O timeout: per record afterwards
HPID=

# slots_config [GLOBAL-KEY-LINE...]: max connections 4, the short timeouts,
# and whatever global keys the caller adds.
slots_config() {
  MAXCONN=4 write_config
  local extra
  for extra in "handshake timeout = $HS" "timeout = $IO" "$@"; do
    sed -i "/^\[global\]$/a $extra" "$T/ferry.conf"
  done
}

# hold MODE N SECONDS [ARGS...]: ferry-hold in the background ($T/hold.out);
# returns once all N connections were tried.
hold() {
  : > "$T/hold.out"   # the background job truncates it later: never read the last run's
  "$HOLD" "$1" "$PORT" "$2" "$3" "${@:4}" > "$T/hold.out" 2> "$T/hold.err" &
  HPID=$!
  for _ in $(seq 1 200); do
    grep -q '^READY' "$T/hold.out" && return 0
    sleep 0.05
  done
  cat "$T/hold.out" "$T/hold.err" >&2
  fail "ferry-hold did not get its connections in place"
}
hold_wait() {
  wait "$HPID" || fail "ferry-hold failed"
  HPID=
}
count() { grep -c "^$1" "$T/hold.out" || true; }
# cut_between LO HI: every CUT happened LO..HI seconds after its connect.
cut_between() {
  awk -v lo="$1" -v hi="$2" '/^CUT/ && ($3 < lo || $3 > hi) { bad = 1 } END { exit bad }' \
    "$T/hold.out" || { cat "$T/hold.out" >&2; fail "connections cut outside $1..$2 s"; }
}
# restart: a fresh daemon (no penalties), on the current config.
restart() {
  stop_server
  [ -f "$T/server.log" ] && cat "$T/server.log" >> "$T/all.log"
  : > "$T/server.log"   # start_server must not read the last server's port
  start_server
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# ls_within SECS: a real client's ls succeeds, retried, within SECS.
ls_within() {
  local t0 rc=1
  t0=$(now)
  while awk -v e="$(since "$t0")" -v m="$1" 'BEGIN { exit !(e < m) }'; do
    ferry_c ls -q "$(url m)" > "$T/last.out" 2> "$T/last.err" && { rc=0; break; }
    sleep 0.2
  done
  [ $rc = 0 ] || { cat "$T/last.err" >&2; fail "a real client did not get in within $1 s"; }
  echo "   the client got in after $(since "$t0") s"
}

slots_config "max unauthenticated per address = 16"
for mode in silent line drip; do
  note "$mode: 5 connections that never authorize keep no client out, and are cut at $HS s"
  restart
  hold "$mode" 5 $((HS + 3))
  [ "$(count OPEN)" = 5 ] || { cat "$T/hold.out" >&2; fail "$mode: not all 5 held"; }
  t0=$(now)
  expect_rc 0 ferry_c ls -q "$(url m)"
  [ "$(count CUT)" = 0 ] || fail "$mode: the holds were cut before the client came: nothing shown"
  awk -v e="$(since "$t0")" -v m=$((HS + 1)) 'BEGIN { exit !(e < m) }' ||
    fail "$mode: the client took $(since "$t0") s"
  hold_wait
  [ "$(count CUT)" = 5 ] || { cat "$T/hold.out" >&2; fail "$mode: not every hold was cut"; }
  cut_between $((HS - 1)) $((HS + 1))
  # a stall past the deadline is a failure: five in a row are penalised
  expect_rc 5 ferry_c ls -q "$(url m)"
  grep -q "too many failed attempts" "$T/last.err" || { cat "$T/last.err" >&2; fail "$mode: stalls not counted"; }
done

note "authdrip: 4 authorized sessions trickling a record are cut at the I/O timeout ($IO s)"
restart
hold authdrip 4 $((IO + 4)) --key "$T/clienthome/id_ferry"
[ "$(count OPEN)" = 4 ] || { cat "$T/hold.out" >&2; fail "authdrip: not all 4 accepted"; }
expect_rc 5 ferry_c ls -q "$(url m)"
grep -q "server busy" "$T/last.err" || { cat "$T/last.err" >&2; fail "busy refusal not explained"; }
ls_within $((IO + 2))
hold_wait
[ "$(count CUT)" = 4 ] || { cat "$T/hold.out" >&2; fail "authdrip: not every session was cut"; }
cut_between $((IO - 1)) $((IO + 1))
grep -q "timed out" "$T/server.log" || fail "the daemon did not log the timeouts"

note "one address: at most 4 connections awaiting authentication (the default); the 5th is told why"
slots_config
restart
hold silent 5 1
[ "$(count OPEN)" = 4 ] || { cat "$T/hold.out" >&2; fail "per address: $(count OPEN) held, not 4"; }
grep -q '^REFUSED 4 FERRY/1 ERROR too many connections from 127.0.0.1 awaiting authentication (max unauthenticated per address' \
  "$T/hold.out" || { cat "$T/hold.out" >&2; fail "the 5th was not refused with the reason"; }
hold_wait
grep -q "refused: too many connections from 127.0.0.1" "$T/server.log" ||
  fail "the refusal is not in the server log"

note "a client that does not accept the host key (exit 6) is not counted as a failure"
slots_config
restart
: > "$T/kh-empty"
for _ in 1 2 3; do
  # shellcheck disable=SC2086
  expect_rc 6 $FERRY_CLIENT ls -q --identity "$T/clienthome/id_ferry" --known-hosts "$T/kh-empty" \
    "$(url m)" < /dev/null
done
sleep 0.2
expect_rc 0 ferry_c ls -q "$(url m)"

note "three attempts with an unknown key are penalised"
# shellcheck disable=SC2086
$FERRY_CLIENT keygen -f "$T/stranger" -C stranger > /dev/null 2>&1 || fail "keygen"
stranger() {
  # shellcheck disable=SC2086
  expect_rc 5 $FERRY_CLIENT ls -q --identity "$T/stranger" --known-hosts "$T/clienthome/known_hosts" \
    "$(url m)"
}
for _ in 1 2 3; do stranger; done
# the penalty doubles with each failure after a wait (1 s, 2 s, 4 s): the
# 4 s one outlasts a slow client's start (ASan on a loaded machine once took
# more than the first second)
sleep 1.2; stranger
sleep 2.2; stranger
expect_rc 5 ferry_c ls -q "$(url m)"
grep -q "too many failed attempts" "$T/last.err" || { cat "$T/last.err" >&2; fail "no penalty"; }

note "peer text in the daemon log is quoted: no forged line, no escape sequence"
restart
forged="ferry: [1 10.9.8.7] key BLAKE2b:FORGED: push to module 'm'"
esc=$(printf '\033')
rc=0
"$FERRY_TOOLS/ferry-evil" request-path 127.0.0.1 "$PORT" "$T/stranger" \
  "x
$forged${esc}[31m" "" list > "$T/evil.out" 2>&1 || rc=$?
[ $rc = 5 ] || { cat "$T/evil.out" >&2; fail "the forged module name was not refused (exit $rc)"; }
rc=0
"$FERRY_TOOLS/ferry-evil" request-path 127.0.0.1 "$PORT" "$T/clienthome/id_ferry" m \
  "a
$forged${esc}[31m" list > "$T/evil.out" 2>&1 || rc=$?
[ $rc = 5 ] || { cat "$T/evil.out" >&2; fail "the forged path was not refused (exit $rc)"; }
sleep 0.2
if awk -v f="$forged" 'index($0, f) == 1 { found = 1 } END { exit !found }' "$T/server.log"; then
  fail "a peer forged a log line"
fi
if grep -q "$esc" "$T/server.log"; then fail "an escape byte reached the log"; fi
grep -q 'unknown module "x\\x0aferry' "$T/server.log" || fail "the module name is not shown quoted"
stop_server
cat "$T/server.log" >> "$T/all.log"
if grep -qE 'died of signal|runtime error:|Sanitizer' "$T/all.log"; then fail "a session process crashed"; fi
echo "PASS"
