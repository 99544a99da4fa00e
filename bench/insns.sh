#!/usr/bin/env bash
# bench/insns.sh -- deterministic server-side cost on an emulated router: guest instructions
# per byte of a transfer, counted by qemu-user with a TCG plugin (bench/qemu-insncount.c).
#
#   sudo FERRY_MIPSEL=build-mipsel/ferry SYSROOT=.cross/sysroot-mipsel bench/insns.sh
#
# For each case, the SERVER runs under `qemu-mipsel -plugin libinsncount.so -L SYSROOT` in a
# private network namespace; the client is the native ferry (FERRY, default build/ferry) or
# native rsync. Each case is run with a 1 MiB and an N_MB MiB random file, and
#   instructions/byte = (insns(N MiB) - insns(1 MiB)) / ((N - 1) MiB)
# so start-up, handshake and per-connection costs cancel; "fixed" = insns(1 MiB) minus
# 1 MiB at that rate. Counts are of the guest's user space only (system calls run in the
# host kernel) and repeat to 3-4 digits whatever the host's load.
# W3 cases (dir w3push, w3pull: issue 11's delta, the box's side of it): the file is the
# old version plus 1 MiB of random data written in its middle; the receiver holds the old
# version (push: the box, pull: the PC). They are run with a W3_SMALL_MB (2) and an N_MB
# MiB file, both with that 1 MiB changed, so the rate is the cost per byte of the file that
# did NOT change (the box reading, hashing and, on a push, rebuilding it) and "fixed" holds
# the changed MiB along with the handshake. Small sizes stand in for the 1 GiB of run.sh's
# W3 (qemu runs the box at ~1/50 of native speed); the per-byte rate is what scales.
#
# Environment:
#   FERRY_MIPSEL   ferry binary for the target (required unless CASES has no ferry case)
#   SYSROOT        target root for qemu -L (default $VR_SYSROOT_MIPSEL)
#   QEMU           qemu-mipsel            FERRY   native client, default build/ferry
#   N_MB           16                     ROUNDS  1 (counts are deterministic)
#   CASES          "ferry-chacha:push ferry-chacha:pull ferry-int:push ferry-none:push
#                   ferry-raw:push ferry-raw:pull ferry-chacha:w3push ferry-chacha:w3pull"
#                  (raw = none --no-verify; no AES-GCM: libsodium has it only on x86 with
#                  AES-NI)
#   W3_SMALL_MB    2: the smaller file of the W3 cases (at least 2: 1 MiB of it changes)
#   RSYNC_MIPSEL   a target rsync binary; adds rsyncd:push rsyncd:pull rsyncd:w3push
#                  rsyncd:w3pull. RSYNC_SYSROOT is its
#                  qemu -L root (default SYSROOT; vrouter/setup.sh puts rsync in its sysroots)
#   INSN_CACHE     where the plugin is built, default bench/out/qemu-plugin. The first run
#                  fetches Debian's qemu source package with `apt-get source` (private apt
#                  state in the cache; /etc/apt untouched) and keeps only qemu-plugin.h.
#   PORT_BASE      61000
# Output: a markdown table on stdout, raw counts in bench/out/insns-<time>/.
set -uo pipefail
umask 022
export LC_ALL=C
BENCH=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$BENCH")
QEMU=${QEMU:-qemu-mipsel}
SYSROOT=${SYSROOT:-${VR_SYSROOT_MIPSEL:-}}
N_MB=${N_MB:-16}
CASES_SET=${CASES:+1}
CASES=${CASES:-"ferry-chacha:push ferry-chacha:pull ferry-int:push ferry-none:push ferry-raw:push ferry-raw:pull ferry-chacha:w3push ferry-chacha:w3pull"}
[ -n "${RSYNC_MIPSEL:-}" ] && [ -z "${CASES_SET:-}" ] && CASES+=" rsyncd:push rsyncd:pull rsyncd:w3push rsyncd:w3pull"
W3_SMALL_MB=${W3_SMALL_MB:-2}
case $CASES in *:w3p*) [ "$W3_SMALL_MB" -ge 2 ] && [ "$N_MB" -gt "$W3_SMALL_MB" ] ||
  { echo "insns.sh: the W3 cases need 2 <= W3_SMALL_MB < N_MB" >&2; exit 2; } ;; esac
