#!/usr/bin/env bash
# A sparse 5 GiB file (data at the start, the middle and past 4 GiB) pushed
# and pulled: contents equal, and it stays sparse on the other side.
. "$(dirname "$0")/lib.sh"

# cmp(1)'s answer without reading the holes (reading them was most of the time)
scmp() { python3 "$(dirname "$0")/sparse_cmp.py" "$@"; }

src=$T/src
mkdir -p "$src"
f=$src/disk.img
truncate -s 5G "$f"
head -c 1000000 /dev/urandom | dd of="$f" conv=notrunc status=none
head -c 1000000 /dev/urandom | dd of="$f" bs=1M seek=2048 conv=notrunc status=none
head -c 1000000 /dev/urandom | dd of="$f" bs=1M seek=4600 conv=notrunc status=none
echo tail | dd of="$f" bs=1 seek=$((5 * 1024 * 1024 * 1024 - 5)) conv=notrunc status=none
write_config
start_server
expect_rc 0 ferry_c push --info=progress2 "$src/" "$(url m/big)"
# the holes are part of the file: the last progress line says 100 % (it
# once ended at 0 %, the data being 3 MB of 5 GiB)
tr '\r' '\n' < "$T/last.out" | grep 'xfr#' | tail -n 1 | grep -q ' 100% ' ||
  { tr '\r' '\n' < "$T/last.out" | tail -n 3; fail "push: progress did not reach 100 %"; }
[ "$(stat -c %s "$T/mod/big/disk.img")" = "$(stat -c %s "$f")" ] || fail "size differs"
scmp "$f" "$T/mod/big/disk.img" || fail "contents differ after push"
blocks=$(stat -c %b "$T/mod/big/disk.img")
[ "$blocks" -lt 100000 ] || fail "pushed file is not sparse ($blocks blocks)"
expect_rc 0 ferry_c pull --progress "$(url m/big/disk.img)" "$T/back.img"
tr '\r' '\n' < "$T/last.out" | grep 'back.img .*MB/s' | tail -n 1 | grep -q ' 100% ' ||
  { tr '\r' '\n' < "$T/last.out" | tail -n 3; fail "pull: progress did not reach 100 %"; }
scmp "$f" "$T/back.img" || fail "contents differ after pull"
diff <(tree_manifest "$src") <(tree_manifest "$T/mod/big") || fail "metadata differ after push"
# the comparison itself: one byte written into a hole (past 4 GiB) is a difference
cp --sparse=always "$T/back.img" "$T/bad.img"
printf x | dd of="$T/bad.img" bs=1 seek=$((4400 * 1024 * 1024)) conv=notrunc status=none
if scmp "$f" "$T/bad.img" > /dev/null; then fail "sparse_cmp.py missed a byte in a hole"; fi
echo "PASS"
