#!/usr/bin/env bash
# kill -9 of the client in the middle of a large file: the old version stays
# intact under its name, no truncated file appears, and what arrived stays
# only as the hidden partial (resume, test_resume.sh); the next push
# completes the file and leaves nothing behind.
. "$(dirname "$0")/lib.sh"

src=$T/src
mkdir -p "$src"
head -c $((1 << 20)) /dev/urandom > "$src/big.bin"
write_config
start_server
expect_rc 0 ferry_c push "$src/" "$(url m/dst)"
cp "$T/mod/dst/big.bin" "$T/old-version"

# A new, large version, sent slowly so the client is surely mid-file when killed.
head -c $((64 << 20)) /dev/urandom > "$src/big.bin"
# shellcheck disable=SC2086
$FERRY_CLIENT push --identity "$T/clienthome/id_ferry" --known-hosts "$T/clienthome/known_hosts" \
  --bwlimit 4M "$src/" "$(url m/dst)" > /dev/null 2>&1 &
cpid=$!   # the client itself (or its emulator), not a subshell
for _ in $(seq 1 100); do
  ls -a "$T/mod/dst" | grep -q '^\.ferry-' && break
  sleep 0.05
done
ls -a "$T/mod/dst" | grep -q '^\.ferry-' || fail "the transfer did not start"
sleep 0.5
kill -9 $cpid
wait $cpid 2> /dev/null || true
cmp "$T/old-version" "$T/mod/dst/big.bin" || fail "the old version was damaged"
# only_partial: the one ferry file left is the partial of big.bin
only_partial() {
  local left
  for _ in $(seq 1 100); do   # the session notices the end and closes it
    left=$(cd "$T/mod" && find . -name '.ferry-*' | tr '\n' ' ')
    [ "$left" = "./dst/.ferry-part.big.bin " ] && return 0
    sleep 0.05
  done
  fail "expected only dst/.ferry-part.big.bin, found: $left"
}
only_partial
[ "$(ls "$T/mod/dst")" = "big.bin" ] || fail "unexpected files: $(ls -a "$T/mod/dst")"

note "the next push completes the new version"
expect_rc 0 ferry_c push "$src/" "$(url m/dst)"
cmp "$src/big.bin" "$T/mod/dst/big.bin" || fail "new version not complete"
no_temp_files "$T/mod"
note "a daemon stopped mid-file leaves only the partial"
head -c $((64 << 20)) /dev/urandom > "$src/big.bin"
# shellcheck disable=SC2086
$FERRY_CLIENT push --identity "$T/clienthome/id_ferry" --known-hosts "$T/clienthome/known_hosts" \
  --bwlimit 4M "$src/" "$(url m/dst)" > /dev/null 2>&1 &
cpid=$!
for _ in $(seq 1 200); do   # a partial worth keeping (64 KiB and more) is there
  [ "$(stat -c %s "$T/mod/dst/.ferry-part.big.bin" 2> /dev/null || echo 0)" -ge 1048576 ] && break
  sleep 0.05
done
cp "$T/mod/dst/big.bin" "$T/old-version"
stop_server
wait $cpid 2> /dev/null && fail "the client did not notice the server stopping"
only_partial
cmp "$T/old-version" "$T/mod/dst/big.bin" || fail "the old version was damaged"

note "Ctrl-C of a pull says what it leaves: the partial (resume), or nothing (--no-resume)"
start_server
# interrupt_pull WAIT_FOR ARGS...: a slow pull of big.bin into $T/back, SIGINT
# once WAIT_FOR (a find -name pattern) shows up there; its stderr in $T/int.err
interrupt_pull() {
  local want=$1; shift
  mkdir -p "$T/back"
  # shellcheck disable=SC2086
  $FERRY_CLIENT pull --identity "$T/clienthome/id_ferry" --known-hosts "$T/clienthome/known_hosts" --accept-new \
    --bwlimit 4M "$@" "$(url m/dst/big.bin)" "$T/back/" > /dev/null 2> "$T/int.err" &
  cpid=$!
  for _ in $(seq 1 200); do
    [ -n "$(find "$T/back" -name "$want" -size +100k)" ] && break
    sleep 0.05
  done
  kill -INT $cpid
  local rc=0
  wait $cpid || rc=$?
  [ "$rc" = 20 ] || { cat "$T/int.err"; fail "a pull stopped by SIGINT: exit $rc, not 20"; }
}
interrupt_pull '.ferry-part.big.bin'
grep -q "stopped by a signal (no file is left half-written under its name; what arrived of a big file is kept" "$T/int.err" ||
  { cat "$T/int.err"; fail "the message does not say the partial is kept"; }
[ -s "$T/back/.ferry-part.big.bin" ] || fail "no partial kept after Ctrl-C"
[ ! -e "$T/back/big.bin" ] || fail "a half file under the final name"
rm -rf "$T/back"
interrupt_pull '.ferry-*' --no-resume
grep -q "stopped by a signal (no file is left half-written under its name; --no-resume: nothing partial is kept)" "$T/int.err" ||
  { cat "$T/int.err"; fail "--no-resume: the message does not say nothing is kept"; }
[ -z "$(ls -A "$T/back")" ] || fail "--no-resume: left $(ls -A "$T/back")"
echo "PASS"
