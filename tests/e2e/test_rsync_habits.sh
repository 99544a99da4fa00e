#!/usr/bin/env bash
# Issue 10: an rsync user's first week. Summaries that never lie (exact
# counts from the receiver), partial failures as rsync has them, rsync's
# everyday flags, ports that never wrap, config checks, remote syntax.
# The exact-count cases need a daemon and a client that are not root (a
# root process can write and read everything): they run as "nobody" through
# setpriv, so this test needs root (CI runs as root).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || fail "needs root: the daemon and client run as nobody (setpriv) to meet unwritable and unreadable files"
command -v setpriv > /dev/null || fail "setpriv (util-linux) is needed"

mkdir -p "$T/pc"
chmod 755 "$T"

note "10.2: a missing source is named, the rest is sent, exit 23"
write_config
start_server
echo bashrc > "$T/pc/.bashrc"
expect_rc 23 ferry_c push "$T/pc/nosuchfile" "$T/pc/.bashrc" "$(url m/multi/)"
grep -q "nosuchfile: No such file" "$T/last.err" || fail "the missing source is not named"
cmp "$T/pc/.bashrc" "$T/mod/multi/.bashrc" || fail "the other source was not sent"
expect_rc 0 ferry_c push --ignore-missing-args "$T/pc/nosuchfile" "$T/pc/.bashrc" "$(url m/multi/)"

note "a source file that vanishes before it is read: exit 24, as rsync"
# vanish_during WATCH GONE CMD...: runs CMD (slowed by --bwlimit) into
# $T/van.out and van.err; once its first temporary file is in WATCH, GONE
# goes; rc is CMD's exit code
vanish_during() {
  local watch=$1 gone=$2 vpid; shift 2
  rc=0
  "$@" > "$T/van.out" 2> "$T/van.err" &
  vpid=$!
  for _ in $(seq 1 100); do ls -a "$watch" 2> /dev/null | grep -q '^\.ferry-' && break; sleep 0.05; done
  rm -r "$gone"
  wait $vpid || rc=$?
}
mkdir -p "$T/pc/van"
head -c 2000000 /dev/urandom > "$T/pc/van/a-big"
echo soon-gone > "$T/pc/van/z-gone"
vanish_during "$T/mod/van" "$T/pc/van/z-gone" ferry_c push --bwlimit 1M "$T/pc/van/" "$(url m/van/)"
[ "$rc" = 24 ] || { cat "$T/van.out" "$T/van.err"; fail "a vanished file: exit $rc, not 24"; }
grep -q "1 file(s) vanished before they were sent" "$T/van.err" || { cat "$T/van.err"; fail "not said"; }
cmp "$T/pc/van/a-big" "$T/mod/van/a-big" || fail "the other file did not land"
# the same on a pull: the box's file goes while the client is slowed by
# --bwlimit (16 MB at 4 MB/s, more than the sockets buffer)
mkdir -p "$T/mod/van2" "$T/back-van"
head -c 16000000 /dev/urandom > "$T/mod/van2/a-big"
echo soon-gone > "$T/mod/van2/z-gone"
vanish_during "$T/back-van" "$T/mod/van2/z-gone" ferry_c pull --bwlimit 4M "$(url m/van2/)" "$T/back-van/"
[ "$rc" = 24 ] || { cat "$T/van.out" "$T/van.err"; fail "pull: a vanished file: exit $rc, not 24"; }
grep -q "1 file(s) vanished before they were sent; first: z-gone: vanished on the sender" "$T/van.err" ||
  { cat "$T/van.err"; fail "pull: not said"; }
cmp "$T/mod/van2/a-big" "$T/back-van/a-big" || fail "pull: the other file did not land"
[ ! -e "$T/back-van/z-gone" ] || fail "pull: the vanished file was made"
# a directory that goes after it was listed: its file is named, then why
mkdir -p "$T/pc/van3/z-sub"; head -c 2000000 /dev/urandom > "$T/pc/van3/a-big"; echo x > "$T/pc/van3/z-sub/f"
vanish_during "$T/mod/van3" "$T/pc/van3/z-sub" ferry_c push --bwlimit 1M "$T/pc/van3/" "$(url m/van3/)"
[ "$rc" = 24 ] || { cat "$T/van.out" "$T/van.err"; fail "a vanished directory: exit $rc, not 24"; }
grep -q '^ferry: z-sub/f: open "z-sub": No such file' "$T/van.err" || { cat "$T/van.err"; fail "the vanished directory's file is not named"; }

note "10.4: ports are 1-65535 (0 = any for listen), never wrapped"
printf '[global]\nlisten = 127.0.0.1:99999\n[m]\npath = %s\nauthorized keys = %s\n' "$T/mod" \
  "$T/serverhome/authorized_keys" > "$T/bad.conf"
expect_rc 1 $FERRY_SERVER serve --config "$T/bad.conf" --check-config
grep -q "bad.conf:2:.*99999" "$T/last.err" || fail "listen 99999 not refused with file:line: $(cat "$T/last.err")"
expect_rc 1 $FERRY_SERVER serve "$T/mod" --listen 127.0.0.1:99999 --check-config
grep -q "\-\-listen.*99999" "$T/last.err" || fail "--listen 99999 not refused: $(cat "$T/last.err")"
expect_rc 1 ferry_c ls "ferry://127.0.0.1:99999/m"
grep -q "bad port '99999'" "$T/last.err" || fail "client port 99999 not refused"
expect_rc 1 ferry_c ls --port 99999 "127.0.0.1:m"
expect_rc 1 ferry_c ls --port 0 "127.0.0.1:m"

note "10.5: a module nobody can use is an error at start"
printf '[global]\n[lonely]\npath = %s\n' "$T/mod" > "$T/nokeys.conf"
expect_rc 1 $FERRY_SERVER serve --config "$T/nokeys.conf" --check-config
grep -q "nokeys.conf:2: module 'lonely' has no authorized keys" "$T/last.err" || fail "no keys: $(cat "$T/last.err")"
printf '[global]\n[gone]\npath = %s\nauthorized keys = /nonexistent\n' "$T/mod" > "$T/gone.conf"
expect_rc 1 $FERRY_SERVER serve --config "$T/gone.conf" --check-config
grep -q "gone.conf:2: module 'gone'.*/nonexistent" "$T/last.err" || fail "missing keys file: $(cat "$T/last.err")"
printf '[global]\n[closed]\npath = %s\nauthorized keys = none\n' "$T/mod" > "$T/closed.conf"
expect_rc 0 $FERRY_SERVER serve --config "$T/closed.conf" --check-config