CACHE=${INSN_CACHE:-$BENCH/out/qemu-plugin}
PORT_BASE=${PORT_BASE:-61000}
P_FERRY=$((PORT_BASE + 80)); P_RSYNC=$((PORT_BASE + 73))
PLUGIN=$CACHE/libinsncount.so

log() { printf '[insns %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (network namespace)"
case $CASES in *ferry-*) need_ferry=1 ;; *) need_ferry=0 ;; esac

if [ -z "${FB_IN_NS:-}" ]; then
  [ -n "$SYSROOT" ] && [ -d "$SYSROOT" ] || die "set SYSROOT to the target's root (qemu -L)"
  command -v "$QEMU" >/dev/null || die "$QEMU missing (apt-get install qemu-user)"
  if [ "$need_ferry" = 1 ]; then
    [ -x "${FERRY_MIPSEL:-}" ] || die "set FERRY_MIPSEL to the target's ferry binary"
    FERRY=${FERRY:-$REPO/build/ferry}
    [ -x "$FERRY" ] || die "no native ferry client at $FERRY (set FERRY)"
    FERRY_MIPSEL=$(realpath "$FERRY_MIPSEL"); FERRY=$(realpath "$FERRY")
    export FERRY FERRY_MIPSEL
  fi
  # ---- the plugin: qemu-plugin.h from Debian's qemu source package, cached
  if [ ! -f "$PLUGIN" ] || [ "$BENCH/qemu-insncount.c" -nt "$PLUGIN" ]; then
    if [ ! -f "$CACHE/include/qemu-plugin.h" ]; then
      log "fetching Debian's qemu source package for qemu-plugin.h (once, into $CACHE)"
      A=$CACHE/apt; K=/usr/share/keyrings/debian-archive-keyring.gpg
      mkdir -p "$A/etc/apt.conf.d" "$A/etc/preferences.d" "$A/etc/sources.list.d" \
               "$A/lists/partial" "$A/cache/archives/partial" "$CACHE/src" "$CACHE/include"
      printf 'deb-src [signed-by=%s] http://deb.debian.org/debian %s main\n' \
        "$K" bookworm "$K" bookworm-updates > "$A/etc/sources.list"
      APTO=(-o Dir::Etc="$A/etc" -o Dir::State::Lists="$A/lists" -o Dir::Cache="$A/cache"
            -o Dir::State::status=/dev/null -o Debug::NoLocking=1 -o APT::Sandbox::User=root
            -o Acquire::Languages=none -o Acquire::Retries=3)
      apt-get "${APTO[@]}" -q update >"$CACHE/apt-update.log" 2>&1 || die "apt-get update failed: $CACHE/apt-update.log"
      (cd "$CACHE/src" && apt-get "${APTO[@]}" -q source --download-only qemu) >"$CACHE/apt-source.log" 2>&1 ||
        die "apt-get source qemu failed: $CACHE/apt-source.log"
      tar -xJf "$(ls "$CACHE"/src/qemu_*.orig.tar.xz | tail -1)" -C "$CACHE/include" \
        --no-same-owner --wildcards --no-anchored --strip-components=3 '*/include/qemu/qemu-plugin.h' ||
        die "qemu-plugin.h not found in the qemu source"
      rm -rf "$CACHE/src" "$A/cache"
    fi
    cc -O2 -Wall -Wextra -shared -fPIC -I"$CACHE/include" -o "$PLUGIN" "$BENCH/qemu-insncount.c" ||
      die "building the plugin failed"
  fi
  export FB_IN_NS=1 SYSROOT
  exec unshare --net --mount --propagation private "$0" "$@"
