#!/usr/bin/env bash
# bench/load.sh -- the daemon under load (issue 15, item 4), on loopback:
#   L1  64 clients at once (max connections = 64): 32 push and 32 pull a small
#       tree, every copy checked;
#   L2  64 sessions held open (tests' ferry-hold, authorized, dripping a
#       record): the 65th client gets the busy refusal, and gets in once one
#       of them ends;
#   L3  1,000 sessions one after another: the daemon's RSS and open fds after
#       the last are those after the first;
#   L4  200 connections that send nothing and 200 that stall after the
#       opening line, from 200 source addresses: a real client is kept out no
#       longer than the handshake timeout;
#   L5  an authorized client sending 1 byte/s is cut at the I/O timeout.
# Prints a markdown table with a verdict per check; exit 1 if one fails.
#
#   bench/load.sh                                 (about 2 minutes; root not needed)
#   LOAD_SEQ=100 bench/load.sh                    a quick look
# Knobs: LOAD_CLIENTS [64] LOAD_SEQ [1000] LOAD_STALL [200] LOAD_HS [3] LOAD_IO [5]
#   LOAD_FILES [20] LOAD_ROOT [/dev/shm] FERRY [build/ferry] HOLD [build/tests/ferry-hold]
# Also a section of bench/run.sh (load; LOAD=0 skips it; smaller under --smoke).
set -euo pipefail
REPO=$(realpath "$(dirname "$0")/..")
CLIENTS=${LOAD_CLIENTS:-64} SEQ=${LOAD_SEQ:-1000} STALL=${LOAD_STALL:-200}
HS=${LOAD_HS:-3} IO=${LOAD_IO:-5} FILES=${LOAD_FILES:-20}
FERRY=$(realpath "${FERRY:-$REPO/build/ferry}")
HOLD=$(realpath "${HOLD:-$REPO/build/tests/ferry-hold}")
[ -x "$FERRY" ] && [ -x "$HOLD" ] || { echo "load: build first (make build)" >&2; exit 2; }
W=$(mktemp -d "${LOAD_ROOT:-/dev/shm}/ferry-load.XXXXXX")
trap 'kill $(jobs -p) 2> /dev/null || true; pkill -f "$W/" 2> /dev/null || true; [ -n "${LOAD_KEEP:-}" ] || rm -rf "$W"' EXIT
log() { echo "[load $(date +%H:%M:%S)] $*" >&2; }
now() { date +%s.%N; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

mkdir -p "$W/home/c" "$W/home/s" "$W/mod/pulltree" "$W/src" "$W/out"
chmod 700 "$W/home/c" "$W/home/s"
FERRY_HOME=$W/home/c "$FERRY" keygen -f "$W/home/c/id_ferry" -C load > /dev/null 2>&1
cp "$W/home/c/id_ferry.pub" "$W/home/s/authorized_keys"
for i in $(seq 1 "$FILES"); do head -c 65536 /dev/urandom > "$W/src/f$i"; done
cp "$W/src/"* "$W/mod/pulltree/"
PORT=$(free_port)
# conf [EXTRA-GLOBAL-LINES]: the daemon's config
conf() {
  printf '[global]\nlisten = 127.0.0.1:%s\nhost key = %s\nauthorized keys = %s\nnice = 0\n' \
    "$PORT" "$W/home/s/host_key" "$W/home/s/authorized_keys" > "$W/ferry.conf"
  printf 'max connections = %s\nhandshake timeout = %s\ntimeout = %s\n%b[m]\npath = %s\n' \
    "$CLIENTS" "$HS" "$IO" "${1:-}" "$W/mod" >> "$W/ferry.conf"
}
# L1-L3: the clients all come from 127.0.0.1, so the per-address cap on
# connections awaiting authentication (default 4) is lifted, and the total
# (default 8) raised to the number of clients; L4-L5 have the defaults.
conf "max unauthenticated = $CLIENTS\nmax unauthenticated per address = 0\n"
FERRY_HOME=$W/home/s "$FERRY" serve --config "$W/ferry.conf" 2> "$W/serve.log" &
SRV=$!
for _ in $(seq 1 100); do grep -q listening "$W/serve.log" 2> /dev/null && break; sleep 0.05; done
grep -q listening "$W/serve.log" || { cat "$W/serve.log" >&2; exit 1; }
URL=ferry://127.0.0.1:$PORT/m
fc() {
  local cmd=$1; shift
  FERRY_HOME=$W/home/c "$FERRY" "$cmd" --identity "$W/home/c/id_ferry" \
    --known-hosts "$W/home/c/known_hosts" --accept-new "$@"
}
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$SRV/status"; }
nfds() { ls "/proc/$SRV/fd" | wc -l; }
ROWS=() FAILED=0
row() {  # CHECK FIGURES VERDICT
  ROWS+=("| $1 | $2 | $3 |")
  [ "$3" = PASS ] || FAILED=1
}
fc ls "$URL/" > /dev/null 2>&1   # known_hosts written once, before the crowd

# ------------------------------------------------------------------ L1
log "L1: $CLIENTS clients at once"
t0=$(now)
pids=()
for i in $(seq 1 "$CLIENTS"); do
  if [ $((i % 2)) = 0 ]; then
    fc push -r "$W/src/" "$URL/push$i/" > "$W/out/$i.log" 2>&1 &
  else
    fc pull -r "$URL/pulltree/" "$W/out/pull$i" > "$W/out/$i.log" 2>&1 &
  fi
  pids+=($!)
done
ok=0
for i in $(seq 1 "$CLIENTS"); do
  wait "${pids[$((i - 1))]}" || continue
  if [ $((i % 2)) = 0 ]; then dst=$W/mod/push$i; else dst=$W/out/pull$i; fi
  diff -rq "$W/src" "$dst" > /dev/null 2>&1 && ok=$((ok + 1))
done
t1=$(now)
l1_wall=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
v=FAIL; [ "$ok" = "$CLIENTS" ] && v=PASS
row "L1: $CLIENTS clients at once, half push, half pull ($FILES x 64 KiB each)" \
  "$ok of $CLIENTS complete and identical, $l1_wall s wall" $v

# ------------------------------------------------------------------ L2
log "L2: $CLIENTS held sessions, then one more"
"$HOLD" authdrip "$PORT" "$CLIENTS" 60 --every 1 --key "$W/home/c/id_ferry" > "$W/hold.out" 2>&1 &
HP=$!
for _ in $(seq 1 200); do grep -q "^READY" "$W/hold.out" 2> /dev/null && break; sleep 0.05; done
held=$(sed -n 's/^READY \([0-9]*\).*/\1/p' "$W/hold.out")
rc=0
fc push -r "$W/src/" "$URL/extra/" > "$W/extra.out" 2> "$W/extra.err" || rc=$?
busy=$(head -n1 "$W/extra.err")
kill "$HP" 2> /dev/null; wait "$HP" 2> /dev/null || true
t0=$(now)
got=0
for _ in $(seq 1 100); do
  if fc push -r "$W/src/" "$URL/extra/" > /dev/null 2>&1; then got=1; break; fi
  sleep 0.1
done
t1=$(now)
l2_after=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
v=FAIL
[ "${held:-0}" = "$CLIENTS" ] && [ "$rc" != 0 ] && echo "$busy" | grep -qi busy && [ "$got" = 1 ] && v=PASS
row "L2: the $((CLIENTS + 1))th client while $CLIENTS sessions are held" \
  "${held:-0} held; the next refused (exit $rc: \"$busy\"); in ${l2_after} s after they ended" $v

# ------------------------------------------------------------------ L3
log "L3: $SEQ sessions one after another"
# the daemon holds a session's status fd until it has reaped it: its fds are
# read when it has no child left
no_sessions() {
  for _ in $(seq 1 200); do
    [ -z "$(ps --ppid "$SRV" -o pid= || true)" ] && return 0
    sleep 0.05
  done
}
no_sessions   # the held sessions' processes are reaped
fc ls "$URL/" > /dev/null 2>&1
no_sessions
rss1=$(rss_kb) fd1=$(nfds)
t0=$(now)
fails=0
for i in $(seq 2 "$SEQ"); do
  if [ $((i % 10)) = 0 ]; then
    fc push "$W/src/f1" "$URL/seq/" > /dev/null 2>&1 || fails=$((fails + 1))
  else
    fc ls "$URL/" > /dev/null 2>&1 || fails=$((fails + 1))
  fi
done
t1=$(now)
no_sessions
rss2=$(rss_kb) fd2=$(nfds)
rate=$(python3 -c "print(f'{($SEQ - 1) / ($t1 - $t0):.0f}')")
v=FAIL; [ "$fails" = 0 ] && [ "$fd1" = "$fd2" ] && [ "$rss2" -le $((rss1 + 64)) ] && v=PASS
row "L3: $SEQ sessions in a row (ls, every 10th a push)" \
  "$fails failed; $rate sessions/s; daemon after the 1st: $rss1 KiB RSS, $fd1 fds; after the last: $rss2 KiB, $fd2 fds" $v

# ------------------------------------------------------------------ L4
conf ""
kill -HUP "$SRV"
for _ in $(seq 1 100); do grep -q "configuration reloaded" "$W/serve.log" && break; sleep 0.05; done
grep -q "configuration reloaded" "$W/serve.log" || { echo "load: reload failed" >&2; exit 1; }
log "L4: $STALL silent and $STALL stalled-handshake connections from $STALL addresses"
# one wave of each; ferry-hold holds at most 256 a process
"$HOLD" silent "$PORT" "$STALL" 30 --spread 1 > "$W/silent.out" 2>&1 &
S1=$!
"$HOLD" line "$PORT" "$STALL" 30 --spread 1 > "$W/line.out" 2>&1 &
S2=$!
for _ in $(seq 1 200); do
  grep -q "^READY" "$W/silent.out" 2> /dev/null && grep -q "^READY" "$W/line.out" 2> /dev/null && break
  sleep 0.05
done
t0=$(now)
got=0 tries=0
for _ in $(seq 1 200); do
  tries=$((tries + 1))
  if fc ls "$URL/" > /dev/null 2>&1; then got=1; break; fi
  sleep 0.1
done
t1=$(now)
l4_in=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
opened=$(( $(grep -c "^OPEN" "$W/silent.out" || true) + $(grep -c "^OPEN" "$W/line.out" || true) ))
refused=$(( $(grep -c "^REFUSED" "$W/silent.out" || true) + $(grep -c "^REFUSED" "$W/line.out" || true) ))
kill "$S1" "$S2" 2> /dev/null; wait "$S1" "$S2" 2> /dev/null || true
v=FAIL; [ "$got" = 1 ] && python3 -c "import sys; sys.exit(not $l4_in <= $HS + 1)" && v=PASS
row "L4: $STALL silent + $STALL stalled after the opening line, $STALL source addresses" \
  "$opened in place, $refused refused at once; a real client in after $l4_in s ($tries tries; handshake timeout $HS s)" $v

# ------------------------------------------------------------------ L5
log "L5: an authorized client dripping 1 byte/s"
"$HOLD" authdrip "$PORT" 1 $((IO * 4)) --every 1 --key "$W/home/c/id_ferry" > "$W/drip.out" 2>&1 || true
cut=$(sed -n 's/^CUT 0 \([0-9.]*\).*/\1/p' "$W/drip.out")
v=FAIL
[ -n "$cut" ] && python3 -c "import sys; sys.exit(not ($IO - 0.5 <= $cut <= $IO + 1.5))" && v=PASS
row "L5: an authorized session sending 1 byte/s" "cut after ${cut:-never} s (I/O timeout $IO s)" $v

kill -0 "$SRV" || { echo "load: the daemon died" >&2; FAILED=1; }
kill -TERM "$SRV"; wait "$SRV" 2> /dev/null || true
echo "## The daemon under load (bench/load.sh, loopback, max connections = $CLIENTS)"
echo
echo "L1-L3 with max unauthenticated = $CLIENTS and no per-address cap (every client is 127.0.0.1);"
echo "L4-L5 with the defaults (8 awaiting authentication, 4 per address); handshake timeout $HS s, timeout $IO s."
echo
echo "| check | measured | verdict |"
echo "|---|---|---|"
printf '%s\n' "${ROWS[@]}"
exit "$FAILED"