note "10.8: HOST:NNNN/..., HOST::MODULE, --port, rsync://"
expect_rc 5 ferry_c ls --port "$PORT" "127.0.0.1:12345/x"
grep -q "names module '12345'.*ferry://HOST:12345/MODULE or --port 12345" "$T/last.err" ||
  fail "no hint for a numeric module: $(cat "$T/last.err")"
# the same hint when nothing listens where HOST:NNNN/... leads
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
expect_rc 10 ferry_c ls --port "$closed" "127.0.0.1:12345/x"
grep -q "cannot connect.*names module '12345'.*or --port 12345" "$T/last.err" ||
  fail "no hint for a numeric module with nothing listening: $(cat "$T/last.err")"
# a pull's destination that cannot be one: this side's error, exit 3, no host in front
echo x > "$T/a-file"
expect_rc 3 ferry_c pull "$(url m/multi)" "$T/a-file"
grep -qx "ferry: mkdir \"a-file\": exists and is not a directory" "$T/last.err" ||
  fail "a file as the destination: $(cat "$T/last.err")"
expect_rc 3 ferry_c pull "$(url m/multi)" "$T/no-such/sub/new"
grep -q "destination .*/no-such/sub/new: .*/no-such/sub does not exist (only the last part" "$T/last.err" ||
  fail "a destination under a missing directory: $(cat "$T/last.err")"
expect_rc 0 ferry_c ls --port "$PORT" "127.0.0.1::m/multi"
grep -q "\.bashrc" "$T/last.out" || fail "HOST::MODULE did not list the module"
expect_rc 1 ferry_c ls "rsync://127.0.0.1:$PORT/m"
grep -q "ferry://HOST" "$T/last.err" || fail "rsync:// not explained"

note "several sources into one directory: a contents source beside others, or two by one name, refused in one line before anything is sent (rsync merges them; ferry walks each source as its own tree)"
mkdir -p "$T/ms/a" "$T/ms/b" "$T/ms2/a"; echo 1 > "$T/ms/a/x"; echo 2 > "$T/ms/b/y"; echo 3 > "$T/ms2/a/q"
for srcs in "$T/ms/a/ $T/ms/b/" "$T/ms/a/ $T/ms/b" "$T/ms/a $T/ms/b/" "$T/ms/a $T/ms2/a"; do
  # shellcheck disable=SC2086
  expect_rc 1 ferry_c push -a $srcs "$(url m/merged)"
  [ "$(wc -l < "$T/last.err")" = 1 ] || { cat "$T/last.err"; fail "push $srcs: not one line"; }
  grep -q "ferry cannot merge" "$T/last.err" || { cat "$T/last.err"; fail "push $srcs: no reason"; }
  [ ! -e "$T/mod/merged" ] || fail "push $srcs: something was sent"
done
expect_rc 0 ferry_c push -a "$T/ms/a" "$T/ms/b" "$(url m/merged)"   # two names: as before
[ -f "$T/mod/merged/a/x" ] && [ -f "$T/mod/merged/b/y" ] || fail "push a b: not both"

note "10.9: -i itemizes as rsync, --stats, -h, --size-only, -I"
mkdir -p "$T/src/sub"
head -c 2500000 /dev/urandom > "$T/src/big"
echo one > "$T/src/sub/one"
expect_rc 0 ferry_c push -i "$T/src/" "$(url m/i)"
grep -qx "<f+++++++++ big" "$T/last.out" || { cat "$T/last.out"; fail "-i: no '<f+++++++++ big'"; }
grep -qx "cd+++++++++ sub/" "$T/last.out" || { cat "$T/last.out"; fail "-i: no 'cd+++++++++ sub/' (rsync's, with the slash)"; }
echo three > "$T/src/sub/one"; touch -d '2020-01-01' "$T/src/sub/one"
expect_rc 0 ferry_c push -i "$T/src/" "$(url m/i)"
grep -qx "<f.st...... sub/one" "$T/last.out" || { cat "$T/last.out"; fail "-i: no '<f.st...... sub/one'"; }
expect_rc 0 ferry_c pull -i "$(url m/i/)" "$T/back"
grep -qx ">f+++++++++ big" "$T/last.out" || fail "pull -i: no '>f+++++++++ big'"
# an existing directory whose mode or time changes: the line rsync prints
mkdir -p "$T/src/d2"
expect_rc 0 ferry_c push -a "$T/src/" "$(url m/i)"
rm -rf "$T/oracle" && cp -a "$T/mod/i" "$T/oracle"
touch -d '2020-01-01' "$T/src/sub"; chmod 700 "$T/src/d2"
rsync -ai "$T/src/" "$T/oracle/" | grep '^\.d' > "$T/want.d"
[ "$(wc -l < "$T/want.d")" = 2 ] || { cat "$T/want.d"; fail "the rsync oracle itemized $(wc -l < "$T/want.d") directories, not 2"; }
expect_rc 0 ferry_c push -ai "$T/src/" "$(url m/i)"
grep '^\.d' "$T/last.out" | diff "$T/want.d" - || { cat "$T/last.out"; fail "push -i: not rsync's .d lines"; }
mkdir -p "$T/back/d2"; chmod 700 "$T/back/d2"; touch -d '2021-01-01' "$T/back/sub" "$T/back/d2" "$T/back"
rm -rf "$T/oracle" && cp -a "$T/back" "$T/oracle"
# (the root's line comes last: its mode and time arrive after its files)
rsync -ai "$T/mod/i/" "$T/oracle/" | grep '^\.d' | sort > "$T/want.d"
grep -qx '\.d\.\.t\.\.\.\.\.\. \./' "$T/want.d" || { cat "$T/want.d"; fail "the rsync oracle: no line for the root"; }
expect_rc 0 ferry_c pull -ai "$(url m/i/)" "$T/back"
grep '^\.d' "$T/last.out" | sort | diff "$T/want.d" - || { cat "$T/last.out"; fail "pull -i: not rsync's .d lines"; }
# deletions: the lines rsync itself prints for the same --delete (a newcomer
# trial saw them printed as the line before's change, or with no prefix);
# rsync also lists a deleted directory's contents, ferry the directory alone
top_deleted() {
  python3 -c '
import sys
ls = sorted(l.rstrip("\n") for l in sys.stdin if l.startswith("*deleting"))
dirs = [l[12:] for l in ls if l.endswith("/")]
print("\n".join(l for l in ls if not any(l[12:] != d and l[12:].startswith(d) for d in dirs)))'
}
mkdir -p "$T/mod/i/gone-dir"
echo x > "$T/mod/i/extra.txt"; echo z > "$T/mod/i/gone-dir/zz.txt"
rm -rf "$T/oracle" && cp -a "$T/mod/i" "$T/oracle"
rsync -ri --delete "$T/src/" "$T/oracle/" | top_deleted > "$T/want.del"
[ "$(wc -l < "$T/want.del")" = 2 ] || { cat "$T/want.del"; fail "the rsync oracle deleted $(wc -l < "$T/want.del"), not 2"; }
expect_rc 0 ferry_c push -i --delete --log-file="$T/i.log" "$T/src/" "$(url m/i)"
top_deleted < "$T/last.out" > "$T/got.del"
diff "$T/want.del" "$T/got.del" || { cat "$T/last.out"; fail "push -i --delete: not rsync's *deleting lines"; }
grep -c '\] \*deleting   ' "$T/i.log" | grep -qx 2 || { cat "$T/i.log"; fail "--log-file: not 2 *deleting lines"; }
echo y > "$T/back/extra-here"
rm -rf "$T/oracle" && cp -a "$T/back" "$T/oracle"
rsync -ri --delete "$T/mod/i/" "$T/oracle/" | top_deleted > "$T/want.del"
expect_rc 0 ferry_c pull -i --delete "$(url m/i/)" "$T/back"
top_deleted < "$T/last.out" > "$T/got.del"
[ -s "$T/want.del" ] && diff "$T/want.del" "$T/got.del" ||
  { cat "$T/last.out"; fail "pull -i --delete: not rsync's *deleting lines"; }
