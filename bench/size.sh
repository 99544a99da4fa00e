#!/usr/bin/env bash
# bench/size.sh [--no-rss] - size and memory of ferry on a router-class target.
#
# 1. Builds ferry for mipsel (FERRY_SIZE_ARCH to change) as shipped:
#    MinSizeRel (-Os, -ffunction-sections -fdata-sections, --gc-sections),
#    no OpenSSL, dynamically linked against libc/libsodium/libxxhash like the
#    OpenWrt package; strips it (strip --strip-all -R .comment) and prints the
#    size. Target: <= 250 KiB.
# 2. Runs the daemon under qemu-user and measures its memory, idle and while
#    serving a push and a pull of FERRY_SIZE_MB (64) MiB from a native client.
#
# What is measured: qemu-user runs the guest inside the host process, so the
# host's VmRSS/VmHWM of that process is guest memory PLUS the emulator (qemu's
# code, translated-code cache, its own heap: ~14 MiB), which says nothing
# about the router. Instead qemu is started with a fixed guest base
# (-B 0x200000000000): every guest mapping then lives in
# [base, base + 4 GiB) of the host process, and the sum of the Rss (and Pss)
# fields of /proc/PID/smaps for mappings in that window is the guest's own
# resident memory: its code and libraries' touched pages, data, heap and
# stacks, exactly what VmRSS would count on the device. Not counted, as with
# VmRSS on the device: kernel memory (socket buffers, page cache). The guest
# libc is Debian's glibc: OpenWrt's musl is smaller, so this is an upper bound.
# The daemon forks one process per connection; the serving figure is the peak
# of the summed guest Pss of the daemon and its children (shared pages counted
# once), sampled every 0.1 s; the peak guest Rss of the busiest single process
# is printed too. Targets: <= 2 MiB idle, <= 8 MiB serving.
#
# Both are done for three builds by default: `mipsel` (Debian's glibc,
# dynamic), `mipsel-musl` dynamic (musl, OpenWrt's libc, against libsodium.so
# and libxxhash.so: the OpenWrt package's shape, what a router runs) and
# `mipsel-musl` static (the single file to copy onto a box; its size has no
# target and is printed for reference).
#
# Then, against the same daemon: a push of a tree of FERRY_SIZE_FILES (30000)
# small files (memory must not grow with the number of files), and three
# pushes at once (each session is its own process: memory grows by one
# session's budget per client, never more).
#
# Environment: FERRY_SIZE_ARCH (all three; or mipsel or mipsel-musl, with
# FERRY_STATIC=ON|OFF for the latter), FERRY_SIZE_MB (64), FERRY_SIZE_FILES (30000), FERRY_SIZE_PORT
# (random free port), FERRY_NATIVE (native client; else built), JOBS (2).
# Exit: 0 within targets, 1 over a target, 2 measurement impossible.
set -euo pipefail
# shellcheck source=scripts/cross/lib.sh
. "$(dirname "$0")/../scripts/cross/lib.sh"

