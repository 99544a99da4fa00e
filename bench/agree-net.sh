#!/usr/bin/env bash
# bench/agree-net.sh: does `ferry bench HOST:MODULE` measure the network as
# iperf3 does? Issue 14's target: at --protection none, memory to memory,
# within 10 % of iperf3's single stream, on loopback and through a 100 Mbit
# shaped veth.
#
#   sudo bench/agree-net.sh
#   sudo ROUNDS=7 STEP_SECONDS=10 NET_PATHS=shaped bench/agree-net.sh
#
# Knobs (environment):
#   ROUNDS        rounds per path (default 5)
#   STEP_SECONDS  iperf3 -t, and ferry bench --seconds, which sizes each of its
#                 network steps from a 4 MiB probe to last about that long
#                 (default 5; the server bounds a step by 20 s)
#   NET_PATHS     "loopback shaped" (default), or either
#   RATE          the shaped veth's tbf rate (default 100mbit)
#   IPERF_ARGS    more iperf3 client options (default none: iperf3's own
#                 defaults, 128 KiB writes), e.g. "-l 1M"
#   DAEMON_NICE   the daemon's `nice` (default 0, as iperf3 -s runs; ferry's
#                 own default is 10)
#   FERRY         the binary (default build/ferry)
#
# Paths:
#   loopback  ferry serve and iperf3 -s on 127.0.0.1 in this namespace; the
#             two ends of either tool share this machine's cores
#   shaped    ferry serve and iperf3 -s inside a network namespace of our own
#             behind a veth pair, tbf RATE burst 32kb latency 50ms on both ends
#             (tests/e2e/test_bench_verdict.sh does the same)
# Each round runs iperf3 upload (client->server), iperf3 download (-R) and
# one `ferry bench --protection none` (whose net_up_none and net_down_none
# are taken); the order of the two tools alternates between rounds. The module
# and --local are on a tmpfs (ferry bench's disk part and its integrity and
# encrypt steps run too, but are not compared).
#
# Output: a table per path (medians, ferry/iperf3, PASS within 0.90-1.10) on
# stdout and in bench/out/<UTC>-agree-net/summary.md; the raw figures in
# raw.csv there, every JSON report under json/. Exit 0 when every ratio is
# within the target, 3 when one is not, 1 on an error. Root: netns, veth, tc, tmpfs.
# Only 127.0.0.0/8 and the veth pair (10.254.x.0/30) are used. Everything made
# (namespace, veth, daemons, mounts, temp dir) is removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

FERRY=${FERRY:-build/ferry}
ROUNDS=${ROUNDS:-5}
STEP_SECONDS=${STEP_SECONDS:-5}
NET_PATHS=${NET_PATHS:-loopback shaped}
RATE=${RATE:-100mbit}
DAEMON_NICE=${DAEMON_NICE:-0}
IPERF_ARGS=${IPERF_ARGS:-}
me=bench/agree-net.sh

die() { echo "$me: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (network namespace, veth, tc, tmpfs)"
[ -x "$FERRY" ] || die "no ferry at $FERRY (make build, or FERRY=...)"
for c in iperf3 python3 ip tc ss; do command -v "$c" > /dev/null || die "needs $c"; done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer"
[[ $STEP_SECONDS =~ ^[1-9][0-9]*$ ]] || die "STEP_SECONDS must be a positive integer"
for p in $NET_PATHS; do
  case $p in loopback | shaped) ;; *) die "unknown path '$p' (loopback, shaped)" ;; esac
done

STAMP=$(date -u +%Y%m%dT%H%M%SZ)
OUT=bench/out/$STAMP-agree-net
mkdir -p "$OUT/json"
W=$(mktemp -d /tmp/ferry-agree-net.XXXXXX)
NS=ferryagree$$
V=fav$$ P=fap$$
A=10.254.$(($$ % 250)).1 B=10.254.$(($$ % 250)).2
PIDS=()
CHILD=
NS_MADE=0 VETH_MADE=0