expect_rc 0 ferry_c push --stats -h "$T/src/" "$(url m/i)"
# rsync counts the root of "src/" among the directories
want=$(rsync -a --stats "$T/src/" "$T/stats-oracle/" | sed -n 's/^Number of files: \([0-9]*\) (reg: \([0-9]*\), dir: \([0-9]*\).*/\1 \2 \3/p')
got=$(sed -n 's/^Number of files: \([0-9]*\) (reg: \([0-9]*\), dir: \([0-9]*\).*/\1 \2 \3/p' "$T/last.out")
[ -n "$want" ] && [ "$got" = "$want" ] || { cat "$T/last.out"; fail "--stats: files, regular, dirs '$got', rsync's '$want'"; }
grep -q "^Number of files up to date: 2" "$T/last.out" || fail "--stats: up to date"
grep -q "^Total file size: 2.5M" "$T/last.out" || fail "-h: sizes not in K/M/G"
expect_rc 0 ferry_c pull --stats "$(url m/i/)" "$T/stats-back/"
got=$(sed -n 's/^Number of files: \([0-9]*\) (reg: \([0-9]*\), dir: \([0-9]*\).*/\1 \2 \3/p' "$T/last.out")
[ "$got" = "$want" ] || { cat "$T/last.out"; fail "pull --stats: files, regular, dirs '$got', rsync's '$want'"; }
# ls: mode, size and name of files and links as rsync --list-only --no-h has
# them (a link's size is its target's length); -h shortens sizes
ln -sfn sub/one "$T/mod/i/a-link"
ferry_ls_cols() { awk '/^[-l]/ {print $1, $2, $5}' | LC_ALL=C sort; }
rsync --list-only --no-h "$T/mod/i/" | awk '/^[-l]/ {print $1, $2, $5}' | LC_ALL=C sort > "$T/want.ls"
expect_rc 0 ferry_c ls "$(url m/i/)"
ferry_ls_cols < "$T/last.out" > "$T/got.ls"
diff "$T/want.ls" "$T/got.ls" || { cat "$T/last.out"; fail "ls: not rsync --list-only's modes, sizes and names"; }
expect_rc 0 ferry_c ls -h "$(url m/i/)"
grep -q "^-.* 2.5M .* big$" "$T/last.out" || { cat "$T/last.out"; fail "ls -h: sizes not shortened"; }
rm "$T/mod/i/a-link"
expect_rc 0 ferry_c push -v -h "$T/src/" "$(url m/i)"   # nothing to send: "0 B", not a bare 0
grep -q "^sent 0 files (.*), 0 B in " "$T/last.out" || { cat "$T/last.out"; fail "-h: a size under 1K has no unit"; }
touch -d '2021-01-01' "$T/src/big"
expect_rc 0 ferry_c push -v --size-only "$T/src/" "$(url m/i)"
grep -q "^update" "$T/last.out" && fail "--size-only sent a file of equal size"
[ "$(stat -c %Y "$T/mod/i/big")" = "$(stat -c %Y "$T/src/big")" ] || fail "--size-only left the mtime stale"
expect_rc 0 ferry_c push -v -I "$T/src/" "$(url m/i)"
grep -q "^update *big" "$T/last.out" || fail "-I did not send an up-to-date file"

note "-i and -v say a symlink's target and a hard link's first name, as rsync's %L: cL+++++++++ l -> t, cLc.t...... (changed), hf+++++++++ n => first"
L=$T/lsrc; mkdir -p "$L/d"; echo data > "$L/f"; ln "$L/f" "$L/d/f2"
ln -s f "$L/l1"; ln -s ../nowhere "$L/d/l2"
# lines_of: a run's symlink lines, sorted (rsync and ferry walk in other orders)
lines_of() { grep -E '^[c.]L' | LC_ALL=C sort; }
rsync -aHi "$L/" "$T/lo/" | lines_of > "$T/want.l"
[ "$(wc -l < "$T/want.l")" = 2 ] || { cat "$T/want.l"; fail "the oracle: not 2 symlink lines"; }
expect_rc 0 ferry_c push -aHi "$L/" "$(url m/li/)"
lines_of < "$T/last.out" | sed 's/^</>/' | diff "$T/want.l" - || { cat "$T/last.out"; fail "push -i: not rsync's symlink lines"; }
# a hard link: one name sent, the other "hf+++++++++ NAME => THAT ONE", as in rsync's run
grep -c '^hf+++++++++ ' "$T/last.out" | grep -qx 1 || { cat "$T/last.out"; fail "push -i: no hf line for the hard link"; }
first=$(sed -n 's/^<f+++++++++ \(.*f2*\)$/\1/p' "$T/last.out")
grep -qx "hf+++++++++ \(d/f2 => f\|f => d/f2\)" "$T/last.out" && [ -n "$first" ] ||
  { cat "$T/last.out"; fail "push -i: the hf line does not name the file sent"; }
