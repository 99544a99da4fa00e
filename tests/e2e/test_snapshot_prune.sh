#!/usr/bin/env bash
# Issue 13: deleting snapshots and retention. A history of DAYS pushes
# (tests/e2e/snapweek.py), then deletions, each followed by a restore of
# every snapshot left, compared with what was pushed that day:
#   - a snapshot in the middle (its increment merged into the next one's)
#     and the oldest (removed whole);
#   - a deletion ended at each of its steps (every one up to 16, then every
#     5th; SNAP_ALL_STEPS=1: all; SNAP_KILL_DENSE=N, SNAP_KILL_EVERY=M: every
#     one up to N, then every Mth, in both kill loops: the sanitizer build's
#     sample), as kill -9 would end it (the
#     test-build hook FERRY_TEST_PRUNE_KILL=N): the next `ferry admin`
#     finishes it or undoes it, and every snapshot still restores exactly;
#   - retention: `ferry admin prune --dry-run` says what it keeps and why,
#     prune deletes the rest; the daemon prunes after a push by itself;
#   - a stolen key pushes FORGED snapshots in a row, with the client's clock
#     set back and forth: `protect within` keeps every real one.
. "$(dirname "$0")/lib.sh"

WEEK=$(dirname "$0")/snapweek.py
SEED=${SNAP_SEED:-21}
FILES=${SNAP_FILES:-120}
DAYS=${SNAP_DAYS:-8}
FORGED=${SNAP_FORGED:-200}
DENSE=${SNAP_KILL_DENSE:-16}
EVERY=${SNAP_KILL_EVERY:-5}
XDENSE=${SNAP_KILL_DENSE:-200}   # (the xattr loop: every step, unless sampled)
# skip_step K LIMIT: 0 when step K is not in the sample
skip_step() { [ -z "${SNAP_ALL_STEPS:-}" ] && [ "$1" -gt "$2" ] && [ $(($1 % EVERY)) != 0 ]; }
mkdir -p "$T/k" "$T/p" "$T/x"
write_config "snapshots = yes" \
  "[k]" "path = $T/k" "protection = none" "snapshots = yes" "keep last = 2" \
  "[x]" "path = $T/x" "protection = none" "snapshots = yes" \
  "[p]" "path = $T/p" "protection = none" "append only = yes" "keep last = 3" \
  "protect within = 1d"
start_server

admin() { $FERRY_CLIENT admin "$@"; }
names() { admin list "$T/mod" | tail -n +2 | awk '{print $1}'; }

src=$T/src
python3 "$WEEK" init "$src" "$SEED" "$FILES"
for d in $(seq 0 $((DAYS - 1))); do
  [ "$d" = 0 ] || python3 "$WEEK" day "$src" "$SEED" "$d"
  ferry_c push -a --delete "$src/" "$(url m)/" > /dev/null || fail "push of day $d"
  cp -a "$src" "$T/day$d"
done
mapfile -t NAME < <(names)
[ "${#NAME[@]}" = "$DAYS" ] || fail "${#NAME[@]} snapshots after $DAYS pushes"
declare -A DAYOF
for d in $(seq 0 $((DAYS - 1))); do DAYOF[${NAME[$d]}]=$d; done

# check_all: every snapshot left restores as its day was pushed
check_all() {
  local n
  for n in $(names); do
    rm -rf "$T/r"
    ferry_c pull -a "$(url "m@$n")/" "$T/r" > /dev/null || fail "$1: restore of $n"
    same_tree "$T/day${DAYOF[$n]}" "$T/r"
  done
}

note "a snapshot in the middle, then the oldest"
admin delete "$T/mod" "${NAME[3]}" > /dev/null || fail "delete ${NAME[3]}"
names | grep -qx "${NAME[3]}" && fail "${NAME[3]} is still listed"
check_all "after deleting day 3"
admin delete "$T/mod" "${NAME[0]}" > /dev/null || fail "delete ${NAME[0]}"
check_all "after deleting day 0"
[ -z "$(ls "$T/mod/.ferry-history/snaps" | grep -v '^20[0-9-]*T[0-9]*Z-[A-Za-z0-9_-]*$')" ] ||
  fail "leftovers in the history: $(ls "$T/mod/.ferry-history/snaps")"
expect_rc 3 admin delete "$T/mod" "${NAME[$((DAYS - 1))]}"
grep -q "the latest snapshot" "$T/last.err" || fail "deleting the latest: $(cat "$T/last.err")"
expect_rc 3 admin delete "$T/mod" "${NAME[3]}"

