#!/usr/bin/env bash
# bench/agree.sh: does `ferry bench` measure what fio and openssl speed
# measure? (issue 14; the figures and how to read them: docs/BENCH.md)
#
#   sudo bench/agree.sh                  # or: sudo make bench-agree
#   sudo RUNS=7 SIZE_MB=256 FERRY=build/ferry bench/agree.sh
#
# Root: it makes an ext4 file system on a loop device and mounts a tmpfs in
# a temporary directory (both removed at the end). Only this machine is used.
# For each file system, RUNS rounds of `ferry bench disk` and the three fio
# jobs that match its stages, the order alternating between rounds; then
# RUNS rounds of `ferry bench crypto` against `openssl speed`. Medians and
# ratios go to stdout as a markdown fragment (and bench/out/agree.md), the
# raw values to bench/out/agree.tsv, every report to bench/out/json/.
#
# File systems (FS="ext4 ext4dio ext4ram tmpfs" by default):
#   ext4     on a loop device as `mount -o loop` makes it: the loop writes
#            into its backing file's page cache, so this is mostly this
#            machine's RAM, and the disk below only at each flush
#   ext4dio  the same with losetup --direct-io=on: the disk below itself
#            (here a virtual disk shared with other work: noisy)
#   ext4ram  ext4 on a direct-I/O loop device over a file in a tmpfs: a block
#            device with nothing slow (or shared) below, which shows whether
#            the two tools measure alike when the device holds still
#   tmpfs    memory; ferry must say so
# fio runs with --gtod_reduce=1 (no latency statistics, which ferry does not
# keep either; bandwidth and IOPS are still counted) and, for random writes,
# --norandommap (ferry picks each offset independently, repeats allowed).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
FERRY=${FERRY:-$HERE/../build/ferry}
RUNS=${RUNS:-5}
SIZE_MB=${SIZE_MB:-256}
# tmpfs moves GB/s: a bigger test there, so that one preemption of a few
# milliseconds (other work on this machine) is not a tenth of the run.
TMPFS_MB=${TMPFS_MB:-1024}
CRYPTO_RUNS=${CRYPTO_RUNS:-$RUNS}
OUT=${OUT:-$HERE/out}

[ "$(id -u)" = 0 ] || { echo "agree.sh: needs root (mkfs, mount)" >&2; exit 1; }
[ -x "$FERRY" ] || { echo "agree.sh: no ferry at $FERRY (make build, or FERRY=...)" >&2; exit 1; }
command -v fio > /dev/null || { echo "agree.sh: needs fio (apt-get install -y fio)" >&2; exit 1; }
command -v openssl > /dev/null || { echo "agree.sh: needs openssl" >&2; exit 1; }

rm -rf "$OUT/json"
mkdir -p "$OUT/json"
T=$(mktemp -d /var/tmp/ferry-agree.XXXXXX)
FS=${FS:-ext4 ext4dio ext4ram tmpfs}
LOOPS=()
cleanup() {
  # The file systems, then their loop devices, then the tmpfs under ext4ram's.
  for m in "$T"/mnt-*; do
    [ "$m" = "$T/mnt-ram-backing" ] || ! mountpoint -q "$m" || umount "$m"
  done
  for l in "${LOOPS[@]}"; do losetup -d "$l" 2> /dev/null || true; done
  ! mountpoint -q "$T/mnt-ram-backing" 2> /dev/null || umount "$T/mnt-ram-backing"
  rm -rf "$T"
}
trap cleanup EXIT

# mkfs_loop NAME IMAGE MB [losetup options]: ext4 on a new loop device over
# IMAGE (MB MiB) at $T/mnt-NAME.
mkfs_loop() {
  local name=$1 img=$2 mb=$3 loop
  shift 3
  truncate -s "${mb}M" "$img"
  # No lazy init: its background zeroing would compete with the first runs.
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$img"
  loop=$(losetup -f --show "$@" "$img")
  LOOPS+=("$loop")
  mkdir "$T/mnt-$name"
  mount "$loop" "$T/mnt-$name"
}
for fs in $FS; do
  case $fs in
    ext4) mkfs_loop ext4 "$T/ext4.img" $((SIZE_MB * 4 + 512)) ;;
    ext4dio) mkfs_loop ext4dio "$T/ext4dio.img" $((SIZE_MB * 4 + 512)) --direct-io=on ;;
    ext4ram)
      mkdir "$T/mnt-ram-backing"
      mount -t tmpfs -o size=$((TMPFS_MB * 5 / 2 + 300))M ferry-agree "$T/mnt-ram-backing"
      mkfs_loop ext4ram "$T/mnt-ram-backing/ext4.img" $((TMPFS_MB * 5 / 2 + 256)) --direct-io=on ;;
    tmpfs) mkdir "$T/mnt-tmpfs"; mount -t tmpfs -o size=$((TMPFS_MB * 3))M ferry-agree "$T/mnt-tmpfs" ;;
    *) echo "agree.sh: unknown file system $fs" >&2; exit 1 ;;
  esac
