#!/usr/bin/env bash
# Issue 12, items 1 to 3: what rsync -aHAX keeps beyond data, mode and
# mtime. A tree with owners, groups, xattrs (user and trusted), ACLs (access
# and default), a FIFO, a socket, a device, an owned symlink and a hard-link
# group across directories is pushed with -aHAX to a daemon running as root
# and pulled back; a daemon running as
# nobody keeps it all under "fake super" (the stored stat compared with the
# real rsync daemon's on the same tree) and gives it back to a root client;
# without fake super it says what it cannot keep. tests/e2e/treecmp.py
# compares trees, and the real rsync -aAX's local copy is the oracle for
# what a copy must look like.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || fail "needs root: owners, devices and trusted.* xattrs are root's"
for t in setfacl setfattr setpriv rsync python3; do
  command -v $t > /dev/null || fail "$t is needed (make deps installs acl, attr, util-linux, rsync)"
done
CMP="python3 $(dirname "$0")/treecmp.py"
chmod 755 "$T"

# make_tree DIR: every kind of metadata -aAX -D keeps
make_tree() {
  local d=$1
  mkdir -p "$d/etc/sub" "$d/home/u" "$d/dev"
  echo "root's" > "$d/etc/passwd"; chmod 0644 "$d/etc/passwd"
  echo secret > "$d/etc/shadow"; chmod 0640 "$d/etc/shadow"; chown 0:42 "$d/etc/shadow"
  head -c 100000 /dev/urandom > "$d/home/u/data"; chown 1234:5678 "$d/home/u/data"
  chown 1234:5678 "$d/home/u"; chmod 0750 "$d/home/u"
  echo x > "$d/home/u/tagged"; chown nobody:nogroup "$d/home/u/tagged"
  setfattr -n user.comment -v "hello" "$d/home/u/tagged"
  setfattr -n user.bin -v 0x00ff00ff10 "$d/home/u/tagged"
  setfattr -n user.big -v "$(head -c 3000 /dev/zero | tr '\0' b)" "$d/home/u/tagged"
  setfattr -n trusted.t -v trustme "$d/etc/passwd"
  setfacl -m u:nobody:r,g:nogroup:rw "$d/etc/shadow"
  setfacl -d -m g:nogroup:rx "$d/etc/sub"
  setfacl -m u:1234:rwx "$d/etc/sub"
  setfattr -n user.dir -v d "$d/etc"
  mkfifo "$d/dev/fifo"; chmod 0620 "$d/dev/fifo"; chown 1234:5678 "$d/dev/fifo"
  mknod "$d/dev/null" c 1 3; chmod 0666 "$d/dev/null"
  mknod "$d/dev/sda9" b 8 9; chown 0:6 "$d/dev/sda9"; chmod 0660 "$d/dev/sda9"
  python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$d/dev/sock"
  ln -s ../etc/passwd "$d/home/u/link"; chown -h 1234:5678 "$d/home/u/link"
  ln "$d/home/u/data" "$d/etc/data.hardlink"; ln "$d/home/u/data" "$d/dev/data.3"
  chown 4321:8765 "$d"
  # distinct past mtimes, to the nanosecond, deepest first (rsync does not
  # set a time equal to the second it copies in)
  python3 - "$d" <<'PY'
import os, sys
paths = []
for dp, dn, fn in os.walk(sys.argv[1]):
    paths += [os.path.join(dp, n) for n in dn + fn]
for i, p in enumerate(sorted(paths, key=lambda p: -p.count("/")) + [sys.argv[1]]):
    t = 1700000000_000000000 + i * 1000_000_123
    os.utime(p, ns=(t, t), follow_symlinks=False)
PY
}

S=$T/src
make_tree "$S"
note "the oracle: the real rsync -aAX keeps all of it locally"
rsync -aHAX "$S/" "$T/rsync/"
$CMP --links "$S" "$T/rsync" || fail "rsync -aAX's copy differs from the source: treecmp or the tree is wrong"

write_config "[fake]" "path = $T/fake" "protection = none" "fake super = yes" \
  "[plain]" "path = $T/plain" "protection = none"
mkdir -p "$T/fake" "$T/plain"
chown nobody:nogroup "$T/fake" "$T/plain"

