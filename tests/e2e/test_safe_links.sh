#!/usr/bin/env bash
# --safe-links, against the real rsync: a symlink that could point outside
# the transfer (absolute, climbing above the transfer's root, or with a ".."
# after another component) is not made, on push (the box's receiver) and on
# pull (the PC's), whether the source is "src" or "src/"; with --delete what
# the destination has under such a name stays, as rsync's; -v says
# "ignoring unsafe symlink"; none of it is an error. Every target of up to
# four components among "..", ".", "x" and "" (1,020 links at depths 0-3)
# is judged as rsync judges it. A box older than the flag is refused in one
# line.
. "$(dirname "$0")/lib.sh"

command -v rsync > /dev/null || fail "rsync is needed as the oracle (make deps installs it)"
src=$T/w/src
mkdir -p "$src/d/e"
echo data > "$src/f"
i=0
for t in x ../x ../../x /etc //x d/../x ./../x x/.. . .. ../. ./././. a//b; do
  for dir in "" d/ d/e/; do
    i=$((i + 1)); ln -s "$t" "$src/${dir}l$i"
  done
done
ln -s ../../../x "$src/d/e/deep3"; ln -s ../../../../x "$src/d/e/deep4"
ln -s .././x "$src/d/e/dotmid"; ln -s ../src/x "$src/d/e/back"
find "$src" -exec touch -h -d '2022-03-04 05:06:07.5' {} +
write_config
start_server

check() {   # check WHAT ORACLE FERRY: the two trees are the same
  python3 "$(dirname "$0")/treecmp.py" "$2" "$3" > "$T/cmp.out" || { cat "$T/cmp.out"; fail "$1: not what rsync made"; }
}

note "every target of up to four components among '..', '.', 'x' and '' at depths 0 to 3: rsync's judgment"
python3 - "$T/all" <<'PY'
import itertools, os, sys
root = sys.argv[1]
targets = sorted({'/'.join(c) for n in range(1, 5) for c in itertools.product(['..', '.', 'x', ''], repeat=n)} - {''})
for depth in range(4):
    d = os.path.join(root, *['d%d' % i for i in range(depth)])
    os.makedirs(d, exist_ok=True)
    for i, t in enumerate(t for t in targets if not t.startswith('/')):
        os.symlink(t, os.path.join(d, 'L%d' % i))
PY
find "$T/all" -exec touch -h -d '2022-03-04 05:06:07.5' {} +
rm -rf "$T/oracle"; mkdir -p "$T/oracle"
rsync -a --safe-links "$T/all/" "$T/oracle/" || fail "the rsync oracle failed"
expect_rc 0 ferry_c push -a --safe-links "$T/all/" "$(url m/all)"
check "push --safe-links, every short target" "$T/oracle" "$T/mod/all"
[ "$(find "$T/mod/all" -type l | wc -l)" -gt 300 ] && [ "$(find "$T/mod/all" -type l | wc -l)" -lt 800 ] ||
  fail "not a mix of links made and left out ($(find "$T/mod/all" -type l | wc -l) made)"


for s in "$src" "$src/"; do
  name=$(basename "$s")$([ "${s%/}" = "$s" ] || echo slash)
  note "push --safe-links $name"
  rm -rf "$T/oracle"; mkdir -p "$T/oracle"
  rsync -a --safe-links "$s" "$T/oracle/" || fail "the rsync oracle failed"
  expect_rc 0 ferry_c push -a --safe-links "$s" "$(url "m/$name")"
  check "push --safe-links $s" "$T/oracle" "$T/mod/$name"
done
# l4 is "../x" at the top: safe as src/l4, unsafe as l4 of "src/"
[ -L "$T/mod/src/src/l4" ] && [ ! -L "$T/mod/srcslash/l4" ] && [ ! -L "$T/mod/src/src/l10" ] ||
  { ls -la "$T/mod/src" "$T/mod/srcslash"; fail "../x: not judged by the link's depth"; }
[ "$(find "$T/mod/src" -type l | wc -l)" -lt "$(find "$src" -type l | wc -l)" ] || fail "no link was left out"

note "pull --safe-links, the box's tree"
rm -rf "$T/back"; mkdir -p "$T/opull"
expect_rc 0 ferry_c push -a "$src/" "$(url m/src_all)"   # every link, as it is
[ "$(find "$T/mod/src_all" -type l | wc -l)" = "$(find "$src" -type l | wc -l)" ] || fail "a plain push left links out"
rsync -a --safe-links "$T/mod/src_all/" "$T/opull/" || fail "the rsync oracle failed (pull)"
expect_rc 0 ferry_c pull -a --safe-links "$(url m/src_all/)" "$T/back"
check "pull --safe-links" "$T/opull" "$T/back"

