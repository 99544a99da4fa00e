#!/usr/bin/env bash
# --max-delete=NUM, against the real rsync: as many extraneous entries go,
# as many are reported skipped, with rsync's warning and exit code 25; 0
# deletes none and says how many would go; -n counts the same. Each entry
# inside a deleted directory counts (as rsync's); ferry leaves a directory
# that would pass the limit whole, where rsync empties part of it, so the
# directory case checks the limit and the total against rsync's, not the
# same survivors (nor the same skipped count: rsync's leaves out a
# directory whose contents it skipped). Push (the box deletes) and pull
# (this side does).
. "$(dirname "$0")/lib.sh"

command -v rsync > /dev/null || fail "rsync is needed as the oracle (make deps installs it)"
src=$T/src
mkdir -p "$src"
echo a > "$src/a"
echo b > "$src/b"
write_config
start_server

# extra DIR: the source plus five extraneous files
extra() {
  rm -rf "$1"; mkdir -p "$1"
  cp -a "$src/." "$1/"
  for i in 1 2 3 4 5; do echo "$i" > "$1/x$i"; done
}
# left DIR: how many extraneous entries DIR still holds; names: which
left() { find "$1" -mindepth 1 ! -name a ! -name b | wc -l; }
names() { (cd "$1" && find . -mindepth 1 ! -name a ! -name b | LC_ALL=C sort | tr '\n' ' '); }
# oracle N [ARGS]: rsync's exit code, skipped count and survivors, as "RC SKIPPED LEFT"
oracle() {
  local n=$1 rc=0; shift
  rsync -a --delete --max-delete="$n" "$@" "$src/" "$T/oracle/" > /dev/null 2> "$T/oracle.err" || rc=$?
  local sk
  sk=$(sed -n 's/.*Deletions stopped due to --max-delete limit (\([0-9]*\) skipped).*/\1/p' "$T/oracle.err")
  echo "$rc ${sk:-0} $(left "$T/oracle")"
}
# mine RC-FILE: the same for ferry's last run (expect_rc's files)
mine() {
  local sk
  sk=$(sed -n 's/.*Deletions stopped due to --max-delete limit (\([0-9]*\) skipped).*/\1/p' "$T/last.err")
  echo "$1 ${sk:-0} $(left "$2")"
}
run_ferry() {   # run_ferry push|pull N [ARGS]: sets RC
  local how=$1 n=$2; shift 2
  RC=0
  if [ "$how" = push ]; then
    ferry_c push -a --delete --max-delete="$n" "$@" "$src/" "$(url m/t)" > "$T/last.out" 2> "$T/last.err" || RC=$?
  else
    ferry_c pull -a --delete --max-delete="$n" "$@" "$(url m/src/)" "$T/back" > "$T/last.out" 2> "$T/last.err" || RC=$?
  fi
}
expect_rc 0 ferry_c push -a "$src/" "$(url m/src)"

for how in push pull; do
  dst=$T/mod/t; [ "$how" = pull ] && dst=$T/back
  for n in -1 0 1 3 5 9; do
    extra "$T/oracle"; want=$(oracle "$n")
    extra "$dst"; run_ferry "$how" "$n"
    got=$(mine "$RC" "$dst")
    [ "$got" = "$want" ] || { cat "$T/last.err"; fail "$how --max-delete=$n: ferry '$got', rsync '$want' (exit, skipped, left)"; }
    [ "$(names "$dst")" = "$(names "$T/oracle")" ] ||
      fail "$how --max-delete=$n: ferry spared '$(names "$dst")', rsync '$(names "$T/oracle")'"
    [ "$(cat "$dst/a")" = a ] || fail "$how --max-delete=$n: the transfer did not happen"
  done
  note "$how: --max-delete -1 0 1 3 5 9 as rsync (exit, skipped, which are left)"
  # -n: counted the same, nothing deleted; -i shows as many *deleting lines
  extra "$T/oracle"; want=$(oracle 3 -n)
  extra "$dst"; run_ferry "$how" 3 -n -i
  [ "$RC" = "${want%% *}" ] || fail "$how -n --max-delete=3: exit $RC, rsync's ${want%% *}"
  [ "$(left "$dst")" = 5 ] || fail "$how -n --max-delete=3 deleted something"
  [ "$(grep -c '^\*deleting' "$T/last.out")" = 3 ] || { cat "$T/last.out"; fail "$how -n -i: not 3 *deleting lines"; }
  grep -q "(2 skipped)" "$T/last.err" || { cat "$T/last.err"; fail "$how -n: no warning"; }
done

