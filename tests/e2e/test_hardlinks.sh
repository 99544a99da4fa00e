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
