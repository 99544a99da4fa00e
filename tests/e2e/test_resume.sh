#!/usr/bin/env bash
# Resume (issue 11, item 2): an interrupted transfer keeps what arrived under
# a hidden partial name (never the final name, never listed), and the next
# run of the same transfer sends only what is missing; both directions, after
# kill -9 of the client, of the server's session, and a connection cut by a
# proxy; a partial of a source that changed meanwhile is discarded; a run
# stopped by --stop-after (exit 30) resumes the same way.
. "$(dirname "$0")/lib.sh"

MIB=$((1 << 20))
SIZE=$((32 * MIB))
src=$T/src
dst=$T/dst
mkdir -p "$src" "$dst"
write_config "[r]" "path = $T/mod" "protection = encrypt"
start_server
ferry_v() { ferry_c "$@"; }
# ferry_bg ARGS... &: the client in the background, as $! itself (exec)
ferry_bg() {
  # shellcheck disable=SC2086
  exec $FERRY_CLIENT "$1" --identity "$T/clienthome/id_ferry" \
    --known-hosts "$T/clienthome/known_hosts" --accept-new "${@:2}" > /dev/null 2>&1
}

# size_of FILE: its size, 0 if it is not there
size_of() { stat -c %s "$1" 2> /dev/null || echo 0; }

# wait_for FILE BYTES: until FILE holds at least BYTES (10 s at most)
wait_for() {
  for _ in $(seq 1 200); do
    [ "$(size_of "$1")" -ge "$2" ] && return 0
    sleep 0.05
  done
  fail "$1 did not reach $2 bytes (has $(size_of "$1"))"
}

# sent_by LOG WHICH: "Total bytes sent|received" of a --stats run
stat_of() { sed -n "s/^$2: \([0-9]*\) bytes$/\1/p" "$1"; }

# session_pid: the pid of the newest session in the server log
session_pid() { sed -n 's/.*\] connection, pid \([0-9]*\)$/\1/p' "$T/server.log" | tail -n 1; }

# only_partial DIR NAME: the only ferry file left in DIR is NAME's partial
only_partial() {
  local left
  left=$(cd "$1" && find . -name '.ferry-*' | sort | tr '\n' ' ')
  [ "$left" = "./.ferry-part.$2 " ] || fail "expected only .ferry-part.$2 in $1, found: $left"
}

# check_prefix PARTIAL FULL: the partial is a prefix of the new version
check_prefix() {
  local n
  n=$(size_of "$1")
  [ "$n" -gt 0 ] || fail "no partial $1"
  cmp -n "$n" "$1" "$2" || fail "the partial is not a prefix of the new version"
}

# push_killed MODULE/DIR/ BYTES: a push of big.bin, the client killed -9
# once the partial holds BYTES; back when the session has noticed the end
# of the connection and closed the partial
push_killed() {
  local cpid
  ferry_bg push --bwlimit 8M "$src/big.bin" "$(url "$1")" &
  cpid=$!
  wait_for "$T/mod/${1#*/}.ferry-part.big.bin" "$2"
  kill -9 $cpid
  wait $cpid 2> /dev/null || true
  wait_sessions
}

# --- push, the client killed ------------------------------------------------
for mod in m r; do   # protection none and encrypt
  note "push to $mod: kill -9 of the client mid-file, then the rerun resumes"
  rm -rf "$T/mod/p$mod"
  head -c $SIZE /dev/urandom > "$src/big.bin"
  push_killed "$mod/p$mod/" $((10 * MIB))
  [ -e "$T/mod/p$mod/big.bin" ] && fail "a partial file under the final name"
  only_partial "$T/mod/p$mod" big.bin
  check_prefix "$T/mod/p$mod/.ferry-part.big.bin" "$src/big.bin"
  part=$(size_of "$T/mod/p$mod/.ferry-part.big.bin")
  ferry_v ls "$(url "$mod/p$mod/")" > "$T/ls.out" 2>&1 || true
  grep -q 'ferry-part' "$T/ls.out" && fail "ls shows the partial: $(cat "$T/ls.out")"
  ferry_v pull "$(url "$mod/p$mod/")" "$T/peek/" > /dev/null 2>&1 || true
  [ -z "$(ls -A "$T/peek" 2> /dev/null)" ] || fail "pull fetched the partial: $(ls -A "$T/peek")"
  rm -rf "$T/peek"
  ferry_v push --stats "$src/big.bin" "$(url "$mod/p$mod/")" > "$T/out" 2>&1 ||
    fail "rerun failed: $(cat "$T/out")"
  cmp "$src/big.bin" "$T/mod/p$mod/big.bin" || fail "resumed file differs"
  no_temp_files "$T/mod/p$mod"
  sent=$(stat_of "$T/out" "Total bytes sent")
  matched=$(stat_of "$T/out" "Matched data")
  [ "$matched" -ge $((part - MIB)) ] || fail "matched $matched of a $part-byte partial"
  [ "$sent" -le $((SIZE - part + 2 * MIB)) ] ||
    fail "the rerun sent $sent bytes, with $part of $SIZE there already"
  note "  partial $part B, rerun sent $sent B, matched $matched B"