note "-i alone does not name them, as rsync; --existing does not for what it would not make"
expect_rc 0 ferry_c push -ai --safe-links "$src" "$(url m/v)"
grep -q 'ignoring' "$T/last.out" && { cat "$T/last.out"; fail "push -i: unsafe links named without -v"; }
rm -rf "$T/mod/ex"; mkdir -p "$T/mod/ex/src"
expect_rc 0 ferry_c push -av --existing --safe-links "$src" "$(url m/ex)"
grep -q 'ignoring' "$T/last.out" && { cat "$T/last.out"; fail "push --existing: unsafe links named"; }
rm -rf "$T/mod/v"

note "-v names each link left out, as rsync; -q does not; the log file too"
expect_rc 0 ferry_c push -av --safe-links "$src" "$(url m/v)"
want=$(rsync -av --safe-links -n "$src" "$T/oracle2/" | grep '^ignoring unsafe symlink "src/l10" -> ')
[ -n "$want" ] || fail "the rsync oracle did not name l10"
grep -qxF "$want" "$T/last.out" || { cat "$T/last.out"; fail "push -v: the /etc link (l10) not named as rsync: $want"; }
n_r=$(rsync -av --safe-links -n "$src" "$T/oracle2/" | grep -c '^ignoring unsafe symlink')
[ "$(grep -c '^ignoring unsafe symlink' "$T/last.out")" = "$n_r" ] || { cat "$T/last.out"; fail "push -v: not rsync's $n_r links named"; }
rm -rf "$T/back"
expect_rc 0 ferry_c pull -av --safe-links "$(url m/src_all/)" "$T/back"
n_r=$(rsync -av --safe-links -n "$T/mod/src_all/" "$T/oracle2/" | grep -c '^ignoring unsafe symlink')
[ "$(grep -c '^ignoring unsafe symlink' "$T/last.out")" = "$n_r" ] || { cat "$T/last.out"; fail "pull -v: not $n_r links named"; }
expect_rc 0 ferry_c push -aq --safe-links --log-file="$T/x.log" "$src" "$(url m/q)"
[ ! -s "$T/last.out" ] || { cat "$T/last.out"; fail "push -q printed"; }
grep -q 'ignoring unsafe symlink src/l10' "$T/x.log" || { cat "$T/x.log"; fail "the log file does not name it"; }

note "--delete: what is here under an unsafe link's name stays, as rsync's"
for d in "$T/oracle/del" "$T/mod/del"; do
  rm -rf "$d"; mkdir -p "$d/src"; echo mine > "$d/src/l10"; echo gone > "$d/src/extra"
  touch -d 2022-03-04 "$d/src/l10" "$d/src/extra"
done
rsync -a --safe-links --delete "$src" "$T/oracle/del/" || fail "the rsync oracle failed (--delete)"
expect_rc 0 ferry_c push -a --safe-links --delete "$src" "$(url m/del)"
check "push --safe-links --delete" "$T/oracle/del" "$T/mod/del"
[ "$(cat "$T/mod/del/src/l10")" = mine ] && [ ! -e "$T/mod/del/src/extra" ] || fail "--delete: not rsync's"

# a server older than the flag (a test build's hook: its HELLO has the
# REQUEST extensions only): refused by the PC in one line; a pull, whose
# receiver is the PC, still works
if [[ "$FERRY_SERVER" != *qemu* ]] && [[ "$FERRY_SERVER" == "$FERRY" ]]; then
  note "an older server: push --safe-links is refused here, pull --safe-links works"
  stop_server
  FERRY_TEST_OLD_HELLO=1 start_server
  rm -rf "$T/back"
  expect_rc 0 ferry_c pull -a --safe-links "$(url m/src_all/)" "$T/back"
  check "pull --safe-links from an older server" "$T/opull" "$T/back"
  expect_rc 5 ferry_c push -a --safe-links "$src" "$(url m/old)"
  [ "$(wc -l < "$T/last.err")" = 1 ] && grep -q "is older than --safe-links" "$T/last.err" ||
    { cat "$T/last.err"; fail "push --safe-links to an older server: not one line saying why"; }
  [ ! -e "$T/mod/old" ] || fail "push to an older server: something was written"
fi
echo "ok"
