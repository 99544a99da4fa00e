#!/usr/bin/env bash
# The fault campaign (issue 15, item 3). Each run injects one fault at a
# random point of a push or a pull (whole files or delta; the rerun after a
# fault resumes from what the fault left) against a daemon in a network
# namespace of our own, behind a veth pair:
#   kill-client   SIGKILL of the client
#   kill-session  SIGKILL of the daemon's session process
#   kill-daemon   SIGKILL of the daemon itself (then started again)
#   link-cut      the veth taken down for longer than the I/O timeout, then up
#   enospc        a push into a module on a tmpfs too small for the new version
#   eio           the receiver's disk starts failing with EIO after a random
#                 number of bytes (a test-build hook, FERRY_TEST_EIO_AFTER:
#                 these machines have no device-mapper for dm-error)
#   clock-step    the daemon's wall clock stepped by two days, forward or back
#                 (libfaketime, rereading a file that the module's "exclude"
#                 keeps out of every transfer; monotonic time is untouched, as
#                 in a real step)
# In every other round of the seven kinds, the pushes (not enospc's) go to a
# module that keeps snapshots (delta, keep last = 4), which starts each run
# from OLD by a clean push.
# Every transfer mirrors, with --delete or --delete-delay (picked at random),
# and OLD holds three files NEW does not. After each: every file is byte for
# byte its old or its new version, never mixed, and none of NEW's is missing;
# with --delete-delay, if one of OLD's own files is gone, every file is its
# new version (its deletions come only once every file is in: a kill or a cut
# link before that deleted nothing); no temporary lies outside the documented partial area
# (.ferry-part.NAME); the daemon serves the next client within 2 s; the
# client's exit code and message name the cause; and the same transfer run
# again without a fault completes and leaves exactly the new tree. For the
# snapshot module also: every snapshot it lists restores (a pull of
# MODULE@SNAP) to exactly OLD or exactly NEW (or, for a snapshot listed as
# partial, a push with failed files, every file its old or new version),
# after the fault and after the rerun, and ferry admin verify finds every
# stored file intact.
#
#   FAULT_RUNS=100 (make faults, about 8 minutes); make check runs 14 (two of
#   each kind; 7 in the sanitizer build). FAULT_SEED picks the sequence
#   (printed; rerun with it). kill-daemon never interrupts a transfer: the
#   sessions are processes of their own and finish; what it tests is that
#   nothing is lost and a new daemon serves at once.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || fail "needs root: a network namespace, a tmpfs mount"
RUNS=${FAULT_RUNS:-14}
SEED=${FAULT_SEED:-$RANDOM}
RANDOM=$SEED
IO=3
NS=ferryfault$$
A=10.251.$((SEED % 200)).1 B=10.251.$((SEED % 200)).2
KINDS=(kill-client kill-session kill-daemon link-cut enospc eio clock-step)
# An ASan daemon will not start under LD_PRELOAD=libfaketime (ASan's runtime
# must come first, and with the check off it hangs): no clock steps there
if [ "${FERRY_SANITIZED:-}" = 1 ] || grep -q AddressSanitizer "$FERRY" 2> /dev/null; then
  KINDS=(kill-client kill-session kill-daemon link-cut enospc eio)
  echo "ASan build: no clock-step runs (libfaketime and ASan do not mix)"
