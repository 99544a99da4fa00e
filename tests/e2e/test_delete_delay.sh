#!/usr/bin/env bash
# --delete-delay and --delete-after, with the real rsync as the oracle: what
# --delete finds is deleted once every file is in, push and pull; the tree
# that results (directory times included: the deletions come after the
# directories' times were set), and -i's lines, are rsync's, with every
# deletion after every transfer. A transfer cut short deletes nothing
# (--delete, deleting during, would have). -n lists and deletes nothing;
# --max-delete and the module's snapshots still hold; an older box is refused
# in one line; --delete-during with --delete-delay is refused, as in rsync.
. "$(dirname "$0")/lib.sh"

command -v rsync > /dev/null || fail "this test needs rsync (the oracle)"
TREECMP=$(dirname "$0")/treecmp.py
src=$T/src
mk_src() {
  rm -rf "$src"; mkdir -p "$src/a/b" "$src/c" "$src/keep"
  echo one > "$src/a/one"; echo two > "$src/a/b/two"; echo new > "$src/c/new"
  echo k > "$src/keep/k"
  touch -d '2024-02-02 10:00:00.25' "$src/a/one" "$src/a/b/two" "$src/c/new" \
    "$src/a/b" "$src/a" "$src/c" "$src/keep" "$src"
}
# the destination before: what src has, some changed, and what src has not
mk_dest() {
  rm -rf "$1"; mkdir -p "$1/a/b/gone-dir/deeper" "$1/old-dir" "$1/keep"
  echo ONE-OLD > "$1/a/one"; echo x > "$1/a/gone"; echo y > "$1/a/b/gone-dir/deeper/y"
  echo z > "$1/old-dir/z"; ln -s nowhere "$1/a/b/gone-link"; echo k > "$1/keep/k"
  find "$1" -exec touch -h -d '2020-01-01' {} +
  touch -d '2024-02-02 10:00:00.25' "$1/keep/k" "$src/keep/k"
}
# rsync's result and lines for the same start: $T/oracle, $T/oracle.out
oracle() {
  mk_dest "$T/oracle"
  rsync -ai "$@" "$src/" "$T/oracle/" > "$T/oracle.out" || fail "rsync $*"
}
# compare_with_oracle OUT DEST WHAT: same tree, same lines, deletions last
# (rsync's local copy receives: '>'; a push's lines say sent: '<')
compare_with_oracle() {
  local arrow='>'
  case $3 in push*) arrow='<' ;; esac
  python3 "$TREECMP" --root "$T/oracle" "$2" > "$T/cmp.out" ||
    { cat "$T/cmp.out"; fail "$3: the tree is not rsync's"; }
  # (rsync also names each entry inside a directory it deletes; ferry, as
  # -i's "*deleting dir/" says, the directory)
  awk 'NR == FNR { if ($1 == "*deleting" && $2 ~ /\/$/) gone[$2] = 1; next }
       $1 == "*deleting" { for (d in gone) if (index($2, d) == 1 && $2 != d) next }
       { print }' "$T/oracle.out" "$T/oracle.out" | sed "s/^>/$arrow/" | sort > "$T/want"
  grep -E '^([<>ch.*][fdLDS]|\*deleting)' "$1" | sort > "$T/got"
  diff "$T/want" "$T/got" || { cat "$1"; fail "$3: -i's lines are not rsync's"; }
  last_xfer=$(grep -nE '^[<>ch][fdLDS]' "$1" | tail -n1 | cut -d: -f1)
  first_del=$(grep -n '^\*deleting' "$1" | head -n1 | cut -d: -f1)
  [ -n "$first_del" ] && [ "$first_del" -gt "${last_xfer:-0}" ] ||
    { cat "$1"; fail "$3: a deletion came before the last transfer"; }
}

write_config "[s]" "path = $T/s" "snapshots = yes"
mkdir -p "$T/s"
start_server

for how in --delete-delay --delete-after; do
  note "push $how: rsync's tree and lines, deletions after the transfers"
  mk_src; mk_dest "$T/mod/p"; oracle "$how"
  expect_rc 0 ferry_c push -ai "$how" "$src/" "$(url m/p)"
  compare_with_oracle "$T/last.out" "$T/mod/p" "push $how"

  note "pull $how: the same"
  mk_dest "$T/local"
  expect_rc 0 ferry_c pull -ai "$how" "$(url m/p/)" "$T/local"
  compare_with_oracle "$T/last.out" "$T/local" "pull $how"
done

note "-n: lists the deletions last, deletes nothing"
mk_src; mk_dest "$T/mod/p"; before=$(tree_manifest "$T/mod/p")
expect_rc 0 ferry_c push -ain --delete-delay "$src/" "$(url m/p)"
grep -qx '\*deleting   old-dir/' "$T/last.out" || { cat "$T/last.out"; fail "-n did not list old-dir/"; }
[ "$(tree_manifest "$T/mod/p")" = "$before" ] || fail "-n changed the destination"

