#!/usr/bin/env bash
# Issue 12, item 2: -H. Files sharing an inode on the sender share one on
# the receiver and their data travels once, push and pull, compared with the
# link groups of the real rsync -aH's copy (tests/e2e/treecmp.py --links);
# a no-op re-run moves nothing; a group that changes on the sender changes
# on the receiver; more open groups than the protocol's limit still copy
# every file; a malicious peer's link references are protocol errors.
. "$(dirname "$0")/lib.sh"

CMP="python3 $(dirname "$0")/treecmp.py --no-owner --no-xattrs --links"
S=$T/src
mkdir -p "$S/a/deep/er" "$S/b" "$S/c" "$T/outside"
head -c 300000 /dev/urandom > "$S/a/big"
ln "$S/a/big" "$S/b/big.2"; ln "$S/a/big" "$S/c/big.3"; ln "$S/a/big" "$S/a/deep/er/big.4"
echo small > "$S/b/s"; ln "$S/b/s" "$S/a/s.2"
echo alone > "$S/c/alone"; ln "$S/c/alone" "$T/outside/alone"   # its other link is not sent
for i in $(seq 20); do echo "$i" > "$S/c/f$i"; ln "$S/c/f$i" "$S/a/deep/f$i"; done
# past directory times: rsync leaves a directory's time alone when it equals
# the second it copies in, which would make its copy differ from the source
past_dirs() { find "$S" -type d -exec touch -d '2024-01-01 00:00:00.5' {} +; }
past_dirs
rsync -aH "$S/" "$T/rsync/"
$CMP "$S" "$T/rsync" || fail "rsync -aH's copy has other link groups: treecmp is wrong"

write_config
start_server
note "push -aH: the link groups as rsync -aH makes them, the data once"
expect_rc 0 ferry_c push -aH --stats "$S/" "$(url m/h/)"
$CMP "$T/rsync" "$T/mod/h" || fail "push -aH: other link groups than rsync's"
lit=$(sed -n 's/^Literal data: \([0-9]*\) bytes$/\1/p' "$T/last.out")
want=$(( 300000 + 6 + 6 + $(cat "$S"/c/f* | wc -c) ))
[ "$lit" = "$want" ] || { cat "$T/last.out"; fail "push -aH sent $lit bytes of data, the distinct files hold $want"; }
[ "$(stat -c %h "$T/mod/h/c/alone")" = 1 ] || fail "a file whose other link is outside was linked to something"

note "without -H every name is its own file (and treecmp sees it)"
expect_rc 0 ferry_c push -a "$S/" "$(url m/noh/)"
$CMP "$T/rsync" "$T/mod/noh" > /dev/null && fail "push -a made hard links, or treecmp cannot see them"

note "a second push -aH moves nothing"
expect_rc 0 ferry_c push -aHi "$S/" "$(url m/h/)"
! grep -v "^sent 0 files" "$T/last.out" || fail "a no-op push -aH changed something"

note "pull -aH: the same groups back"
expect_rc 0 ferry_c pull -aH "$(url m/h/)" "$T/back/"
$CMP "$T/rsync" "$T/back" || fail "pull -aH: other link groups than rsync's"

note "the groups change on the sender: a link broken off, a link added, the data changed"
rm "$S/b/big.2"; cp "$S/a/big" "$S/b/big.2"       # now its own file
ln "$S/b/s" "$S/c/s.3"
echo changed > "$S/c/f1.new"; mv "$S/c/f1.new" "$S/c/f1"; ln -f "$S/c/f1" "$S/a/deep/f1"
head -c 1000 /dev/urandom >> "$S/a/big"
past_dirs
rm -rf "$T/rsync"; rsync -aH "$S/" "$T/rsync/"
expect_rc 0 ferry_c push -aH --delete "$S/" "$(url m/h/)"
$CMP "$T/rsync" "$T/mod/h" || fail "changed link groups were not followed"
expect_rc 0 ferry_c pull -aH --delete "$(url m/h/)" "$T/back/"
$CMP "$T/rsync" "$T/back" || fail "changed link groups were not followed on pull"

note "more open groups than the protocol allows: every file still arrives"
mkdir -p "$T/many" "$T/many-out"
python3 - "$T/many" "$T/many-out" <<'PY'
import os, sys
for i in range(4200):   # PROTO_LINK_GROUPS is 4096; each group's other link stays outside
    p = os.path.join(sys.argv[1], "f%05d" % i)
    with open(p, "w") as f:
        f.write(str(i))
    os.link(p, os.path.join(sys.argv[2], "f%05d" % i))
PY
echo pair > "$T/many/zz1"; ln "$T/many/zz1" "$T/many/zz2"
expect_rc 0 ferry_c push -aH "$T/many/" "$(url m/many/)"
python3 "$(dirname "$0")/treecmp.py" --no-owner --no-xattrs "$T/many" "$T/mod/many" ||
  fail "past the open-group limit, files were lost or changed"