fi

# ---------------------------------------------------------------- in private namespaces
ip link set lo up
echo "$P_FERRY,$P_RSYNC" > /proc/sys/net/ipv4/ip_local_reserved_ports
OUT=$BENCH/out/insns-$(date -u +%Y%m%dT%H%M%SZ); mkdir -p "$OUT"
T=$(mktemp -d /tmp/ferry-insns.XXXXXX); chmod 755 "$T"
D=$T/data; mkdir -p "$D"
SRV=""
cleanup() {
  [ -n "$SRV" ] && kill -TERM "$SRV" 2>/dev/null && wait "$SRV"
  mountpoint -q "$D" && umount "$D"; rm -rf "$T"
} 2>/dev/null
trap cleanup EXIT
trap 'exit 130' INT TERM
mount -t tmpfs -o size=$((N_MB * 8 + 256))m fb "$D" || die "tmpfs"
mkdir -p "$D/src/w3" "$D/srv" "$D/cli" "$T/home"
export FERRY_HOME=$T/home
openssl rand 1048576 > "$D/src/f1.bin"
openssl rand $((N_MB * 1048576)) > "$D/src/f$N_MB.bin"
case $CASES in *:w3p*)             # W3: old versions in src/, new ones (1 MiB changed) in src/w3/
  openssl rand $((W3_SMALL_MB * 1048576)) > "$D/src/f$W3_SMALL_MB.bin"
  for mb in "$W3_SMALL_MB" "$N_MB"; do
    cp "$D/src/f$mb.bin" "$D/src/w3/f$mb.bin"
    openssl rand 1048576 | dd of="$D/src/w3/f$mb.bin" bs=1M seek=$((mb / 2)) conv=notrunc status=none
    touch -d '+1 hour' "$D/src/w3/f$mb.bin"
  done ;;
esac
if [ "$need_ferry" = 1 ]; then
  "$FERRY" keygen -f "$T/id" </dev/null >/dev/null || die "ferry keygen"
  cat > "$T/ferry.conf" <<EOF
[global]
listen = 127.0.0.1:$P_FERRY
max connections = 4
host key = $T/host_key
nice = 0
[bench]
path = $D
read only = no
authorized keys = $T/id.pub
protection = none
EOF
fi
printf 'use chroot = no\n[bench]\n  path = %s\n  read only = no\n  uid = root\n  gid = root\n' "$D" > "$T/rsyncd.conf"

waitport() {  # waitport PORT: until it listens (10 s)
  local i hex; hex=$(printf ':%04X' "$1")
  for ((i = 0; i < 500; i++)); do
    awk -v h="$hex" '$2 ~ h"$" && $4 == "0A" {f = 1} END {exit !f}' /proc/net/tcp && return 0
    sleep 0.02
  done
  return 1
}