done

TSV=$OUT/agree.tsv
printf 'fs\tmetric\ttool\tvalue\n' > "$TSV"
record() { printf '%s\t%s\t%s\t%s\n' "$@" >> "$TSV"; }

size_of() { case $1 in tmpfs|ext4ram) echo "$TMPFS_MB";; *) echo "$SIZE_MB";; esac; }

# fio_job DIR NAME ARGS...: one fio job on DIR/fio.dat ($MB MiB), its JSON in $T/fio.json.
fio_job() {
  local dir=$1 name=$2
  shift 2
  fio --name="$name" --filename="$dir/fio.dat" --bs=1M --direct=1 --ioengine=psync \
    --size=${MB}M --gtod_reduce=1 --output-format=json "$@" > "$T/fio.json"
  cp "$T/fio.json" "$OUT/json/fio-$FSNAME-$RUN-$name.json"
}
fio_val() { python3 -c "import json,sys; j=json.load(open('$T/fio.json'))['jobs'][0]; print($1)"; }

# ferry's seconds: 60 by default; the random-write stage gets 20 % of them,
# so fio's random job gets the same 12 s at most, and the same count of
# writes (half the size in 4 KiB pieces).
run_fio() {
  local fs=$1 dir=$2
  fio_job "$dir" seqw --rw=write --end_fsync=1
  record "$fs" seq_write fio "$(fio_val "j['write']['bw_bytes']/1e6")"
  # Read after dropping the cache: this file's pages (GNU dd's nocache is
  # fadvise DONTNEED), not the whole machine's, which others are using.
  dd if="$dir/fio.dat" iflag=nocache count=0 status=none
  fio_job "$dir" seqr --rw=read
  record "$fs" seq_read fio "$(fio_val "j['read']['bw_bytes']/1e6")"
  fio_job "$dir" randw --rw=randwrite --bs=4k --end_fsync=1 --io_size=$((MB / 2))M \
    --runtime=12 --norandommap --randrepeat=0
  record "$fs" rand_write_4k fio "$(fio_val "j['write']['iops']")"
  rm -f "$dir/fio.dat"
}

run_ferry() {
  local fs=$1 dir=$2
  "$FERRY" bench disk "$dir" --size ${MB}M --json > "$T/ferry.json"
  cp "$T/ferry.json" "$OUT/json/ferry-$FSNAME-$RUN.json"
  python3 - "$T/ferry.json" "$fs" >> "$TSV" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["stages"]:
    print("%s\t%s\tferry\t%.3f" % (sys.argv[2], s["name"], s["rate"]))
    print("%s\t%s\tverdict\t%s" % (sys.argv[2], s["name"], s["verdict"]))
PY
}

for fs in $FS; do
  MB=$(size_of "$fs") FSNAME=$fs
  for i in $(seq 1 "$RUNS"); do
    RUN=$i
    echo "agree.sh: $fs run $i/$RUNS" >&2
    if [ $((i % 2)) = 1 ]; then run_ferry "$fs" "$T/mnt-$fs"; run_fio "$fs" "$T/mnt-$fs"
    else run_fio "$fs" "$T/mnt-$fs"; run_ferry "$fs" "$T/mnt-$fs"; fi
  done
done

# openssl speed -mr prints "+F:<n>:<name>:<bytes/s for each size>".
ossl() {
  openssl speed -elapsed -seconds 2 -bytes 65519 -mr "$@" 2> /dev/null |
    awk -F: '/^\+F:/ { printf "%.3f\n", $4 / 1e6 }'
}
for i in $(seq 1 "$CRYPTO_RUNS"); do
  echo "agree.sh: crypto run $i/$CRYPTO_RUNS" >&2
  "$FERRY" bench crypto --json > "$T/crypto.json"
  python3 - "$T/crypto.json" >> "$TSV" << 'PY'
