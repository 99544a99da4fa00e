#!/usr/bin/env bash
# -b, --backup-dir, --suffix, --chmod given twice, -I beside -c and
# --size-only: push and pull against the real rsync's answer on the same
# trees (a local rsync, its backup directory outside the destination).
# From a read-only review against rsync 3.5, which found that an empty
# --suffix without --backup-dir lost both versions of every changed file on
# a pull, and that a deleted directory's backup wiped an older backup of the
# same path.
. "$(dirname "$0")/lib.sh"

# "path content" of every file under $1, sorted: what a backup directory holds
contents() { (cd "$1" && find . -type f -printf '%p ' -exec cat {} \; | LC_ALL=C sort); }
# the -i lines for files, the direction's first character dropped (rsync's
# local copy says '>', a push '<')
file_lines() { grep -E '^[<>.ch]f' "$1" | cut -c2- | LC_ALL=C sort; }
rc_of() { local rc=0; "$@" > /dev/null 2>&1 || rc=$?; echo "$rc"; }

write_config
start_server

note "--suffix= without --backup-dir: refused as rsync refuses it, nothing touched"
mkdir -p "$T/s1" "$T/mod/s1" "$T/p1" "$T/r1"
echo new > "$T/s1/f"; echo new > "$T/mod/s1/f"
echo old-precious > "$T/p1/f"; echo old-precious > "$T/r1/f"
touch -d 2019-01-01 "$T/p1/f" "$T/r1/f"
want=$(rc_of rsync -a -b --suffix= "$T/s1/" "$T/r1/")
[ "$want" = 1 ] || fail "the oracle: rsync -b --suffix= gave $want"
expect_rc "$want" ferry_c pull -a -b --suffix= "$(url m/s1/)" "$T/p1/"
grep -q -- "--suffix cannot be empty without a --backup-dir" "$T/last.err" || fail "pull: $(cat "$T/last.err")"
grep -qx old-precious "$T/p1/f" || fail "pull -b --suffix=: the old version is gone"
expect_rc "$want" ferry_c push -a -b --suffix= "$T/p1/" "$(url m/s1/)"
grep -qx new "$T/mod/s1/f" || fail "push -b --suffix=: the box's file changed"
[ "$(ls "$T/mod/s1")" = f ] || fail "push -b --suffix=: $(ls "$T/mod/s1")"
# a suffix without -b names nothing: accepted, no backup (as rsync)
want=$(rc_of rsync -a --suffix=.x "$T/s1/" "$T/r1/")
[ "$want" = 0 ] && [ ! -e "$T/r1/f.x" ] || fail "the oracle: rsync --suffix=.x without -b gave $want"
expect_rc 0 ferry_c pull -a --suffix=.x "$(url m/s1/)" "$T/p1/"
grep -qx new "$T/p1/f" && [ ! -e "$T/p1/f.x" ] || fail "pull --suffix=.x without -b: $(ls "$T/p1")"
# an empty suffix with a backup directory is rsync's too
echo newer > "$T/s1/f"
echo newer > "$T/mod/s1/f"
expect_rc 0 ferry_c pull -a --backup-dir=bk --suffix= "$(url m/s1/)" "$T/p1/"
grep -qx newer "$T/p1/f" && grep -qx new "$T/p1/bk/f" || fail "pull --backup-dir=bk --suffix=: $(contents "$T/p1")"

