#!/usr/bin/env bash
# bench/delmem.sh -- what --delete-delay costs the box: its session's peak RSS
# and the push's time when a mirror push deletes N extraneous files (in N/100
# directories), against --delete (deleting during) on the same tree, at two
# sizes, to show that the list of what is deleted waits on disk (fs/spool.c)
# and not in memory. The daemon runs under tests' ferry-maxrss (the peak of
# the largest session it reaped). Three runs of each; medians.
#   bench/delmem.sh                   10,000 and 100,000 files
#   DELMEM_SIZES="2000 20000" bench/delmem.sh
# Knobs: DELMEM_SIZES ["10000 100000"] DELMEM_ROOT [/dev/shm] FERRY MAXRSS
set -euo pipefail
REPO=$(realpath "$(dirname "$0")/..")
SIZES=${DELMEM_SIZES:-"10000 100000"}
FERRY=$(realpath "${FERRY:-$REPO/build/ferry}")
MAXRSS=$(realpath "${MAXRSS:-$REPO/build/tests/ferry-maxrss}")
[ -x "$FERRY" ] && [ -x "$MAXRSS" ] || { echo "delmem: build first (make build)" >&2; exit 2; }
W=$(mktemp -d "${DELMEM_ROOT:-/dev/shm}/ferry-delmem.XXXXXX")
trap 'pkill -f "$W/" 2> /dev/null || true; rm -rf "$W"' EXIT
log() { echo "[delmem $(date +%H:%M:%S)] $*" >&2; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
mib() { python3 -c "print(f'{$1 / 1024:.1f}')"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

mkdir -p "$W/c" "$W/s" && chmod 700 "$W/c" "$W/s"
"$FERRY" keygen -f "$W/c/id" > /dev/null 2>&1
cp "$W/c/id.pub" "$W/s/ak"
FC=(--identity "$W/c/id" --known-hosts "$W/c/kh" --accept-new)
DPID= PORT=
start() {   # start RSSFILE
  PORT=$(free_port)
  printf '[global]\nlisten = 127.0.0.1:%s\nhost key = %s/hk\nauthorized keys = %s/ak\nnice = 0\n[m]\npath = %s\nprotection = none\n' \
    "$PORT" "$W/s" "$W/s" "$W/mod" > "$W/ferry.conf"
  FERRY_HOME=$W/s "$MAXRSS" "$1" "$FERRY" serve -v --config "$W/ferry.conf" 2> "$W/ferry.log" &
  DPID=$!
  for _ in $(seq 1 100); do
    "$FERRY" ls "${FC[@]}" "ferry://127.0.0.1:$PORT/m/" > /dev/null 2>&1 && return 0
    sleep 0.05
  done
  cat "$W/ferry.log" >&2; exit 1
}
stop() { kill -TERM "$DPID"; wait "$DPID" 2> /dev/null || true; }

# the module: what the source has (one file per directory) and N extraneous
# files of 100 bytes beside them
fill() {   # fill N
  rm -rf "$W/mod" && mkdir -p "$W/mod"
  python3 - "$W/mod" "$1" << 'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = f"{root}/d{i % max(1, n // 100):04}"
    os.makedirs(d, exist_ok=True)
    open(f"{d}/gone{i:07}", "wb").write(b"x" * 100)
EOF
  cp -a "$W/src/." "$W/mod/"
}

rm -rf "$W/src" && mkdir -p "$W/src"
for i in $(seq 0 99); do mkdir -p "$W/src/d$(printf %04d "$i")"; echo keep > "$W/src/d$(printf %04d "$i")/keep"; done

echo "## --delete-delay: the box's peak RSS and the push's time, deleting N files"
echo
echo "| extraneous files | --delete: RSS (MiB) | --delete: time (s) | --delete-delay: RSS (MiB) | --delete-delay: time (s) |"
echo "|---:|---:|---:|---:|---:|"
for n in $SIZES; do
  row="| $n"
  for how in --delete --delete-delay; do
    : > "$W/rss.all"; : > "$W/t.all"
    for run in 1 2 3; do
      log "$n files, $how, run $run"
      fill "$n"
      start "$W/rss"
      t0=$(date +%s%N)
      "$FERRY" push "${FC[@]}" -a "$how" "$W/src/" "ferry://127.0.0.1:$PORT/m/" > /dev/null
      t1=$(date +%s%N)
      stop
      [ -z "$(find "$W/mod" -name 'gone*' | head -n1)" ] || { echo "delmem: $how left files" >&2; exit 1; }
      cat "$W/rss" >> "$W/rss.all"
      echo $(((t1 - t0) / 1000000)) >> "$W/t.all"
    done
    row="$row | $(mib "$(median < "$W/rss.all")") | $(python3 -c "print(f'{$(median < "$W/t.all") / 1000:.2f}')")"
  done
  echo "$row |"
done