fi
FAKETIME_LIB=$(ls /usr/lib/*/faketime/libfaketime.so.1 2> /dev/null | head -n1)
[ -n "$FAKETIME_LIB" ] || fail "libfaketime is needed for clock-step (make deps installs faketime)"
declare -A RAN OK MID SNAPS RANS PARTIAL
DELAYED_DONE=0   # --delete-delay runs whose fault came after the deletions began
chmod 755 "$T"
echo "faults: $RUNS runs, FAULT_SEED=$SEED"

ip netns add "$NS"
ip link add "vf$$" type veth peer name "pf$$"
ip link set "pf$$" netns "$NS"
ip addr add "$A/30" dev "vf$$"; ip link set "vf$$" up
ip -n "$NS" addr add "$B/30" dev "pf$$"; ip -n "$NS" link set "pf$$" up; ip -n "$NS" link set lo up
mkdir -p "$T/small"
mount -t tmpfs -o size=12m ferry-faults "$T/small"
FAKED=()   # daemons run under libfaketime: a killed one leaves its /dev/shm segment
undo() {
  local p
  for p in "${FAKED[@]}"; do rm -f "/dev/shm/faketime_shm_$p" "/dev/shm/sem.faketime_sem_$p"; done
  umount -l "$T/small" 2> /dev/null || true
  ip link del "vf$$" 2> /dev/null || true
  ip netns del "$NS" 2> /dev/null || true
}
trap 'rc=$?; undo; (exit $rc); cleanup' EXIT   # cleanup exits with $?
trap 'exit 1' INT TERM

# OLD and NEW: 6 files of 1 MiB (delta-able: NEW changes 64 KiB of each)
# and 4 small ones (written through temporaries, not partials)
mkdir -p "$T/old/d" "$T/new/d"
for i in 1 2 3 4 5 6; do
  head -c 1048576 /dev/urandom > "$T/old/d/big$i"
  cp "$T/old/d/big$i" "$T/new/d/big$i"
  head -c 65536 /dev/urandom | dd of="$T/new/d/big$i" bs=65536 seek=$((i + 2)) conv=notrunc status=none
done
for i in 1 2 3 4; do
  head -c $((1000 * i)) /dev/urandom > "$T/old/s$i"; head -c $((1200 * i)) /dev/urandom > "$T/new/s$i"
done
# OLD's own: what --delete removes
mkdir -p "$T/old/gone/sub"
head -c 3000 /dev/urandom > "$T/old/gone/g1"; head -c 5000 /dev/urandom > "$T/old/gone/sub/g2"
head -c 7000 /dev/urandom > "$T/old/d/gone3"
(cd "$T/old" && find . -type f -exec sha256sum {} + | sort -k2) > "$T/old.sums"
(cd "$T/new" && find . -type f -exec sha256sum {} + | sort -k2) > "$T/new.sums"
ONLY_OLD=(./gone/g1 ./gone/sub/g2 ./d/gone3)

# pulls come from the same tree through modules that pace the sender (a
# client's --bwlimit paces what it sends, not what it receives)
write_config "exclude = /.faketime" "[small]" "path = $T/small" "protection = none" "exclude = /.fill" \
  "[pw]" "path = $T/mod" "bwlimit = 4M" "exclude = /.faketime" \
  "[pd]" "path = $T/mod" "bwlimit = 512K" "exclude = /.faketime" \
  "[s]" "path = $T/smod" "snapshots = yes" "keep last = 4"
mkdir -p "$T/smod"
echo "+2d" > "$T/mod/.faketime"
# the mechanism works here: a process under it sees the step when the file says so
skew=$(( $(LD_PRELOAD="$FAKETIME_LIB" FAKETIME_TIMESTAMP_FILE="$T/mod/.faketime" FAKETIME_NO_CACHE=1 \
  date +%s) - $(date +%s) ))
[ "$skew" -ge 172700 ] && [ "$skew" -le 172900 ] || fail "libfaketime did not step the clock ($skew s)"
echo "+0" > "$T/mod/.faketime"
sed -i "s/^listen = .*/listen = $B:0/; /^\[global\]$/a timeout = $IO" "$T/ferry.conf"
nurl() { echo "ferry://$B:$PORT/$1"; }
start_ns
# ferry serve under `ip netns exec`: the pid is the daemon's (exec)
ferry_c push -r "$T/old/" "$(nurl s/)" > /dev/null 2> "$T/re.err" || { cat "$T/re.err"; fail "first push to the snapshot module"; }

# check_tree DIR WHY [versions]: every file is its old or its new version
# (with "versions", only that: a session may still be ending)
check_tree() {
  local dir=$1 why=$2 f got
  (cd "$dir" && find . -path ./.ferry-history -prune -o -type f ! -name '.ferry-part.*' ! -name .fill \
    ! -name .faketime -exec sha256sum {} + | sort -k2) > "$T/got.sums"
  while read -r got f; do
    grep -qx "$got  $f" "$T/old.sums" || grep -qx "$got  $f" "$T/new.sums" ||
      fail "$why: $f is neither its old nor its new version"
  done < "$T/got.sums"
  # none of NEW's files is missing; what else is there is OLD's own
  while read -r got f; do
    grep -q "  $f\$" "$T/got.sums" || fail "$why: $f is missing"
  done < "$T/new.sums"
  [ "$(wc -l < "$T/got.sums")" -le "$(wc -l < "$T/old.sums")" ] ||
    fail "$why: $(wc -l < "$T/got.sums") files where there were $(wc -l < "$T/old.sums")"
  [ "${3:-}" != versions ] || return 0
  local tmp
  tmp=$(find "$dir" -path "$dir/.ferry-history" -prune -o -name '.ferry-*' ! -name '.ferry-part.*' -print |
    head -n1)
  [ -z "$tmp" ] || fail "$why: a temporary outside the partial area: ${tmp#$T/}"
}

# check_snaps WHY: every snapshot of module s restores to exactly OLD or NEW,
# and the box's verify pass finds every stored file intact
check_snaps() {
  local snap n=0
  # the push's session prunes (keep last = 4) after its client is done:
  # listing while it does could name a snapshot that is gone a moment later.
  # Sessions orphaned by kill-daemon are not the new daemon's children.
  for _ in $(seq 1 200); do
    [ "$(pgrep -fc "serve --config $T/ferry.conf" || true)" -le 1 ] && break
    sleep 0.05
  done
  ferry_c ls "$(nurl s@)" > "$T/snaps" 2> "$T/re.err" || { cat "$T/re.err" >&2; fail "$1: cannot list the snapshots"; }
  for snap in $(awk 'NR > 1 || !/SNAPSHOT/ {print $1}' "$T/snaps" | grep -E '^[0-9]{4}-'); do
    rm -rf "$T/restore"
    ferry_c pull -r "$(nurl "s@$snap/")" "$T/restore" > /dev/null 2> "$T/re.err" ||
      { cat "$T/re.err" >&2; fail "$1: snapshot $snap does not restore"; }
    (cd "$T/restore" && find . -type f -exec sha256sum {} + | sort -k2) > "$T/restore.sums"
    if grep -q "^$snap .* partial: [0-9]* failed" "$T/snaps"; then
      # a push whose files partly failed (exit 23): each file a pushed version
      check_tree "$T/restore" "$1: partial snapshot $snap"
      PARTIAL[$kind]=$((${PARTIAL[$kind]:-0} + 1))
    else
      cmp -s "$T/restore.sums" "$T/old.sums" || cmp -s "$T/restore.sums" "$T/new.sums" ||
        { diff "$T/new.sums" "$T/restore.sums" >&2 || true; fail "$1: snapshot $snap is neither OLD nor NEW"; }
    fi
    n=$((n + 1))
  done
  [ "$n" -ge 1 ] || { cat "$T/snaps" >&2; fail "$1: no snapshot listed"; }
  FERRY_HOME=$T/serverhome $FERRY admin verify "$T/smod" > "$T/verify.out" 2>&1 ||
    { cat "$T/verify.out" >&2; fail "$1: ferry admin verify found damage"; }
  SNAPS[$kind]=$((${SNAPS[$kind]:-0} + n))
}

# delayed_after_all DIR WHY: --delete-delay: if one of OLD's own files is gone,
# the transfer had brought every file: NEW's are all new (a disk that failed,
# or filled, is another matter: its failed files stay old, and the deletions
# still come). A kill during the deletions may leave some of OLD's.
delayed_after_all() {
  local f gone=0
  case $kind in eio | enospc) return 0 ;; esac
  for f in "${ONLY_OLD[@]}"; do [ -e "$1/$f" ] || gone=$((gone + 1)); done
  [ "$gone" = 0 ] && return 0
  (cd "$1" && find . -path ./.ferry-history -prune -o -type f ! -name '.ferry-part.*' ! -name .fill \
    ! -name .faketime -exec sha256sum {} + | sort -k2) |
    grep -v -e '  ./gone/' -e '  ./d/gone3$' | cmp -s - "$T/new.sums" ||
    fail "$2: --delete-delay deleted $gone of OLD's own files before every file was in"
  DELAYED_DONE=$((DELAYED_DONE + 1))
}