note "a root daemon: push -aHAX, then pull -aHAX back"
start_server
expect_rc 0 ferry_c push -aHAX "$S/" "$(url m/r1/)"
$CMP --links "$S" "$T/mod/r1" || fail "push -aHAX to a root daemon lost metadata"
$CMP --links "$T/rsync" "$T/mod/r1" || fail "push -aHAX differs from rsync -aHAX's copy"
expect_rc 0 ferry_c pull -aHAX "$(url m/r1/)" "$T/back1/"
$CMP --links "$S" "$T/back1" || fail "pull -aHAX from a root daemon lost metadata"

note "without -AX the xattrs and ACLs stay behind, and treecmp sees it"
expect_rc 0 ferry_c push -a "$S/" "$(url m/r2/)"
$CMP "$S" "$T/mod/r2" > "$T/cmp.out" && fail "push -a kept xattrs, or treecmp cannot see them"
grep -q "home/u/tagged: xattrs" "$T/cmp.out" && grep -q "etc/shadow: xattrs" "$T/cmp.out" ||
  { cat "$T/cmp.out"; fail "the missing xattrs and ACLs were not the difference"; }
$CMP --no-xattrs "$S" "$T/mod/r2" || fail "push -a lost owners, devices or times"
expect_rc 0 ferry_c push -r "$S/" "$(url m/r3/)"
$CMP "$S" "$T/mod/r3" > "$T/cmp.out" && fail "push -r kept owners"
grep -q "home/u/data: uid: 1234 != 0" "$T/cmp.out" || { cat "$T/cmp.out"; fail "owners kept without -o"; }
[ ! -e "$T/mod/r3/dev/null" ] || fail "a device was sent without -D"
stop_server

note "a daemon running as nobody with fake super = yes keeps it all in xattrs"
chmod 755 "$T/serverhome"; chown -R nobody "$T/serverhome"; chmod 644 "$T/serverhome/authorized_keys"
FERRY_SERVER="setpriv --reuid=nobody --regid=nogroup --clear-groups $FERRY_SERVER" start_server
expect_rc 0 ferry_c push -aHAX "$S/" "$(url fake/)"
[ "$(stat -c %u "$T/fake/home/u/data")" = "$(id -u nobody)" ] || fail "fake super: not the daemon's own file"
[ -f "$T/fake/dev/null" ] || fail "fake super: the device is not a placeholder file"
$CMP --links --fake B "$S" "$T/fake" || fail "fake super: the stored owners, types and modes differ from the source"

note "... the same user.rsync.%stat as the real rsync daemon's fake super writes"
mkdir -p "$T/rs" "$T/rsrun"; chown nobody:nogroup "$T/rs" "$T/rsrun"
RPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'port = %s\naddress = 127.0.0.1\nuse chroot = no\npid file = %s/pid\n[rs]\npath = %s\nread only = no\nfake super = yes\nmunge symlinks = no\n' \
  "$RPORT" "$T/rsrun" "$T/rs" > "$T/rsyncd.conf"
setpriv --reuid=nobody --regid=nogroup --clear-groups rsync --daemon --config="$T/rsyncd.conf"
for _ in $(seq 50); do [ -s "$T/rsrun/pid" ] && break; sleep 0.1; done
rsync -aX "$S/" "rsync://127.0.0.1:$RPORT/rs/" || fail "the rsync daemon refused the tree"
kill "$(cat "$T/rsrun/pid")"
( cd "$T/rs" && find . | sort ) > "$T/rs.list"
( cd "$T/fake" && find . | sort ) > "$T/fake.list"
cmp "$T/rs.list" "$T/fake.list" || fail "fake super: other entries than rsync's"
while read -r p; do
  a=$(getfattr --absolute-names -n user.rsync.%stat --only-values "$T/rs/$p" 2>/dev/null || echo none)
  b=$(getfattr --absolute-names -n user.rsync.%stat --only-values "$T/fake/$p" 2>/dev/null || echo none)
  [ "$a" = "$b" ] || fail "fake super: $p: user.rsync.%stat is '$b', rsync's daemon writes '$a'"
done < "$T/rs.list"
echo "user.rsync.%stat of $(wc -l < "$T/rs.list") entries as rsync's daemon writes it"

note "... and a root client's pull -aHAX gets the original back"
expect_rc 0 ferry_c pull -aHAX "$(url fake/)" "$T/back2/"
$CMP --links "$S" "$T/back2" || fail "pull -aAX from a fake-super module lost metadata"