done

# --- push, the server's session killed, with an old version too -------------
note "push: kill -9 of the server's session; old version and partial both bases"
head -c $SIZE /dev/urandom > "$src/w3.bin"
expect_rc 0 ferry_c push "$src/w3.bin" "$(url r/w3/)"
cp "$T/mod/w3/w3.bin" "$T/old-w3"
# the new version: the old one with 1 MiB changed in the middle and 8 MiB
# appended, so both the old version and the partial have blocks to give
head -c $MIB /dev/urandom | dd of="$src/w3.bin" bs=1M seek=16 conv=notrunc status=none
head -c $((8 * MIB)) /dev/urandom >> "$src/w3.bin"
ferry_bg push --bwlimit 2M "$src/w3.bin" "$(url r/w3/)" &
cpid=$!
wait_for "$T/mod/w3/.ferry-part.w3.bin" $((20 * MIB))
spid=$(session_pid)
[ -n "$spid" ] && kill -9 "$spid"
wait $cpid 2> /dev/null && fail "the client did not notice its session dying"
cmp "$T/old-w3" "$T/mod/w3/w3.bin" || fail "the old version was damaged"
only_partial "$T/mod/w3" w3.bin
check_prefix "$T/mod/w3/.ferry-part.w3.bin" "$src/w3.bin"
ferry_v push --stats "$src/w3.bin" "$(url r/w3/)" > "$T/out" 2>&1 || fail "rerun: $(cat "$T/out")"
cmp "$src/w3.bin" "$T/mod/w3/w3.bin" || fail "resumed w3 differs"
no_temp_files "$T/mod/w3"
sent=$(stat_of "$T/out" "Total bytes sent")
# what neither basis has: the 8 MiB appended beyond the partial (the changed
# MiB is in the partial)
[ "$sent" -le $((10 * MIB)) ] || fail "the rerun sent $sent bytes (expected about 8 MiB)"
note "  rerun sent $sent B"

# --- push, the connection cut by a proxy ------------------------------------
note "push: a proxy cuts the connection"
rm -rf "$T/mod/px"
head -c $SIZE /dev/urandom > "$src/big.bin"
start_proxy
ferry_bg push --bwlimit 8M "$src/big.bin" "$(purl r/px/)" &
cpid=$!
wait_for "$T/mod/px/.ferry-part.big.bin" $((8 * MIB))
kill -9 "$PROXY_PID"
wait $cpid 2> /dev/null && fail "the client did not notice the cut"
wait_sessions
only_partial "$T/mod/px" big.bin
part=$(size_of "$T/mod/px/.ferry-part.big.bin")
ferry_v push --stats "$src/big.bin" "$(url r/px/)" > "$T/out" 2>&1 || fail "rerun: $(cat "$T/out")"
cmp "$src/big.bin" "$T/mod/px/big.bin" || fail "resumed file differs after the cut"
sent=$(stat_of "$T/out" "Total bytes sent")
[ "$sent" -le $((SIZE - part + 2 * MIB)) ] || fail "after the cut the rerun sent $sent bytes"

