#!/usr/bin/env bash
# bench/snapmem.sh -- issue 13's memory target: the box's peak RSS while it
# takes snapshot pushes, deletes snapshots (a middle one, merged; the oldest),
# verifies, and serves a restore of the oldest snapshot, at two sizes, to
# show it does not grow with the number of files or of snapshots. Each
# size: FILES files of 1 KiB in FILES/100 directories pushed, then SNAPS-1
# more pushes with 1 % rewritten, 0.5 % deleted, 0.5 % added. The daemon runs
# under tests' ferry-maxrss (the peak of the largest session it reaped);
# `ferry admin` is measured the same way.
#   bench/snapmem.sh                       10,000 files x 5 snapshots, 100,000 x 20
#   SNAPMEM_SIZES="2000:3 20000:6" bench/snapmem.sh
# Knobs: SNAPMEM_SIZES ["10000:5 100000:20"] SNAPMEM_ROOT [/dev/shm] FERRY MAXRSS
set -euo pipefail
REPO=$(realpath "$(dirname "$0")/..")
SIZES=${SNAPMEM_SIZES:-"10000:5 100000:20"}
FERRY=$(realpath "${FERRY:-$REPO/build/ferry}")
MAXRSS=$(realpath "${MAXRSS:-$REPO/build/tests/ferry-maxrss}")
[ -x "$FERRY" ] && [ -x "$MAXRSS" ] || { echo "snapmem: build first (make build)" >&2; exit 2; }
W=$(mktemp -d "${SNAPMEM_ROOT:-/dev/shm}/ferry-snapmem.XXXXXX")
trap 'pkill -f "$W/" 2> /dev/null || true; rm -rf "$W"' EXIT
log() { echo "[snapmem $(date +%H:%M:%S)] $*" >&2; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
mib() { python3 -c "print(f'{$1 / 1024:.1f}')"; }

mkdir -p "$W/c" "$W/s" && chmod 700 "$W/c" "$W/s"
"$FERRY" keygen -f "$W/c/id" > /dev/null 2>&1
cp "$W/c/id.pub" "$W/s/ak"
FC=(--identity "$W/c/id" --known-hosts "$W/c/kh" --accept-new)
DPID= PORT=
start() {   # start RSSFILE MODULEDIR
  PORT=$(free_port)
  printf '[global]\nlisten = 127.0.0.1:%s\nhost key = %s/hk\nauthorized keys = %s/ak\nnice = 0\n[m]\npath = %s\nprotection = none\nsnapshots = yes\n' \
    "$PORT" "$W/s" "$W/s" "$2" > "$W/ferry.conf"
  FERRY_HOME=$W/s "$MAXRSS" "$1" "$FERRY" serve -v --config "$W/ferry.conf" 2> "$W/ferry.log" &
  DPID=$!
  for _ in $(seq 1 100); do
    "$FERRY" ls "${FC[@]}" "ferry://127.0.0.1:$PORT/m/" > /dev/null 2>&1 && return 0
    sleep 0.05
  done
  cat "$W/ferry.log" >&2; exit 1
}
stop() { kill -TERM "$DPID"; wait "$DPID" 2> /dev/null || true; }

# gen.py ROOT FILES DAY: day 0 makes the tree; a later day changes it
cat > "$W/gen.py" << 'EOF'
import os, random, sys
root, files, day = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(day)
if day == 0:
    for i in range(files):
        d = f"{root}/d{i % max(1, files // 100):04}"
        os.makedirs(d, exist_ok=True)
        open(f"{d}/f{i:07}", "wb").write(rng.randbytes(1024))
    sys.exit(0)
all_ = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)
for p in rng.sample(all_, len(all_) // 100):
    open(p, "wb").write(rng.randbytes(1024))
for p in rng.sample(all_, len(all_) // 200):
    if os.path.exists(p):
        os.unlink(p)
dirs = sorted({os.path.dirname(p) for p in all_})
for i in range(len(all_) // 200):
    open(f"{rng.choice(dirs)}/n{day}_{i}", "wb").write(rng.randbytes(1024))
EOF

echo "## Snapshots: the box's peak RSS (MiB)"
echo
echo "| files | snapshots | push (largest session) | delete a middle snapshot | delete the oldest | verify | restore of the oldest (its session) |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
for size in $SIZES; do
  files=${size%:*} snaps=${size#*:}
  src=$W/src mod=$W/mod
  rm -rf "$src" "$mod" && mkdir -p "$mod"
  log "$files files, $snaps snapshots"
  python3 "$W/gen.py" "$src" "$files" 0
  start "$W/rss.push" "$mod"
  for d in $(seq 0 $((snaps - 1))); do
    [ "$d" = 0 ] || python3 "$W/gen.py" "$src" "$files" "$d"
    "$FERRY" push "${FC[@]}" -a --delete "$src/" "ferry://127.0.0.1:$PORT/m/" > /dev/null
  done
  stop
  mapfile -t names < <("$FERRY" admin list "$mod" | tail -n +2 | awk '{print $1}')
  [ "${#names[@]}" = "$snaps" ] || { grep -v "done:\|connection, pid\|key BLAKE" "$W/ferry.log" | tail -n 20 >&2; echo "snapmem: ${#names[@]} snapshots, not $snaps" >&2; exit 1; }
  "$MAXRSS" "$W/rss.mid" "$FERRY" admin delete "$mod" "${names[$((snaps / 2))]}" > /dev/null
  "$MAXRSS" "$W/rss.old" "$FERRY" admin delete "$mod" "${names[0]}" > /dev/null
  "$MAXRSS" "$W/rss.ver" "$FERRY" admin verify "$mod" > "$W/verify.out"
  grep -q " 0 damaged" "$W/verify.out" || { cat "$W/verify.out" >&2; exit 1; }
  start "$W/rss.restore" "$mod"
  rm -rf "$W/out"
  "$FERRY" pull "${FC[@]}" -a "ferry://127.0.0.1:$PORT/m@-$((snaps - 3))/" "$W/out/" > /dev/null
  stop
  echo "| $files | $snaps | $(mib "$(cat "$W/rss.push")") | $(mib "$(cat "$W/rss.mid")") | $(mib "$(cat "$W/rss.old")") | $(mib "$(cat "$W/rss.ver")") | $(mib "$(cat "$W/rss.restore")") |"
done
