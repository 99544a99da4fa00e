#!/usr/bin/env bash
# push -L/--copy-links and -k/--copy-dirlinks, against the real rsync: the
# PC's symlinks are followed (all of them, or those to directories), their
# targets' contents, modes and times sent; a link whose target is gone is
# named "symlink has no referent" and the push exits 23, as rsync's does.
# One difference, on purpose: with -X ferry sends the target's xattrs (and
# ACLs), where rsync 3.5 sends the link's own (none) beside the target's
# data, mode and times: the oracle is rsync -a, with the targets' xattrs
# set on its copy. -LH and -kH make every name a file is met by one file,
# as rsync does, even more names than its link count; -L -F reads a
# .ferry-filter through its link.
# A symlink loop is said once and not descended (rsync goes round until the path is too long), with or
# without a progress line (its count walks the tree too). On a pull or ls
# the box would be the one following, and both are refused.
. "$(dirname "$0")/lib.sh"

command -v rsync > /dev/null || fail "rsync is needed as the oracle (make deps installs it)"
command -v setfattr > /dev/null || fail "setfattr is needed (make deps installs attr)"
src=$T/src ext=$T/ext
mkdir -p "$src/d" "$ext/sub"
head -c 70000 /dev/urandom > "$ext/f"; chmod 640 "$ext/f"; touch -d '2020-01-02 03:04:05.123456789' "$ext/f"
echo g > "$ext/sub/g"; chmod 711 "$ext/sub"; touch -d '2021-05-06' "$ext/sub"
setfattr -n user.kind -v target "$ext/f"
echo a > "$src/a"
ln -s a "$src/la"                    # relative, to a file in the tree
ln -s ../ext "$src/lext"             # relative, to a directory outside it
ln -s "$ext/f" "$src/labs"           # absolute, to a file outside it
ln -s ../lext/sub "$src/d/lchain"    # through another link
# directory times in the past: rsync (3.5) leaves a new directory's time
# unset when the source's falls in the second it runs in
find "$src" "$ext" -type d -exec touch -d '2022-03-04 05:06:07.5' {} +
touch -d '2021-05-06' "$ext/sub"
write_config
start_server

# check WHAT ORACLE FERRY [treecmp options]: the two trees are the same
check() {   # check WHAT ORACLE_DIR FERRY_DIR [treecmp options]
  local what=$1 a=$2 b=$3; shift 3
  python3 "$(dirname "$0")/treecmp.py" "$a" "$b" "$@" > "$T/cmp.out" ||
    { cat "$T/cmp.out"; fail "$what: not what rsync made"; }
}

for flag in -L -k; do
  rm -rf "$T/oracle"; mkdir "$T/oracle"
  rsync -a "$flag" "$src/" "$T/oracle/" || fail "the rsync oracle ($flag) failed"
  setfattr -n user.kind -v target "$T/oracle/lext/f"
  [ "$flag" = -L ] && setfattr -n user.kind -v target "$T/oracle/labs"
  expect_rc 0 ferry_c push -aX "$flag" "$src/" "$(url "m/t$flag")"
  check "push -aX $flag" "$T/oracle" "$T/mod/t$flag"
  if [ "$flag" = -L ]; then
    [ -f "$T/mod/t-L/lext/f" ] && [ ! -L "$T/mod/t-L/lext" ] ||
      fail "-L: the directory link did not become a directory"
    [ "$(getfattr --only-values -n user.kind "$T/mod/t-L/labs" 2> /dev/null)" = target ] ||
      fail "-L -X: the target's xattr was not sent"
  else
    [ -L "$T/mod/t-k/la" ] && [ -L "$T/mod/t-k/labs" ] && [ -d "$T/mod/t-k/d/lchain" ] &&
      [ ! -L "$T/mod/t-k/d/lchain" ] || fail "-k: not only the directory links were followed"
  fi
done
note "-L and -k: the box holds what rsync -aX -L / -k make (-L's xattrs: the targets')"

note "a second push changes nothing; a changed target is sent again"
expect_rc 0 ferry_c push -aX -L -i "$src/" "$(url m/t-L)"
grep -q '^[<>]f' "$T/last.out" && { cat "$T/last.out"; fail "-L: an unchanged tree was sent again"; }
echo more >> "$ext/sub/g"
expect_rc 0 ferry_c push -aX -L -i "$src/" "$(url m/t-L)"
grep -q 'lext/sub/g' "$T/last.out" || { cat "$T/last.out"; fail "-L: a changed target was not sent"; }
rm -rf "$T/oracle"; mkdir "$T/oracle"; rsync -a -L "$src/" "$T/oracle/" || fail "the rsync oracle failed"
setfattr -n user.kind -v target "$T/oracle/labs" "$T/oracle/lext/f"
check "push -L again" "$T/oracle" "$T/mod/t-L"

note "a link with no referent: named, the rest sent, exit 23, as rsync"
ln -s nowhere "$src/dangle"
rc=0; rsync -a -L "$src/" "$T/oracle/" 2> "$T/rsync.err" || rc=$?
[ "$rc" = 23 ] && grep -q 'symlink has no referent' "$T/rsync.err" || fail "the rsync oracle (dangle) exited $rc"
echo newer > "$src/a"
expect_rc 23 ferry_c push -a -L "$src/" "$(url m/t-L)"
grep -q 'symlink has no referent: "dangle"' "$T/last.err" ||
  { cat "$T/last.err"; fail "-L: the dangling link is not named"; }
