#!/usr/bin/env bash
# push --files-from, against the real rsync: the listed paths (relative to
# the one source directory, leading '/' removed, ".." resolved away, blank
# entries and '#'/';' comments ignored, entries ended by \n or \r, or NULs
# with --from0) arrive with the directories on their way (rsync's implied
# directories, with their own modes and times, through a link to a
# directory too); "dir/", "dir/." or "dir/x/.." sends the directory's
# immediate entries too; -r (not -a's) everything below a listed
# directory; the destination keeps its own mode and times unless "." is
# listed. An entry that is not there is named and the push exits 23, as
# rsync's does; one the filter rules exclude is left out (the rules are
# not asked of the directories on the way). The same list again sends
# nothing. Pull, ls, two sources and rsync's "/./" refuse (--delete:
# test_relative).
. "$(dirname "$0")/lib.sh"

command -v rsync > /dev/null || fail "rsync is needed as the oracle (make deps installs it)"
src=$T/src
mkdir -p "$src/dir1/sub" "$src/dir2/deep/er" "$src/d3" "$src/skip"
for f in a.txt b.txt dir1/x dir1/sub/y dir2/z dir2/deep/w dir2/deep/er/v d3/q d3/r skip/s; do
  head -c $((RANDOM % 3000 + 1)) /dev/urandom > "$src/$f"
done
printf 'odd\n' > "$src/we ird*[x]"; printf 'nl\n' > "$src/new
line"
chmod 750 "$src/dir1"; chmod 700 "$src/dir1/sub"; chmod 640 "$src/a.txt"
# directory times in the past: rsync (3.5) leaves a new directory's time
# unset when the source's falls in the second it runs in
find "$src" -type d -exec touch -d '2022-03-04 05:06:07.5' {} +
printf 'a.txt\n/dir1/sub/y\ndir2/\n./d3/../d3/q\n# a comment\n; another\n\n../../b.txt\nwe ird*[x]\r\n' > "$T/list"
write_config "[s]" "path = $T/smod" "snapshots = yes"
mkdir -p "$T/smod"
start_server

check() {   # check WHAT ORACLE FERRY: the two trees are the same
  python3 "$(dirname "$0")/treecmp.py" "$2" "$3" > "$T/cmp.out" || { cat "$T/cmp.out"; fail "$1: not what rsync made"; }
}
oracle() {   # oracle RSYNC_OPTIONS...: rsync's copy in $T/oracle
  rm -rf "$T/oracle"; mkdir "$T/oracle"
  rsync "$@" "$T/oracle/" || fail "the rsync oracle failed: $*"
}

for r in "" -r; do
  # shellcheck disable=SC2086
  oracle -a $r --files-from="$T/list" "$src/"
  # shellcheck disable=SC2086
  expect_rc 0 ferry_c push -a $r --files-from="$T/list" "$src" "$(url "m/t$r")"
  check "push -a $r --files-from" "$T/oracle" "$T/mod/t$r"
  # shellcheck disable=SC2086
  expect_rc 0 ferry_c push -a $r -i --files-from="$T/list" "$src/" "$(url "m/t$r")"
  grep -v '^sent ' "$T/last.out" | grep -q . && { cat "$T/last.out"; fail "push $r --files-from again: something was sent"; }
done
[ -e "$T/mod/t/dir2/deep/w" ] || [ ! -d "$T/mod/t/dir2/deep" ] &&
  fail "dir2/: its immediate entries were not what rsync sends"
note "the list as rsync reads it, with and without -r; a second push sends nothing"

note "--from0, from standard input, with a name holding a newline"
printf 'new\nline\0dir1/x\0' > "$T/list0"
oracle -a --from0 --files-from="$T/list0" "$src/"
expect_rc 0 ferry_c push -a --from0 --files-from=- "$src/" "$(url m/z)" < "$T/list0"
check "push --from0 --files-from=-" "$T/oracle" "$T/mod/z"

note "--info=progress2 counts what the list sends: 6 files"
expect_rc 0 ferry_c push -a --info=progress2 --files-from="$T/list" "$src/" "$(url m/p)"
grep -q "(xfr#6, to-chk=0/6)" "$T/last.out" || { cat -v "$T/last.out"; fail "the progress line did not count the list's 6 files"; }

note "an entry that is not there is named (exit 23); the rules apply to what is listed, not to the directories on its way"
printf 'a.txt\nmissing.txt\nnodir/deeper\nskip/s\nd3/q\n' > "$T/list2"
rm -rf "$T/oracle"; mkdir "$T/oracle"
rc=0; rsync -a --exclude=skip/ --exclude=q --files-from="$T/list2" "$src/" "$T/oracle/" 2> "$T/rsync.err" || rc=$?
[ "$rc" = 23 ] || { cat "$T/rsync.err"; fail "the rsync oracle exited $rc"; }
expect_rc 23 ferry_c push -a --exclude=skip/ --exclude=q --files-from="$T/list2" "$src/" "$(url m/e)"
grep -q 'missing.txt: listed in --files-from: ' "$T/last.err" &&
  grep -q 'nodir/deeper: listed in --files-from: ' "$T/last.err" ||
  { cat "$T/last.err"; fail "the missing entries are not named"; }
grep -q 'skip\|d3' "$T/last.err" && { cat "$T/last.err"; fail "an excluded entry was named"; }
# one difference: rsync does not make d3, whose only listed entry is
# excluded; ferry lists a directory before it reaches what is in it, and
# makes it, empty
rsync -d -lptgoD "$src/d3" "$T/oracle/" || fail "rsync -d d3 failed"
check "push --exclude --files-from" "$T/oracle" "$T/mod/e"