note "-u, --existing, --ignore-existing ask of every name of a group, as rsync; a name never takes a version they left"
# G: the group {a/f1 (first), a/f2, b/f3}, sent as new data
G=$T/grp; mkdir -p "$G/a" "$G/b"; echo hello > "$G/a/f1"; ln "$G/a/f1" "$G/a/f2"; ln "$G/a/f1" "$G/b/f3"
touch -d '2024-06-01' "$G/a/f1"
# past directory times (as past_dirs above): a case's destination directory,
# made in the second G's were, would be left alone by rsync (its oracle copy)
touch -d '2024-01-01 00:00:00.5' "$G/a" "$G/b" "$G"
# hl_case NAME FLAGS SETUP: SETUP (a shell snippet on $D) prepares both
# destinations, then rsync and ferry run; ferry's tree must equal rsync's
# except for names ferry says it did not link (exit 23), which must be absent
# or still hold what was there: never another name's old data
hl_case() {
  local n=$1 flags=$2 setup=$3 rc=0 D
  for D in "$T/hlr/$n" "$T/mod/hl/$n"; do mkdir -p "$D"; (cd "$D" && eval "$setup"); done
  cp -a "$T/mod/hl/$n" "$T/hl-before-$n"
  rsync -aH $flags "$G/" "$T/hlr/$n/"
  ferry_c push -aH $flags "$G/" "$(url m/hl/$n/)" > "$T/last.out" 2> "$T/last.err" || rc=$?
  local failed; failed=$(sed -n 's/^ferry: .*first: \([^:]*\): not linked.*/\1/p' "$T/last.err")
  if [ "$rc" = 23 ]; then
    [ -n "$failed" ] || { cat "$T/last.err"; fail "$n: exit 23 without the not-linked line"; }
  else
    [ "$rc" = 0 ] || { cat "$T/last.err"; fail "$n: exit $rc"; }
  fi
  for f in a/f1 a/f2 b/f3; do
    [ ! -e "$T/hlr/$n/$f" ] && [ ! -e "$T/mod/hl/$n/$f" ] && continue
    if [ -e "$T/hlr/$n/$f" ] && [ -e "$T/mod/hl/$n/$f" ] && cmp -s "$T/hlr/$n/$f" "$T/mod/hl/$n/$f"; then continue; fi
    [ "$rc" = 23 ] || fail "$n: $f is not rsync's (exit 0)"
    # a name left unlinked: what was there before, or nothing
    if [ -e "$T/hl-before-$n/$f" ]; then cmp -s "$T/hl-before-$n/$f" "$T/mod/hl/$n/$f" || fail "$n: $f changed to another name's data"
    else [ ! -e "$T/mod/hl/$n/$f" ] || fail "$n: $f made from another name's data"; fi
  done
  [ "$rc" = 0 ] && [ -z "${4:-}" ] && { $CMP "$T/hlr/$n" "$T/mod/hl/$n" || fail "$n: other link groups than rsync's"; }
  return 0
}
hl_case ign-first "--ignore-existing" 'mkdir a; echo OLD > a/f1; touch -d 2023-01-01 a/f1'
hl_case upd-first "-u" 'mkdir a; echo NEWER > a/f1; touch -d 2030-01-01 a/f1'
hl_case upd-other "-u" 'mkdir a; echo NEWER > a/f2; touch -d 2030-01-01 a/f2'
hl_case ign-other "--ignore-existing" 'mkdir b; echo OLD > b/f3; touch -d 2023-01-01 b/f3'
hl_case ex-first "--existing" 'mkdir a; echo OLD > a/f1; touch -d 2023-01-01 a/f1'
hl_case ex-other "--existing" 'mkdir a; echo OLD > a/f2; touch -d 2023-01-01 a/f2'
hl_case ign-same "--ignore-existing" 'mkdir a; echo hello > a/f1; touch -d 2024-06-01 a/f1' same-data
# the kept first is the sender's (quick check): the others link to it (rsync
# links them to each other only, leaving the kept name its own inode: the
# same data either way, and ferry keeps the sender's group whole)
grep -q "not linked" "$T/last.err" && fail "ign-same: an up-to-date kept first was not linked to"
[ "$(stat -c %h "$T/mod/hl/ign-same/a/f1")" = 3 ] || fail "ign-same: not one inode of 3 links"
# the cases that kept a newer or existing name with exit 0 are rsync's trees (checked above);
# the first two must have said what they did not link
hl_case ign-first "--ignore-existing" 'true'
grep -q "b/f3: not linked\|a/f2: not linked" "$T/last.err" || { cat "$T/last.err"; fail "ign-first: not said"; }