expect_rc 0 ferry_c pull -aHi "$(url m/li/)" "$T/lback/"
lines_of < "$T/last.out" | diff "$T/want.l" - || { cat "$T/last.out"; fail "pull -i: not rsync's symlink lines"; }
grep -q '^hf+++++++++ .* => ' "$T/last.out" || { cat "$T/last.out"; fail "pull -i: no hf line"; }
expect_rc 0 ferry_c push -aHv "$L/" "$(url m/li-v/)"
grep -qx "link    l1 -> f" "$T/last.out" && grep -q "^hlink   .* => " "$T/last.out" ||
  { cat "$T/last.out"; fail "push -v: no target or first name"; }
# a symlink whose target and time change: rsync's cLc.t...... line
rm "$L/l1"; ln -s d "$L/l1"; touch -h -d 2020-01-01 "$L/l1"
rsync -aHi "$L/" "$T/lo/" | lines_of > "$T/want.l"
grep -qx 'cLc\.t\.\.\.\.\.\. l1 -> d' "$T/want.l" || { cat "$T/want.l"; fail "the oracle: no cLc.t line"; }
expect_rc 0 ferry_c push -aHi "$L/" "$(url m/li/)"
lines_of < "$T/last.out" | diff "$T/want.l" - || { cat "$T/last.out"; fail "push -i: a changed symlink is not rsync's line"; }
expect_rc 0 ferry_c pull -aHi "$(url m/li/)" "$T/lback/"
lines_of < "$T/last.out" | diff "$T/want.l" - || { cat "$T/last.out"; fail "pull -i: a changed symlink is not rsync's line"; }
# an older box (without HELLO feature 0x8): the lines it knows, no error
stop_server
FERRY_TEST_OLD_HELLO=0x7 start_server
rm -rf "$T/mod/li"
expect_rc 0 ferry_c push -aHi "$L/" "$(url m/li/)"
grep -qx "cL+++++++++ l1" "$T/last.out" && grep -c '^<f+++++++++ ' "$T/last.out" | grep -qx 2 ||
  { cat "$T/last.out"; fail "an older box: not its lines"; }
stop_server
start_server

note "10.9: --existing, --ignore-existing, -b, --backup-dir, --chmod, --log-file"
echo new > "$T/src/newfile"
echo changed > "$T/src/sub/one"
mkdir -p "$T/src/newdir/deeper"; echo n > "$T/src/newdir/deeper/f"
# a new directory is not made, and its metadata is no failure (as rsync)
expect_rc 0 ferry_c push -v --existing "$T/src/" "$(url m/i)"
[ ! -e "$T/mod/i/newfile" ] && [ ! -e "$T/mod/i/newdir" ] || fail "--existing created a new file"
rm -r "$T/src/newdir"
mkdir -p "$T/ex2/sub"; echo stale > "$T/ex2/sub/one"
expect_rc 0 ferry_c pull -a --existing "$(url m/i/)" "$T/ex2"
[ "$(ls "$T/ex2")" = sub ] && grep -qx changed "$T/ex2/sub/one" || fail "pull --existing: not only sub/one updated"
grep -qx "changed" "$T/mod/i/sub/one" || fail "--existing did not update an existing file"
echo again > "$T/src/sub/one"
expect_rc 0 ferry_c push -v --ignore-existing "$T/src/" "$(url m/i)"
grep -qx "changed" "$T/mod/i/sub/one" || fail "--ignore-existing updated an existing file"
[ -e "$T/mod/i/newfile" ] || fail "--ignore-existing did not create a new file"
expect_rc 0 ferry_c push -b "$T/src/" "$(url m/i)"
grep -qx "changed" "$T/mod/i/sub/one~" || fail "-b did not keep the old version as one~"
grep -qx "again" "$T/mod/i/sub/one" || fail "-b: the new version is missing"
rm "$T/src/newfile"
expect_rc 0 ferry_c push --delete --backup-dir=old "$T/src/" "$(url m/i)"
grep -qx "new" "$T/mod/i/old/newfile" || fail "--backup-dir: the deleted file was not kept"
[ -e "$T/mod/i/old/sub/one~" ] || fail "--delete --backup-dir did not keep sub/one~ under old/"
[ -d "$T/mod/i/old" ] || fail "--delete removed the backup directory"
expect_rc 0 ferry_c push --chmod=D750,Fg-r,o-r -I --log-file="$T/push.log" "$T/src/" "$(url m/c)"
[ "$(stat -c %a "$T/mod/c/sub")" = 750 ] || fail "--chmod D750: $(stat -c %a "$T/mod/c/sub")"
[ "$(stat -c %a "$T/mod/c/big")" = 600 ] || fail "--chmod Fg-r,o-r: $(stat -c %a "$T/mod/c/big")"
grep -q "\[[0-9]*\] <f+++++++++ big$" "$T/push.log" || { cat "$T/push.log"; fail "--log-file: no change line"; }
grep -q "\] sent 2 files" "$T/push.log" || { cat "$T/push.log"; fail "--log-file: no summary"; }
expect_rc 1 ferry_c push --chmod=u+q "$T/src/" "$(url m/c)"
grep -q "u+q" "$T/last.err" || fail "a bad --chmod is not named"
# the run's error lines and its exit code go to the log too, as rsync's; a
# log that cannot be opened is said and the transfer goes on (rsync's oracle)
mkdir -p "$T/lg/src" "$T/mod/lg"; echo x > "$T/lg/src/x"
for i in 1 2 3; do echo "$i" > "$T/mod/lg/old$i"; done
expect_rc 25 ferry_c push -a --delete --max-delete=1 --log-file="$T/lg/run.log" "$T/lg/src/" "$(url m/lg/)"
grep -q "\] ferry: Deletions stopped due to --max-delete limit (2 skipped)$" "$T/lg/run.log" &&
  grep -q "\] ferry: finished with exit code 25$" "$T/lg/run.log" ||
  { cat "$T/lg/run.log"; fail "--log-file: no error line or no exit code"; }
rs=0; rsync -a --log-file="$T/lg/no/such/log" "$T/lg/src/" "$T/lg/rs/" > /dev/null 2>&1 || rs=$?
[ "$rs" = 0 ] && [ -f "$T/lg/rs/x" ] || fail "the oracle: rsync with a log it cannot open gave $rs"
expect_rc "$rs" ferry_c push -a --log-file="$T/lg/no/such/log" "$T/lg/src/" "$(url m/lg2/)"
grep -q "no/such/log: No such file or directory (the transfer goes on without it)" "$T/last.err" &&
  [ -f "$T/mod/lg2/x" ] || fail "--log-file that cannot be opened: $(cat "$T/last.err")"

