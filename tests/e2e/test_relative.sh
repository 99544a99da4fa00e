#!/usr/bin/env bash
# push -R/--relative, against the real rsync: each source's path is kept
# below the destination (an absolute one less its leading '/'), from rsync's
# "/./" anchor on when it has one; the directories on the way arrive with
# their own modes and times; the sources sharing a base are one push. With
# --delete only the directories sent whole are mirrored, never one on the way
# (nor, with --files-from, one listed without its contents), as rsync's; the
# same for -x's mount point. Refused with one line: ".." in what is kept,
# sources with different bases, pull and ls.
. "$(dirname "$0")/lib.sh"

command -v rsync > /dev/null || fail "rsync is needed as the oracle (make deps installs it)"
w=$T/w
mkdir -p "$w/src/a/b/c" "$w/src/a/x" "$w/src/a/y" "$w/other"
for f in src/a/b/c/f src/a/b/e src/a/x/g src/a/top src/a/y/h other/o; do
  head -c $((RANDOM % 3000 + 1)) /dev/urandom > "$w/$f"
done
ln -s ../top "$w/src/a/x/lnk"
mkdir -p "$w/src/real/d"; echo q > "$w/src/real/d/f"; ln -s real "$w/src/ln"
mkdir "$w/#d"; echo x > "$w/#d/f"; echo y > "$w/;f"; echo z > "$w/src/#n"
chmod 750 "$w/src/a"; chmod 700 "$w/src/a/b"; chmod 640 "$w/src/a/top"
# directory times in the past: rsync (3.5) leaves a new directory's time
# unset when the source's falls in the second it runs in
find "$w" -type d -exec touch -d '2022-03-04 05:06:07.5' {} +
write_config
start_server

check() {   # check WHAT ORACLE FERRY: the two trees are the same
  python3 "$(dirname "$0")/treecmp.py" "$2" "$3" > "$T/cmp.out" || { cat "$T/cmp.out"; fail "$1: not what rsync made"; }
}
both() {   # both NAME ARGS... (the sources; run in $w): rsync -aR into $T/oracle/NAME, ferry into m/NAME
  local name=$1 below=${BELOW:-}; shift
  mkdir -p "$T/oracle/$name"
  (cd "$w" && rsync -aR "$@" "$T/oracle/$name/") || fail "the rsync oracle failed: -aR $*"
  (cd "$w" && expect_rc 0 ferry_c push -aR "$@" "$(url "m/$name")")
  check "push -aR $*" "$T/oracle/$name/$below" "$T/mod/$name/$below"
}