# --- the source changed between the two runs ----------------------------------
note "push: a partial of a source that changed meanwhile is discarded"
rm -rf "$T/mod/ch"
head -c $SIZE /dev/urandom > "$src/big.bin"
push_killed r/ch/ $((8 * MIB))
head -c $SIZE /dev/urandom > "$src/big.bin"   # another version, same size
expect_rc 0 ferry_c push "$src/big.bin" "$(url r/ch/)"
cmp "$src/big.bin" "$T/mod/ch/big.bin" || fail "the new source did not arrive"
no_temp_files "$T/mod/ch"
grep -q 'partial file is of an older version; removed' "$T/server.log" ||
  fail "the daemon did not say it discarded the old partial"

# --- a partial too small to resume from ----------------------------------------
note "push: a partial too small to resume from gives its name to the new one"
# (it kept the name: the new data went to a random temporary, which a
# receiver killed -9 left behind; test_killpoints once found one)
rm -rf "$T/mod/sm"
push_killed r/sm/ $((2 * MIB))
truncate -s 1000 "$T/mod/sm/.ferry-part.big.bin"   # its tag stays: ferry's, of this version
ferry_bg push --bwlimit 8M "$src/big.bin" "$(url r/sm/)" &
cpid=$!
wait_for "$T/mod/sm/.ferry-part.big.bin" $((4 * MIB))
spid=$(session_pid)
[ -n "$spid" ] && kill -9 "$spid"
wait $cpid 2> /dev/null || true
wait_sessions
only_partial "$T/mod/sm" big.bin
check_prefix "$T/mod/sm/.ferry-part.big.bin" "$src/big.bin"
expect_rc 0 ferry_c push "$src/big.bin" "$(url r/sm/)"
cmp "$src/big.bin" "$T/mod/sm/big.bin" || fail "the file did not complete"
no_temp_files "$T/mod/sm"
# a user's own file of a partial's name (no tag) is neither used nor removed
echo "my notes" > "$T/mod/sm/.ferry-part.notes.bin"
head -c $((2 * MIB)) /dev/urandom > "$src/notes.bin"
expect_rc 0 ferry_c push "$src/notes.bin" "$(url r/sm/)"
[ "$(cat "$T/mod/sm/.ferry-part.notes.bin")" = "my notes" ] || fail "a user's .ferry-part file was changed"

# --- --no-resume --------------------------------------------------------------
note "--no-resume: an interrupted push leaves nothing"
rm -rf "$T/mod/nr"
ferry_bg push --no-resume --bwlimit 8M "$src/big.bin" "$(url r/nr/)" &
cpid=$!
for _ in $(seq 1 200); do
  find "$T/mod/nr" -name '.ferry-*' 2> /dev/null | grep -q . && break
  sleep 0.05
done
find "$T/mod/nr" -name '.ferry-part.*' | grep -q . && fail "--no-resume wrote a partial"
sleep 0.5
kill -9 $cpid
wait $cpid 2> /dev/null || true
wait_sessions
no_temp_files "$T/mod/nr"

# --- pull ---------------------------------------------------------------------
for who in client session; do
  note "pull: kill -9 of the $who mid-file, then the rerun resumes"
  rm -rf "$dst"
  mkdir -p "$dst"
  head -c $SIZE /dev/urandom > "$T/mod/pull.bin"
  ferry_bg pull --bwlimit 8M "$(url r/pull.bin)" "$dst/" &
  cpid=$!
  wait_for "$dst/.ferry-part.pull.bin" $((10 * MIB))
  if [ $who = client ]; then
    kill -9 $cpid
    wait $cpid 2> /dev/null || true
  else
    spid=$(session_pid)
    kill -9 "$spid"
    wait $cpid 2> /dev/null && fail "the client did not notice its session dying"
  fi
  [ -e "$dst/pull.bin" ] && fail "a partial file under the final name (pull)"
  only_partial "$dst" pull.bin
  check_prefix "$dst/.ferry-part.pull.bin" "$T/mod/pull.bin"
  part=$(size_of "$dst/.ferry-part.pull.bin")
  ferry_v pull --stats "$(url r/pull.bin)" "$dst/" > "$T/out" 2>&1 || fail "rerun: $(cat "$T/out")"
  cmp "$T/mod/pull.bin" "$dst/pull.bin" || fail "resumed pull differs"
  no_temp_files "$dst"
  got=$(stat_of "$T/out" "Total bytes received")
  [ "$got" -le $((SIZE - part + 2 * MIB)) ] ||
    fail "the pull rerun received $got bytes, with $part of $SIZE there already"
  note "  partial $part B, rerun received $got B"