note "10.9: --info=progress2, ls -r"
expect_rc 0 ferry_c push -I --info=progress2 "$T/src/" "$(url m/p)"
grep -q "(xfr#2, to-chk=0/2)" "$T/last.out" || { cat -v "$T/last.out"; fail "--info=progress2 line missing"; }
# not a terminal: \r alone, as rsync, no escape sequences in a log file
grep -q "$(printf '\033')" "$T/last.out" && { cat -v "$T/last.out"; fail "terminal escapes written to a file"; }
# the count before the walk has a time budget (10 s; a test build's
# FERRY_TEST_TOTALS_BUDGET): the peer hears nothing meanwhile, and its
# timeout must not end the session; past it the progress has no percentage
FERRY_TEST_TOTALS_BUDGET=0 expect_rc 0 ferry_c push -I --info=progress2 "$T/src/" "$(url m/p)"
grep -q ' ?% ' "$T/last.out" && ! grep -q 'to-chk' "$T/last.out" ||
  { cat -v "$T/last.out"; fail "past the totals' budget: not a progress line without totals"; }

note "a box that works longer than the client's I/O timeout without a word (-c hashing on a slow disk) sends NOOPs: the session lives"
mkdir -p "$T/ka"; head -c 1048576 /dev/urandom > "$T/ka/f"
expect_rc 0 ferry_c push -a "$T/ka/" "$(url m/ka/)"
touch -d 2020-01-01 "$T/ka/f"   # another time, the same contents: -c hashes the box's copy
stop_server
FERRY_TEST_SLOW_HASH=250 start_server   # a test build: 250 ms per 64 KiB, 4 s for the file
expect_rc 0 ferry_c push -ac --timeout 2 "$T/ka/" "$(url m/ka/)"
expect_rc 0 ferry_c pull -ac --timeout 2 "$(url m/ka/)" "$T/ka-back/"
cmp -s "$T/ka/f" "$T/ka-back/f" || fail "pull -c with NOOPs: not the file"
stop_server
FERRY_TEST_OLD_HELLO=0x7 FERRY_TEST_SLOW_HASH=250 start_server   # an older box: no NOOPs
touch -d 2021-01-01 "$T/ka/f"
expect_rc 30 ferry_c push -ac --timeout 2 "$T/ka/" "$(url m/ka/)"
stop_server
start_server
expect_rc 0 ferry_c ls -r "$(url m/i)"
grep -q " sub/one$" "$T/last.out" || { cat "$T/last.out"; fail "ls -r did not recurse"; }
expect_rc 0 ferry_c ls "$(url m/i)"
grep -q " sub/one$" "$T/last.out" && fail "ls without -r recursed"

note "10.10: -n says (DRY RUN); Ctrl-C of a push exits 20 with one line"
expect_rc 0 ferry_c push -n -I "$T/src/" "$(url m/i)"
grep -q "(DRY RUN)$" "$T/last.out" || { cat "$T/last.out"; fail "-n summary without (DRY RUN)"; }
head -c $((16 << 20)) /dev/urandom > "$T/pc/slow"
rc=0
timeout --preserve-status -s INT 1.5 $FERRY_CLIENT push --identity "$T/clienthome/id_ferry" --known-hosts \
  "$T/clienthome/known_hosts" --bwlimit 2M "$T/pc/slow" "$(url m/slow)" > "$T/int.out" 2> "$T/int.err" || rc=$?
[ "$rc" = 20 ] || { cat "$T/int.err"; fail "Ctrl-C of a push: exit $rc, not 20"; }
grep -q "stopped by a signal" "$T/int.err" || fail "Ctrl-C: no line saying so"
stop_server

note "10.1: exact counts as the daemon (nobody) meets an unwritable module"
mkdir -p "$T/rootowned" "$T/pc/Photos/sub" "$T/nb"
chmod 755 "$T/rootowned" "$T/serverhome"
for f in a b sub/c sub/d; do echo "$f" > "$T/pc/Photos/$f.jpg"; done
cp "$T/clienthome/id_ferry" "$T/nb/id"; chown -R nobody "$T/nb" "$T/serverhome"; chmod 644 "$T/serverhome/authorized_keys"
write_config "[rootowned]" "path = $T/rootowned"
FERRY_SERVER="setpriv --reuid=nobody --regid=nogroup --clear-groups $FERRY_SERVER" start_server
expect_rc 23 ferry_c push -v "$T/pc/Photos" "$(url rootowned/)"
[ "$(grep -c FAILED "$T/last.out")" = 1 ] || { cat "$T/last.out"; fail "FAILED should be printed once"; }
grep -q "^sent 0 files (0 up to date, 1 failed)" "$T/last.out" || { cat "$T/last.out"; fail "the summary lies"; }
grep -q "^ferry: 1 file(s) failed" "$T/last.err" || { cat "$T/last.err"; fail "not counted once"; }

note "a destination the daemon cannot create: one line from the server, exit 3"
expect_rc 3 ferry_c push "$T/pc/Photos/" "$(url rootowned/new/deeper)"
grep -q "mkdir.*Permission denied" "$T/last.err" || { cat "$T/last.err"; fail "the reason is not shown"; }

note "10.1: one unreadable file (client as nobody) counts once; the others are sent"
mkdir -p "$T/pc/mixed"; echo ok1 > "$T/pc/mixed/ok1"; echo ok2 > "$T/pc/mixed/ok2"
echo secret > "$T/pc/mixed/zlocked"; chmod 600 "$T/pc/mixed/zlocked"   # root's: nobody cannot read it
chmod 755 "$T/pc" "$T/pc/mixed"
nobody_push() {
  setpriv --reuid=nobody --regid=nogroup --clear-groups $FERRY_CLIENT push --identity "$T/nb/id" \
    --known-hosts "$T/nb/kh" --accept-new "$@"
}
chown nobody "$T/mod"
expect_rc 23 nobody_push -v "$T/pc/mixed/" "$(url m/mixed)"
grep -q "^sent 2 files (0 up to date, 1 failed)" "$T/last.out" || { cat "$T/last.out" "$T/last.err"; fail "unreadable file: summary"; }
grep -q "^ferry: 1 file(s) failed" "$T/last.err" || { cat "$T/last.err"; fail "unreadable file counted twice"; }
[ -f "$T/mod/mixed/ok1" ] && [ -f "$T/mod/mixed/ok2" ] || fail "the readable files were not sent"
# an unreadable directory: one FAILED line too (it had only the stderr line)
mkdir -p "$T/pc/mixed2/ldir" "$T/pc/mixed2/okdir"; echo in > "$T/pc/mixed2/ldir/f"; echo ok > "$T/pc/mixed2/okdir/f"
chmod 755 "$T/pc/mixed2" "$T/pc/mixed2/okdir"; chmod 000 "$T/pc/mixed2/ldir"
expect_rc 23 nobody_push "$T/pc/mixed2/" "$(url m/mixed2)"
[ "$(grep -c "^FAILED  *ldir$" "$T/last.out")" = 1 ] || { cat "$T/last.out" "$T/last.err"; fail "an unreadable directory: no FAILED line"; }
[ -f "$T/mod/mixed2/okdir/f" ] || fail "the readable directory was not sent"
chmod 755 "$T/pc/mixed2/ldir"