note "contents spelled as rsync spells them: '.', 'dir/.', 'dir/sub/..'; a link to a directory on the way or as 'dir/'"
ln -s dir2 "$src/ldir"; ln -s dir1 "$src/l1"
touch -h -d '2022-03-04 05:06:07.5' "$src/ldir" "$src/l1"
for list in '.' 'dir1/.' 'dir1/sub/..' 'ldir/' 'l1/sub/y' 'ldir'; do
  for r in "" -r; do
    printf '%s\n' "$list" > "$T/list3"
    # shellcheck disable=SC2086
    oracle -a $r --files-from="$T/list3" "$src/"
    rm -rf "$T/mod/c"; mkdir "$T/mod/c"
    # shellcheck disable=SC2086
    expect_rc 0 ferry_c push -a $r --files-from="$T/list3" "$src/" "$(url m/c)"
    check "push -a $r, list '$list'" "$T/oracle" "$T/mod/c"
  done
done

note "the destination keeps its own mode and times unless '.' is listed"
for list in 'a.txt' '.'; do
  printf '%s\n' "$list" > "$T/list3"
  chmod 700 "$src"; touch -d '2021-01-01' "$src"
  rm -rf "$T/oracle" "$T/mod/c"; mkdir -m 755 "$T/oracle" "$T/mod/c"
  touch -d '2020-06-07' "$T/oracle" "$T/mod/c"
  rsync -a --files-from="$T/list3" "$src/" "$T/oracle/" || fail "the rsync oracle failed ('$list')"
  expect_rc 0 ferry_c push -a --files-from="$T/list3" "$src/" "$(url m/c)"
  # not listed, its time is that of the new entry in it, as rsync's: now
  fmt='%a %Y'; [ "$list" = . ] || fmt='%a'
  [ "$(stat -c "$fmt" "$T/mod/c")" = "$(stat -c "$fmt" "$T/oracle")" ] ||
    fail "list '$list': the destination is $(stat -c '%a %Y' "$T/mod/c"), rsync's $(stat -c '%a %Y' "$T/oracle")"
  [ "$list" = . ] || [ "$(stat -c %Y "$T/mod/c")" -gt "$(stat -c %Y "$src")" ] ||
    fail "list '$list': the destination took the source's time"
  chmod 755 "$src"
done

note "a NUL in a line ends its entry; a named FIFO's writer is waited for"
printf 'a.txt\0garbage\nb.txt\n' > "$T/list4"
oracle -a --files-from="$T/list4" "$src/"
expect_rc 0 ferry_c push -a --files-from="$T/list4" "$src/" "$(url m/n)"
check "push, a NUL in a line" "$T/oracle" "$T/mod/n"
mkfifo "$T/fifo"; (sleep 1; echo b.txt > "$T/fifo") &
writer=$!
expect_rc 0 ferry_c push -a --files-from="$T/fifo" "$src/" "$(url m/fifo)"
wait $writer
[ -f "$T/mod/fifo/b.txt" ] || fail "a FIFO list: its entry was not sent"

note "into a snapshot module: each list's push is a snapshot, and the one before restores"
printf 'a.txt\ndir1/sub/y\n' > "$T/list6"
expect_rc 0 ferry_c push -a --files-from="$T/list6" "$src/" "$(url s)"
oracle -a --files-from="$T/list6" "$src/"
printf 'b.txt\n' > "$T/list6"
expect_rc 0 ferry_c push -a --files-from="$T/list6" "$src/" "$(url s)"
[ -f "$T/smod/b.txt" ] && [ -f "$T/smod/a.txt" ] || fail "snapshot module: the second list's push did not add b.txt"
rm -rf "$T/back"; expect_rc 0 ferry_c pull -a "$(url "s@-1")/" "$T/back"
check "restore of the first list's snapshot" "$T/oracle" "$T/back"
rm -rf "$T/back"

note "refused with one line: pull, ls, two sources, an empty source, --from0 alone, rsync's '/./'"
expect_rc 1 ferry_c push -a --files-from="$T/list" "" "$(url m/t)"
grep -q "source directory is empty" "$T/last.err" || { cat "$T/last.err"; fail "an empty source: not refused"; }
printf 'dir1/./sub/y\n' > "$T/list5"
expect_rc 1 ferry_c push -a --files-from="$T/list5" "$src/" "$(url m/t)"
grep -q 'entry 1 has "/./" inside' "$T/last.err" || { cat "$T/last.err"; fail "'/./': not refused"; }
expect_rc 1 ferry_c push -a --files-from="$T" "$src/" "$(url m/t)"
grep -q "is a directory" "$T/last.err" || { cat "$T/last.err"; fail "a directory as the list: not said"; }
expect_rc 1 ferry_c pull -a --files-from="$T/list" "$(url m/t/)" "$T/back"
expect_rc 1 ferry_c ls --files-from="$T/list" "$(url m/t/)"
expect_rc 1 ferry_c push -a --from0 "$src/" "$(url m/t)"
expect_rc 1 ferry_c push -a --files-from="$T/list" "$src/" "$src/" "$(url m/t)"
grep -q "one source directory" "$T/last.err" || { cat "$T/last.err"; fail "two sources: not said why"; }
expect_rc 1 ferry_c push -a --files-from="$T/nolist" "$src/" "$(url m/t)"
[ "$(wc -l < "$T/last.err")" = 1 ] && grep -q -- "--files-from .*nolist" "$T/last.err" ||
  { cat "$T/last.err"; fail "a missing list: not one line naming it"; }
[ ! -e "$T/back" ] || fail "a refused pull wrote something"
echo "PASS"
