#!/usr/bin/env bash
# bench/snaplayout.sh -- groundwork for issue 13 (snapshots): what one
# snapshot costs on ext4 in the two layouts the issue names, for a tree of
# SNAP_FILES files in SNAP_DIRS directories of which SNAP_CHANGED change:
#   farm     rsnapshot's hardlink farm: `rsync -a --link-dest=PREV` makes a new
#            tree of links to the unchanged files of the previous snapshot
#   reverse  reverse increments: the latest tree stays a plain tree; a push
#            moves each replaced file's old version into history/SNAP/PATH
#            (a rename on the same file system) before writing the new one
# Reported per layout: wall and inodes for one snapshot, and the wall of
# deleting the oldest snapshot (rm -rf of it). Root (a loop-mounted ext4).
#   bench/snaplayout.sh          100,000 files, 10 changed (about a minute)
# Knobs: SNAP_FILES [100000] SNAP_DIRS [1000] SNAP_CHANGED [10] SNAP_ROOT [/dev/shm]
set -euo pipefail
FILES=${SNAP_FILES:-100000} DIRS=${SNAP_DIRS:-1000} CHANGED=${SNAP_CHANGED:-10}
[ "$(id -u)" = 0 ] || { echo "snaplayout: needs root (loop mount)" >&2; exit 2; }
W=$(mktemp -d "${SNAP_ROOT:-/dev/shm}/ferry-snap.XXXXXX")
M=$W/mnt
trap 'umount "$M" 2> /dev/null || true; rm -rf "$W"' EXIT
truncate -s 3G "$W/img"
mkfs.ext4 -q -N 1500000 -F "$W/img"
mkdir -p "$M"
mount -o loop "$W/img" "$M"
now() { date +%s.%N; }
inodes() { sync; df --output=iused "$M" | tail -n1; }
secs() { python3 -c "print(f'{$2 - $1:.3f}')"; }

# src: the PC's tree (1 KiB files); then CHANGED of them rewritten
python3 - "$M/src" "$FILES" "$DIRS" << 'EOF'
import os, sys
root, files, dirs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
blob = os.urandom(1024)
for d in range(dirs):
    os.makedirs(f"{root}/d{d:04}", exist_ok=True)
for i in range(files):
    with open(f"{root}/d{i % dirs:04}/f{i:06}", "wb") as f:
        f.write(blob)
EOF
CHANGE_LIST=$(cd "$M/src" && find . -type f | LC_ALL=C sort | awk -v n="$CHANGED" -v t="$FILES" 'NR % int(t / n) == 0' | head -n "$CHANGED")
change_src() { for f in $CHANGE_LIST; do head -c 1024 /dev/urandom > "$M/src/$f"; done; }

# --- farm: snap0 a full copy, snap1 --link-dest=snap0 after the change
mkdir -p "$M/farm"
rsync -a "$M/src/" "$M/farm/snap0/"
change_src
i0=$(inodes); t0=$(now)
rsync -a --link-dest="$M/farm/snap0" "$M/src/" "$M/farm/snap1/"
t1=$(now); i1=$(inodes)
farm_wall=$(secs "$t0" "$t1") farm_inodes=$((i1 - i0))
t0=$(now); rsync -a "$M/src/" "$M/farm/snap1/"; t1=$(now)   # the scan alone: nothing to do
scan_wall=$(secs "$t0" "$t1")
t0=$(now); rm -rf "$M/farm/snap0"; sync; t1=$(now)
farm_rm=$(secs "$t0" "$t1")

# --- reverse: latest a plain copy; the change moves the old versions into
# history/snap0 and writes the new ones, plus a manifest of what moved
rsync -a "$M/farm/snap1/" "$M/latest/"   # the same content as the PC's
change_src
i0=$(inodes); t0=$(now)
mkdir -p "$M/history/snap0"
for f in $CHANGE_LIST; do
  mkdir -p "$M/history/snap0/$(dirname "$f")"
  mv "$M/latest/$f" "$M/history/snap0/$f"
  cp -p "$M/src/$f" "$M/latest/$f"