note "10.10: an error line never lands on top of the progress line"
rm -rf "$T/mod/mixed"
rc=0
nobody_push -P "$T/pc/mixed/" "$(url m/mixed)" > "$T/merged" 2>&1 || rc=$?
[ "$rc" = 23 ] || fail "progress run: exit $rc"
grep -q "zlocked" "$T/merged" || fail "the error line is missing"
if LC_ALL=C grep -a "ferry: .*zlocked" "$T/merged" | LC_ALL=C grep -aq "MB/s[^$(printf '\r')]*ferry:"; then
  cat -v "$T/merged"; fail "an error line was printed on top of the progress line"
fi

note "a read-only directory of ours is written into, then keeps the sender's mode, as rsync -a"
# (a newcomer trial: every file of a pull into a 0555 directory failed, and
# the directory was left 0755, so the next pull passed)
mkdir -p "$T/mod/rodocs/sub" "$T/pc/ro" "$T/pc/ro-rsync"
echo a > "$T/mod/rodocs/a"; echo b > "$T/mod/rodocs/sub/b"
chmod 555 "$T/mod/rodocs/sub" "$T/mod/rodocs"
chown nobody "$T/pc/ro" "$T/pc/ro-rsync"; chmod 555 "$T/pc/ro" "$T/pc/ro-rsync"
setpriv --reuid=nobody --regid=nogroup --clear-groups rsync -a "$T/mod/rodocs/" "$T/pc/ro-rsync/" ||
  fail "the rsync oracle failed"
expect_rc 0 setpriv --reuid=nobody --regid=nogroup --clear-groups $FERRY_CLIENT pull \
  --identity "$T/nb/id" --known-hosts "$T/nb/kh" --accept-new "$(url m/rodocs/)" "$T/pc/ro"
tree_modes() { (cd "$1" && find . -printf '%P %m %s\n' | LC_ALL=C sort); }
diff <(tree_modes "$T/pc/ro-rsync") <(tree_modes "$T/pc/ro") ||
  fail "pull into a 0555 directory: not what rsync -a makes"
# the push side: the daemon (nobody) writes into a 0555 directory of its module
chmod u+w "$T/mod/rodocs"; chown -R nobody "$T/mod/rodocs"; chmod 555 "$T/mod/rodocs"
# (a directory's contents, as rsync -a: a single file into it fails for both)
mkdir -p "$T/pc/ro-src"; echo c > "$T/pc/ro-src/ro-new"; chmod 644 "$T/pc/ro-src/ro-new"
chmod 555 "$T/pc/ro-src"
expect_rc 0 nobody_push "$T/pc/ro-src/" "$(url m/rodocs/)"
[ -f "$T/mod/rodocs/ro-new" ] || fail "push into a 0555 directory of the module failed"
[ "$(stat -c %a "$T/mod/rodocs")" = 555 ] || fail "the pushed-into directory is not the sender's 0555"
chmod u+w "$T/mod/rodocs" "$T/mod/rodocs/sub" "$T/pc/ro" "$T/pc/ro/sub" "$T/pc/ro-rsync" "$T/pc/ro-rsync/sub" \
  "$T/pc/ro-src"
stop_server

note "a non-empty directory where the sender has a file: kept without --force or --delete, as rsync"
write_config
start_server
mkdir -p "$T/tc/s" && echo 2 > "$T/tc/s/isfile"
in_the_way() { rm -rf "$1" && mkdir -p "$1/isfile/deep" && echo precious > "$1/isfile/deep/keep"; }
in_the_way "$T/oracle"
rc=0; rsync -a "$T/tc/s/" "$T/oracle/" > /dev/null 2>&1 || rc=$?
[ "$rc" = 23 ] && [ -f "$T/oracle/isfile/deep/keep" ] || fail "the rsync oracle: exit $rc"
in_the_way "$T/mod/tc"
expect_rc 23 ferry_c push -a "$T/tc/s/" "$(url m/tc)"
grep -q "isfile: cannot delete non-empty directory" "$T/last.err" || { cat "$T/last.err"; fail "push: no reason given"; }
[ -f "$T/mod/tc/isfile/deep/keep" ] || fail "push without --force deleted a non-empty directory"
expect_rc 0 ferry_c push -a -i -n --force "$T/tc/s/" "$(url m/tc)"
[ -f "$T/mod/tc/isfile/deep/keep" ] || fail "push -n deleted a directory"
in_the_way "$T/oracle"
# rsync lists what it deletes inside (not the directory itself); ferry gives
# one line for a deleted directory (ferry(1), -i)
rsync -ai --force "$T/tc/s/" "$T/oracle/" | grep -q '^\*deleting   isfile/deep/keep$' ||
  fail "the rsync oracle does not show the deletion"
echo "*deleting   isfile/" > "$T/want.del"
top_deleted < "$T/last.out" > "$T/got.del"
diff "$T/want.del" "$T/got.del" || { cat "$T/last.out"; fail "push -n -i --force: no *deleting line"; }
expect_rc 0 ferry_c push -a -i --stats --force "$T/tc/s/" "$(url m/tc)"
top_deleted < "$T/last.out" | diff "$T/want.del" - || { cat "$T/last.out"; fail "push -i --force: no *deleting line"; }
grep -q "^Number of deleted files: 1" "$T/last.out" || { cat "$T/last.out"; fail "--stats: the directory's going not counted"; }
[ "$(cat "$T/mod/tc/isfile")" = 2 ] || fail "push --force: the file is not in place"
in_the_way "$T/back-tc"
expect_rc 23 ferry_c pull -a "$(url m/tc/)" "$T/back-tc"
[ -f "$T/back-tc/isfile/deep/keep" ] || fail "pull without --force deleted a non-empty directory"
expect_rc 0 ferry_c pull -a --delete "$(url m/tc/)" "$T/back-tc"
[ "$(cat "$T/back-tc/isfile")" = 2 ] || fail "pull --delete: the file is not in place"
stop_server

