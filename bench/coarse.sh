#!/usr/bin/env bash
# The second push of a tree onto a destination that keeps mtimes to the
# second (ext4 with 128-byte inodes on a loop device, standing in for a FAT
# or exFAT USB stick: this kernel has no vfat): wall time, MB the disk was
# written, files sent. Three runs.
#   sudo bench/coarse.sh                    # this build (build/ferry)
#   sudo FERRY=/path/to/other/ferry bench/coarse.sh
# Root: a loop device. Figures: docs/BENCHMARKS.md ("Coarse mtimes").
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
export FERRY=${FERRY:-$here/build/ferry}
. "$here/tests/e2e/lib.sh"
truncate -s 400M "$T/v.img"; mkfs.ext4 -q -I 128 -F "$T/v.img" 2> /dev/null
mkdir -p "$T/mod"; LOOP=$(losetup -f --show "$T/v.img"); mount "$LOOP" "$T/mod"
trap 'keep=$?; umount "$T/mod"; losetup -d "$LOOP"; set +e; (exit $keep); cleanup' EXIT
mkdir -p "$T/src"
for d in $(seq 1 20); do
  mkdir -p "$T/src/d$d"
  for f in $(seq 1 50); do head -c 100000 /dev/urandom > "$T/src/d$d/f$f"; done
done
find "$T/src" -exec touch -d '2024-05-05 10:00:01.123456789' {} +
write_config; start_server
ferry_c push -a "$T/src/" "$(url m/t)" > /dev/null 2>&1
sync; dev=$(basename "$LOOP")
echo "1,000 files, 100 MB, second push onto ext4 with 128-byte inodes ($("$FERRY" --version 2>&1 | head -1)):"
for run in 1 2 3; do
  w0=$(awk '{print $7}' "/sys/block/$dev/stat"); t0=$(date +%s.%N)
  ferry_c push -a --stats "$T/src/" "$(url m/t)" > "$T/o" 2>&1; sync
  t1=$(date +%s.%N); w1=$(awk '{print $7}' "/sys/block/$dev/stat")
  echo "run $run: $(awk "BEGIN { printf \"%.2f s\", $t1 - $t0 }"), $(((w1 - w0) * 512 / 1000000)) MB written," \
       "$(sed -n 's/^Number of regular files transferred: /files sent: /p' "$T/o")"
done
