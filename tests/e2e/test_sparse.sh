#!/usr/bin/env bash
# A sparse 5 GiB file (data at the start, the middle and past 4 GiB) pushed
# and pulled: contents equal, and it stays sparse on the other side.
. "$(dirname "$0")/lib.sh"

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
expect_rc 0 ferry_c push "$src/" "$(url m/big)"
[ "$(stat -c %s "$T/mod/big/disk.img")" = "$(stat -c %s "$f")" ] || fail "size differs"
cmp "$f" "$T/mod/big/disk.img" || fail "contents differ after push"
blocks=$(stat -c %b "$T/mod/big/disk.img")
[ "$blocks" -lt 100000 ] || fail "pushed file is not sparse ($blocks blocks)"
expect_rc 0 ferry_c pull "$(url m/big/disk.img)" "$T/back.img"
cmp "$f" "$T/back.img" || fail "contents differ after pull"
same_tree "$src" "$T/mod/big"
echo "PASS"