note "a deleted directory's backup merges into an older backup of the same path (as rsync's file by file backups)"
# three runs: D/b goes, then D/a changes, then D goes whole (its a2 replaces
# the a1 backed up before, b stays); g changes twice
mkdir -p "$T/s2/D" "$T/d2/D" "$T/mod/x2"
echo a1 > "$T/s2/D/a"; echo g1 > "$T/s2/g"
cp -a "$T/s2/." "$T/d2/"; echo b-precious > "$T/d2/D/b"
touch -d 2019-01-01 "$T/d2/D/b"
cp -a "$T/d2" "$T/rsync2"; cp -a "$T/d2" "$T/p2"; cp -a "$T/d2/." "$T/mod/x2/"
step() {  # one run of each: rsync, push, and a pull from the box's plain copy of s2
  rsync -a --delete --backup-dir="$T/rbk2" "$T/s2/" "$T/rsync2/" || fail "rsync step $1"
  expect_rc 0 ferry_c push -a --delete --backup-dir=bk "$T/s2/" "$(url m/x2/)"
  expect_rc 0 ferry_c push -a --delete "$T/s2/" "$(url m/src2/)"
  expect_rc 0 ferry_c pull -a --delete --backup-dir=bk "$(url m/src2/)" "$T/p2/"
}
step 1
echo a2 > "$T/s2/D/a"; echo g2 > "$T/s2/g"; touch -d 2020-01-01 "$T/s2/D/a" "$T/s2/g"
step 2
rm -r "$T/s2/D"; echo g3 > "$T/s2/g"; touch -d 2021-01-01 "$T/s2/g"
step 3
[ "$(contents "$T/rbk2")" = "./D/a a2
./D/b b-precious
./g g2" ] || fail "the oracle: rsync's backups are $(contents "$T/rbk2")"
diff <(contents "$T/rbk2") <(contents "$T/mod/x2/bk") || fail "push --backup-dir: not rsync's backups"
diff <(contents "$T/rbk2") <(contents "$T/p2/bk") || fail "pull --backup-dir: not rsync's backups"
diff -r "$T/s2" "$T/mod/x2" -x bk > /dev/null || fail "push --backup-dir: the tree is not the source"
no_temp_files "$T/mod/x2"

note "-b without a directory: a directory deleted twice keeps both times' files in DIR~"
mkdir -p "$T/s3" "$T/mod/x3/D"
echo one > "$T/mod/x3/D/first"
expect_rc 0 ferry_c push -a -b --delete "$T/s3/" "$(url m/x3/)"
[ ! -e "$T/mod/x3/D" ] || fail "-b --delete: D is still there"
mkdir -p "$T/mod/x3/D"; echo two > "$T/mod/x3/D/second"; echo sub > "$T/mod/x3/D/first-dir"
expect_rc 0 ferry_c push -a -b --delete "$T/s3/" "$(url m/x3/)"
[ "$(contents "$T/mod/x3/D~")" = "./first one
./first-dir sub
./second two" ] || fail "-b: D~ holds $(contents "$T/mod/x3/D~")"
# a file where the older backup has a directory, and the other way: replaced
mkdir -p "$T/mod/x3/E" "$T/mod/x3/F~/deep"; echo e > "$T/mod/x3/E~"; echo f > "$T/mod/x3/F"
echo e-dir > "$T/mod/x3/E/in"; echo old > "$T/mod/x3/F~/deep/x"
expect_rc 0 ferry_c push -a -b --delete "$T/s3/" "$(url m/x3/)"
[ "$(contents "$T/mod/x3/E~")" = "./in e-dir" ] && grep -qx f "$T/mod/x3/F~" ||
  fail "-b: a directory over a file's backup, a file over a directory's: $(ls -la "$T/mod/x3")"

note "not root: a merge moves out of a 0555 directory of ours and into one, as rsync's backups do (a box served as nobody, a pull as nobody)"
# the deleted D holds a 0555 sub/; an older backup of D is there already
nbtree() {  # DIR BACKUP-DIR
  rm -rf "$1" "$2"; mkdir -p "$1/D/sub" "$2/D/sub"
  echo a > "$1/D/sub/a"; echo k > "$1/D/k"; echo older > "$2/D/older"; echo oa > "$2/D/sub/older-a"
  chmod 555 "$1/D/sub"; chown -R nobody "$1" "$2"
}
mkdir -p "$T/nbm" "$T/nbs" "$T/nbc"; chown nobody "$T/nbm" "$T/nbs" "$T/nbc"; chmod 755 "$T"
nbtree "$T/nbr" "$T/nbrbk"
runuser -u nobody -- rsync -a --delete --backup-dir="$T/nbrbk" "$T/nbs/" "$T/nbr/" || fail "the oracle: rsync as nobody failed"
stop_server
write_config "[nb]" "path = $T/nbm" "uid = nobody"
start_server
nbtree "$T/nbm/t" "$T/nbm/t/bk"
expect_rc 0 ferry_c push -a --delete --backup-dir=bk "$T/nbs/" "$(url nb/t/)"
diff <(contents "$T/nbrbk") <(contents "$T/nbm/t/bk") || fail "push as nobody: not rsync's backups"
install -o nobody -m 600 "$T/clienthome/id_ferry" "$T/nbc/id"
install -o nobody -m 600 "$T/clienthome/known_hosts" "$T/nbc/kh"
nbtree "$T/nbc/d" "$T/nbc/d/bk"
rc=0; runuser -u nobody -- env FERRY_HOME="$T/nbc" $FERRY_CLIENT pull -a --delete --backup-dir=bk \
  --identity "$T/nbc/id" --known-hosts "$T/nbc/kh" "$(url nb/t/)" "$T/nbc/d" > "$T/last.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { cat "$T/last.out"; fail "pull as nobody: exit $rc"; }
# the pull also brings the box's bk/ (a source like any other) into the local bk/bk
diff <(contents "$T/nbrbk") <(contents "$T/nbc/d/bk" | grep -v '^\./bk/') || fail "pull as nobody: not rsync's backups"
# -b: the older backup D~ has a 0555 sub/ of its own: filled, and its mode put back
rm -rf "$T/nbm/t"; mkdir -p "$T/nbm/t/D/sub" "$T/nbm/t/D~/sub"
echo a > "$T/nbm/t/D/sub/a"; echo oa > "$T/nbm/t/D~/sub/older-a"
chmod 555 "$T/nbm/t/D/sub" "$T/nbm/t/D~/sub"; chown -R nobody "$T/nbm/t"
expect_rc 0 ferry_c push -a -b --delete "$T/nbs/" "$(url nb/t/)"
[ "$(contents "$T/nbm/t/D~")" = "./sub/a a
./sub/older-a oa" ] && [ "$(stat -c %a "$T/nbm/t/D~/sub")" = 555 ] && [ ! -e "$T/nbm/t/D" ] ||
  fail "-b as nobody: D~ holds $(contents "$T/nbm/t/D~"), sub/ $(stat -c %a "$T/nbm/t/D~/sub")"
# two names of one file, in the deleted tree and in its older backup (cp -al): one stays
rm -rf "$T/nbm/t"; mkdir -p "$T/nbm/t/D" "$T/nbm/t/D~"
echo same > "$T/nbm/t/D/f"; ln "$T/nbm/t/D/f" "$T/nbm/t/D~/f"; chown -R nobody "$T/nbm/t"
expect_rc 0 ferry_c push -a -b --delete "$T/nbs/" "$(url nb/t/)"
[ "$(contents "$T/nbm/t/D~")" = "./f same" ] && [ ! -e "$T/nbm/t/D" ] ||
  fail "one file in both: D~ holds $(contents "$T/nbm/t/D~")"
chmod -R u+w "$T/nbm" "$T/nbc"
stop_server
start_server

note "--chmod given twice adds up, as rsync"
mkdir -p "$T/s4/sub"; echo x > "$T/s4/sub/f"; chmod 644 "$T/s4/sub/f"; chmod 755 "$T/s4/sub"
rsync -a --chmod=Fo-r --chmod=Fu+x --chmod=D750 "$T/s4/" "$T/r4/"
[ "$(stat -c %a "$T/r4/sub/f") $(stat -c %a "$T/r4/sub")" = "740 750" ] || fail "the oracle: $(stat -c %a "$T/r4/sub/f")"
expect_rc 0 ferry_c push -a --chmod=Fo-r --chmod=Fu+x --chmod=D750 "$T/s4/" "$(url m/x4/)"
expect_rc 0 ferry_c pull -a --chmod=Fo-r --chmod=Fu+x --chmod=D750 "$(url m/x4/)" "$T/p4/"
for d in "$T/mod/x4" "$T/p4"; do
  [ "$(stat -c %a "$d/sub/f") $(stat -c %a "$d/sub")" = "$(stat -c %a "$T/r4/sub/f") $(stat -c %a "$T/r4/sub")" ] ||
    fail "--chmod twice: $d: $(stat -c %a "$d/sub/f") $(stat -c %a "$d/sub")"
done
long="$(printf 'u+x,%.0s' $(seq 50))u+x"   # 203 bytes: each is taken, the two are too many
expect_rc 1 ferry_c push -a "--chmod=$long" "--chmod=$long" "$T/s4/" "$(url m/x4/)"
grep -q "add up to more than 255 bytes" "$T/last.err" || fail "a --chmod too long for the request: $(cat "$T/last.err")"

note "-I turns off the time check only: -c and --size-only still decide, as rsync"
mkdir -p "$T/s5" "$T/dd5"
echo same > "$T/s5/same"; echo aaaa > "$T/s5/samesize"; echo grown > "$T/s5/grown"
touch -d 2022-01-01 "$T/s5/"*
cp -a "$T/s5/." "$T/dd5/"
echo bbbb > "$T/dd5/samesize"; echo grown-more > "$T/dd5/grown"
touch -d 2023-01-01 "$T/dd5/samesize" "$T/dd5/grown"
expect_rc 0 ferry_c push -a "$T/s5/" "$(url m/s5/)"
for opts in "-c -I" "-I --size-only" "-I"; do
  for d in r5 p5 mod/x5; do rm -rf "${T:?}/$d"; cp -a "$T/dd5" "$T/$d"; done
  # shellcheck disable=SC2086
  rsync -ai $opts "$T/s5/" "$T/r5/" > "$T/rsync5.out"
  # shellcheck disable=SC2086
  expect_rc 0 ferry_c push -ai $opts "$T/s5/" "$(url m/x5/)"
  diff <(file_lines "$T/rsync5.out") <(file_lines "$T/last.out") || fail "push -ai $opts: not rsync's lines"
  diff <(tree_manifest "$T/r5") <(tree_manifest "$T/mod/x5") && diff -r "$T/r5" "$T/mod/x5" ||
    fail "push $opts: not rsync's tree"
  # shellcheck disable=SC2086
  expect_rc 0 ferry_c pull -ai $opts "$(url m/s5/)" "$T/p5/"
  diff <(file_lines "$T/rsync5.out") <(file_lines "$T/last.out") || fail "pull -ai $opts: not rsync's lines"
  diff <(tree_manifest "$T/r5") <(tree_manifest "$T/p5") && diff -r "$T/r5" "$T/p5" ||
    fail "pull $opts: not rsync's tree"
done

stop_server