note "a deletion ended at each of its steps"
victim=${NAME[5]}
cp -a "$T/mod" "$T/mod.bak"
steps=0 killed=0
for k in $(seq 1 400); do
  # every step up to 16, then a sample
  if skip_step "$k" "$DENSE"; then continue; fi
  rc=0
  FERRY_TEST_PRUNE_KILL=$k admin delete "$T/mod" "$victim" > /dev/null 2>&1 || rc=$?
  if [ "$rc" = 0 ]; then steps=$k; break; fi
  [ "$rc" = 99 ] || fail "delete with a kill at step $k: exit $rc"
  killed=$((killed + 1))
  admin list "$T/mod" > /dev/null || fail "list after a kill at step $k"
  check_all "a deletion killed at step $k"
  [ -z "$(ls "$T/mod/.ferry-history/snaps" | grep -v '^20[0-9-]*T[0-9]*Z-[A-Za-z0-9_-]*$')" ] ||
    fail "leftovers after a kill at step $k: $(ls "$T/mod/.ferry-history/snaps")"
  rm -rf "$T/mod" && cp -a "$T/mod.bak" "$T/mod"
done
[ "$killed" -ge $((DENSE < 10 ? DENSE : 10)) ] || fail "only $killed kill points were reached (a test build has FERRY_TEST_HOOKS)"
[ "$steps" -gt 0 ] || fail "the deletion never completed"
check_all "the deletion that completed"
echo "killed at $killed points, completed at step $steps"

note "a merge keeps the xattrs and ACLs a metadata record kept"
# B changed d's and d/e's xattrs, ACLs and mode (metadata records keeping
# A's), then C removed d (stored whole): deleting B merges its records into
# C's, d's onto C's stored d and d/e's into it, and A must still restore as
# it was pushed. At every step of the deletion, killed there, too.
xs=$T/src-x
mkdir -p "$xs/d/e" && echo f > "$xs/d/e/f" && echo g > "$xs/g"
setfattr -n user.tag -v d-A "$xs/d" && setfacl -m u:nobody:rx -d -m u:nobody:r "$xs/d"
setfattr -n user.tag -v e-A "$xs/d/e" && chmod 750 "$xs/d/e"
ferry_c push -aXA --delete "$xs/" "$(url x)/" > /dev/null || fail "x: push A"
setfattr -n user.tag -v d-B "$xs/d" && setfacl -b "$xs/d"
setfattr -n user.tag -v e-B "$xs/d/e" && chmod 700 "$xs/d/e"
ferry_c push -aXA --delete "$xs/" "$(url x)/" > /dev/null || fail "x: push B"
rm -rf "$xs/d"
ferry_c push -aXA --delete "$xs/" "$(url x)/" > /dev/null || fail "x: push C"
mapfile -t XN < <(admin list "$T/x" | tail -n +2 | awk '{print $1}')
[ "${#XN[@]}" = 3 ] || fail "x: ${#XN[@]} snapshots after 3 pushes"
tag_of() { getfattr --only-values -n user.tag "$1" 2> /dev/null || true; }
# x_is SNAP D-TAG ACL-ENTRIES E-TAG E-MODE WHEN
x_is() {
  rm -rf "$T/r"
  ferry_c pull -aXA "$(url "x@$1")/" "$T/r" > /dev/null || fail "$6: restore of x@$1"
  local got
  got="$(tag_of "$T/r/d") $(getfacl -cp "$T/r/d" 2> /dev/null | grep -c nobody) $(tag_of "$T/r/d/e") $(stat -c %a "$T/r/d/e")"
  [ "$got" = "$2 $3 $4 $5" ] || fail "$6: x@$1 restores d and d/e as '$got', not '$2 $3 $4 $5'"
}
x_is "${XN[0]}" d-A 2 e-A 750 "before the deletion"
x_is "${XN[1]}" d-B 0 e-B 700 "before the deletion"
cp -a "$T/x" "$T/x.bak"
xsteps=0
for k in $(seq 1 200); do
  if skip_step "$k" "$XDENSE"; then continue; fi
  rc=0
  FERRY_TEST_PRUNE_KILL=$k admin delete "$T/x" "${XN[1]}" > /dev/null 2> "$T/xdel.err" || rc=$?
  grep -q "keeps its later xattrs" "$T/xdel.err" && fail "x: $(cat "$T/xdel.err")"
  x_is "${XN[0]}" d-A 2 e-A 750 "a deletion killed at step $k (exit $rc)"
  if admin list "$T/x" | grep -q "^${XN[1]} "; then
    x_is "${XN[1]}" d-B 0 e-B 700 "a deletion killed at step $k"
  fi
  if [ "$rc" = 0 ]; then xsteps=$k; break; fi
  [ "$rc" = 99 ] || fail "x: delete with a kill at step $k: exit $rc"
  rm -rf "$T/x" && cp -a "$T/x.bak" "$T/x"
