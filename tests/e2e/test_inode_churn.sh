#!/usr/bin/env bash
# Issue 12.6: change detection is size + mtime (or contents with -c), never
# the inode number or device, so pushing from a fresh snapshot of the source
# (an LVM or btrfs snapshot: every inode and ctime new, the times kept) is a
# no-op, and so is pulling after the box's tree was restored from a copy.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/src/a/b" "$T/src/c"
for i in $(seq 1 20); do head -c $((i * 1000)) /dev/urandom > "$T/src/a/f$i"; done
echo x > "$T/src/a/b/deep"
ln -s a/f1 "$T/src/link"
write_config
start_server
expect_rc 0 ferry_c push --protection none "$T/src/" "$(url m/t/)"

note "push from a copy with new inodes (cp -a: times kept): nothing sent"
cp -a "$T/src" "$T/snap"
[ "$(stat -c %i "$T/src/a/f1")" != "$(stat -c %i "$T/snap/a/f1")" ] || fail "the copy kept the inodes"
expect_rc 0 ferry_c push --protection none --stats "$T/snap/" "$(url m/t/)"
grep -q "^Number of regular files transferred: 0$" "$T/last.out" ||
  { cat "$T/last.out"; fail "a push from new inodes sent files"; }
grep -q "^Number of files up to date: 21$" "$T/last.out" ||
  { cat "$T/last.out"; fail "a push from new inodes did not find every file up to date"; }

note "pull after the box's tree was restored from a copy: nothing received"
expect_rc 0 ferry_c pull --protection none "$(url m/t/)" "$T/local/"
mv "$T/mod/t" "$T/mod/t.old"
cp -a "$T/mod/t.old" "$T/mod/t"
rm -rf "$T/mod/t.old"
expect_rc 0 ferry_c pull --protection none --stats "$(url m/t/)" "$T/local/"
grep -q "^Number of regular files transferred: 0$" "$T/last.out" ||
  { cat "$T/last.out"; fail "a pull after the box's restore moved files"; }

note "a changed mtime alone is still seen (the check is not blind)"
touch -d '2001-01-01' "$T/snap/a/f3"
expect_rc 0 ferry_c push --protection none --stats "$T/snap/" "$(url m/t/)"
grep -q "^Number of regular files transferred: 1$" "$T/last.out" ||
  { cat "$T/last.out"; fail "a changed mtime was not seen"; }
