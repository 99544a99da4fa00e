#!/usr/bin/env bash
# Issue 13: snapshots. A week of backups (tests/e2e/snapweek.py: rewrites,
# adds, deletes, mode- and mtime-only changes, symlinks retargeted, whole
# directories gone, a file that becomes a directory and back) pushed with
# `-a --delete` to a module with `snapshots = yes`, one snapshot a day; then
# every day restored with `pull HOST:MODULE@SNAP/` and compared, contents and
# metadata, with what was pushed that day. At each protection level (the
# full week at `none`, two days at the others). Then: reading one file,
# selectors, what is refused, a push killed -9 (undone by the next one), and
# two pushes at once (serialized). SNAP_QUICK=1 (the emulated MIPS daemon's
# run, make cross-mips): three days at none, the selectors and refusals.
. "$(dirname "$0")/lib.sh"

WEEK=$(dirname "$0")/snapweek.py
SEED=${SNAP_SEED:-13}
FILES=${SNAP_FILES:-300}
mkdir -p "$T/mi" "$T/ev" "$T/me" "$T/plain" "$T/mx" "$T/mf"
write_config "snapshots = yes" \
  "[mi]" "path = $T/mi" "protection = integrity" "snapshots = yes" \
  "[me]" "path = $T/me" "protection = encrypt" "append only = yes" \
  "[plain]" "path = $T/plain" "protection = none" \
  "[ev]" "path = $T/ev" "protection = none" "snapshots = yes" \
  "[mx]" "path = $T/mx" "protection = none" "append only = yes" \
  "[mf]" "path = $T/mf" "protection = none" "snapshots = yes" "fake super = yes"
start_server

mpath() { if [ "$1" = m ]; then echo "$T/mod"; else echo "$T/$1"; fi; }
nsnaps() { ferry_c ls "$(url "$1@")" | tail -n +2 | grep -c . || true; }
snapname() { ferry_c ls "$(url "$1@")" | tail -n +2 | sed -n "$2p" | awk '{print $1}'; }

# week MODULE DAYS: pushes DAYS days, keeps each day's tree, restores all
week() {
  local mod=$1 days=$2 src=$T/src-$1
  python3 "$WEEK" init "$src" "$SEED" "$FILES"
  for d in $(seq 0 $((days - 1))); do
    [ "$d" = 0 ] || python3 "$WEEK" day "$src" "$SEED" "$d"
    ferry_c push -a --delete "$src/" "$(url "$mod")/" > /dev/null || fail "$mod: push of day $d"
    cp -a "$src" "$T/$mod-day$d"
  done
  [ "$(nsnaps "$mod")" = "$days" ] || fail "$mod: $(nsnaps "$mod") snapshots after $days pushes"
  for d in $(seq 0 $((days - 1))); do
    rm -rf "$T/r"
    ferry_c pull -a "$(url "$mod@-$((days - 1 - d))")/" "$T/r" > /dev/null ||
      fail "$mod: restore of day $d"
    same_tree "$T/$mod-day$d" "$T/r"
  done
  # the latest is the module's plain tree
  diff -r --no-dereference -x .ferry-history "$src" "$(mpath "$1")" > /dev/null ||
    fail "$mod: the module's tree is not the last day's"
}

QUICK=${SNAP_QUICK:-0}
DAYS=7
[ "$QUICK" = 1 ] && DAYS=3 FILES=${SNAP_FILES:-60}
note "a week of snapshots at protection none, two days at integrity and encrypt"
week m "$DAYS"
if [ "$QUICK" != 1 ]; then
  week mi 2
  week me 2
fi

note "nothing changed: no snapshot"
ferry_c push -a --delete "$T/src-m/" "$(url m)/" > /dev/null || fail "no-op push"
[ "$(nsnaps m)" = "$DAYS" ] || fail "an unchanged push made a snapshot"
grep -q "nothing changed: no snapshot" "$T/server.log" || fail "the no-op push was not logged"

LASTDAY=$((DAYS - 1))
note "a push reported done is a snapshot, even if the daemon stops right after"
echo "one more" > "$T/src-m/one-more"
ferry_c push -a "$T/src-m/" "$(url m)/" > /dev/null || fail "push before the stop"
stop_server
start_server
[ "$(nsnaps m)" = $((DAYS + 1)) ] || fail "the push reported done left no snapshot"
rm "$T/src-m/one-more"
ferry_c push -a --delete "$T/src-m/" "$(url m)/" > /dev/null || fail "push after the stop"
[ "$(nsnaps m)" = $((DAYS + 2)) ] || fail "$(nsnaps m) snapshots after the push that followed"
DAYS=$((DAYS + 2))