done
[ "$xsteps" -gt 5 ] || fail "x: the deletion completed at step $xsteps"
admin list "$T/x" | grep -q "^${XN[1]} " && fail "x: ${XN[1]} is still listed"
# (a killed deletion is finished by the next settle: the daemon's, for the pulls)
grep "keeps its later xattrs" "$T/server.log" && fail "x: the daemon's merge lost xattrs"
echo "x: killed at the steps before $xsteps (every one up to $XDENSE, then every ${EVERY}th), completed at step $xsteps"

note "retention: --dry-run says why, prune deletes the rest"
admin prune "$T/mod" --dry-run --keep-last 2 --keep-daily 1 > "$T/plan" || fail "prune --dry-run"
grep -q "keep (latest,last,daily)" "$T/plan" || { cat "$T/plan"; fail "no reasons in the plan"; }
grep -q "delete" "$T/plan" || { cat "$T/plan"; fail "the plan deletes nothing"; }
before=$(names | wc -l)
[ "$before" = "$(names | wc -l)" ] || fail "--dry-run deleted"
admin prune "$T/mod" --keep-last 2 > "$T/plan" || fail "prune"
[ "$(names | wc -l)" = 2 ] || fail "$(names | wc -l) snapshots after keep-last 2"
check_all "after prune"

note "the daemon prunes after a push (keep last = 2)"
for d in 0 1 2 3; do
  python3 "$WEEK" day "$src" "$SEED" $((d + 40))
  ferry_c push -a --delete "$src/" "$(url k)/" > /dev/null || fail "push to k"
done
# (each push's session prunes after it, at nice 19 and idle I/O priority:
# on a loaded machine that takes seconds, and two may overlap, both listing
# the same snapshot to delete; the second must find it gone, not fail)
for _ in $(seq 1 300); do
  [ "$(admin list "$T/k" | tail -n +2 | grep -c .)" = 2 ] &&
    [ -z "$(ps --ppid "$SERVER_PID" -o stat= | grep -v '^Z' || true)" ] && break
  sleep 0.1
done
[ "$(admin list "$T/k" | tail -n +2 | grep -c .)" = 2 ] || fail "the daemon did not prune k"
wait_sessions
grep -q "module 'k': prune: [0-9]* snapshot(s) deleted" "$T/server.log" || fail "no prune in the log"
grep "module 'k': prune:" "$T/server.log" | grep -v "snapshot(s) deleted" &&
  fail "a prune of k failed"

note "a stolen key pushes $FORGED snapshots, its clock set back and forth"
mkdir -p "$T/real"
for d in 0 1 2; do
  echo "real $d" > "$T/real/f$d"
  ferry_c push -a "$T/real/" "$(url p)/" > /dev/null || fail "real push $d"
done
real=$(admin list "$T/p" | tail -n +2 | awk '{print $1}')
# the client's clock, set back and forth (libfaketime, as test_faults uses it)
FAKETIME_LIB=$(ls /usr/lib/*/faketime/libfaketime.so.1 2> /dev/null | head -n1)
[ -n "$FAKETIME_LIB" ] || fail "libfaketime is needed (make deps installs faketime)"
# (an ASan build hangs in its start-up under libfaketime: its clock stays)
stepped=1
grep -q AddressSanitizer "$FERRY" && stepped=0 && echo "ASan build: the client's clock is not stepped"
for i in $(seq 1 "$FORGED"); do
  echo "garbage $i $RANDOM" > "$T/real/f0"
  if [ "$stepped" = 1 ] && [ $((i % 2)) = 0 ]; then
    step="-$((i % 400))d"; [ $((i % 4)) = 0 ] && step="+$((i % 400))d"
    LD_PRELOAD="$FAKETIME_LIB" FAKETIME="$step" FAKETIME_DONT_FAKE_MONOTONIC=1 \
      ferry_c push -a "$T/real/" "$(url p)/" > /dev/null 2>&1 || fail "forged push $i ($step)"
  else
    ferry_c push -a "$T/real/" "$(url p)/" > /dev/null || fail "forged push $i"
  fi
done
sleep 0.5
n=$(admin list "$T/p" | tail -n +2 | grep -c .)
[ "$n" = $((FORGED + 3)) ] || fail "$n snapshots: protect within let a prune delete some"
for r in $real; do
  admin list "$T/p" | grep -q "^$r " || fail "real snapshot $r was pruned"
done
# outside the window, the count rules apply again
admin prune "$T/p" --keep-last 3 > /dev/null || fail "prune of p"
[ "$(admin list "$T/p" | tail -n +2 | grep -c .)" = 3 ] || fail "keep last 3 did not apply"
echo "ok"