note "-x: a mount point is sent, what is in it is not, as rsync -ax (push and pull)"
mkdir -p "$T/xfs/src/mnt" "$T/xfs/src/sub"
echo top > "$T/xfs/src/top"; echo sub > "$T/xfs/src/sub/f"
mount -t tmpfs -o size=1m ferry-e2e-xfs "$T/xfs/src/mnt"
echo other-fs > "$T/xfs/src/mnt/inside"
list_tree() { (cd "$1" && find . | LC_ALL=C sort); }
rsync -ax "$T/xfs/src/" "$T/xfs/oracle/"
write_config
start_server
rc=0; ferry_c push -ax "$T/xfs/src/" "$(url m/xfs/)" > /dev/null 2> "$T/last.err" || rc=$?
pushed=$(list_tree "$T/mod/xfs")
pull_rc=0; ferry_c pull -ax "$(url m/xfs/)" "$T/xfs/back-all/" > /dev/null 2>&1 || pull_rc=$?
mkdir -p "$T/mod/xfs2/mnt" && echo top > "$T/mod/xfs2/top"
mount --bind "$T/xfs/src/mnt" "$T/mod/xfs2/mnt"
ferry_c pull -ax "$(url m/xfs2/)" "$T/xfs/back/" > /dev/null 2>&1 || pull_rc=$?
umount "$T/mod/xfs2/mnt"; umount "$T/xfs/src/mnt"
stop_server
[ "$rc" = 0 ] || { cat "$T/last.err"; fail "push -ax: exit $rc"; }
[ "$pushed" = "$(list_tree "$T/xfs/oracle")" ] ||
  { echo "$pushed"; list_tree "$T/xfs/oracle"; fail "push -ax: not rsync -ax's tree"; }
[ "$pull_rc" = 0 ] || fail "pull -ax: exit $pull_rc"
[ -d "$T/xfs/back/mnt" ] && [ ! -e "$T/xfs/back/mnt/inside" ] && [ -f "$T/xfs/back/top" ] ||
  { list_tree "$T/xfs/back"; fail "pull -ax: the mount point's contents came, or it did not"; }

note "a single file pushed onto a symlink: into a directory it leads to rsync writes; the box follows no link, so it refuses; onto a link to a file, or a dangling one, the file replaces it, as rsync"
write_config
start_server
echo payload > "$T/pc/one"
for d in "$T/mod/lnk" "$T/lnk-oracle"; do
  mkdir -p "$d/real"; echo old > "$d/tf"
  ln -s real "$d/todir"; ln -s tf "$d/tofile"; ln -s nowhere "$d/dangling"
  ln -s ../lnk/real "$d/up"; ln -s todir "$d/chain"
done
for l in tofile dangling; do
  expect_rc 0 ferry_c push -a "$T/pc/one" "$(url m/lnk/$l)"
  rsync -a "$T/pc/one" "$T/lnk-oracle/$l"
  [ -f "$T/mod/lnk/$l" ] && [ ! -L "$T/mod/lnk/$l" ] && [ -f "$T/lnk-oracle/$l" ] && [ ! -L "$T/lnk-oracle/$l" ] ||
    fail "onto a symlink $l: not replaced by the file, as rsync"
  cmp -s "$T/pc/one" "$T/mod/lnk/$l" || fail "onto a symlink $l: not the file's contents"
done
grep -qx old "$T/mod/lnk/tf" && grep -qx old "$T/lnk-oracle/tf" || fail "written through the link to a file"
for l in todir up chain; do
  expect_rc 3 ferry_c push -a "$T/pc/one" "$(url "m/lnk/$l")"
  grep -q "\"lnk/$l\" is a symlink that may lead to a directory (not followed)" "$T/last.err" ||
    { cat "$T/last.err"; fail "onto a symlink $l to a directory: not refused in words"; }
  [ "$(grep -c . "$T/last.err")" = 1 ] || { cat "$T/last.err"; fail "more than one line"; }
  [ -L "$T/mod/lnk/$l" ] && [ -z "$(ls -A "$T/mod/lnk/real")" ] || fail "onto a symlink $l: the link or its directory changed"
done
rsync -a "$T/pc/one" "$T/lnk-oracle/todir"
[ -f "$T/lnk-oracle/real/one" ] || fail "the oracle: rsync did not write into the directory (the reason for the refusal)"
no_temp_files "$T/mod/lnk"

note "pull --mkpath makes the destination's missing directories, as rsync --mkpath (-n makes none); without it only the last part is made"
mkdir -p "$T/mod/mk/dir/sub"; echo a > "$T/mod/mk/dir/a"; echo b > "$T/mod/mk/dir/sub/b"; echo f > "$T/mod/mk/file"
mkdir -p "$T/mkf" "$T/mkr"
i=0
for shape in "mk/dir x/y/d" "mk/dir/ x/y/d/" "mk/file x/y/f2" "mk/file x/y/"; do
  read -r src dst <<< "$shape"
  i=$((i + 1))
  rc=0; (cd "$T/mkf" && ferry_c pull -a -n --mkpath "$(url "m/$src")" "$i/$dst") > /dev/null 2>&1 || rc=$?
  [ "$rc" = 0 ] || fail "pull -n --mkpath $shape: exit $rc"
  [ -z "$(ls -A "$T/mkf")" ] || fail "pull -n --mkpath $shape made $(ls -A "$T/mkf")"
  rc=0; (cd "$T/mkf" && ferry_c pull -a --mkpath "$(url "m/$src")" "$i/$dst") > /dev/null 2> "$T/last.err" || rc=$?
  [ "$rc" = 0 ] || { cat "$T/last.err"; fail "pull --mkpath $shape: exit $rc"; }
  (cd "$T/mkr" && rsync -a --mkpath "$T/mod/$src" "$i/$dst")
  [ "$(cd "$T/mkf" && find "$i" | sort)" = "$(cd "$T/mkr" && find "$i" | sort)" ] ||
    { (cd "$T/mkf" && find "$i" | sort); (cd "$T/mkr" && find "$i" | sort); fail "pull --mkpath $shape: not rsync's tree"; }
  rm -rf "${T:?}/mkf/$i"