note "selectors: a name, -N, latest, a date prefix; one file from the oldest"
name2=$(snapname m 3)
rm -rf "$T/r" && ferry_c pull -a "$(url "m@$name2")/" "$T/r" > /dev/null || fail "pull by name"
same_tree "$T/m-day2" "$T/r"
# the view it was read from is emptied by its session once the client is gone
# (under the sandbox too); the next view's session removes the empty root
wait_sessions
views=$(find "$T/mod/.ferry-history" -maxdepth 1 -type d -name 'view.*')
[ -n "$views" ] || fail "no view was made for an older snapshot"
left=$(find $views -mindepth 1 | head -n 3)
[ -z "$left" ] || fail "the session left its view: $left"
grep -q "snapshot view" "$T/server.log" && fail "$(grep "snapshot view" "$T/server.log")"
last=$((DAYS - 1))   # day 0 is -$last
rm -rf "$T/r" && ferry_c pull -a "$(url "m@latest")/" "$T/r" > /dev/null || fail "pull @latest"
same_tree "$T/m-day$LASTDAY" "$T/r"
rm -rf "$T/r" && ferry_c pull -a "$(url "m@$(date -u +%Y-%m-%d)")/" "$T/r" > /dev/null ||
  fail "pull by date"
same_tree "$T/m-day$LASTDAY" "$T/r"
one=$(cd "$T/m-day0" && find . -type f -size +1k | LC_ALL=C sort | head -n 1 | cut -c3-)
rm -f "$T/one"
ferry_c pull "$(url "m@-$last/$one")" "$T/one" > /dev/null || fail "one file from day 0"
cmp "$T/one" "$T/m-day0/$one" || fail "one file from day 0 differs"
ferry_c ls "$(url "m@-$last/$(dirname "$one")")" | grep -q " $(basename "$one")\$" ||
  fail "ls of a directory in day 0 does not show $one"

note "what is refused"
# refused CMD...: the server refuses (exit 5, or 3 for a path it will not use)
refused() {
  local rc=0
  "$@" > "$T/last.out" 2> "$T/last.err" || rc=$?
  [ "$rc" = 5 ] || [ "$rc" = 3 ] || { cat "$T/last.err" >&2; fail "expected a refusal, got $rc: $*"; }
  grep -q refused "$T/last.err" || fail "no refusal said: $(cat "$T/last.err")"
}
# a source (a snapshot, a path in one) the box does not find: rsync's 23, in the box's words
not_found() {
  local rc=0
  "$@" > "$T/last.out" 2> "$T/last.err" || rc=$?
  [ "$rc" = 23 ] || { cat "$T/last.err" >&2; fail "expected 23 (no such source), got $rc: $*"; }
  grep -q refused "$T/last.err" || fail "no refusal said: $(cat "$T/last.err")"
}
refused ferry_c push -a "$T/src-m/" "$(url m@latest)/"
grep -q "a snapshot is never changed" "$T/last.err" || fail "push to a snapshot: $(cat "$T/last.err")"
refused ferry_c push -a "$T/src-m/" "$(url m/.ferry-history)/"
grep -q "snapshot history is not part" "$T/last.err" || fail "push into the history: $(cat "$T/last.err")"
refused ferry_c pull -a "$(url m/.ferry-history/snaps)/" "$T/x"
refused ferry_c ls "$(url "m@..")"
not_found ferry_c ls "$(url "m@-99")"
grep -q "there are $DAYS snapshots" "$T/last.err" || fail "-99: $(cat "$T/last.err")"
not_found ferry_c ls "$(url "m@nosuch")"
# a snapshot that does not exist is no missing file: --ignore-missing-args does not hide it
not_found ferry_c pull -a --ignore-missing-args "$(url "m@nosuch")/" "$T/nosuch"
long=$(head -c 10000 /dev/zero | tr '\0' 'x')
rc=0; ferry_c ls "$(url "m@$long")" > /dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "a 10,000-byte snapshot name was taken"
refused ferry_c ls "$(url plain@)"
grep -q "keeps no snapshots" "$T/last.err" || fail "plain@: $(cat "$T/last.err")"
refused ferry_c push -a -b "$T/src-m/" "$(url m)/"
rm -rf "$T/r" && not_found ferry_c pull -a "$(url "m@-$last/no/such/path")" "$T/r"
grep -q "not in that snapshot" "$T/last.err" || fail "missing path: $(cat "$T/last.err")"
# a tree that brings its own .ferry-history: not written, the real one intact
mkdir -p "$T/evil/.ferry-history/snaps"
echo forged > "$T/evil/.ferry-history/snaps/info"
cp -a "$T/src-m/." "$T/evil/"
ferry_c push -a "$T/evil/" "$(url m)/" > /dev/null || fail "push of a tree with .ferry-history"
[ -e "$T/mod/.ferry-history/snaps/info" ] && fail "a pushed .ferry-history was written"
[ "$(nsnaps m)" = "$DAYS" ] || fail "the history changed: $(nsnaps m) snapshots"
ferry_c ls -r "$(url m)" | grep -q ferry-history && fail "ls shows the history"
[ -z "$(ls -A "$T/mod/.ferry-history" | grep -v -e '^lock$' -e '^snaps$' -e '^view\.')" ] ||
  fail "stray files in the history: $(ls -A "$T/mod/.ferry-history")"
