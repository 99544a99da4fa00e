#!/usr/bin/env bash
# A destination whose file system keeps modification times coarser than the
# source's (FAT: 2 s, ext3 and ext4 with 128-byte inodes: 1 s, exFAT: 10
# ms, NTFS: 100 ns): the receiver compares the sender's mtime as its file
# system keeps it, so a second push or pull moves nothing and rewrites
# nothing (a USB stick's files are not read and written again on every
# run), sets no directory's time again, and -i says nothing; a file that
# did change is still sent. The probe touches nothing anyone can see (an
# unnamed O_TMPFILE): no directory's mtime or ctime changes, not even in a
# dry run, which then lists only what did change.
# Here: ext4 with 128-byte inodes on a loop device (this kernel has no FAT).
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v losetup > /dev/null; then
  fail "this test needs root and losetup (a loop-mounted file system)"
fi
LOOPS=()
coarse_fs() {   # coarse_fs DIR: a file system that keeps whole seconds, mounted there
  truncate -s 32M "$1.img"; mkfs.ext4 -q -I 128 -F "$1.img" 2> /dev/null
  mkdir -p "$1"; mount -o loop "$1.img" "$1"; LOOPS+=("$1")
}
# the loop mounts go first; cleanup then exits with the test's own status
trap 'keep=$?; for m in "${LOOPS[@]}"; do umount "$m" 2> /dev/null; done; set +e; (exit $keep); cleanup' EXIT

src=$T/src
mkdir -p "$src/d/e"
for f in a d/b d/e/c; do head -c $((RANDOM % 50000 + 70000)) /dev/urandom > "$src/$f"; done
touch -d '2024-05-05 10:00:01.123456789' "$src/a"
touch -d '2024-05-05 10:00:02.5' "$src/d/b"
touch -d '2024-05-05 10:00:03.999999999' "$src/d/e/c" "$src/d/e" "$src/d"
coarse_fs "$T/mod"
write_config
start_server -v   # -vv: its debug line says the precision found

inodes() { (cd "$1" && find . -printf '%p %i %Y\n' | sort); }
note "push onto a file system that keeps seconds: the second push moves and rewrites nothing"
expect_rc 0 ferry_c push -a "$src/" "$(url m/t)"
[ "$(stat -c %y "$T/mod/t/a")" = "2024-05-05 10:00:01.000000000 +0000" ] ||
  fail "this file system keeps nanoseconds after all: $(stat -c %y "$T/mod/t/a")"
inodes "$T/mod/t" > "$T/before"
times() { (cd "$1" && find . -type d -printf '%p %T@ %C@\n' | sort); }
times "$T/mod" > "$T/times"
sleep 1   # this file system keeps ctimes to the second too: a change would show
expect_rc 0 ferry_c push -ai --stats "$src/" "$(url m/t)"
grep -q "^Number of regular files transferred: 0" "$T/last.out" || { cat "$T/last.out"; fail "push again: files were sent"; }
grep -q '^[<>.c]' "$T/last.out" && { cat "$T/last.out"; fail "push -i again: something itemized"; }
inodes "$T/mod/t" | diff "$T/before" - || fail "push again: a file was replaced"
grep -q 'keeps mtimes to 1000000000 ns, 1 s$' "$T/server.log" ||
  { cat "$T/server.log"; fail "the box did not log the precision it found"; }
times "$T/mod" | diff "$T/times" - || fail "push again: a directory's mtime or ctime changed (the probe?)"

note "a file that did change is sent"
printf 'X' | dd of="$src/d/b" bs=1 seek=100 conv=notrunc status=none
touch -d '2024-05-05 10:00:04.25' "$src/d/b"
expect_rc 0 ferry_c push -ai "$src/" "$(url m/t)"
grep -qx '<f..t...... d/b' "$T/last.out" || { cat "$T/last.out"; fail "the changed d/b was not sent"; }
[ "$(grep -c '^[<>.c]' "$T/last.out")" = 1 ] || { cat "$T/last.out"; fail "not d/b alone"; }
cmp "$src/d/b" "$T/mod/t/d/b" || fail "d/b differs"

note "pull onto such a file system, and -u: the same"
coarse_fs "$T/back"
expect_rc 0 ferry_c pull -a "$(url m/t/)" "$T/back/r"
expect_rc 0 ferry_c push -a "$src/" "$(url m/fine)"   # (a module that is not coarse: $T/mod is)
inodes "$T/back/r" > "$T/before"
expect_rc 0 ferry_c pull -ai -u --stats "$(url m/t/)" "$T/back/r"
grep -q "^Number of regular files transferred: 0" "$T/last.out" || { cat "$T/last.out"; fail "pull again: files were received"; }
grep -q '^[<>.c]' "$T/last.out" && { cat "$T/last.out"; fail "pull -i again: something itemized"; }
inodes "$T/back/r" | diff "$T/before" - || fail "pull again: a file was replaced"

note "a module whose root is not the session's (sticky, root's; uid = nobody): the probe needs no right to its time"
coarse_fs "$T/nb"; chmod 1777 "$T/nb"; chmod 755 "$T"
stop_server
write_config "[nb]" "path = $T/nb" "uid = nobody"
start_server -v
expect_rc 0 ferry_c push -a "$src" "$(url nb/)"   # src, not src/: the root's time is not ours to set
expect_rc 0 ferry_c push -ai --stats "$src" "$(url nb/)"
grep -q "^Number of regular files transferred: 0" "$T/last.out" || { cat "$T/last.out"; fail "sticky root: files were sent again"; }
[ -z "$(find "$T/nb" -name '.ferry-*')" ] || fail "the probe's file was left"

note "a dry run probes too, and writes nothing: it lists only the file that changed"
touch -d '2024-05-05 10:00:05.75' "$src/d/e/c"
times "$T/mod" > "$T/times"; inodes "$T/mod/t" > "$T/before"; sleep 1
expect_rc 0 ferry_c push -ai -n "$src/" "$(url m/t)"
grep -qx '<f..t...... d/e/c' "$T/last.out" || { cat "$T/last.out"; fail "push -n did not list d/e/c"; }
[ "$(grep -c '^[<>.c]' "$T/last.out")" = 1 ] || { cat "$T/last.out"; fail "push -n listed more than d/e/c"; }
times "$T/mod" | diff "$T/times" - || fail "push -n changed a directory's times"
inodes "$T/mod/t" | diff "$T/before" - || fail "push -n replaced a file"
echo "ok"
