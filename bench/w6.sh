#!/usr/bin/env bash
# bench/w6.sh -- W6 (issue 12): a million empty files in 10,000 directories,
# ferry against the rsync daemon on loopback (tmpfs to tmpfs), and one
# directory of 200,000 entries. Three steps each: pushed fresh, re-synced with
# nothing changed, re-synced with --delete after W6_DEL files were removed on
# the sender. Reported per step: wall, and the peak RSS of the client and of
# the server (the daemon and its sessions: each step starts a fresh daemon
# under tests' ferry-maxrss, whose ru_maxrss covers the sessions it reaped).
# Both sides run with -a (owners and groups travel, as rsync -a's do).
#
#   bench/w6.sh                  the full size (a few minutes; about 3 GiB of tmpfs)
#   W6_FILES=20000 W6_DIRS=200 W6_BIG=5000 bench/w6.sh    a quick look
#
# Knobs: W6_FILES [1000000] W6_DIRS [10000] W6_DEL [1000] W6_BIG [200000]
#   W6_ROOT [/dev/shm] FERRY [build/ferry] W6_MAXRSS [build/tests/ferry-maxrss]
# Also a section of bench/run.sh (w6; W6=0 skips it; tiny sizes under --smoke).
# Prints a markdown table; the targets (issue 12): RSS <= 8 MiB for the client
# and the server in every W6 step, the no-op re-sync's wall <= 0.7x rsyncd's,
# the 200,000-entry directory below 32 MiB.
set -euo pipefail
REPO=$(realpath "$(dirname "$0")/..")
FILES=${W6_FILES:-1000000} DIRS=${W6_DIRS:-10000} DEL=${W6_DEL:-1000} BIG=${W6_BIG:-200000}
NOOP_ROUNDS=${W6_NOOP_ROUNDS:-3}
FERRY=$(realpath "${FERRY:-$REPO/build/ferry}")
MAXRSS=$(realpath "${W6_MAXRSS:-$REPO/build/tests/ferry-maxrss}")
[ -x "$FERRY" ] && [ -x "$MAXRSS" ] || { echo "w6: build first (make build)" >&2; exit 2; }
command -v rsync > /dev/null || { echo "w6: rsync is needed (make deps)" >&2; exit 2; }
W=$(mktemp -d "${W6_ROOT:-/dev/shm}/ferry-w6.XXXXXX")
trap 'pkill -f "$W/" 2> /dev/null || true; rm -rf "$W"' EXIT
log() { echo "[w6 $(date +%H:%M:%S)] $*" >&2; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# make_tree DIR FILES DIRS: FILES empty files spread over DIRS directories
make_tree() {
  python3 - "$1" "$2" "$3" << 'EOF'
import os, sys
root, files, dirs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for d in range(dirs):
    os.makedirs(f"{root}/d{d:05}", exist_ok=True)
for i in range(files):
    os.close(os.open(f"{root}/d{i % dirs:05}/f{i:07}", os.O_CREAT | os.O_WRONLY, 0o644))
EOF
}

# remove_some DIR N: removes every (FILES/N)th file, N in all
remove_some() {
  find "$1" -type f | LC_ALL=C sort | awk -v n="$2" -v t="$3" 'NR % int(t / n) == 0' | head -n "$2" |
    xargs -d '\n' rm -f
}

mkdir -p "$W/home/c" "$W/home/s" "$W/fmod" "$W/rmod"
chmod 700 "$W/home/c" "$W/home/s"
FERRY_HOME=$W/home/c "$FERRY" keygen -f "$W/home/c/id_ferry" -C w6 > /dev/null 2>&1
cp "$W/home/c/id_ferry.pub" "$W/home/s/authorized_keys"

# a fresh daemon for one step, under ferry-maxrss (RSS written at its exit)
FP= RP=
start_ferry() {
  FP=$(free_port)
  printf '[global]\nlisten = 127.0.0.1:%s\nhost key = %s\nauthorized keys = %s\nnice = 0\n[m]\npath = %s\nprotection = none\n' \
    "$FP" "$W/home/s/host_key" "$W/home/s/authorized_keys" "$W/fmod" > "$W/ferry.conf"
  FERRY_HOME=$W/home/s "$MAXRSS" "$W/srv.rss" "$FERRY" serve --config "$W/ferry.conf" 2> "$W/serve.log" &
  SRV=$!
  for _ in $(seq 1 100); do grep -q listening "$W/serve.log" 2> /dev/null && return; sleep 0.05; done
  echo "w6: ferry serve did not start" >&2; exit 1
}
start_rsyncd() {
  RP=$(free_port)
  printf 'port = %s\naddress = 127.0.0.1\nuse chroot = no\npid file = %s\n[m]\npath = %s\nread only = no\n' \
    "$RP" "$W/rsyncd.pid" "$W/rmod" > "$W/rsyncd.conf"
  [ "$(id -u)" = 0 ] && printf 'uid = root\ngid = root\n' >> "$W/rsyncd.conf"
  rm -f "$W/rsyncd.pid"
  "$MAXRSS" "$W/srv.rss" rsync --daemon --no-detach --config="$W/rsyncd.conf" 2> "$W/rsyncd.log" &
  SRV=$!
  for _ in $(seq 1 100); do rsync "rsync://127.0.0.1:$RP/" > /dev/null 2>&1 && return; sleep 0.05; done
  echo "w6: rsyncd did not start" >&2; exit 1
}
stop_server() { kill -TERM "$SRV" 2> /dev/null || true; wait "$SRV" 2> /dev/null || true; }

ROWS=()
# step TOOL NAME SRC ARGS...: one timed client run against a fresh server
step() {
  local tool=$1 name=$2 src=$3 t0 t1 cmd
  shift 3
  if [ "$tool" = ferry ]; then
    start_ferry
    cmd=("$FERRY" push -a -q --protection none --identity "$W/home/c/id_ferry"
         --known-hosts "$W/home/c/known_hosts" --accept-new "$@" "$src/" "ferry://127.0.0.1:$FP/m/t/")
  else
    start_rsyncd
    cmd=(rsync -a "$@" "$src/" "rsync://127.0.0.1:$RP/m/t/")
  fi
  t0=$(date +%s.%N)
  "$MAXRSS" "$W/cli.rss" "${cmd[@]}" > "$W/cli.out" 2>&1 || { cat "$W/cli.out" >&2; echo "w6: $tool $name failed" >&2; exit 1; }
  t1=$(date +%s.%N)
  stop_server
  local wall cli srv
  wall=$(awk "BEGIN{printf \"%.2f\", $t1 - $t0}")
  cli=$(awk '{printf "%.1f", $1 / 1024}' "$W/cli.rss")
  srv=$(awk '{printf "%.1f", $1 / 1024}' "$W/srv.rss")
  log "$tool $name: ${wall} s, client ${cli} MiB, server ${srv} MiB"
  ROWS+=("| $name | $tool | $wall | $cli | $srv |")
  eval "WALL_${tool}_${name//[^a-z0-9]/_}=$wall"
}

log "W6: $FILES files in $DIRS directories under $W"
make_tree "$W/src" "$FILES" "$DIRS"
for tool in ferry rsyncd; do
  step $tool fresh "$W/src"
done
# the no-op, the target's step, W6_NOOP_ROUNDS times, the tools taking turns
NOOPS_ferry=() NOOPS_rsyncd=()
for r in $(seq 1 "$NOOP_ROUNDS"); do
  for tool in ferry rsyncd; do
    step $tool "noop-$r" "$W/src"
    eval "NOOPS_$tool+=(\"\$WALL_${tool}_noop_$r\")"
  done
done
median() { printf '%s\n' "$@" | LC_ALL=C sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
WALL_ferry_noop=$(median "${NOOPS_ferry[@]}")
WALL_rsyncd_noop=$(median "${NOOPS_rsyncd[@]}")
remove_some "$W/src" "$DEL" "$FILES"
log "removed $DEL files on the sender"
for tool in ferry rsyncd; do
  step $tool delete "$W/src" --delete
done
for tool in ferry rsyncd; do   # the trees must agree
  d=$([ $tool = ferry ] && echo "$W/fmod/t" || echo "$W/rmod/t")
  diff <(cd "$W/src" && find . | LC_ALL=C sort) <(cd "$d" && find . | LC_ALL=C sort) > /dev/null ||
    { echo "w6: $tool's copy differs from the source" >&2; exit 1; }
done
rm -rf "$W/src" "$W/fmod/t" "$W/rmod/t"

log "one directory of $BIG entries"
make_tree "$W/big" "$BIG" 1
for tool in ferry rsyncd; do
  step $tool big-dir "$W/big"
done

echo "## W6: $FILES empty files in $DIRS directories (push over loopback, tmpfs; fresh daemon per step)"
echo
echo "| step | tool | wall (s) | client peak RSS (MiB) | server peak RSS (MiB) |"
echo "|---|---|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
echo
echo "steps: fresh = pushed to an empty module; noop-N = the same again, round N (the tools take"
echo "turns); delete = --delete after $DEL"
echo "files were removed on the sender; big-dir = $BIG empty files in one directory, pushed fresh."
ratio=$(awk "BEGIN{printf \"%.2f\", $WALL_ferry_noop / $WALL_rsyncd_noop}")
echo "no-op re-sync wall, ferry / rsyncd: $ratio (medians of $NOOP_ROUNDS: ferry $WALL_ferry_noop s, rsyncd $WALL_rsyncd_noop s; target <= 0.70)"