done
touch "$T/mkf/afile"   # a file on the way: -n says what the real run meets
expect_rc 3 ferry_c pull -an --mkpath "$(url m/mk/file)" "$T/mkf/afile/sub/f"
grep -q "afile is in the way: not a directory" "$T/last.err" || { cat "$T/last.err"; fail "-n --mkpath through a file"; }
expect_rc 3 ferry_c pull -a --mkpath "$(url m/mk/file)" "$T/mkf/afile/sub/f"
rm "$T/mkf/afile"
expect_rc 3 ferry_c pull -a "$(url m/mk/file)" "$T/mkf/no/such/f"
grep -q "only the last part of a destination is made; --mkpath makes them all" "$T/last.err" || { cat "$T/last.err"; fail "no hint of --mkpath"; }

note "a remote path is cleaned as rsync cleans it: \"//\" is \"/\", a \".\" component goes, and a last one means the contents"
expect_rc 0 ferry_c push -a "$T/pc/one" "$(url m/cl//x///)"
[ -f "$T/mod/cl/x/one" ] || fail "push to m/cl//x///: not cl/x/one"
expect_rc 0 ferry_c pull -a "$(url m/mk//dir/.)" "$T/cl1/"
[ -f "$T/cl1/a" ] && [ -f "$T/cl1/sub/b" ] && [ ! -e "$T/cl1/dir" ] || fail "pull m/mk//dir/.: not the contents"
expect_rc 0 ferry_c pull -a "$(url m/./mk/./dir/./sub)" "$T/cl2/"
[ -f "$T/cl2/sub/b" ] || fail "pull m/./mk/./dir/./sub: not sub itself"
expect_rc 0 ferry_c ls "$(url m/mk/./dir/.)"
grep -q " sub$" "$T/last.out" || { cat "$T/last.out"; fail "ls m/mk/./dir/.: not dir's listing"; }
expect_rc 3 ferry_c pull -a "$(url m/mk/dir/..)" "$T/cl3/"   # ".." stays the server's to refuse

note "a pull or ls of a remote path that does not exist: rsync's 23, and 0 with --ignore-missing-args"
mkdir -p "$T/rs-src"
rs_missing=0; rsync -a "$T/rs-src/missing" "$T/rs-out/" > /dev/null 2>&1 || rs_missing=$?
rs_ignored=0; rsync -a --ignore-missing-args "$T/rs-src/missing" "$T/rs-out2/" > /dev/null 2>&1 || rs_ignored=$?
[ "$rs_missing" = 23 ] && [ "$rs_ignored" = 0 ] || fail "the oracle: rsync gave $rs_missing and $rs_ignored"
expect_rc "$rs_missing" ferry_c pull -a "$(url m/mk/missing)" "$T/miss1/"
grep -q '"mk/missing" does not exist' "$T/last.err" || fail "pull of a missing path: $(cat "$T/last.err")"
expect_rc "$rs_missing" ferry_c pull -a "$(url m/no/such/dir/)" "$T/miss1/"
expect_rc "$rs_missing" ferry_c ls "$(url m/mk/missing)"
# an error before any file, in the log too (rsync logs its link_stat line and the code)
expect_rc "$rs_missing" ferry_c pull -a --log-file="$T/miss.log" "$(url m/mk/missing)" "$T/miss1/"
grep -q '\] ferry: .*"mk/missing" does not exist$' "$T/miss.log" &&
  grep -q "\] ferry: finished with exit code $rs_missing$" "$T/miss.log" ||
  { cat "$T/miss.log"; fail "--log-file: the refusal or the exit code missing"; }
expect_rc "$rs_ignored" ferry_c pull -a --ignore-missing-args "$(url m/mk/missing)" "$T/miss2/"
[ ! -s "$T/last.err" ] && [ ! -s "$T/last.out" ] || fail "--ignore-missing-args said something: $(cat "$T/last.out" "$T/last.err")"
expect_rc 0 ferry_c pull -a --ignore-missing-args "$(url m/mk/dir/)" "$T/miss3/"
[ -f "$T/miss3/sub/b" ] || fail "--ignore-missing-args left out a source that exists"
stop_server

note "--ignore-existing leaves a file alone where the sender has a directory of that name, as rsync (exit 23)"
start_server
mkdir -p "$T/ie/src/x"; echo in > "$T/ie/src/x/f"; echo top > "$T/ie/src/top"
ie_dest() { rm -rf "$1"; mkdir -p "$1"; echo old > "$1/x"; }
ie_dest "$T/ie/r"
rs=0; rsync -a --ignore-existing "$T/ie/src/" "$T/ie/r/" > /dev/null 2>&1 || rs=$?
[ "$rs" = 23 ] && grep -qx old "$T/ie/r/x" && [ -f "$T/ie/r/top" ] || fail "the oracle: rsync gave $rs"
ie_dest "$T/mod/ie"
expect_rc "$rs" ferry_c push -a --ignore-existing "$T/ie/src/" "$(url m/ie/)"
grep -qx old "$T/mod/ie/x" && [ -f "$T/mod/ie/top" ] || fail "push --ignore-existing: x is $(ls -la "$T/mod/ie")"
expect_rc 0 ferry_c push -a "$T/ie/src/" "$(url m/ie-src/)"
ie_dest "$T/ie/p"
expect_rc "$rs" ferry_c pull -a --ignore-existing "$(url m/ie-src/)" "$T/ie/p/"
grep -qx old "$T/ie/p/x" && [ -f "$T/ie/p/top" ] || fail "pull --ignore-existing: x is $(ls -la "$T/ie/p")"
stop_server

note "10.1: on a full disk only committed bytes count as sent"
mkdir -p "$T/small"
mount -t tmpfs -o size=1m ferry-e2e-full "$T/small"
trap 'rc=$?; umount "$T/small" 2> /dev/null || true; (exit $rc); cleanup' EXIT   # cleanup exits with $?
chown nobody "$T/small"
mkdir -p "$T/pc/fill"
head -c 3000000 /dev/urandom > "$T/pc/fill/huge"
head -c 1234 /dev/urandom > "$T/pc/fill/tiny"
write_config "[small]" "path = $T/small"
FERRY_SERVER="setpriv --reuid=nobody --regid=nogroup --clear-groups $FERRY_SERVER" start_server
expect_rc 23 ferry_c push --stats "$T/pc/fill/" "$(url small/)"
grep -q "^Total transferred file size: 1234 bytes" "$T/last.out" || { cat "$T/last.out"; fail "failed bytes counted as sent"; }
grep -q "^sent 1 file (0 up to date, 1 failed), 0.0 MB" "$T/last.out" || { cat "$T/last.out"; fail "full disk: summary"; }
cmp "$T/pc/fill/tiny" "$T/small/tiny" || fail "the small file did not land"
[ ! -e "$T/small/huge" ] || fail "a partial file under its final name"
no_temp_files "$T/small"
stop_server
umount "$T/small"