note "relative paths, rsync's /./ anchor, several sources of one base, a file, an absolute path"
both rel src/a/b
both anchor src/./a/b/ src/./a/top
both two src/a/b/c/f src/a/x
both dots ./src/a/y src//a/top src/a/x/.
both base src/./
both abs "$w/src/./a/x" "$w/src/./a/b"
# (compared from $T down: the directories above it, /tmp's, change their
# times as other tests run, between rsync's copy and ferry's)
BELOW=${T#/} both absfull "$w/src/a/y"
both links1 src/ln/d
both links2 src/./ln
both links3 src/./ln/ src/./a/top
both links4 src/ln/./
both comments '#d' ';f'
both comments2 'src/./#n'
both spelled ./src/./a/x src/./a/y
both missing --ignore-missing-args src/nope src/a/top
[ -f "$T/mod/absfull/${w#/}/src/a/y/h" ] || fail "an absolute path: not kept whole"
[ -f "$T/mod/rel/src/a/b/c/f" ] && [ ! -e "$T/mod/rel/src/a/top" ] || fail "src/a/b: not kept as src/a/b alone"

note "the same again sends nothing"
(cd "$w" && expect_rc 0 ferry_c push -aR -i src/a/b "$(url m/rel)")
grep -v '^sent ' "$T/last.out" | grep -v '^\.d\|^cd' | grep -q . &&
  { cat "$T/last.out"; fail "push -R again: something was sent"; }

note "a source that is not there is named (exit 23), the rest arrives"
rc=0; (cd "$w" && rsync -aR src/a/nope src/a/top "$T/oracle/miss/") 2> /dev/null || rc=$?
[ "$rc" = 23 ] || fail "the rsync oracle exited $rc for a missing source"
(cd "$w" && expect_rc 23 ferry_c push -aR src/a/nope src/a/top "$(url m/miss)")
grep -q 'src/a/nope: ' "$T/last.err" || { cat "$T/last.err"; fail "the missing source is not named"; }
grep -q 'files-from' "$T/last.err" && { cat "$T/last.err"; fail "-R's missing source said to be in a list"; }
check "push -aR with a missing source" "$T/oracle/miss" "$T/mod/miss"

# the destination before a --delete: old files in every directory, the same
# in the oracle's copy and the module's
seed() {   # seed DIR
  rm -rf "$1"; mkdir -p "$1/src/a/b/c" "$1/src/a/x" "$1/src/a/z"
  for f in src/old src/a/old src/a/b/old src/a/b/c/old src/a/x/old src/a/z/old; do echo old > "$1/$f"; done
  find "$1" -exec touch -d '2022-03-04 05:06:07.5' {} +
}
note "--delete mirrors the directories sent whole, none on the way"
seed "$T/oracle/del"; seed "$T/mod/del"
(cd "$w" && rsync -aR --delete src/a/b "$T/oracle/del/") || fail "the rsync oracle failed (--delete)"
(cd "$w" && expect_rc 0 ferry_c push -aR --delete src/a/b "$(url m/del)")
check "push -aR --delete src/a/b" "$T/oracle/del" "$T/mod/del"
[ -e "$T/mod/del/src/a/old" ] && [ -e "$T/mod/del/src/old" ] && [ ! -e "$T/mod/del/src/a/b/old" ] &&
  [ ! -e "$T/mod/del/src/a/b/c/old" ] || fail "push -R --delete: not rsync's deletions"

note "a link given with a path through it: the directory on the way wins, as rsync"
for d in "$T/oracle/lw" "$T/mod/lw"; do
  mkdir -p "$d/src/ln"; echo keep > "$d/src/ln/keep"; touch -d 2022-03-04 "$d/src/ln/keep" "$d/src/ln"
done
(cd "$w" && rsync -aR --delete src/ln src/ln/d "$T/oracle/lw/") || fail "the rsync oracle failed (link on the way)"
(cd "$w" && expect_rc 0 ferry_c push -aR --delete src/ln src/ln/d "$(url m/lw)")
check "push -aR --delete src/ln src/ln/d" "$T/oracle/lw" "$T/mod/lw"
[ -f "$T/mod/lw/src/ln/keep" ] && [ -f "$T/mod/lw/src/ln/d/f" ] || fail "src/ln src/ln/d: not rsync's"

note "--files-from --delete: with -r, with 'dir/', and a directory listed alone"
printf 'a/b\n' > "$T/l1"; printf 'a/b/\n' > "$T/l2"
for c in "-r l1" "-a l1" "-a l2" "-r l2"; do
  set -- $c
  seed "$T/oracle/ff"; seed "$T/mod/ff"
  rsync -a "$1" --delete --files-from="$T/$2" "$w/src/" "$T/oracle/ff/src/" || fail "the rsync oracle failed ($c)"
  expect_rc 0 ferry_c push -a "$1" --delete --files-from="$T/$2" "$w/src/" "$(url m/ff/src)"
  check "push $c --delete --files-from" "$T/oracle/ff" "$T/mod/ff"
done

note "--dry-run says the same two deletions"
seed "$T/mod/del"
(cd "$w" && expect_rc 0 ferry_c push -aR --delete -n src/a/b "$(url m/del)")
[ "$(grep -c "^delete " "$T/last.out")" = 2 ] || { cat "$T/last.out"; fail "push -R --delete -n: not 2 deletions"; }

note "-x: a mount point's directory is sent and not mirrored"
if [ "$(id -u)" = 0 ] && mkdir -p "$w/mnt/src/mp" && mount -t tmpfs -o size=1m ferry-test "$w/mnt/src/mp" 2> /dev/null; then
  echo inside > "$w/mnt/src/mp/in"; echo top > "$w/mnt/src/t"
  touch -d '2022-03-04 05:06:07.5' "$w/mnt/src/mp" "$w/mnt/src"
  for d in "$T/oracle/x" "$T/mod/x"; do
    mkdir -p "$d/src/mp"; echo keep > "$d/src/mp/keep"; touch -d 2022-03-04 "$d/src/mp/keep"
  done
  rc=0; rsync -ax --delete "$w/mnt/src" "$T/oracle/x/" || rc=$?
  frc=0; ferry_c push -ax --delete "$w/mnt/src" "$(url m/x)" > "$T/last.out" 2>&1 || frc=$?
  umount "$w/mnt/src/mp"   # before any failure: the cleanup's rm would stop at it
  [ "$rc" = 0 ] || fail "the rsync oracle failed (-x --delete)"
  [ "$frc" = 0 ] || { cat "$T/last.out"; fail "push -ax --delete exited $frc"; }
  check "push -x --delete" "$T/oracle/x" "$T/mod/x"
  # the same on a pull: the box's mount point, the PC's copy of it kept
  mkdir -p "$T/mod/xs/mp"; echo top > "$T/mod/xs/t"
  for d in "$T/oracle/xp" "$T/xp"; do
    mkdir -p "$d/mp"; echo keep > "$d/mp/keep"; touch -d 2022-03-04 "$d/mp/keep"
  done
  mount -t tmpfs -o size=1m ferry-test "$T/mod/xs/mp"
  echo inside > "$T/mod/xs/mp/in"; touch -d '2022-03-04 05:06:07.5' "$T/mod/xs/mp" "$T/mod/xs"
  rc=0; rsync -ax --delete "$T/mod/xs/" "$T/oracle/xp/" || rc=$?
  frc=0; ferry_c pull -ax --delete "$(url m/xs/)" "$T/xp" > "$T/last.out" 2>&1 || frc=$?
  umount "$T/mod/xs/mp"
  [ "$rc" = 0 ] || fail "the rsync oracle failed (pull -x --delete)"
  [ "$frc" = 0 ] || { cat "$T/last.out"; fail "pull -ax --delete exited $frc"; }
  check "pull -x --delete" "$T/oracle/xp" "$T/xp"
  [ -e "$T/xp/mp/keep" ] || fail "pull -x --delete: the mount point's directory was mirrored"
  # -R -x: each source keeps to its own file system, as rsync's, and a
  # directory on the way belongs to none
  mkdir -p "$w/mnt/src/mp"; mount -t tmpfs -o size=1m ferry-test "$w/mnt/src/mp"
  mkdir -p "$w/mnt/src/mp/sub/deeper"; echo in > "$w/mnt/src/mp/sub/in"; echo d > "$w/mnt/src/mp/sub/deeper/d"
  find "$w/mnt" -exec touch -d '2022-03-04 05:06:07.5' {} +
  frc=0; n=rx0
  for args in "mnt/src/mp/" "mnt/./src/mp/sub" "mnt/src/t mnt/src/mp/sub/in" "mnt/src"; do
    n=rx$((${n#rx} + 1))
    # shellcheck disable=SC2086
    (cd "$w" && rsync -aRx $args "$T/oracle/$n/") || frc=1
    # shellcheck disable=SC2086
    (cd "$w" && ferry_c push -aRx $args "$(url "m/$n")") > "$T/last.out" 2>&1 || frc=2
    [ "$frc" = 0 ] || break
    python3 "$(dirname "$0")/treecmp.py" "$T/oracle/$n" "$T/mod/$n" > "$T/cmp.out" || { frc=3; break; }
  done
  umount "$w/mnt/src/mp"
  [ "$frc" = 0 ] || { cat "$T/last.out" "$T/cmp.out"; fail "push -aRx $args: not what rsync made ($frc)"; }
  [ -e "$T/mod/x/src/mp/keep" ] || fail "-x --delete: the mount point's directory was mirrored"
else
  note "(not root, or no tmpfs mount here: the -x case was not run)"
fi

# a server older than DIRB_PARTIAL (a test build's hook stands in for one:
# its HELLO says REQUEST extensions only): -R works, -R --delete is refused
# by the client in one line, before anything is sent
if [[ "$FERRY_SERVER" != *qemu* ]] && [[ "$FERRY_SERVER" == "$FERRY" ]]; then
  note "an older server: -R works, -R or --files-from with --delete is refused here"
  stop_server
  FERRY_TEST_OLD_HELLO=1 start_server
  seed "$T/mod/old"
  (cd "$w" && expect_rc 0 ferry_c push -aR src/a/b "$(url m/old)")
  for a in -R --files-from="$T/l1"; do
    (cd "$w" && expect_rc 5 ferry_c push -a --delete "$a" src/ "$(url m/old)")
    [ "$(wc -l < "$T/last.err")" = 1 ] && grep -q "is older than --delete with -R or --files-from" "$T/last.err" ||
      { cat "$T/last.err"; fail "$a --delete to an older server: not one line saying why"; }
  done
  [ -e "$T/mod/old/src/old" ] && [ -e "$T/mod/old/src/a/b/old" ] || fail "an older server: something was deleted"
  stop_server
  start_server
fi

note "refused with one line: '..' kept, two bases, pull, ls, --no-implied-dirs"
(cd "$w" && expect_rc 1 ferry_c push -aR src/a/../a/top "$(url m/t)")
grep -q '".." in the path' "$T/last.err" || { cat "$T/last.err"; fail "'..': not refused"; }
(cd "$w" && expect_rc 1 ferry_c push -aR ../w/src/a/top "$(url m/t)")
(cd "$w" && expect_rc 0 ferry_c push -aR ../w/src/./a/top "$(url m/t)")
[ -f "$T/mod/t/a/top" ] || fail "'..' before the anchor: not accepted"
(cd "$w" && expect_rc 1 ferry_c push -aR src/./a/top other/./o "$(url m/t)")
grep -q "bases differ" "$T/last.err" || { cat "$T/last.err"; fail "two bases: not said why"; }
expect_rc 1 ferry_c pull -aR "$(url m/t/)" "$T/back"
grep -q -- "-R/--relative works with push" "$T/last.err" || { cat "$T/last.err"; fail "pull -R: not said why"; }
expect_rc 1 ferry_c ls -R "$(url m/t/)"
(cd "$w" && expect_rc 1 ferry_c push -aR --no-implied-dirs src/a/top "$(url m/t)")
for f in "$T"/last.err; do [ "$(wc -l < "$f")" = 1 ] || { cat "$f"; fail "more than one line"; }; done
echo "ok"