note "... set-id bits and modes without u+rw come back on the first pull, whole or delta"
# (the box's real mode has u+rw added and no set-id bit; a new file was once
# given that mode, and only the next pull set the stored one)
mkdir -p "$T/sid"
echo suid > "$T/sid/suid"; chmod 4755 "$T/sid/suid"
echo sgid > "$T/sid/sgid"; chmod 2710 "$T/sid/sgid"
head -c 300000 /dev/urandom > "$T/sid/ro"; chmod 0400 "$T/sid/ro"
expect_rc 0 ferry_c push -a "$T/sid/" "$(url fake/sid/)"
modes() { (cd "$1" && stat -c '%n %a' suid sgid ro); }
expect_rc 0 ferry_c pull -a "$(url fake/sid/)" "$T/sid-back/"
[ "$(modes "$T/sid-back")" = "$(modes "$T/sid")" ] ||
  fail "first pull from fake super: $(modes "$T/sid-back" | tr '\n' ' ') for $(modes "$T/sid" | tr '\n' ' ')"
chmod u+w "$T/sid/ro"; printf 'changed' | dd of="$T/sid/ro" bs=1 seek=150000 conv=notrunc status=none
chmod 0400 "$T/sid/ro"; touch -d @1700000000 "$T/sid/ro"
expect_rc 0 ferry_c push -a "$T/sid/" "$(url fake/sid/)"
expect_rc 0 ferry_c pull -a --stats "$(url fake/sid/)" "$T/sid-back/"
grep -q "Matched data: [1-9]" "$T/last.out" || fail "the changed file was not pulled as a delta"
[ "$(modes "$T/sid-back")" = "$(modes "$T/sid")" ] ||
  fail "delta pull from fake super: $(modes "$T/sid-back" | tr '\n' ' ')"
cmp "$T/sid/ro" "$T/sid-back/ro" || fail "delta pull from fake super: the content differs"
rm -rf "$T/fake/sid"   # the sections below compare the module with $S
touch -r "$S" "$T/fake"   # as it was: the no-op push below would say ".d..t...... ./"

note "a second push moves nothing; a changed owner, xattr or ACL is set in place"
expect_rc 0 ferry_c push -aHAX -i "$S/" "$(url fake/)"
! grep -v "^sent 0 files" "$T/last.out" || fail "a no-op push changed something"
chown 99:98 "$S/home/u/data"
setfattr -x user.comment "$S/home/u/tagged"
setfattr -n user.new -v 1 "$S/etc/passwd"
setfacl -m u:nobody:rw "$S/etc/shadow"
expect_rc 0 ferry_c push -aHAX -i --stats "$S/" "$(url fake/)"
grep -q "^Number of regular files transferred: 0" "$T/last.out" || { cat "$T/last.out"; fail "metadata changes moved data"; }
$CMP --fake B "$S" "$T/fake" || fail "fake super: a metadata-only change was not applied"
stop_server

note "a daemon running as nobody without fake super: what it cannot keep, said once"
FERRY_SERVER="setpriv --reuid=nobody --regid=nogroup --clear-groups $FERRY_SERVER" start_server
expect_rc 23 ferry_c push -aAX "$S/" "$(url plain/)"
grep -q "dev/null.*a device is only created by a receiver running as root" "$T/last.err" ||
  { cat "$T/last.err"; fail "a device to a non-root daemon was not refused with a clear line"; }
grep -q "2 file(s) failed" "$T/last.err" || { cat "$T/last.err"; fail "the two devices are not counted as failed"; }
[ -p "$T/plain/dev/fifo" ] && [ -S "$T/plain/dev/sock" ] || fail "FIFO and socket are not created by a non-root daemon"
grep -q "owners and groups are not kept: the receiver is not root" "$T/server.log" ||
  fail "the daemon did not say that owners are not kept"
[ "$(grep -c "owners and groups are not kept" "$T/server.log")" = 1 ] || fail "said more than once"
getfattr -n user.comment "$T/plain/home/u/tagged" > /dev/null 2>&1 && fail "a removed xattr came back"
getfattr --absolute-names -n user.big --only-values "$T/plain/home/u/tagged" | cmp - <(getfattr --absolute-names -n user.big --only-values "$S/home/u/tagged") ||
  fail "user xattrs are not kept by a non-root daemon"
if getfattr -n trusted.t "$T/plain/etc/passwd" > /dev/null 2>&1; then fail "trusted.* set by a non-root daemon"; fi