# shellcheck disable=SC2317  # reached through the traps
cleanup() {
  local rc=$? pid
  trap - EXIT INT TERM
  set +e
  [ -n "$CHILD" ] && kill "$CHILD" 2> /dev/null && wait "$CHILD" 2> /dev/null
  for pid in "${PIDS[@]}"; do kill "$pid" 2> /dev/null; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2> /dev/null; done
  for m in "$W/mod" "$W/local"; do
    mountpoint -q "$m" 2> /dev/null && umount -l "$m"
  done
  [ "$VETH_MADE" = 1 ] && ip link del "$V" 2> /dev/null
  [ "$NS_MADE" = 1 ] && ip netns del "$NS" 2> /dev/null
  rm -rf "$W"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# stop PID: ends one process this script started.
stop() {
  local pid=$1 keep=() p
  kill "$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
  for p in "${PIDS[@]}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
  PIDS=("${keep[@]}")
}

# run CMD...: CMD in the background, waited for, so that a signal reaches the
# traps at once rather than when a long client step ends.
run() {
  local rc=0
  "$@" &
  CHILD=$!
  wait "$CHILD" || rc=$?
  CHILD=
  return "$rc"
}

# The module and the client's --local on a tmpfs: mounted before any daemon
# starts, since `ip netns exec` gives the daemon a mount namespace of its own.
mkdir -p "$W/mod" "$W/local" "$W/client" "$W/server"
mount -t tmpfs -o size=256m ferry-agree-mod "$W/mod"
mount -t tmpfs -o size=256m ferry-agree-local "$W/local"
chmod 700 "$W/client" "$W/server"
FERRY_HOME=$W/client "$FERRY" keygen -f "$W/client/id_ferry" -C agree-net > /dev/null 2>&1
cp "$W/client/id_ferry.pub" "$W/server/authorized_keys"

# start_daemon ADDR [ip netns exec NS]: ferry serve on ADDR:0; sets FPORT, FPID.
start_daemon() {
  local addr=$1 conf=$W/ferry-$1.conf log=$W/ferry-$1.log
  shift
  cat > "$conf" << CONF
[global]
listen = $addr:0
host key = $W/server/host_key
authorized keys = $W/server/authorized_keys
nice = $DAEMON_NICE
[m]
path = $W/mod
protection = none
CONF
  : > "$log"
  FERRY_HOME=$W/server "$@" "$FERRY" serve --config "$conf" > /dev/null 2> "$log" &
  FPID=$!
  PIDS+=("$FPID")
  FPORT=
  for _ in $(seq 1 300); do
    FPORT=$(sed -n "s/.*listening on ${addr//./\\.}:\([0-9]*\).*/\1/p" "$log" | head -n1)
    [ -n "$FPORT" ] && return 0
    kill -0 "$FPID" 2> /dev/null || break
    sleep 0.05
  done
  cat "$log" >&2
  die "ferry serve did not start on $addr"
}

# start_iperf ADDR PORT [ip netns exec NS]: iperf3 -s; sets IPID.
start_iperf() {
  local addr=$1 port=$2
  shift 2
  "$@" iperf3 -s -B "$addr" -p "$port" > "$W/iperf3-s-$addr.log" 2>&1 &
  IPID=$!
  PIDS+=("$IPID")
  for _ in $(seq 1 200); do
    "$@" ss -Hltn "sport = :$port" 2> /dev/null | grep -q . && return 0
    kill -0 "$IPID" 2> /dev/null || break
    sleep 0.05
  done
  cat "$W/iperf3-s-$addr.log" >&2
  die "iperf3 -s did not start on $addr:$port"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

CSV=$OUT/raw.csv
echo "path,round,tool,direction,mb_per_s,seconds,bytes,detail" > "$CSV"

# iperf_run PATH ROUND DIR ADDR PORT: one single-stream iperf3 test.
iperf_run() {
  local path=$1 round=$2 dir=$3 addr=$4 port=$5 j
  j=$OUT/json/$path-r$round-iperf3-$dir.json
  local args=(-c "$addr" -p "$port" -t "$STEP_SECONDS" -J)
  # shellcheck disable=SC2206  # word splitting wanted
  args+=($IPERF_ARGS)
  [ "$dir" = down ] && args+=(-R)
  for try in 1 2 3; do   # the server may still be closing the last test
    if run iperf3 "${args[@]}" > "$j" 2> "$W/iperf3-c.err"; then break; fi
    [ "$try" = 3 ] && { cat "$W/iperf3-c.err" "$j" >&2; die "iperf3 $dir on $path failed"; }
    sleep 1
  done
  python3 - "$j" "$path" "$round" "$dir" >> "$CSV" << 'PY'
import csv, json, sys
j, path, rnd, d = sys.argv[1:]
e = json.load(open(j))["end"]
r = e["sum_received"]
cpu = e.get("cpu_utilization_percent", {})
detail = "retransmits %s; cpu host %.0f %% remote %.0f %%" % (
    e.get("sum_sent", {}).get("retransmits", "?"),
    cpu.get("host_total", 0), cpu.get("remote_total", 0))
csv.writer(sys.stdout, lineterminator="\n").writerow(
    [path, rnd, "iperf3", d, "%.3f" % (r["bits_per_second"] / 8 / 1e6),
     "%.3f" % (r["end"] - r["start"]), int(r["bytes"]), detail])
PY
}

# ferry_run PATH ROUND ADDR PORT: one ferry bench; net_up_none, net_down_none.
ferry_run() {
  local path=$1 round=$2 addr=$3 port=$4 j
  j=$OUT/json/$path-r$round-ferry.json
  if ! FERRY_HOME=$W/client run "$FERRY" bench --identity "$W/client/id_ferry" \
    --known-hosts "$W/client/known_hosts" --accept-new --local "$W/local" \
    --json --protection none --seconds "$STEP_SECONDS" --size 8M \
    "ferry://$addr:$port/m" > "$j" 2> "$W/ferry-bench.err"; then
    cat "$W/ferry-bench.err" >&2
    die "ferry bench on $path failed"
  fi
  python3 - "$j" "$path" "$round" >> "$CSV" << 'PY'
import csv, json, sys
j, path, rnd = sys.argv[1:]
st = {s["name"]: s for s in json.load(open(j))["stages"]}
w = csv.writer(sys.stdout, lineterminator="\n")
for d, name in (("up", "net_up_none"), ("down", "net_down_none")):
    s = st[name]
    w.writerow([path, rnd, "ferry", d, "%.3f" % s["rate"], "%.3f" % s["seconds"],
                s["bytes"], "%s; verdict %s" % (s["method"], s["verdict"])])
PY
}

# measure PATH ADDR IPERF_PORT FERRY_PORT: ROUNDS rounds, order alternating.
measure() {
  local path=$1 addr=$2 iport=$3 fport=$4 r
  for r in $(seq 1 "$ROUNDS"); do
    echo "  $path round $r/$ROUNDS" >&2
    if [ $((r % 2)) = 1 ]; then
      iperf_run "$path" "$r" up "$addr" "$iport"
      iperf_run "$path" "$r" down "$addr" "$iport"
      ferry_run "$path" "$r" "$addr" "$fport"
    else
      ferry_run "$path" "$r" "$addr" "$fport"
      iperf_run "$path" "$r" up "$addr" "$iport"
      iperf_run "$path" "$r" down "$addr" "$iport"
    fi
  done
}

t0=$(date +%s)
echo "$me: $ROUNDS rounds per path, ${STEP_SECONDS} s per network step; results in $OUT" >&2
for p in $NET_PATHS; do
  case $p in
  loopback)
    start_daemon 127.0.0.1
    iport=$(free_port)
    start_iperf 127.0.0.1 "$iport"
    measure loopback 127.0.0.1 "$iport" "$FPORT"
    stop "$FPID"; stop "$IPID" ;;
  shaped)
    ip netns add "$NS"; NS_MADE=1
    ip link add "$V" type veth peer name "$P"; VETH_MADE=1
    ip link set "$P" netns "$NS"
    ip addr add "$A/30" dev "$V"; ip link set "$V" up
    ip -n "$NS" addr add "$B/30" dev "$P"; ip -n "$NS" link set "$P" up
    ip -n "$NS" link set lo up
    tc qdisc add dev "$V" root tbf rate "$RATE" burst 32kb latency 50ms
    tc -n "$NS" qdisc add dev "$P" root tbf rate "$RATE" burst 32kb latency 50ms
    start_daemon "$B" ip netns exec "$NS"
    start_iperf "$B" 5201 ip netns exec "$NS"
    measure shaped "$B" 5201 "$FPORT"
    stop "$FPID"; stop "$IPID"
    ip link del "$V"; VETH_MADE=0
    ip netns del "$NS"; NS_MADE=0 ;;
  esac
