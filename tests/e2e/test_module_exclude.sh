#!/usr/bin/env bash
# Issue 12.4: a module's own excludes (ferry.conf "exclude" and "exclude
# from", as rsyncd's module parameters): never sent, never written, never
# deleted, whatever the client asks. The oracle is the real rsync daemon
# with the same two parameters, on copies of the same trees.
. "$(dirname "$0")/lib.sh"

command -v rsync > /dev/null || fail "rsync is needed as the oracle (make deps installs it)"
printf -- '*.bak\n# a comment\nprivate/\n' > "$T/excl"
EXCL='*.tmp /secret/ cache/'

# the module's contents before each case: excluded things at several depths
fill_module() {
  rm -rf "$1"
  mkdir -p "$1/secret/deep" "$1/a/cache" "$1/a/b/private" "$1/keep"
  for f in secret/deep/s a/cache/c a/x.tmp a/y.bak a/b/private/p a/b/ok keep/k top.tmp top; do
    echo "box $f" > "$1/$f"
  done
}
# what a client pushes: the same names with other contents, and more
fill_source() {
  rm -rf "$1"
  mkdir -p "$1/secret" "$1/a/cache" "$1/a/b/private" "$1/new"
  for f in secret/s2 a/cache/c a/x.tmp a/b/private/p a/b/ok new/n top.tmp z.bak; do
    echo "pc $f" > "$1/$f"
  done
}
listing() { (cd "$1" && find . -mindepth 1 -printf '%y %P ' -exec sh -c 'test -f "$1" && cat "$1" || echo' _ {} \; | LC_ALL=C sort); }
same() {   # same WHAT ORACLE GOT
  diff <(listing "$2") <(listing "$3") > "$T/d.out" || { cat "$T/d.out"; fail "$1: differs from rsyncd's"; }
}

mkdir -p "$T/mod"
write_config "exclude = $EXCL" "exclude from = $T/excl"
start_server

# the oracle: an rsync daemon on a free port, module m at $T/rmod
RPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$T/rsyncd.conf" << EOF
port = $RPORT
address = 127.0.0.1
use chroot = no
pid file = $T/rsyncd.pid
[m]
path = $T/rmod
read only = no
exclude = $EXCL
exclude from = $T/excl
EOF
[ "$(id -u)" = 0 ] && printf 'uid = root\ngid = root\n' >> "$T/rsyncd.conf"
mkdir -p "$T/rmod"
rsync --daemon --no-detach --config="$T/rsyncd.conf" 2> "$T/rsyncd.log" &
RSYNCD=$!
trap 'rc=$?; kill $RSYNCD 2> /dev/null || true; (exit $rc); cleanup' EXIT   # cleanup exits with $?
for _ in $(seq 1 100); do
  rsync "rsync://127.0.0.1:$RPORT/" > /dev/null 2>&1 && break
  sleep 0.05
done
R=rsync://127.0.0.1:$RPORT/m

note "pull of the whole module: what it excludes is not sent"
fill_module "$T/mod"
fill_module "$T/rmod"
expect_rc 0 ferry_c pull --protection none "$(url m/)" "$T/got/"
rsync -a "$R/" "$T/want/" 2> /dev/null || true   # rsyncd says nothing of what it skips
same "pull" "$T/want" "$T/got"
[ ! -e "$T/got/secret" ] && [ ! -e "$T/got/a/y.bak" ] || fail "excluded files were sent"

note "pull of a path inside an excluded directory: nothing of it"
rc=0
ferry_c pull --protection none "$(url m/secret/deep/s)" "$T/got2/" > "$T/out" 2>&1 || rc=$?
[ ! -e "$T/got2/s" ] || fail "a file under an excluded directory was sent"

note "push --delete: excluded names are neither written nor deleted"
fill_module "$T/mod"
fill_module "$T/rmod"
fill_source "$T/src"
expect_rc 0 ferry_c push --protection none --delete "$T/src/" "$(url m/)"
rsync -a --delete "$T/src/" "$R/" 2> /dev/null || true
same "push --delete" "$T/rmod" "$T/mod"
grep -q "box secret/deep/s" "$T/mod/secret/deep/s" || fail "an excluded file was changed or deleted"

note "push --delete-excluded: the module's excludes still stand"
fill_module "$T/mod"
fill_module "$T/rmod"
expect_rc 0 ferry_c push --protection none --delete-excluded --exclude 'keep/' "$T/src/" "$(url m/)"
rsync -a --delete-excluded --exclude 'keep/' "$T/src/" "$R/" 2> /dev/null || true
same "push --delete-excluded" "$T/rmod" "$T/mod"

note "push into an excluded directory: refused, nothing written"
rc=0
ferry_c push --protection none "$T/src/" "$(url m/secret/x/)" > "$T/out" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "a push into an excluded directory succeeded"
[ ! -e "$T/mod/secret/x" ] || fail "a push into an excluded directory wrote"

note "a bad exclude line is a startup error naming it"
stop_server
printf '[global]\nlisten = 127.0.0.1:0\nauthorized keys = %s\n[m]\npath = %s\nexclude from = %s/nothere\n' \
  "$T/serverhome/authorized_keys" "$T/mod" "$T" > "$T/bad.conf"
rc=0
FERRY_HOME=$T/serverhome timeout 5 $FERRY_SERVER serve --config "$T/bad.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "bad.conf:6: exclude from .*nothere" "$T/out" ||
  { cat "$T/out"; fail "a missing exclude-from file was not a startup error naming it (rc $rc)"; }

note "an exclude-from that is a FIFO is refused at start, never read (it would block)"
mkfifo "$T/fifo"
sed -i "s|^exclude from = .*|exclude from = $T/fifo|" "$T/bad.conf"
rc=0
FERRY_HOME=$T/serverhome timeout 5 $FERRY_SERVER serve --config "$T/bad.conf" > "$T/out" 2>&1 || rc=$?
[ "$rc" != 124 ] && grep -q "fifo: not a regular file" "$T/out" ||
  { cat "$T/out"; fail "a FIFO as exclude-from was not refused at once (rc $rc)"; }