[ ! -e "$T/mod/t-L/dangle" ] && [ ! -L "$T/mod/t-L/dangle" ] && [ "$(cat "$T/mod/t-L/a")" = newer ] ||
  fail "-L: the dangling link was sent, or the rest was not"
rm "$src/dangle"

note "a named source that is a link: -L sends what it points to"
ln -s "$ext" "$T/named"
rm -rf "$T/oracle"; mkdir "$T/oracle"; rsync -a -L "$T/named" "$T/oracle/" || fail "the rsync oracle (named) failed"
mkdir -p "$T/mod/n"
expect_rc 0 ferry_c push -a -L "$T/named" "$(url m/n)"
check "push -L of a named link" "$T/oracle" "$T/mod/n"

note "-LH: links to two names of one file are one file with two names, as rsync -LH"
echo h > "$T/h"; ln "$T/h" "$T/h2"
mkdir "$T/hsrc"; ln -s "$T/h" "$T/hsrc/one"; ln -s "$T/h2" "$T/hsrc/two"
rm -rf "$T/oracle"; mkdir "$T/oracle"; rsync -aH -L "$T/hsrc/" "$T/oracle/" || fail "the rsync oracle (-LH) failed"
expect_rc 0 ferry_c push -aH -L "$T/hsrc/" "$(url m/h)"
check "push -LH" "$T/oracle" "$T/mod/h" --links
[ "$(stat -c %h "$T/mod/h/one")" = 2 ] || fail "-LH: the two names are not linked"

note "-LH, -kH: a file met by more names than its link count is still one file"
mkdir -p "$T/h2src/real"; echo a > "$T/h2src/real/a"; ln "$T/h2src/real/a" "$T/h2src/real/b"
ln -s real/a "$T/h2src/la"; ln -s real/b "$T/h2src/lb"; ln -s real/a "$T/h2src/lc"; ln -s real "$T/h2src/lreal"
touch -h -d '2022-03-04' "$T/h2src/real"
for flag in -L -k; do
  rm -rf "$T/oracle"; mkdir "$T/oracle"; rsync -aH "$flag" "$T/h2src/" "$T/oracle/" || fail "the rsync oracle (-H $flag) failed"
  expect_rc 0 ferry_c push -aH "$flag" "$T/h2src/" "$(url "m/h2$flag")"
  check "push -aH $flag" "$T/oracle" "$T/mod/h2$flag" --links
done
[ "$(stat -c %h "$T/mod/h2-L/lc")" = 7 ] || fail "-LH: not one file with 7 names"

note "-L -F: a .ferry-filter that is a link is read through it, as rsync reads its merge files"
mkdir -p "$T/fsrc/d"; echo s > "$T/fsrc/d/secret"; echo k > "$T/fsrc/d/kept"; echo '- secret' > "$T/rules"
ln -s "$T/rules" "$T/fsrc/d/.ferry-filter"
expect_rc 0 ferry_c push -a -L -F "$T/fsrc/" "$(url m/f)"
[ -f "$T/mod/f/d/kept" ] && [ ! -e "$T/mod/f/d/secret" ] || fail "-L -F: the linked rules were not applied"

note "a symlink loop is named once and not descended"
mkdir -p "$T/lsrc/d"; echo x > "$T/lsrc/d/x"; ln -s .. "$T/lsrc/d/up"; ln -s . "$T/lsrc/self"
for p in "" -P; do
  rm -rf "$T/mod/l"
  # shellcheck disable=SC2086
  expect_rc 23 timeout 60 "$FERRY_CLIENT" push --identity "$T/clienthome/id_ferry" \
    --known-hosts "$T/clienthome/known_hosts" -a -L $p "$T/lsrc/" "$(url m/l)"
  grep -q 'd/up: a symlink loop (the same directory as ".")' "$T/last.err" &&
    grep -q 'self: a symlink loop' "$T/last.err" || { cat "$T/last.err"; fail "-L $p: the loops are not named"; }
  [ -f "$T/mod/l/d/x" ] && [ -d "$T/mod/l/d/up" ] && [ -z "$(ls -A "$T/mod/l/d/up")" ] ||
    fail "-L $p: the tree around the loops was not sent as it should be"
done

note "without -L the links stay links; pull and ls refuse -L and -k"
expect_rc 0 ferry_c push -a "$src/" "$(url m/plain)"
[ -L "$T/mod/plain/lext" ] && [ "$(readlink "$T/mod/plain/labs")" = "$ext/f" ] || fail "a link was followed without -L"
for c in pull ls; do
  for flag in -L -k --copy-links --copy-dirlinks; do
    if [ $c = pull ]; then expect_rc 1 ferry_c pull -a $flag "$(url m/plain/)" "$T/back"
    else expect_rc 1 ferry_c ls $flag "$(url m/plain/)"; fi
    [ "$(wc -l < "$T/last.err")" = 1 ] && grep -q "the box never follows one" "$T/last.err" ||
      { cat "$T/last.err"; fail "$c $flag: not one line saying why"; }
  done
done
[ ! -e "$T/back" ] || fail "a refused pull wrote something"
echo "PASS"