note "a malicious client's XMETA: refused, nothing written, the daemon serving on"
evil_push() { evil_script plain "$@"; }   # FLAGS LINES...
refused() { # WHAT PATTERN
  grep -q "ERROR.*$2" "$T/evil.out" || { cat "$T/evil.out"; fail "$1 was not refused ($2)"; }
  echo "$1: $(grep -m1 "ERROR" "$T/evil.out")"
  [ ! -e "$T/plain/ev/f" ] || fail "$1 wrote the file"
  expect_rc 0 ferry_c ls "$(url plain)"
}
OX=0x880010   # REQ_OWNER | REQ_XATTRS | REQ_CHANGES
evil_push $OX 'DIR_BEGIN 0 ""' "XMETA_OWNER 10000" "ENTRY file f" "DIR_END" "END"
refused "an owner name of 10,000 bytes" "malformed XMETA"
evil_push $OX 'DIR_BEGIN 0 ""' "XMETA_XATTRS 2 30500" "ENTRY file f" "DIR_END" "END"
refused "61,000 bytes of xattrs" "malformed XMETA"
evil_push $OX 'DIR_BEGIN 0 ""' "XMETA_XATTRS 1025 0" "ENTRY file f" "DIR_END" "END"
refused "1,025 xattrs" "malformed XMETA"
evil_push 0x10 'DIR_BEGIN 0 ""' "XMETA_XATTRS 1 4" "ENTRY file f" "DIR_END" "END"
refused "xattrs without -X" "did not ask for"
evil_push 0x10 'DIR_BEGIN 0 ""' "ENTRY file f 020644" "DIR_END" "END"
refused "a file with a device's type bits" "malformed ENTRY"

note "a set larger than XMETA holds: that file fails, its data and the rest go"
# ext4 keeps about 4 KiB of xattrs per inode; tmpfs (/dev/shm) holds more
head -c 40000 /dev/zero | tr '\0' a > "$T/v"
BX=$(mktemp -d /dev/shm/ferry-bigx.XXXXXX)
echo data > "$BX/f"; echo other > "$BX/g"
setfattr -n user.one -v "$(cat "$T/v")" "$BX/f" && setfattr -n user.two -v "$(cat "$T/v")" "$BX/f" ||
  { rm -rf "$BX"; fail "/dev/shm keeps no 80 KB of xattrs here"; }
rc=0; ferry_c push -aX "$BX/" "$(url plain/bigx/)" > "$T/last.out" 2> "$T/last.err" || rc=$?
cmp "$BX/f" "$T/plain/bigx/f" && cmp "$BX/g" "$T/plain/bigx/g" || { rm -rf "$BX"; fail "the data did not go"; }
rm -rf "$BX"
[ "$rc" = 23 ] || fail "a set past the limit: exit $rc, not 23"
grep -q "f: xattrs larger than 60000 bytes" "$T/last.err" || { cat "$T/last.err"; fail "no line naming the file"; }
stop_server

note "a root daemon gives a client's file no capability, as it gives it no setuid bit"
mkdir -p "$T/caps"; echo bin > "$T/caps/ping"; chmod 4755 "$T/caps/ping"
setfattr -n security.capability -v 0x0100000200200000000000000000000000000000 "$T/caps/ping" ||
  fail "cannot set a file capability here"
setfattr -n user.kept -v 1 "$T/caps/ping"
start_server
expect_rc 0 ferry_c push -aX "$T/caps/" "$(url m/caps/)"
getfattr --absolute-names -n user.kept "$T/mod/caps/ping" > /dev/null 2>&1 || fail "-X lost user.kept"
if getfattr --absolute-names -n security.capability "$T/mod/caps/ping" > /dev/null 2>&1; then
  fail "the daemon set a client's security.capability"
fi
[ "$(stat -c %a "$T/mod/caps/ping")" = 755 ] || fail "the daemon kept a client's setuid bit"
note "... while a root client's pull -aX restores one (set after the file's last write)"
mkdir -p "$T/mod/boxcaps"; cp -a "$T/caps/ping" "$T/mod/boxcaps/"
expect_rc 0 ferry_c pull -aX "$(url m/boxcaps/)" "$T/capsback/"
getfattr --absolute-names -n security.capability -e hex "$T/capsback/ping" | grep -q "0x0100000200200000" ||
  fail "pull -aX as root did not restore a file capability"

note "ls -a lists devices and special files, as rsync --list-only -a"
expect_rc 0 ferry_c ls -a "$(url m/r1/dev/)"
grep -q "^crw-rw-rw- .* null$" "$T/last.out" && grep -q "^prw--w---- .* fifo$" "$T/last.out" &&
  grep -q "^brw-rw---- .* sda9$" "$T/last.out" && grep -q "^srwx.* sock$" "$T/last.out" ||
  { cat "$T/last.out"; fail "ls -a: devices or special files missing or mistyped"; }