# a push whose path goes through a committed file fails, and its undo keeps
# that file (it once logged the file as added by the push, and the undo
# removed it from the tree and so from every snapshot sharing it)
victim=$(cd "$T/mod" && find . -path ./.ferry-history -prune -o -type f -print | sed -n '1s|^\./||p')
[ -n "$victim" ] || fail "no file in the module"
cp "$T/mod/$victim" "$T/victim.before"
mkdir -p "$T/through" && echo x > "$T/through/x"
rc=0; ferry_c push -a "$T/through/" "$(url "m/$victim/sub")/" > /dev/null 2> "$T/last.err" || rc=$?
[ "$rc" != 0 ] || fail "a push through the file $victim succeeded"
cmp -s "$T/mod/$victim" "$T/victim.before" || fail "the failed push's undo removed $victim"
grep -q "is in the way" "$T/last.err" || fail "push through a file ($victim): $(cat "$T/last.err")"
[ "$(nsnaps m)" = "$DAYS" ] || fail "the failed push made a snapshot"

if [ "$QUICK" = 1 ]; then echo "ok (quick)"; exit 0; fi

note "a forged stream cannot make the snapshot before show its changes"
# A client lists a/b, replaces a/b/g, then lists a again without b and with
# --delete: moving b whole into the history would take the new g with it,
# and the snapshot before would show it. The deletion is refused instead.
mkdir -p "$T/evsrc/a/b"
echo orig > "$T/evsrc/a/b/g"
ferry_c push -a "$T/evsrc/" "$(url ev)/" > /dev/null || fail "ev push 1"
echo x > "$T/evsrc/a/x"
ferry_c push -a "$T/evsrc/" "$(url ev)/" > /dev/null || fail "ev push 2"
printf '%s\n' 'DIR_BEGIN 0 ""' 'ENTRY dir a' 'DIR_END' 'DIR_BEGIN 0 a' 'ENTRY dir b' 'DIR_END' \
  'DIR_BEGIN 0 a/b' 'ENTRY file g 0644 10' 'DIR_END' 'FILE_BEGIN 2 10' 'DATA 10' 'FILE_END' \
  'HOLD 0.5' 'DIR_BEGIN 0 a' 'DIR_END' 'END' > "$T/evil.script"
rc=0
EVIL_NO_DATA=1 EVIL_PROTECTION=0 "$FERRY_TOOLS/ferry-evil" push-script 127.0.0.1 "$PORT" \
  "$T/clienthome/id_ferry" ev "" "$T/evil.script" 0x11 > "$T/evil.out" 2>&1 || rc=$?
grep -q "not removed: what is in it changed earlier in this push" "$T/evil.out" "$T/server.log" ||
  { cat "$T/evil.out"; fail "the forged deletion was not refused"; }
rm -rf "$T/r" && ferry_c pull -a "$(url "ev@-1")/" "$T/r" > /dev/null || fail "restore ev@-1"
[ "$(cat "$T/r/a/b/g")" = orig ] || fail "the snapshot before shows the forged g: $(cat "$T/r/a/b/g")"
[ "$(cat "$T/ev/a/b/g")" = AAAAAAAAAA ] || fail "the latest g: $(cat "$T/ev/a/b/g")"