done

# --- --stop-after ---------------------------------------------------------------
# a nightly window: the transfer stops at the limit with rsync's exit 30 and
# its words, what arrived stays as the partial, and the next run resumes it
note "--stop-after: push and pull stop at the limit (exit 30), the next run resumes"
head -c $SIZE /dev/urandom > "$src/big.bin"
rm -rf "$T/mod/sa" "$dst"; mkdir -p "$dst"
start=$(date +%s%N)
expect_rc 30 ferry_c push --bwlimit 4M --stop-after=0.05 "$src/big.bin" "$(url m/sa/)"
took=$((($(date +%s%N) - start) / 1000000))
grep -q "stopping at requested limit (--stop-after, --stop-at)" "$T/last.err" ||
  { cat "$T/last.err"; fail "push --stop-after: not said"; }
[ "$took" -ge 2900 ] && [ "$took" -lt 20000 ] || fail "push --stop-after=0.05 stopped after $took ms"
wait_sessions
[ -e "$T/mod/sa/big.bin" ] && fail "--stop-after left a file under its final name"
only_partial "$T/mod/sa" big.bin
check_prefix "$T/mod/sa/.ferry-part.big.bin" "$src/big.bin"
part=$(size_of "$T/mod/sa/.ferry-part.big.bin")
expect_rc 0 ferry_c push --stats "$src/big.bin" "$(url m/sa/)"
cmp "$src/big.bin" "$T/mod/sa/big.bin" || fail "the file resumed after --stop-after differs"
matched=$(stat_of "$T/last.out" "Matched data")
[ "$matched" -ge $((part - MIB)) ] || fail "matched $matched of a $part-byte partial (--stop-after)"
note "  push: stopped after $took ms, partial $part B, the rerun matched $matched B"
expect_rc 30 ferry_c pull --bwlimit 4M --stop-after=0.05 "$(url m/sa/big.bin)" "$dst/"
grep -q "stopping at requested limit" "$T/last.err" || { cat "$T/last.err"; fail "pull --stop-after: not said"; }
only_partial "$dst" big.bin
part=$(size_of "$dst/.ferry-part.big.bin")
# (rsync's habit -P --partial-dir=DIR: accepted; ferry resumes from its own partial)
expect_rc 0 ferry_c pull --stats -P --partial-dir=.rsync-partial "$(url m/sa/big.bin)" "$dst/"
cmp "$src/big.bin" "$dst/big.bin" || fail "the pull resumed after --stop-after differs"
[ ! -e "$dst/.rsync-partial" ] || fail "--partial-dir made its directory"
got=$(stat_of "$T/last.out" "Total bytes received")
[ "$got" -le $((SIZE - part + 2 * MIB)) ] || fail "the pull rerun received $got bytes, with $part there"
note "  pull: partial $part B, the rerun received $got B"
expect_rc 1 ferry_c push --stop-at=2020-01-01T00:00 "$src/big.bin" "$(url m/sa/)"
grep -q -- "--stop-at=2020-01-01T00:00: that time is not ahead" "$T/last.err" ||
  { cat "$T/last.err"; fail "a past --stop-at: not refused"; }
expect_rc 1 ferry_c push --stop-after=0 "$src/big.bin" "$(url m/sa/)"
expect_rc 1 ferry_c ls --stop-after=1 "$(url m/sa/)"
note "the clock starts when the options are read: a list read from a pipe meanwhile counts; a tiny limit is one"
rm -rf "$T/mod/sb"
start=$(date +%s%N)
(sleep 2; echo big.bin) | expect_rc 30 ferry_c push --bwlimit 4M --stop-after=0.05 --files-from=- "$src/" "$(url m/sb/)"
took=$((($(date +%s%N) - start) / 1000000))
[ "$took" -ge 2900 ] && [ "$took" -lt 4500 ] || fail "--stop-after=0.05 with a list arriving after 2 s stopped after $took ms"
expect_rc 30 ferry_c push --stop-after=0.000001 "$src/big.bin" "$(url m/sb/)"
wait_sessions
echo "PASS"