import json, sys
for s in json.load(open(sys.argv[1]))["stages"]:
    print("cpu\t%s\tferry\t%.3f" % (s["name"], s["rate"]))
PY
  record cpu aes-256-gcm openssl "$(ossl -evp aes-256-gcm)"
  record cpu chacha20-poly1305 openssl "$(ossl -evp chacha20-poly1305)"
  record cpu aes-256-gcm openssl-aead "$(ossl -aead -evp aes-256-gcm)"
  record cpu chacha20-poly1305 openssl-aead "$(ossl -aead -evp chacha20-poly1305)"
done

python3 - "$TSV" "$RUNS" "$CRYPTO_RUNS" "$SIZE_MB" "$("$FERRY" version)" "$(fio --version)" \
  "$(openssl version)" "$(uname -srm)" "$FS" "$TMPFS_MB" << 'PY' | tee "$OUT/agree.md"
import statistics, sys
from collections import defaultdict
tsv, runs, cruns, size, ferry, fio, ossl, kernel, fslist, tmpfs_mb = sys.argv[1:]
vals, verdicts = defaultdict(list), defaultdict(set)
for line in open(tsv).read().splitlines()[1:]:
    fs, metric, tool, v = line.split("\t")
    if tool == "verdict":
        verdicts[(fs, metric)].add(v)
    elif v:
        vals[(fs, metric, tool)].append(float(v))
med = lambda k: statistics.median(vals[k]) if vals[k] else float("nan")
spread = lambda k: "%.0f-%.0f" % (min(vals[k]), max(vals[k])) if vals[k] else "-"
print("Measured %s; %s; %s; %s; %s runs per file system of %s MiB (tmpfs %s MiB), "
      "%s crypto runs.\n" % (kernel, ferry, fio, ossl, runs, size, tmpfs_mb, cruns))
print("| file system | stage | ferry: median (range) | fio: median (range) | ratio of medians | "
      "median of paired ratios | target | |")
print("|---|---|---|---|---|---|---|---|")
rows = [("seq_write", "MB/s", 0.10), ("seq_read", "MB/s", 0.10), ("rand_write_4k", "IOPS", 0.15)]
for fs in fslist.split():
    for metric, unit, tol in rows:
        fk, ok_ = (fs, metric, "ferry"), (fs, metric, "fio")
        f, o = med(fk), med(ok_)
        # Each round ran ferry and fio back to back: the ratio within a round
        # cancels what the machine's other work did to both.
        paired = statistics.median(a / b for a, b in zip(vals[fk], vals[ok_]) if b)
        good = abs(paired - 1) <= tol
        print("| %s | %s (%s) | %.0f (%s) | %.0f (%s) | %.3f | %.3f | ±%d %% | %s |"
              % (fs, metric, unit, f, spread(fk), o, spread(ok_), f / o, paired, tol * 100,
                 "ok" if good else "**MISS**"))
    print("| %s | ferry's verdicts | %s | | | | | |"
          % (fs, ", ".join("%s %s" % (m, "/".join(sorted(verdicts[(fs, m)])))
                         for m, _, _ in rows + [("small_files", 0, 0)])))
print()
print("| cipher, 65519-byte records | ferry, openssl backend | openssl speed -evp | ratio | "
      "paired | openssl speed -aead -evp | ratio | ferry, libsodium | target | |")
print("|---|---|---|---|---|---|---|---|---|---|")
for name, key in (("aes-256-gcm", "aesgcm"), ("chacha20-poly1305", "chachapoly")):
    fk, ok_ = ("cpu", key + "_openssl_encrypt", "ferry"), ("cpu", name, "openssl")
    f, o, a = med(fk), med(ok_), med(("cpu", name, "openssl-aead"))
    s = med(("cpu", key + "_libsodium_encrypt", "ferry"))
    paired = statistics.median(x / y for x, y in zip(vals[fk], vals[ok_]) if y) if vals[fk] else 0
    print("| %s | %.0f MB/s (%s) | %.0f (%s) | %.3f | %.3f | %.0f | %.3f | %.0f MB/s | ±5 %% | %s |"
          % (name, f, spread(fk), o, spread(ok_), f / o, paired, a, f / a, s,
             "ok" if abs(paired - 1) <= 0.05 else "**MISS**"))
print()
print("integrity (MAC only) medians, MB/s: " + ", ".join(
    "%s %.0f" % (k[1], med(k)) for k in sorted(vals) if k[0] == "cpu" and "integrity" in k[1]))
PY