run_case() {  # run_case TOOL DIR MB -> total guest insns of the server tree
  local tool=$1 dir=$2 f=f$3.bin cnt=$T/count srv cli o=() sf want
  rm -rf "$cnt"; mkdir -p "$cnt"; rm -rf "$D/srv/x" "$D/cli/x"; mkdir -p "$D/srv/x" "$D/cli/x"
  want=$D/src/$f sf=$f
  case $dir in   # W3: the new version is sent, the receiver holds the old one
    w3push) want=$D/src/w3/$f sf=w3/$f; cp -p "$D/src/$f" "$D/srv/x/$f" ;;
    w3pull) want=$D/src/w3/$f sf=w3/$f; cp -p "$D/src/$f" "$D/cli/x/$f" ;;
  esac
  case $tool in
    rsyncd) srv=("${RSYNC_MIPSEL}" --daemon --no-detach --config="$T/rsyncd.conf" --address=127.0.0.1 --port="$P_RSYNC")
            case $dir in *push) cli=(rsync -a "$D/src/$sf" "rsync://127.0.0.1:$P_RSYNC/bench/srv/x/") ;;
              *) cli=(rsync -a "rsync://127.0.0.1:$P_RSYNC/bench/src/$sf" "$D/cli/x/") ;; esac ;;
    ferry-*) srv=("$FERRY_MIPSEL" serve --config "$T/ferry.conf")
      o=(-q --identity "$T/id" --known-hosts "$T/known_hosts" --accept-new)
      case $tool in
        ferry-chacha) o+=(--protection encrypt --cipher chachapoly) ;;
        ferry-enc) o+=(--protection encrypt) ;;
        ferry-int) o+=(--protection integrity) ;;
        ferry-none) o+=(--protection none) ;;
        ferry-raw) o+=(--protection none --no-verify) ;;
      esac
      case $dir in *push) cli=("$FERRY" push "${o[@]}" "$D/src/$sf" "ferry://127.0.0.1:$P_FERRY/bench/srv/x/") ;;
        *) cli=("$FERRY" pull "${o[@]}" "ferry://127.0.0.1:$P_FERRY/bench/src/$sf" "$D/cli/x/") ;; esac ;;
    *) die "unknown tool $tool" ;;
  esac
  local root=$SYSROOT; [ "$tool" = rsyncd ] && root=${RSYNC_SYSROOT:-$SYSROOT}
  setsid "$QEMU" -plugin "$PLUGIN,out=$cnt/c" -L "$root" "${srv[@]}" >>"$OUT/server.log" 2>&1 &
  SRV=$!
  waitport "$([ "$tool" = rsyncd ] && echo "$P_RSYNC" || echo "$P_FERRY")" ||
    { log "$tool server did not start"; return 1; }
  timeout 600 "${cli[@]}" </dev/null >>"$OUT/client.log" 2>&1 || { log "$tool $dir client failed"; return 1; }
  local got=$D/srv/x/$f; case $dir in *pull) got=$D/cli/x/$f ;; esac
  cmp -s "$want" "$got" || { log "$tool $dir: copy differs"; return 1; }
  sleep 0.3                          # let per-connection children exit and report
  kill -TERM -- -"$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; SRV=""
  ls "$cnt"/c.* >/dev/null 2>&1 || { log "$tool $dir: no counts"; return 1; }
  cat "$cnt"/c.* | sed "s/^/$tool $dir ${3}MiB /" >> "$OUT/counts.txt"
  cat "$cnt"/c.* | awk -F'[= ]' '{s += $2} END {printf "%d\n", s}'
}

{
  echo "| server (qemu-mipsel, $(basename "$SYSROOT")) | dir | insns, 1 MiB (W3: $W3_SMALL_MB MiB) | insns, $N_MB MiB | insns/byte | fixed, M insns |"
  echo "|---|---|---|---|---|---|"
} > "$OUT/table.md"
for c in $CASES; do
  tool=${c%%:*} dir=${c#*:} small=1
  case $dir in w3p*) small=$W3_SMALL_MB ;; esac
  a=$(run_case "$tool" "$dir" "$small") && b=$(run_case "$tool" "$dir" "$N_MB") || { echo "| $tool | $dir | failed | | | |" >> "$OUT/table.md"; continue; }
  awk -v t="$tool" -v d="$dir" -v a="$a" -v b="$b" -v n="$N_MB" -v m="$small" 'BEGIN {
    pb = (b - a) / ((n - m) * 1048576); fx = a - pb * m * 1048576
    printf "| %s | %s | %.0f | %.0f | %.2f | %.1f |\n", t, d, a, b, pb, fx / 1e6 }' >> "$OUT/table.md"
  log "$tool $dir: $small MiB $a, $N_MB MiB $b"
done
cat "$OUT/table.md"
echo
echo "Raw per-process counts: $OUT/counts.txt"