if [ -z "${FERRY_SIZE_ARCH:-}" ]; then
  worst=0
  for v in mipsel:OFF mipsel-musl:OFF mipsel-musl:ON; do
    rc=0; FERRY_SIZE_ARCH=${v%:*} FERRY_STATIC=${v#*:} "$0" "$@" || rc=$?
    [ $rc -gt $worst ] && worst=$rc
  done
  exit $worst
fi
RSS=1
[ "${1:-}" = --no-rss ] && RSS=0
A=$(cross_arch "$FERRY_SIZE_ARCH")
tr=$(cross_triplet "$A")
S=$(cross_sysroot "$A")
BASE=0x200000000000
MB=${FERRY_SIZE_MB:-64}
KIB() { echo $(( ($1 + 1023) / 1024 )); }
over=0

"$FERRY_SRC/scripts/cross/setup-sysroot.sh" "$A"
ST=$(cross_static "$A")
FERRY_CROSS_BUILD_TYPE=MinSizeRel FERRY_STATIC=$ST cross_build "$A" ferry
B=$(FERRY_STATIC=$ST cross_builddir "$A")
STRIPPED=$B.stripped
"$tr-strip" --strip-all -R .comment -o "$STRIPPED" "$B/ferry"
bytes=$(stat -c %s "$STRIPPED")
if [ "$ST" = ON ]; then
  echo "== size: $A, MinSizeRel, stripped, static (musl, libsodium, libxxhash inside)"
  "$tr-size" "$STRIPPED" | sed 's/^/   /'
  printf '   stripped binary: %d bytes = %d KiB (no target: the 250 KiB is for the dynamic build)\n' \
    "$bytes" "$(KIB "$bytes")"
else
  echo "== size: $A, MinSizeRel, stripped, dynamic ($([ "$A" = mipsel-musl ] && echo musl || echo glibc), libsodium, libxxhash)"
  "$tr-size" "$STRIPPED" | sed 's/^/   /'
  printf '   stripped binary: %d bytes = %d KiB (target <= 250 KiB): %s\n' "$bytes" "$(KIB "$bytes")" \
    "$([ "$bytes" -le $((250 * 1024)) ] && echo OK || { over=1; echo OVER; })"
  echo "   needs: $(LC_ALL=C "$tr-readelf" -d "$STRIPPED" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
fi
[ $RSS = 1 ] || exit $over

# ---------------------------------------------------------------- memory
guest_mem() {  # PID -> "rssKiB pssKiB privateDirtyKiB" of the guest window of a qemu process
  local pid=$1 base=$((BASE)) hi s inr=0 g=0 gp=0 gd=0 k v rest
  hi=$((base + 0x100000000))
  while read -r k v rest; do
    case $k in
      *-*) s=$((16#${k%%-*})); if [ "$s" -ge "$base" ] && [ "$s" -lt "$hi" ]; then inr=1; else inr=0; fi ;;
      Rss:) [ $inr = 1 ] && g=$((g + v)) ;;
      Pss:) [ $inr = 1 ] && gp=$((gp + v)) ;;
      Private_Dirty:) [ $inr = 1 ] && gd=$((gd + v)) ;;
    esac
  done <<< "$(cat "/proc/$pid/smaps" 2>/dev/null)"
  echo "$g $gp $gd"
}
host_mem() { awk '/^VmRSS|^VmHWM/{printf "%s %s KiB  ", $1, $2}' "/proc/$1/status" 2>/dev/null; }
children() { local p; for p in /proc/[0-9]*; do
  [ "$(awk '{print $4}' "$p/stat" 2>/dev/null)" = "$1" ] && echo "${p#/proc/}"; done; return 0; }
