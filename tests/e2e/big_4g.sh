#!/usr/bin/env bash
# One real file of 4 GiB + 1 MiB pushed to the daemon, for the 32-bit builds
# (issue 9, F6): a DATA extent is a u64, and a receiver that cut what was left
# of it to a 32-bit size_t failed every non-sparse extent of 4 GiB or more.
# The file is written in full (pseudo-random, no holes): a sparse one would
# go out as small DATA extents around a HOLE (SEEK_DATA) and miss the bug.
# Pushed at --protection none, verified (the whole-file hash: the receiver
# reads into user space, the path that was narrowed) and --no-verify (splice,
# which always clamped).
#
# Not a test_*.sh: it writes 8 GiB and takes minutes under qemu, so neither
# ctest nor make check runs it. `make cross-mips-big` does, against the
# emulated big-endian MIPS daemon (docs/CROSS.md); natively:
#   FERRY=build/ferry bash tests/e2e/big_4g.sh
. "$(dirname "$0")/lib.sh"

size=$(( (4 << 30) + (1 << 20) ))
avail=$(df --output=avail -B1 "$T" | tail -n 1)
if [ "$avail" -lt $(( 2 * size + (1 << 30) )) ]; then
  echo "SKIP: $((avail >> 20)) MiB free under $T, 9 GiB needed"
  exit 77
fi
[ "$(stat -f -c %T "$T")" != tmpfs ] || { echo "SKIP: $T is a tmpfs"; exit 77; }

mkdir -p "$T/src"
# AES-CTR of zeros: fast, and every 16 bytes differ, so a misplaced piece
# cannot compare equal. (openssl ends by SIGPIPE when head has enough.)
(openssl enc -aes-128-ctr -nosalt -K 000102030405060708090a0b0c0d0e0f -iv 0 -in /dev/zero \
  2> /dev/null || true) | head -c "$size" > "$T/src/big.bin"
[ "$(stat -c %s "$T/src/big.bin")" = "$size" ] || fail "could not write the source file"
[ "$(stat -c %b "$T/src/big.bin")" -ge $(( size / 512 )) ] || fail "the source file has holes"

write_config
start_server
for mode in verified no-verify; do
  args=(--protection none)
  [ $mode = no-verify ] && args+=(--no-verify)
  note "push of 4 GiB + 1 MiB at ${args[*]}"
  t0=$SECONDS
  expect_rc 0 ferry_c push "${args[@]}" "$T/src/" "$(url "m/$mode")"
  echo "   $mode: $((SECONDS - t0)) s"
  cmp "$T/src/big.bin" "$T/mod/$mode/big.bin" || fail "$mode: contents differ"
  no_temp_files "$T/mod"
  rm -rf "${T:?}/mod/$mode"
done
echo "PASS"