note "--max-delete=2: what rsync deletes goes, the rest stays (exit 25, as rsync)"
mk_dest "$T/oracle"; rc=0
rsync -a --delete-delay --max-delete=2 "$src/" "$T/oracle/" > /dev/null 2>&1 || rc=$?
[ "$rc" = 25 ] || fail "rsync --max-delete=2 exited $rc"
expect_rc 25 ferry_c push -a --delete-delay --max-delete=2 "$src/" "$(url m/p)"
python3 "$TREECMP" --root "$T/oracle" "$T/mod/p" || fail "--max-delete=2: the tree is not rsync's"

note "a transfer cut short deletes nothing; with --delete (during) it would have"
mk_src; head -c 24M /dev/urandom > "$src/c/big"
cut_short() {   # cut_short OPTION: push, killed while c/big comes in
  mk_dest "$T/mod/p"
  ferry_c push -a "$1" --bwlimit=2000 "$src/" "$(url m/p)" > /dev/null 2>&1 &
  local pid=$! i
  for i in $(seq 1 200); do
    [ -n "$(find "$T/mod/p/c" -name '.ferry-*' -size +100k 2> /dev/null)" ] && break
    sleep 0.05
  done
  [ "$i" -lt 200 ] || fail "$1: c/big never began"
  pkill -9 -P "$pid" || true; kill -9 "$pid" 2> /dev/null || true   # (ferry_c runs in a subshell)
  wait "$pid" 2> /dev/null || true
  wait_sessions
}
cut_short --delete
[ -e "$T/mod/p/old-dir" ] && fail "--delete had not deleted old-dir by then: this check shows nothing"
cut_short --delete-delay
for e in a/gone a/b/gone-dir old-dir; do [ -e "$T/mod/p/$e" ] || fail "--delete-delay, cut short, deleted $e"; done
[ -L "$T/mod/p/a/b/gone-link" ] || fail "--delete-delay, cut short, deleted a/b/gone-link"
rm -f "$src/c/big"

note "a module with snapshots: the deleted entries are in the one before"
mk_src; mk_dest "$T/day0"; rm -rf "$T/s/t"
expect_rc 0 ferry_c push -a "$T/day0/" "$(url s/t)"
expect_rc 0 ferry_c push -a --delete-delay "$src/" "$(url s/t)"
rm -rf "$T/r"; expect_rc 0 ferry_c pull -a "$(url "s@-1/t/")" "$T/r"
python3 "$TREECMP" "$T/day0" "$T/r" || fail "the snapshot before --delete-delay does not restore"
rm -rf "$T/r"; expect_rc 0 ferry_c pull -a "$(url "s/t/")" "$T/r"
python3 "$TREECMP" "$src" "$T/r" || fail "the latest tree is not the source"

note "an older box is refused in one line, and nothing is deleted"
mk_dest "$T/mod/p"
stop_server
FERRY_TEST_OLD_HELLO=0x3 start_server
expect_rc 5 ferry_c push -a --delete-delay "$src/" "$(url m/p)"
grep -q 'older than --delete-delay and --delete-after' "$T/last.err" || { cat "$T/last.err"; fail "no line for the older box"; }
[ "$(grep -vc 'known_hosts' "$T/last.err")" = 1 ] || { cat "$T/last.err"; fail "more than one line"; }
[ -e "$T/mod/p/old-dir/z" ] || fail "the older box deleted"
stop_server
start_server

note "a file system without O_TMPFILE (a test build's stand-in): the spool is a name unlinked at once; a dry run says each deletion at once"
stop_server
FERRY_TEST_NO_TMPFILE=1 start_server
mk_src; mk_dest "$T/mod/p"; before=$(tree_manifest "$T/mod/p")
expect_rc 0 ferry_c push -ain --delete-delay "$src/" "$(url m/p)"
grep -qx '\*deleting   old-dir/' "$T/last.out" || { cat "$T/last.out"; fail "-n without O_TMPFILE did not list old-dir/"; }
[ "$(tree_manifest "$T/mod/p")" = "$before" ] || fail "-n without O_TMPFILE changed the destination"
oracle --delete-delay
expect_rc 0 ferry_c push -ai --delete-delay "$src/" "$(url m/p)"
compare_with_oracle "$T/last.out" "$T/mod/p" "push --delete-delay without O_TMPFILE"
[ -z "$(find "$T/mod/p" -name '.ferry-*')" ] || fail "the spool's name was left"
stop_server
start_server