note "-n -H says what the run will do: nothing on an unchanged tree, as rsync -n"
expect_rc 0 ferry_c push -aH "$G/" "$(url m/hl/n/)"
expect_rc 0 ferry_c push -aHin "$G/" "$(url m/hl/n/)"
! grep -v "^sent 0 files" "$T/last.out" || fail "push -n -H listed linked names of an unchanged tree"
expect_rc 0 ferry_c pull -aH "$(url m/hl/n/)" "$T/hl-back/"
expect_rc 0 ferry_c pull -aHin "$(url m/hl/n/)" "$T/hl-back/"
! grep -v "^received 0 files" "$T/last.out" || fail "pull -n -H listed linked names of an unchanged tree"

note "--stats' total file size counts every name of a group, as rsync's"
expect_rc 0 ferry_c push -aH --stats "$G/" "$(url m/hl/st/)"
mine=$(sed -n 's/^Total file size: \([0-9]*\) bytes$/\1/p' "$T/last.out")
theirs=$(rsync -aH --stats "$G/" "$T/hlr/st/" | sed -n 's/^Total file size: \([0-9,]*\) bytes$/\1/p' | tr -d ,)
[ -n "$mine" ] && [ "$mine" = "$theirs" ] || { cat "$T/last.out"; fail "total file size $mine, rsync's $theirs"; }

note "a link waits for its first name's data asked for again (a delta that did not verify), and is never made to the old version"
R=$T/redo; mkdir -p "$R"; head -c 400000 /dev/urandom > "$R/a"
stop_server
FERRY_TEST_DELTA_MISMATCH=1 start_server   # a test build: every delta fails its check once
expect_rc 0 ferry_c push -a "$R/" "$(url m/redo/)"
printf 'changed in the middle' | dd of="$R/a" bs=1 seek=200000 conv=notrunc status=none
ln "$R/a" "$R/b"
expect_rc 0 ferry_c push -aHv "$R/" "$(url m/redo/)"
grep -q "^retry *a$" "$T/last.out" || { cat "$T/last.out"; fail "the delta was not retried (the hook did not bite)"; }
cmp -s "$R/a" "$T/mod/redo/b" || fail "b is not a's new data (linked to the old version)"
[ "$(stat -c %i "$T/mod/redo/a")" = "$(stat -c %i "$T/mod/redo/b")" ] || fail "b is not linked to a"
stop_server
note "... and where the first name's data fails for good, its other names are not linked to the old version"
head -c 400000 /dev/urandom > "$R/c.new"; mv "$R/c.new" "$R/a"; rm "$R/b"; ln "$R/a" "$R/b"
rm "$T/mod/redo/b"
FERRY_TEST_EIO_AFTER=1000 start_server   # a test build: the box's disk fails after 1000 bytes
expect_rc 23 ferry_c push -aHWi "$R/" "$(url m/redo/)"
[ ! -e "$T/mod/redo/b" ] || fail "b was made (linked to a's old version)"
grep -q "2 file(s) failed" "$T/last.err" && grep -qx '\*failed     b' "$T/last.out" ||
  { cat "$T/last.out" "$T/last.err"; fail "b's refusal not counted"; }
grep -q "b: not linked: the data of the first name of its hard-link group did not arrive" "$T/server.log" ||
  { tail "$T/server.log"; fail "b's refusal not said in the log"; }
stop_server
start_server

note "a malicious client's link references: refused, nothing written, the daemon serving on"
HF=0x4000010   # REQ_HARD_LINKS | REQ_CHANGES
evil_push() { evil_script m "$@"; }   # FLAGS LINES...
refused() { # WHAT PATTERN
  grep -q "ERROR.*$2" "$T/evil.out" || { cat "$T/evil.out"; fail "$1 was not refused ($2)"; }
  echo "$1: $(grep -m1 "ERROR" "$T/evil.out")"
  [ ! -e "$T/mod/ev/l" ] || fail "$1 wrote a link"
  no_temp_files "$T/mod"
  expect_rc 0 ferry_c ls "$(url m)"
}
evil_push $HF 'DIR_BEGIN 0 ""' "LINK l to 0" "DIR_END" "END"
refused "a link to an index not yet seen" "opened no link group"
evil_push $HF 'DIR_BEGIN 0 ""' "ENTRY dir d" "LINK l to 0" "DIR_END" "END"
refused "a link to a directory" "opened no link group"
evil_push $HF 'DIR_BEGIN 0 ""' "ENTRY file a" "LINK l to 0" "DIR_END" "END"
refused "a link to a file that opened no group" "opened no link group"
evil_push 0x10 'DIR_BEGIN 0 ""' "LINK a first 1" "LINK l to 0" "DIR_END" "END"
refused "links without -H" "did not ask for"
evil_push $HF 'DIR_BEGIN 0 ""' "LINK a first 1" "LINK l to 0" "LINK l2 to 0" "DIR_END" "END"
refused "a group linked more often than it said" "opened no link group"
mapfile -t many < <(echo 'DIR_BEGIN 0 ""'; for i in $(seq 0 4096); do echo "LINK f$i first 1"; done)
evil_push 0x4000012 "${many[@]}"   # -n: no data is wanted
refused "4,097 open groups" "hard-link groups"