note "a push killed -9 (its session) is undone by the next push"
session_pid() { sed -n 's/.*\] connection, pid \([0-9]*\)$/\1/p' "$T/server.log" | tail -n 1; }
src=$T/src-m
python3 "$WEEK" day "$src" "$SEED" 7
head -c 8M /dev/urandom > "$src/zz-big"
for k in 1 2 3; do
  n0=$(grep -c '\] connection, pid ' "$T/server.log" || true)
  ferry_c push -a --delete --bwlimit 2M "$src/" "$(url m)/" > /dev/null 2>&1 &
  cpid=$!
  # killed once its session runs and an increment has a record (its own, or
  # the last killed push's, which it undoes first), at a random point after
  # that: it sends 8 MiB at 2 MB/s, so it is never done by then. (Waiting
  # for the increment alone once found the last push's and read the last
  # session's pid before this push had connected: no kill, one snapshot more.)
  for _ in $(seq 1 400); do
    [ "$(grep -c '\] connection, pid ' "$T/server.log")" -gt "$n0" ] &&
      [ -s "$T/mod/.ferry-history/snaps/new.tmp/log" ] && break
    sleep 0.05
  done
  sleep "0.$((RANDOM % 6))"
  spid=$(session_pid)
  [ "$(ps -o ppid= -p "$spid" | tr -d ' ')" = "$SERVER_PID" ] ||
    fail "push $k: its session ($spid) is not running to be killed"
  kill -9 "$spid"
  wait $cpid 2> /dev/null || true
  wait_sessions
done
[ "$(nsnaps m)" = "$DAYS" ] || fail "a killed push left a snapshot"
# before any other push: a restore sees the last snapshot, not the killed
# push's half (its reader undoes it first)
for sel in latest -0; do
  rm -rf "$T/r" && ferry_c pull -a "$(url "m@$sel")/" "$T/r" > /dev/null || fail "restore m@$sel after the kills"
  same_tree "$T/m-day$LASTDAY" "$T/r"
done
grep -q "undoing a push to this module that did not finish" "$T/server.log" ||
  fail "no killed push was undone"
ferry_c push -a --delete "$src/" "$(url m)/" > /dev/null || fail "the push after the kills"
[ "$(nsnaps m)" = $((DAYS + 1)) ] || fail "$(nsnaps m) snapshots after the push that followed the kills"
# (its output kept: a rare failure here, once under ASan, is not yet explained)
diff -r --no-dereference -x .ferry-history "$src" "$T/mod" > "$T/diff.out" 2>&1 ||
  { cat "$T/diff.out"; ls -la "$T/mod" | head -n 40; fail "the module's tree is not what was pushed"; }
for d in 0 3 6; do
  rm -rf "$T/r" && ferry_c pull -a "$(url "m@-$((DAYS - d))")/" "$T/r" > /dev/null || fail "restore $d"
  same_tree "$T/m-day$d" "$T/r"
done

note "two pushes at once: one after the other, each a whole snapshot"
cp -a "$src" "$T/other" && rm -rf "$T/other/zz-big" && echo other > "$T/other/only-other"
echo first > "$T/src-m/only-first"   # both pushes change something
ferry_c push -a --delete --bwlimit 4M "$T/src-m/" "$(url m)/" > /dev/null &
p1=$!
sleep 0.2
ferry_c push -a --delete "$T/other/" "$(url m)/" > /dev/null || fail "the second push"
wait $p1 || fail "the first push"
[ "$(nsnaps m)" -ge $((DAYS + 3)) ] || fail "$(nsnaps m) snapshots after two pushes at once"
for k in -1 -0; do
  rm -rf "$T/r" && ferry_c pull -a "$(url "m@$k")/" "$T/r" > /dev/null || fail "restore @$k"
  diff -r --no-dereference "$T/r" "$T/other" > /dev/null 2>&1 ||
    diff -r --no-dereference "$T/r" "$T/src-m" > /dev/null ||
    fail "snapshot @$k is neither push's tree"
done