note "a directory: each entry inside counts; one past the limit is left whole"
for how in push pull; do
  dst=$T/mod/t; [ "$how" = pull ] && dst=$T/back
  mk() { rm -rf "$1"; mkdir -p "$1/big/sub"; cp -a "$src/." "$1/"; echo 1 > "$1/big/f1"
    echo 2 > "$1/big/sub/f2"; echo z > "$1/zz"; }   # 4 entries in big (itself too), zz
  mk "$T/oracle"; want=$(oracle 2)
  mk "$dst"; run_ferry "$how" 2
  [ "$RC" = 25 ] && [ "${want%% *}" = 25 ] || fail "$how: exit $RC, rsync's ${want%% *}"
  read -r _ wsk wleft <<< "$want"
  read -r _ sk gleft <<< "$(mine "$RC" "$dst")"
  # both delete no more than 2 of the 5; ferry accounts for every one of
  # them (rsync's count leaves out a directory whose contents it skipped)
  [ $((5 - wleft)) -le 2 ] && [ $((5 - gleft)) -le 2 ] ||
    fail "$how: more than 2 of 5 entries deleted (ferry $((5 - gleft)), rsync $((5 - wleft)))"
  [ $((5 - gleft + sk)) = 5 ] || fail "$how: $sk skipped and $gleft left do not add up"
  [ -f "$dst/big/f1" ] && [ -f "$dst/big/sub/f2" ] || fail "$how: a directory past the limit was emptied in part"
  [ ! -e "$dst/zz" ] && [ "$sk" = 4 ] || { cat "$T/last.err"; fail "$how: zz should go, big's 4 entries stay"; }
  # within the limit the directory goes, its entries counted
  mk "$dst"; run_ferry "$how" 5
  [ "$RC" = 0 ] && [ "$(left "$dst")" = 0 ] || fail "$how --max-delete=5: exit $RC, $(left "$dst") left"
done

note "what the filter rules protect is not counted (rsync: 2 deletions, no limit hit)"
mkf() { rm -rf "$1"; mkdir -p "$1/d"; cp -a "$src/." "$1/"; echo k > "$1/d/keep.me"; echo 1 > "$1/d/f1"
  echo 2 > "$1/d/f2"; }
mkf "$T/oracle"; want=$(oracle 2 --exclude=keep.me)
mkf "$T/mod/t"; run_ferry push 2 --exclude=keep.me
[ "$RC" = "${want%% *}" ] && [ "$RC" = 0 ] || { cat "$T/last.err"; fail "filtered: exit $RC, rsync's ${want%% *}"; }
[ -f "$T/mod/t/d/keep.me" ] && [ ! -e "$T/mod/t/d/f1" ] && [ ! -e "$T/mod/t/d/f2" ] ||
  fail "filtered: the protected file went, or the others stayed"

note "an error outranks the limit (23), and the warning still comes (pull as nobody)"
# root writes anywhere: the client runs as nobody, and a directory of root's
# in its destination makes one file fail
mkdir -p "$src/ro" "$T/nb"; echo r > "$src/ro/f"
expect_rc 0 ferry_c push -a "$src/" "$(url m/src)"
$FERRY_CLIENT keygen -f "$T/nb/id" -C nobody > /dev/null 2>&1 || fail "keygen failed"
cat "$T/nb/id.pub" >> "$T/serverhome/authorized_keys"
chown -R nobody "$T/nb"; chmod 755 "$T"
extra "$T/back"; rm "$T/back/ro/f"; chown nobody "$T/back"   # ro/: root's
RC=0
setpriv --reuid=nobody --regid=nogroup --clear-groups $FERRY_CLIENT pull --identity "$T/nb/id" \
  --known-hosts "$T/nb/kh" --accept-new -a --delete --max-delete=1 "$(url m/src/)" "$T/back" \
  > "$T/last.out" 2> "$T/last.err" || RC=$?
[ "$RC" = 23 ] || { cat "$T/last.out" "$T/last.err"; ls -laR "$T/back" "$T/mod/src"; fail "a failed file and the limit: exit $RC, not 23"; }
grep -q "(4 skipped)" "$T/last.err" || { cat "$T/last.err"; fail "no --max-delete warning beside the error"; }
[ "$(left "$T/back")" = 5 ] && [ ! -e "$T/back/ro/f" ] ||
  fail "not 1 of the 5 extraneous files deleted, or ro/f written ($(left "$T/back") left, ro/ counted)"

# a server older than the REQUEST's extensions (a test build's hook stands in
# for one: it says so in HELLO, and refuses them as a malformed REQUEST, as
# such a server did): a plain pull goes on without them, the options are
# refused by the client in one line
if [[ "$FERRY_SERVER" != *qemu* ]] && [[ "$FERRY_SERVER" == "$FERRY" ]]; then
  note "an older server: plain pulls and pushes work, --max-delete and --max-size are refused here"
  stop_server
  FERRY_TEST_OLD_HELLO=0 start_server   # its HELLO's features: none
  rm -rf "$T/back2"
  expect_rc 0 ferry_c pull -a "$(url m/src/)" "$T/back2"
  expect_rc 0 ferry_c push -a --delete "$src/" "$(url m/t)"
  for o in --max-delete=3 --max-size=1k --min-size=1; do
    expect_rc 5 ferry_c pull -a --delete "$o" "$(url m/src/)" "$T/back2"
    [ "$(wc -l < "$T/last.err")" = 1 ] && grep -q "is older than --max-delete, --max-size and --min-size" "$T/last.err" ||
      { cat "$T/last.err"; fail "$o to an older server: not one line saying why"; }
  done
  stop_server
  start_server
fi

note "bad values are refused with one line"
for v in x 1.5 99999999999; do
  expect_rc 1 ferry_c push --delete --max-delete="$v" "$src/" "$(url m/t)"
  [ "$(wc -l < "$T/last.err")" = 1 ] && grep -q -- "--max-delete=$v" "$T/last.err" ||
    { cat "$T/last.err"; fail "--max-delete=$v: not one line naming it"; }
done
echo "PASS"
