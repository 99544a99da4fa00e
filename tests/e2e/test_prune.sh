#!/usr/bin/env bash
# push -m/--prune-empty-dirs, against the real rsync: a directory under
# which nothing but directories would be sent is not sent, with the filter
# rules (rsync's "--include='*/' --include='*.jpg' --exclude='*' -m"), a
# per-directory .ferry-filter, a named source directory, -R, a FIFO without
# -D (which keeps its directory, as in rsync), a symlink, and --delete of
# what was there. Pull and ls refuse it.
. "$(dirname "$0")/lib.sh"

command -v rsync > /dev/null || fail "rsync is needed as the oracle (make deps installs it)"
src=$T/src
mkdir -p "$src/a/b/c" "$src/e/f" "$src/g" "$src/h/i" "$src/j/k/l" "$src/n/o" "$src/p/q" "$src/r"
echo 1 > "$src/a/b/c/x.jpg"; echo 2 > "$src/e/f/y.txt"; echo 3 > "$src/g/z.jpg"
echo 4 > "$src/n/o/w.jpg"; echo 5 > "$src/top.txt"
mkfifo "$src/p/q/fifo"; ln -s ../g "$src/r/link"
printf -- '- *.jpg\n' > "$src/n/.ferry-filter"; cp "$src/n/.ferry-filter" "$src/n/.rsync-filter"
find "$src" -exec touch -h -d '2022-03-04 05:06:07.5' {} +
write_config
start_server

treecmp=$(cd "$(dirname "$0")" && pwd)/treecmp.py
check() {   # check WHAT ORACLE FERRY: the two trees are the same
  python3 "$treecmp" "$2" "$3" > "$T/cmp.out" || { cat "$T/cmp.out"; fail "$1: not what rsync made"; }
}
both() {   # both NAME "RSYNC-ONLY-ARGS" ARGS... SRC...: rsync into oracle/NAME, ferry into m/NAME
  local name=$1 rarg=$2; shift 2
  rm -rf "$T/oracle/$name"; mkdir -p "$T/oracle/$name"
  # shellcheck disable=SC2086
  rsync -a $rarg "$@" "$T/oracle/$name/" || fail "the rsync oracle failed: $*"
  expect_rc 0 ferry_c push -a "$@" "$(url "m/$name")"
  check "push -a $*" "$T/oracle/$name" "$T/mod/$name"
}

note "-m with rsync's include idiom: only the directories on the way to a .jpg"
both jpg "" -m --include='*/' --include='*.jpg' --exclude='*' "$src/"
[ -f "$T/mod/jpg/a/b/c/x.jpg" ] && [ ! -e "$T/mod/jpg/e" ] && [ ! -e "$T/mod/jpg/h" ] ||
  fail "-m: not the directories on the way to a .jpg alone"
note "-m alone: the empty chains go; a symlink's and a FIFO's (even without -D, as rsync) stay"
both plain "" -m --no-D "$src/"
[ -d "$T/mod/plain/r" ] && [ ! -e "$T/mod/plain/j" ] && [ -d "$T/mod/plain/p/q" ] || fail "-m: not rsync's pruning"
note "-m with -F: a directory whose .ferry-filter excludes all it holds"
both filt "" -m -F --exclude=.rsync-filter --exclude=.ferry-filter "$src/"
[ ! -e "$T/mod/filt/n" ] || fail "-m -F: n/ was sent"
note "-m on named sources: an empty one is not sent"
both named "" -m "$src/h" "$src/a"
[ ! -e "$T/mod/named/h" ] && [ -f "$T/mod/named/a/b/c/x.jpg" ] || fail "-m: not rsync's named sources"
note "-m with -R"
(cd "$T" && both rel "" -m -R src/j src/a/b)

note "-m on two named sources of one name: refused, as without -m (ferry does not merge sources)"
mkdir -p "$T/s1/x/y" "$T/s2/x/y"; echo q > "$T/s2/x/y/f"
expect_rc 1 ferry_c push -a -m "$T/s1/x" "$T/s2/x" "$(url m/same)"
grep -q 'two sources are named "x"' "$T/last.err" || { cat "$T/last.err"; fail "-m, two x: not refused"; }

note "-m -L: a link with no referent is still said (exit 23, as rsync)"
mkdir -p "$T/u/e"; ln -s /nonexistent-ferry "$T/u/e/dangling"; echo x > "$T/u/f"
expect_rc 23 ferry_c push -a -m -L "$T/u/" "$(url m/dang)"
grep -q "symlink has no referent" "$T/last.err" || { cat "$T/last.err"; fail "-m -L: the dangling link was not said"; }

if [ "$(id -u)" = 0 ] && mkdir -p "$T/x/a/mnt" "$T/x/b" && mount -t tmpfs -o size=1m ferry-test "$T/x/a/mnt" 2> /dev/null; then
  note "-m -x: a mount point's directory holds nothing sent, as rsync, with named sources and -R"
  echo 1 > "$T/x/b/f"; echo 2 > "$T/x/a/mnt/g"
  find "$T/x" -exec touch -d '2022-03-04 05:06:07.5' {} +
  frc=0 k=0
  for args in "a b" "a" "-R a b" "-R ./a ./b"; do
    k=$((k + 1)); n=x$k
    rm -rf "$T/oracle/$n"; mkdir -p "$T/oracle/$n"
    # shellcheck disable=SC2086
    (cd "$T/x" && rsync -a -m -x $args "$T/oracle/$n/") || frc=1
    # shellcheck disable=SC2086
    (cd "$T/x" && ferry_c push -a -m -x $args "$(url "m/$n")") > "$T/last.out" 2>&1 || frc=2
    [ "$frc" = 0 ] || break
    [ -d "$T/mod/$n" ] || mkdir -p "$T/mod/$n"   # nothing sent: no directory made
    python3 "$treecmp" "$T/oracle/$n" "$T/mod/$n" > "$T/cmp.out" || { frc=3; break; }
  done
  umount "$T/x/a/mnt"
  [ "$frc" = 0 ] || { cat "$T/last.out" "$T/cmp.out"; fail "push -m -x $args: not what rsync made ($frc)"; }
fi

note "-m --delete: what was there and is pruned now goes, what the rules protect stays"
for d in "$T/oracle/del" "$T/mod/del"; do
  rm -rf "$d"; mkdir -p "$d/e/f" "$d/h/old"; echo k > "$d/h/old/k.txt"
  find "$d" -exec touch -d '2022-03-04 05:06:07.5' {} +
done
rsync -am --delete --include='*/' --include='*.jpg' --exclude='*' "$src/" "$T/oracle/del/" 2> /dev/null || true
ferry_c push -am --delete --include='*/' --include='*.jpg' --exclude='*' "$src/" "$(url m/del)" > "$T/last.out" 2>&1 || true
check "push -m --delete" "$T/oracle/del" "$T/mod/del"

note "pull and ls refuse -m with one line"
expect_rc 1 ferry_c pull -am "$(url m/jpg/)" "$T/back"
grep -q -- "-m/--prune-empty-dirs works with push" "$T/last.err" || { cat "$T/last.err"; fail "pull -m: not said why"; }
expect_rc 1 ferry_c ls -m "$(url m/jpg/)"
echo "ok"
