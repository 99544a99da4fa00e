#!/usr/bin/env bash
# bench/verifyspeed.sh -- issue 13.5's target: `ferry admin verify` reads at
# >= 90 % of the disk's sequential read speed. A snapshot module on the disk
# under VS_DIR gets VS_FILES files of VS_MB MB each (pushed by ferry over
# loopback, so each has its recorded hash); then, caches dropped before each,
# `dd` reads one file of the same total size (the disk's sequential speed)
# and verify reads the module; each ROUNDS times, alternating, medians.
#   bench/verifyspeed.sh            16 files of 64 MiB on /var/tmp (root: drop_caches)
# Knobs: VS_DIR [/var/tmp] VS_FILES [16] VS_MB [64] ROUNDS [3] FERRY [build/ferry]
set -euo pipefail
REPO=$(realpath "$(dirname "$0")/..")
FERRY=$(realpath "${FERRY:-$REPO/build/ferry}")
N=${VS_FILES:-16} MB=${VS_MB:-64} ROUNDS=${ROUNDS:-3}
[ "$(id -u)" = 0 ] || { echo "verifyspeed: needs root (drop_caches)" >&2; exit 2; }
W=$(mktemp -d "${VS_DIR:-/var/tmp}/ferry-vs.XXXXXX")
trap 'kill $DP 2> /dev/null || true; rm -rf "$W"' EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
median() { python3 -c "import statistics, sys; print(f'{statistics.median(float(x) for x in sys.argv[1:]):.0f}')" "$@"; }
mkdir -p "$W/c" "$W/s" "$W/mod" "/dev/shm/ferry-vs-src.$$" && chmod 700 "$W/c" "$W/s"
SRC=/dev/shm/ferry-vs-src.$$
trap 'kill $DP 2> /dev/null || true; rm -rf "$W" "$SRC"' EXIT
for i in $(seq 1 "$N"); do head -c "${MB}M" /dev/urandom > "$SRC/f$i"; done
"$FERRY" keygen -f "$W/c/id" > /dev/null 2>&1 && cp "$W/c/id.pub" "$W/s/ak"
P=$(free_port)
printf '[global]\nlisten = 127.0.0.1:%s\nhost key = %s/hk\nauthorized keys = %s/ak\n[m]\npath = %s\nprotection = none\nsnapshots = yes\n' \
  "$P" "$W/s" "$W/s" "$W/mod" > "$W/ferry.conf"
FERRY_HOME=$W/s "$FERRY" serve --config "$W/ferry.conf" 2> "$W/log" & DP=$!
sleep 0.5
"$FERRY" push --identity "$W/c/id" --known-hosts "$W/c/kh" --accept-new "$SRC/" "ferry://127.0.0.1:$P/m/" > /dev/null
kill $DP; wait $DP 2> /dev/null || true
cat "$SRC"/f* > "$W/one"   # the same bytes as one file, for dd
rm -rf "$SRC"
total=$((N * MB * 1048576))
dds=() vs=()
for _ in $(seq 1 "$ROUNDS"); do
  drop
  t0=$(date +%s.%N); dd if="$W/one" of=/dev/null bs=1M status=none; t1=$(date +%s.%N)
  dds+=("$(python3 -c "print($total / ($t1 - $t0) / 1e6)")")
  drop
  t0=$(date +%s.%N); "$FERRY" admin verify "$W/mod" --restart > "$W/v"; t1=$(date +%s.%N)
  grep -q " 0 damaged; 0 without" "$W/v" || { cat "$W/v" >&2; exit 1; }
  vs+=("$(python3 -c "print($total / ($t1 - $t0) / 1e6)")")
done
d=$(median "${dds[@]}") v=$(median "${vs[@]}")
echo "## verify against dd: $N files of $MB MiB on $(df --output=source "$W" | tail -n1) ($(df --output=fstype "$W" | tail -n1)), caches dropped, medians of $ROUNDS"
echo
echo "| reader | MB/s |"
echo "|---|---:|"
echo "| dd bs=1M, one file of the same bytes | $d |"
echo "| ferry admin verify (read + xxh3-128 + compare) | $v |"
echo
echo "verify / dd: $(python3 -c "print(f'{$v / $d:.2f}')")"