done
printf '%s\n' $CHANGE_LIST > "$M/history/snap0/.manifest"
sync
t1=$(now); i1=$(inodes)
rev_wall=$(secs "$t0" "$t1") rev_inodes=$((i1 - i0))
t0=$(now); rm -rf "$M/history/snap0"; sync; t1=$(now)
rev_rm=$(secs "$t0" "$t1")

# --- ferry: the real store (a module with `snapshots = yes`), pushed over
# loopback: a first push, CHANGED files changed, a second push (the snapshot),
# then `ferry admin delete` of the first snapshot (the oldest)
FERRY=${FERRY:-$(dirname "$0")/../build/ferry}
ferry_row=""
if [ -x "$FERRY" ]; then
  FH=$W/fh && mkdir -p "$FH/home" "$M/fmod" && chmod 700 "$FH/home"
  "$FERRY" keygen -f "$FH/home/id_ferry" > /dev/null 2>&1
  cp "$FH/home/id_ferry.pub" "$FH/ak"
  printf '[global]\nlisten = 127.0.0.1:0\nhost key = %s/hk\nauthorized keys = %s/ak\nnice = 0\n[m]\npath = %s\nprotection = none\nsnapshots = yes\n' \
    "$FH" "$FH" "$M/fmod" > "$FH/ferry.conf"
  FERRY_HOME=$FH/home "$FERRY" serve --config "$FH/ferry.conf" -v 2> "$FH/log" &
  fpid=$!
  for _ in $(seq 1 100); do
    fport=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$FH/log" | head -n1)
    [ -n "$fport" ] && break
    sleep 0.05
  done
  fpush() { FERRY_HOME=$FH/home "$FERRY" push --identity "$FH/home/id_ferry" \
    --known-hosts "$FH/home/kh" --accept-new -a --delete "$M/src/" "ferry://127.0.0.1:$fport/m/" > /dev/null 2>&1; }
  fpush
  change_src
  i0=$(inodes); t0=$(now); fpush; sync; t1=$(now); i1=$(inodes)
  f_wall=$(secs "$t0" "$t1") f_inodes=$((i1 - i0))
  t0=$(now); fpush; t1=$(now)
  f_noop=$(secs "$t0" "$t1")
  first=$("$FERRY" admin list "$M/fmod" | sed -n 2p | awk '{print $1}')
  t0=$(now); "$FERRY" admin delete "$M/fmod" "$first" > /dev/null; sync; t1=$(now)
  f_rm=$(secs "$t0" "$t1")
  kill "$fpid"; wait "$fpid" 2> /dev/null || true
  ferry_row="| ferry, \`snapshots = yes\` (a push over loopback; then \`ferry admin delete\` of the oldest) | $f_wall | $f_inodes | $f_rm |"
fi

echo "## Snapshot layouts on ext4: $FILES files in $DIRS directories, $CHANGED changed"
echo
echo "| layout | one snapshot: wall (s) | inodes it adds | deleting the oldest snapshot: wall (s) |"
echo "|---|---:|---:|---:|"
echo "| hardlink farm (rsync --link-dest) | $farm_wall | $farm_inodes | $farm_rm |"
echo "| reverse increments (move the old versions aside) | $rev_wall | $rev_inodes | $rev_rm |"
[ -z "$ferry_row" ] || echo "$ferry_row"
echo
echo "The farm's snapshot includes rsync comparing the $FILES files: the same rsync with nothing"
echo "to do took $scan_wall s. A reverse-increment push pays its no-op scan too; its row is"
echo "only the moves and writes. Hard links take no inodes: the farm's are its directories."
[ -z "$ferry_row" ] || echo "ferry's row is a whole push, its scan of the $FILES files included; the same push with nothing to do took $f_noop s (and made no snapshot)."