# serves_soon WHY: the daemon answers a client within 2 s
serves_soon() {
  local t0 t1
  t0=$(date +%s%N)
  ferry_c ls --timeout 2 "$(nurl m/)" > /dev/null 2>&1 || fail "$1: the daemon did not serve the next client"
  t1=$(date +%s%N)
  [ $(((t1 - t0) / 1000000)) -le 2000 ] || fail "$1: the next client took $(((t1 - t0) / 1000000)) ms"
}

for run in $(seq 1 "$RUNS"); do
  kind=${KINDS[$(((run - 1) % ${#KINDS[@]}))]}
  dir=push; [ $((RANDOM % 2)) = 0 ] && [ "$kind" != enospc ] && dir=pull
  mode=delta; [ $((RANDOM % 2)) = 0 ] && mode=whole
  # whole: 6 MiB at 4 MB/s, delta: 384 KiB of changes at 512 KB/s; the fault
  # comes at a random point of that (or, now and then, just after it)
  if [ "$mode" = whole ]; then
    at=$((50 + RANDOM % 1500)); flags=(-r --timeout "$IO" --bwlimit 4M -W)
  else
    at=$((50 + RANDOM % 750)); flags=(-r --timeout "$IO" --bwlimit 512K)
  fi
  snap=0
  # every other round of the kinds, the pushes go to the snapshot module
  [ "$dir" = push ] && [ "$kind" != enospc ] && [ $(((run - 1) / ${#KINDS[@]} % 2)) = 1 ] &&
    snap=1 && mode=delta &&
    at=$((50 + RANDOM % 750)) flags=(-r --timeout "$IO" --bwlimit 512K)
  del=--delete; [ $((RANDOM % 2)) = 0 ] && del=--delete-delay
  flags+=("$del")
  why="run $run ($kind, $dir, $mode, $del$([ $snap = 1 ] && echo ", snapshots" || true), at ${at} ms)"
  mod=m mdir=$T/mod; [ "$kind" = enospc ] && mod=small mdir=$T/small
  # the receiving side starts from OLD
  if [ $snap = 1 ]; then
    # a clean push of OLD (a snapshot of its own when the module held NEW)
    ferry_c push -r "$T/old/" "$(nurl s/)" > /dev/null 2> "$T/re.err" ||
      { cat "$T/re.err" >&2; fail "$why: the push of OLD to the snapshot module failed"; }
    mod=s mdir=$T/smod dst=$T/smod src=$T/new
  elif [ "$dir" = push ]; then
    rm -rf "${mdir:?}"/* "$mdir"/.ferry-* "$mdir/.fill" 2> /dev/null || true
    cp -a "$T/old/." "$mdir/"
    if [ "$kind" = enospc ]; then   # leave less room than one new big file needs
      free=$(df --output=avail -B1 "$T/small" | tail -n1)
      head -c $((free - 600000)) /dev/zero > "$T/small/.fill"
    fi
    dst=$mdir src=$T/new
  else
    rm -rf "${T:?}/mod"/* "$T/mod"/.ferry-* 2> /dev/null || true
    cp -a "$T/new/." "$T/mod/"
    rm -rf "$T/dest"; cp -a "$T/old" "$T/dest"
    dst=$T/dest src=
  fi
  [ "$kind" = eio ] && start_ns FERRY_TEST_EIO_AFTER=$((RANDOM * 64))
  if [ "$kind" = clock-step ]; then
    echo "+0" > "$T/mod/.faketime"
    start_ns LD_PRELOAD="$FAKETIME_LIB" FAKETIME_TIMESTAMP_FILE="$T/mod/.faketime" \
      FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1
    FAKED+=("$SERVER_PID")
    step=+2d; [ $((RANDOM % 2)) = 0 ] && step=-2d
    why="$why, $step"
  fi
  cenv=()
  [ "$kind" = eio ] && [ "$dir" = pull ] && cenv=(FERRY_TEST_EIO_AFTER=$((RANDOM * 64)))
  if [ "$dir" = push ]; then
    env "${cenv[@]}" $FERRY_CLIENT push --identity "$T/clienthome/id_ferry" \
      --known-hosts "$T/clienthome/known_hosts" --accept-new "${flags[@]}" "$src/" "$(nurl "$mod/")" \
      > "$T/run.out" 2> "$T/run.err" &
  else
    pm=pw; [ "$mode" = delta ] && pm=pd
    env "${cenv[@]}" $FERRY_CLIENT pull --identity "$T/clienthome/id_ferry" \
      --known-hosts "$T/clienthome/known_hosts" --accept-new "${flags[@]}" "$(nurl $pm/)" "$dst" \
      > "$T/run.out" 2> "$T/run.err" &
  fi
  CPID=$!
  sleep "$((at / 1000)).$(printf '%03d' $((at % 1000)))"
  case $kind in
    kill-client) kill -KILL "$CPID" 2> /dev/null || true ;;
    kill-session) pkill -KILL -P "$SERVER_PID" 2> /dev/null || true ;;
    kill-daemon) kill -KILL "$SERVER_PID" 2> /dev/null || true ;;
    link-cut) ip link set "vf$$" down; sleep $((IO + 2)); ip link set "vf$$" up ;;
    clock-step) echo "$step" > "$T/mod/.faketime" ;;
  esac
  rc=0; wait "$CPID" || rc=$?
  RAN[$kind]=$((${RAN[$kind]:-0} + 1))
  # what the client said, by kind (the fault may also have come too late)
  want=
  case $kind in
    kill-client) [ "$rc" = 137 ] || [ "$rc" = 0 ] || want="killed (137) or done (0)" ;;
    kill-session|kill-daemon)
      if [ "$rc" != 0 ]; then
        [ "$rc" = 10 ] && grep -qi "connection\|broken pipe" "$T/run.err" ||
          want="10 and 'connection' or 'broken pipe'"
      fi ;;
    link-cut)
      if [ "$rc" != 0 ]; then
        { [ "$rc" = 30 ] && grep -qi "timeout\|timed out" "$T/run.err"; } || { [ "$rc" = 10 ] && grep -qi "connection" "$T/run.err"; } ||
          want="30 and 'timeout', or 10 and 'connection'"
      fi ;;
    clock-step) [ "$rc" = 0 ] || want="0: a stepped clock is no reason to fail" ;;
    enospc) { [ "$rc" = 23 ] && grep -qi "no space left" "$T/run.err"; } || want="23 and 'No space left'" ;;
    eio)
      if [ "$rc" != 0 ]; then
        { [ "$rc" = 23 ] && grep -qi "input/output error" "$T/run.err"; } ||
          { [ "$rc" = 10 ] && grep -qi "input/output error\|connection" "$T/run.err"; } ||
          want="23 (or 10) and 'Input/output error'"
      fi ;;
  esac
  [ -z "$want" ] || { cat "$T/run.err" >&2; fail "$why: client exit $rc, expected $want"; }
  if [ "$kind" = kill-session ] || [ "$kind" = kill-daemon ] || [ "$kind" = link-cut ]; then
    sleep 0.3   # the session's end reaches the disk (it removes its temporary on SIGTERM)
  fi
  [ "$kind" = kill-daemon ] && { wait "$SERVER_PID" 2> /dev/null || true; SERVER_PID=; start_ns; }
  [ "$kind" = eio ] && start_ns
  if [ "$kind" = clock-step ]; then
    start_ns; echo "+0" > "$T/mod/.faketime"
  fi
  [ "$kind" = kill-daemon ] && sleep 0.5   # orphaned sessions end by their I/O timeout or finish
  if [ "$kind" = kill-client ]; then
    # what a reader sees while the session is still undoing or cleaning up,
    # then the state it settles in (its end, within the I/O timeout)
    check_tree "$dst" "$why, while the session ends" versions
    for _ in $(seq 1 $((IO * 20 + 20))); do
      [ -z "$(ps --ppid "$SERVER_PID" -o pid= || true)" ] && break
      sleep 0.05
    done
  fi
  check_tree "$dst" "$why"
  [ "$del" = --delete-delay ] && delayed_after_all "$dst" "$why"
  serves_soon "$why"
  [ $snap = 1 ] && check_snaps "$why, after the fault"
  # recovery: the same transfer, no fault, leaves exactly NEW
  rm -f "$T/small/.fill"
  if [ "$dir" = push ]; then
    ferry_c push "${flags[@]}" "$src/" "$(nurl "$mod/")" > /dev/null 2> "$T/re.err" ||
      { cat "$T/re.err" >&2; fail "$why: the rerun failed"; }
  else
    ferry_c pull "${flags[@]}" "$(nurl m/)" "$dst" > /dev/null 2> "$T/re.err" ||
      { cat "$T/re.err" >&2; fail "$why: the rerun failed"; }
  fi
  (cd "$dst" && find . -path ./.ferry-history -prune -o -type f ! -name .faketime -exec sha256sum {} + |
    sort -k2) > "$T/after.sums"
  cmp -s "$T/after.sums" "$T/new.sums" || { diff "$T/new.sums" "$T/after.sums" >&2 || true; fail "$why: after the rerun the tree is not the new one"; }
  [ $snap = 1 ] && check_snaps "$why, after the rerun"
  OK[$kind]=$((${OK[$kind]:-0} + 1))
  [ "$rc" != 0 ] && MID[$kind]=$((${MID[$kind]:-0} + 1))
  [ $snap = 1 ] && RANS[$kind]=$((${RANS[$kind]:-0} + 1))
  echo "ok $run $kind $dir $mode $del$([ $snap = 1 ] && echo +snapshots) at=${at}ms rc=$rc"
done
echo "| fault | runs | passed | of them interrupted (client exit not 0) | of them to the snapshot module | snapshots restored and compared after them | of those, listed as partial |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for k in "${KINDS[@]}"; do
  echo "| $k | ${RAN[$k]:-0} | ${OK[$k]:-0} | ${MID[$k]:-0} | ${RANS[$k]:-0} | ${SNAPS[$k]:-0} | ${PARTIAL[$k]:-0} |"
done
echo "faults: --delete-delay runs whose fault came once its deletions had begun: $DELAYED_DONE"
echo "faults: ok ($RUNS runs, FAULT_SEED=$SEED)"