note "--delete-after asks the rules again once every file is in: a filter file this transfer brought protects (rsync's reason for it); --delete-delay's were asked before"
mkdir -p "$T/fsrc/d"; echo 1 > "$T/fsrc/d/one"; printf -- '- keepme\n' > "$T/fsrc/d/.rsync-filter"
find "$T/fsrc" -exec touch -d '2024-02-02' {} +
fdest() {
  rm -rf "$1"; mkdir -p "$1/d"; echo k > "$1/d/keepme"; echo o > "$1/d/other"
  find "$1" -exec touch -d '2020-01-01' {} +
}
for how in --delete-after --delete-delay; do
  fdest "$T/oracle"
  rsync -a --filter='dir-merge .rsync-filter' "$how" "$T/fsrc/" "$T/oracle/" || fail "rsync $how"
  fdest "$T/mod/f"
  expect_rc 0 ferry_c push -a --filter='dir-merge .rsync-filter' "$how" "$T/fsrc/" "$(url m/f)"
  python3 "$TREECMP" "$T/oracle" "$T/mod/f" || fail "push $how with a dir-merge file: not rsync's tree"
  fdest "$T/pf"
  expect_rc 0 ferry_c pull -a --filter='dir-merge .rsync-filter' "$how" "$(url m/f/)" "$T/pf"
  python3 "$TREECMP" "$T/oracle" "$T/pf" || fail "pull $how with a dir-merge file: not rsync's tree"
done
[ -e "$T/pf/d/keepme" ] && fail "--delete-delay kept d/keepme (rsync deletes it): the check above shows nothing"

note "not root: a directory whose mode (0555, the sender's) keeps us out is opened for its deletions and closed again, and a 0555 one inside a directory that goes is emptied, as rsync does (push to a module served as nobody, pull as nobody)"
rosrc() { rm -rf "$1"; mkdir -p "$1/ro/sub"; echo 1 > "$1/ro/one"; chmod 555 "$1/ro/sub" "$1/ro"; }
rodest() {
  rm -rf "$1"; mkdir -p "$1/ro/sub/gonedir/locked"; echo 1 > "$1/ro/one"; echo x > "$1/ro/extra"
  echo z > "$1/ro/sub/gonedir/z"; echo l > "$1/ro/sub/gonedir/locked/l"
  chown -R nobody "$1"; chmod 555 "$1/ro/sub/gonedir/locked" "$1/ro/sub" "$1/ro"
}
rosrc "$T/rsrc"; touch -d '2024-01-01' "$T/rsrc/ro/one"
mkdir -p "$T/nbm"; chown nobody "$T/nbm"; chmod 755 "$T"
stop_server
write_config "[nb]" "path = $T/nbm" "uid = nobody"
start_server
rodest "$T/nbm/t"
expect_rc 0 ferry_c push -a --delete-delay "$T/rsrc/" "$(url nb/t)"
[ ! -e "$T/nbm/t/ro/extra" ] && [ ! -e "$T/nbm/t/ro/sub/gonedir" ] || fail "push as nobody: not deleted"
[ "$(stat -c %a "$T/nbm/t/ro") $(stat -c %a "$T/nbm/t/ro/sub")" = "555 555" ] || fail "push as nobody: modes not put back"
mkdir -p "$T/nbc"; install -o nobody -m 600 "$T/clienthome/id_ferry" "$T/nbc/id"
install -o nobody -m 600 "$T/clienthome/known_hosts" "$T/nbc/kh"; chown nobody "$T/nbc"
rodest "$T/nbc/d"
rc=0; runuser -u nobody -- env FERRY_HOME="$T/nbc" $FERRY_CLIENT pull -a --delete-delay --identity "$T/nbc/id" \
  --known-hosts "$T/nbc/kh" "$(url nb/t/)" "$T/nbc/d" > "$T/last.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$T/last.out"; fail "pull as nobody: exit $rc"; }
[ ! -e "$T/nbc/d/ro/extra" ] && [ ! -e "$T/nbc/d/ro/sub/gonedir" ] || fail "pull as nobody: not deleted"
[ "$(stat -c %a "$T/nbc/d/ro") $(stat -c %a "$T/nbc/d/ro/sub")" = "555 555" ] || fail "pull as nobody: modes not put back"
chmod -R u+w "$T/nbm" "$T/nbc"
stop_server
write_config "[s]" "path = $T/s" "snapshots = yes"
start_server

note "two times to delete: refused, as rsync refuses them"
expect_rc 1 ferry_c push -a --delete-during --delete-delay "$src/" "$(url m/p)"
grep -q 'you may give one of' "$T/last.err" || { cat "$T/last.err"; fail "no reason given"; }
expect_rc 1 ferry_c push -a --delete-after --delete-delay "$src/" "$(url m/p)"
grep -q 'you may give one of' "$T/last.err" || { cat "$T/last.err"; fail "no reason given"; }
echo "ok"