listening() {  # PORT in LISTEN state (0A) in /proc/net/tcp{,6}
  local hex; hex=$(printf ':%04X' "$1")
  awk -v h="$hex" '$2 ~ h"$" && $4 == "0A" {f=1} END {exit !f}' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

NATIVE=$(native_build)
T=$(mktemp -d "${TMPDIR:-/tmp}/ferry-size.XXXXXX")
SRV=
cleanup() { [ -n "$SRV" ] && kill "$SRV" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
PORT=${FERRY_SIZE_PORT:-$((20000 + RANDOM % 20000))}
mkdir -p "$T/srv" "$T/home"
export HOME=$T/home
"$NATIVE" keygen -f "$T/id" -C bench > /dev/null 2>&1 || { echo "ferry keygen failed: cannot measure memory"; exit 2; }

# shellcheck disable=SC2086
$(cross_qemu "$A") -B "$BASE" -L "$S" "$B/ferry" serve "$T/srv" --listen "127.0.0.1:$PORT" \
  --host-key "$T/host_key" --authorized-keys "$T/id.pub" -q > "$T/serve.log" 2>&1 &
SRV=$!
for _ in $(seq 100); do listening "$PORT" && break; kill -0 "$SRV" 2>/dev/null || break; sleep 0.1; done
if ! listening "$PORT"; then
  echo "the emulated daemon did not listen on 127.0.0.1:$PORT:"; sed 's/^/   /' "$T/serve.log"; exit 2
fi
sleep 2
read -r idle_rss idle_pss idle_dirty < <(guest_mem "$SRV")
echo "== memory: $A ($([ "$ST" = ON ] && echo static || echo dynamic)) daemon under qemu-user (guest pages only; see the header of $0)"
printf '   idle:    guest Rss %5d KiB (target <= 2048 KiB): %s; of which private dirty %d KiB, the rest clean file pages of ferry and its libraries   [qemu process: %s]\n' \
  "$idle_rss" "$([ "$idle_rss" -le 2048 ] && echo OK || { over=1; echo OVER; })" "$idle_dirty" "$(host_mem "$SRV")"
echo "   idle guest Rss by mapping:"
awk -v base=$((BASE)) 'function hex(h,  i,n,c){n=0;for(i=1;i<=length(h);i++){c=index("0123456789abcdef",substr(h,i,1))-1;n=n*16+c};return n}
  /^[0-9a-f]+-[0-9a-f]+ /{split($1,r,"-"); s=hex(r[1]); k=""; if(s>=base && s<base+4294967296){n=split($6,q,"/"); k=(n?q[n]:"[anon]") " " $2}; next}
  /^Rss:/{ if(k!="") a[k]+=$2 } END{for(k in a) if(a[k]) printf "     %6d KiB  %s\n", a[k], k}' "/proc/$SRV/smaps" | sort -rn | head -8

head -c $((MB << 20)) /dev/urandom > "$T/data"
serve_peak() {  # label, then the client command; samples while it runs
  local label=$1 cpid peak_sum=0 peak_one=0 peak_host=0 p r ps sum t0=$SECONDS
  shift
  "$@" > "$T/client.log" 2>&1 &
  cpid=$!
  while kill -0 "$cpid" 2>/dev/null; do
    sum=0
    for p in "$SRV" $(children "$SRV"); do
      read -r r ps _ < <(guest_mem "$p")
      sum=$((sum + ps)); [ "$r" -gt "$peak_one" ] && peak_one=$r
      h=$(awk '/^VmRSS/{print $2}' "/proc/$p/status" 2>/dev/null || echo 0)
      [ "${h:-0}" -gt "$peak_host" ] && peak_host=$h
    done
    [ "$sum" -gt "$peak_sum" ] && peak_sum=$sum
    sleep 0.1
  done
  local rc=0; wait "$cpid" || rc=$?
  if [ $rc != 0 ]; then echo "   $label: client failed (exit $rc):"; sed 's/^/     /' "$T/client.log"; return 1; fi
  printf '   %-9s guest Pss of daemon+children peak %5d KiB, busiest process Rss peak %5d KiB (target <= %d KiB): %s  [%s in %d s; qemu process VmRSS peak %d KiB]\n' \
    "$label:" "$peak_sum" "$peak_one" "$LIMIT" "$([ "$peak_sum" -le "$LIMIT" ] && echo OK || { over=1; echo OVER; })" \
    "$WHAT" "$((SECONDS - t0))" "$peak_host"
}
# Three clients at once, each pushing the file under its own name.
three_pushes() {
  local i pids=()
  for i in 1 2 3; do "$NATIVE" push "${COMMON[@]}" "$T/data" "$URL/three-$i" & pids+=($!); done
  for i in "${pids[@]}"; do wait "$i" || return 1; done
}
URL=ferry://127.0.0.1:$PORT/default
COMMON=(--identity "$T/id" --known-hosts "$T/known_hosts" --accept-new -q)
ok=1
LIMIT=8192 WHAT="$MB MiB"
serve_peak push "$NATIVE" push "${COMMON[@]}" "$T/data" "$URL/" || ok=0
if [ $ok = 1 ] && ! cmp -s "$T/data" "$T/srv/data"; then echo "   push: received file differs"; ok=0; fi
mkdir -p "$T/back"
serve_peak pull "$NATIVE" pull "${COMMON[@]}" "$URL/data" "$T/back/" || ok=0
if [ $ok = 1 ] && ! cmp -s "$T/data" "$T/back/data"; then echo "   pull: file differs"; ok=0; fi

# Memory must not grow with the number of files (no file list) nor beyond
# max connections x one session's budget: a tree of FILES small files, and
# three sessions at once (limit: three times the 8 MiB one-session target).
FILES=${FERRY_SIZE_FILES:-30000}
for d in $(seq 1 $((FILES / 100))); do
  mkdir -p "$T/tree/d$d"
  for f in $(seq 1 100); do printf '%s\n' "file $d/$f" > "$T/tree/d$d/f$f"; done
done
WHAT="$FILES files"
serve_peak tree "$NATIVE" push "${COMMON[@]}" "$T/tree/" "$URL/tree/" || ok=0
if [ $ok = 1 ] && ! diff -r "$T/tree" "$T/srv/tree" > /dev/null; then echo "   tree: received tree differs"; ok=0; fi
LIMIT=$((3 * 8192)) WHAT="3 x $MB MiB"
serve_peak "3 pushes" three_pushes || ok=0
for i in 1 2 3; do
  if [ $ok = 1 ] && ! cmp -s "$T/data" "$T/srv/three-$i"; then echo "   3 pushes: copy $i differs"; ok=0; fi
done
[ $ok = 1 ] || exit 2
exit $over