note "an xattr-only change of a file is a new version: the snapshot before keeps the old xattrs"
# (they were rewritten in place, in the inode every snapshot shares, with no
# new snapshot: a stolen key could forge them in the history)
mkdir -p "$T/src-x/d" && echo data > "$T/src-x/d/f"
setfattr -n user.tag -v orig "$T/src-x/d/f"
# ... and a directory's xattrs and ACLs (access and default), and a file's
# xattr when only its mode changes later: a snapshot view makes its own
# copies of those, which must carry what the entry had then
setfattr -n user.tag -v dir-orig "$T/src-x/d"
setfacl -m u:nobody:rx -d -m u:nobody:r "$T/src-x/d"
echo g > "$T/src-x/d/g"; setfattr -n user.tag -v g-tag "$T/src-x/d/g"
ferry_c push -aXA "$T/src-x/" "$(url mx)/" > /dev/null || fail "mx: first push"
setfattr -n user.tag -v FORGED "$T/src-x/d/f"
setfattr -n user.tag -v dir-new "$T/src-x/d"
setfacl -b "$T/src-x/d"
chmod 600 "$T/src-x/d/g"
ferry_c push -aXA "$T/src-x/" "$(url mx)/" > /dev/null || fail "mx: the xattr push"
[ "$(nsnaps mx)" = 2 ] || fail "mx: $(nsnaps mx) snapshots after an xattr-only change"
tag_of() { getfattr --only-values -n user.tag "$1" 2> /dev/null; }
acl_of() { getfacl -cp "$1" 2> /dev/null | grep -c nobody; }
for k in -1 -0; do
  rm -rf "$T/r" && ferry_c pull -aXA "$(url "mx@$k")/" "$T/r" > /dev/null || fail "mx: restore @$k"
  want=orig wd=dir-orig wacl=2 wmode=644; [ "$k" = -0 ] && want=FORGED wd=dir-new wacl=0 wmode=600
  [ "$(tag_of "$T/r/d/f")" = "$want" ] || fail "mx@$k: user.tag is '$(tag_of "$T/r/d/f")', not $want"
  [ "$(tag_of "$T/r/d")" = "$wd" ] || fail "mx@$k: the directory's user.tag is '$(tag_of "$T/r/d")', not $wd"
  [ "$(acl_of "$T/r/d")" = "$wacl" ] || { getfacl -p "$T/r/d"; fail "mx@$k: the directory's ACLs are not as pushed"; }
  [ "$(tag_of "$T/r/d/g")" = g-tag ] && [ "$(stat -c %a "$T/r/d/g")" = "$wmode" ] ||
    fail "mx@$k: g has '$(tag_of "$T/r/d/g")' and mode $(stat -c %a "$T/r/d/g"), not g-tag and $wmode"
done
# a push killed after it changed the directory's xattrs is undone, xattrs too
mkdir -p "$T/src-x/z"; head -c 8M /dev/urandom > "$T/src-x/z/big"
setfattr -n user.tag -v dir-killed "$T/src-x/d"
ferry_c push -aXA --bwlimit 2M "$T/src-x/" "$(url mx)/" > /dev/null 2>&1 &
cpid=$!
for _ in $(seq 1 200); do ls -a "$T/mx/z" 2> /dev/null | grep -q '^\.ferry-' && break; sleep 0.05; done
[ "$(tag_of "$T/mx/d")" = dir-killed ] || fail "mx: the push did not change the directory's xattr before z/big"
kill -9 "$(session_pid)"
wait $cpid 2> /dev/null || true
wait_sessions
rm -rf "$T/r" && ferry_c pull -aX "$(url "mx@latest")/" "$T/r" > /dev/null || fail "mx: restore after the kill"
[ "$(tag_of "$T/r/d")" = dir-new ] && [ "$(tag_of "$T/mx/d")" = dir-new ] ||
  fail "mx: the killed push's directory xattr stayed ('$(tag_of "$T/mx/d")' in the tree)"

note "fake super: a change of the stored mode alone keeps the old one in the snapshot before"
# (0440 and 0444 are both 0644 on the box: only user.rsync.%stat changes)
mkdir -p "$T/src-f"; echo f > "$T/src-f/f"; chmod 440 "$T/src-f/f"
ferry_c push -a "$T/src-f/" "$(url mf)/" > /dev/null || fail "mf: first push"
chmod 444 "$T/src-f/f"
ferry_c push -a "$T/src-f/" "$(url mf)/" > /dev/null || fail "mf: the mode push"
[ "$(nsnaps mf)" = 2 ] || fail "mf: $(nsnaps mf) snapshots after a stored-mode change"
for k in -1 -0; do
  rm -rf "$T/r" && ferry_c pull -a "$(url "mf@$k")/" "$T/r" > /dev/null || fail "mf: restore @$k"
  want=440; [ "$k" = -0 ] && want=444
  [ "$(stat -c %a "$T/r/f")" = "$want" ] || fail "mf@$k: mode $(stat -c %a "$T/r/f"), not $want"
done
echo "ok"