done

rc=0
python3 - "$CSV" "$ROUNDS" "$STEP_SECONDS" "$RATE" "$DAEMON_NICE" "$(($(date +%s) - t0))" "$IPERF_ARGS" << 'PY' | tee "$OUT/summary.md" || rc=$?
import csv, statistics, sys
path_csv, rounds, secs, rate, nice, took, iargs = sys.argv[1:]
rows = list(csv.DictReader(open(path_csv)))
desc = {"loopback": "loopback (127.0.0.1, both ends on this machine's cores)",
        "shaped": "veth into a network namespace, tbf %s both ways" % rate}
print("## ferry bench (--protection none, memory to memory) against iperf3 single stream%s\n"
      % (" (iperf3 %s)" % iargs if iargs else ""))
print("%s rounds per path, %s s per network step (iperf3 -t, ferry --seconds), daemon nice %s;"
      " MB/s = 10^6 bytes/s; medians, [min-max]; target ferry/iperf3 within 0.90-1.10.\n"
      % (rounds, secs, nice))
ok = True
for path in ("loopback", "shaped"):
    pr = [r for r in rows if r["path"] == path]
    if not pr:
        continue
    print("### %s\n" % desc[path])
    print("| direction | iperf3 MB/s | ferry MB/s | ferry/iperf3 | target |")
    print("|---|---|---|---|---|")
    for d, label in (("up", "upload (client->server)"), ("down", "download (server->client)")):
        v = {t: [float(r["mb_per_s"]) for r in pr if r["tool"] == t and r["direction"] == d]
             for t in ("iperf3", "ferry")}
        m = {t: statistics.median(x) for t, x in v.items()}
        ratio = m["ferry"] / m["iperf3"]
        verdict = "PASS" if 0.90 <= ratio <= 1.10 else "FAIL"
        ok &= verdict == "PASS"
        fs = lambda t: "%.1f [%.1f-%.1f]" % (m[t], min(v[t]), max(v[t]))
        print("| %s | %s | %s | %.2f | %s |" % (label, fs("iperf3"), fs("ferry"), ratio, verdict))
    fsecs = [float(r["seconds"]) for r in pr if r["tool"] == "ferry"]
    fbytes = [int(r["bytes"]) for r in pr if r["tool"] == "ferry"]
    print("\nferry's steps: %.2f-%.2f s, %.0f-%.0f MiB each (iperf3: %s s each)\n"
          % (min(fsecs), max(fsecs), min(fbytes) / 2**20, max(fbytes) / 2**20, secs))
print("raw figures: raw.csv; reports: json/; this run took %s s" % took)
sys.exit(0 if ok else 3)
PY
echo "$me: wrote $OUT/summary.md, $OUT/raw.csv" >&2
exit "$rc"
