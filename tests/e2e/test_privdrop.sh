#!/usr/bin/env bash
# Issue 15, item 1: privileges. "user = nobody" in [global]: the daemon binds
# (a port below 1024 too) and reads a root-only host key as root, then is
# nobody for good (every uid and gid, no supplementary groups, no
# capabilities), before the first client; what it writes is nobody's, what
# nobody may not write is refused with a clear line and the daemon keeps
# serving; a reload works as nobody, one that changes the user is refused.
# A daemon that stays root drops each session to its module's "uid"/"gid".
# Bad settings are one clear line from --check-config; a daemon that is not
# root cannot become someone else.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || fail "needs root: it tests giving root up"
command -v setpriv > /dev/null || fail "setpriv is needed (util-linux)"
chmod 755 "$T"
NOBODY=$(id -u nobody) NOGROUP=$(getent group nogroup | cut -d: -f3)
mkdir -p "$T/keys" "$T/mod" "$T/rootmod" "$T/owned" "$T/src/sub"
chmod 700 "$T/keys"
chown nobody:nogroup "$T/mod"
chmod 755 "$T/serverhome"; chmod 644 "$T/serverhome/authorized_keys"
for i in 1 2 3; do head -c $((i * 70000)) /dev/urandom > "$T/src/f$i"; done
echo small > "$T/src/sub/s"

# conf GLOBAL-LINES MODULE-LINES: [global] with LISTEN, then modules m
# (nobody's), rootmod (root's, 0755) and owned.
conf() {
  {
    echo "[global]"
    echo "listen = ${LISTEN:-127.0.0.1:0}"
    echo "host key = ${HOSTKEY:-$T/keys/host_key}"
    echo "authorized keys = $T/serverhome/authorized_keys"
    echo "nice = 0"
    printf '%b\n' "$1"
    echo "[m]"
    echo "path = $T/mod"
    echo "protection = none"
    echo "[rootmod]"
    echo "path = $T/rootmod"
    echo "[owned]"
    echo "path = $T/owned"
    printf '%b\n' "${2:-}"
  } > "$T/ferry.conf"
  chmod 644 "$T/ferry.conf"
}

# ids PID: "Uid: ... Gid: ... Groups: ... CapPrm CapEff" from /proc
ids() {
  awk '/^(Uid|Gid|Groups|CapPrm|CapEff):/ { $1 = $1; printf "%s; ", $0 }' "/proc/$1/status"
}

note "user = nobody: bound to a port below 1024 and holding a root-only key, then nobody"
LOW=$(python3 -c '
import socket
for p in range(700, 1000):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); print(p); break
    except OSError: pass
    finally: s.close()')
[ -n "$LOW" ] || fail "no free port below 1000 on 127.0.0.1"
LISTEN=127.0.0.1:$LOW conf "user = nobody\ngroup = nogroup"
# started with supplementary groups, which must go too
FERRY_SERVER="setpriv --groups=4,24 $FERRY_SERVER" start_server
[ "$PORT" = "$LOW" ] || fail "listening on $PORT, not $LOW"
grep -q "running as user nobody (uid $NOBODY, gid $NOGROUP)" "$T/server.log" ||
  fail "no 'running as' line in the log"
[ "$(stat -c %u:%a "$T/keys/host_key")" = "0:600" ] || fail "the host key is not root's own"
got=$(ids "$SERVER_PID")
want="Uid: $NOBODY $NOBODY $NOBODY $NOBODY; Gid: $NOGROUP $NOGROUP $NOGROUP $NOGROUP; Groups:; CapPrm: 0000000000000000; CapEff: 0000000000000000; "
[ "$got" = "$want" ] || fail "daemon ids: got '$got', want '$want'"

ferry_c push -r "$T/src/" "$(url m/)" > /dev/null 2> "$T/err" || { cat "$T/err"; fail "push as nobody"; }
same_tree "$T/src" "$T/mod"
bad=$(find "$T/mod" -mindepth 1 ! -user nobody | head -n1)
[ -z "$bad" ] || fail "$bad is not nobody's"
ferry_c pull -r "$(url m/)" "$T/back" > /dev/null 2>&1 || fail "pull as nobody"
same_tree "$T/src" "$T/back"

note "a module nobody may not write: a clear refusal, and the daemon goes on"
expect_rc 23 ferry_c push -r "$T/src/" "$(url rootmod/)"
grep -qi "permission denied" "$T/last.err" || { cat "$T/last.err"; fail "no 'permission denied'"; }
[ "$(find "$T/rootmod" -mindepth 1 | wc -l)" = 0 ] || fail "something was written to rootmod"
ferry_c ls "$(url m/)" > /dev/null 2>&1 || fail "the daemon stopped serving"

note "reload as nobody; a reload that changes the user is refused"
LISTEN=127.0.0.1:$LOW conf "user = nobody\ngroup = nogroup" "comment = reloaded"
kill -HUP "$SERVER_PID"
for _ in $(seq 1 100); do grep -q "configuration reloaded" "$T/server.log" && break; sleep 0.05; done
grep -q "configuration reloaded" "$T/server.log" || fail "reload as nobody failed"
ferry_c ls "$(url m/)" > /dev/null 2>&1 || fail "no serving after the reload"
LISTEN=127.0.0.1:$LOW conf "user = root"
kill -HUP "$SERVER_PID"
for _ in $(seq 1 100); do grep -q "takes a restart" "$T/server.log" && break; sleep 0.05; done
grep -q "reload failed, keeping the old configuration: 'user' or 'group' changed: that takes a restart" \
  "$T/server.log" || fail "a user change was not refused at reload"
[ "$(ids "$SERVER_PID")" = "$want" ] || fail "ids changed after the reload"
ferry_c push -r "$T/src/" "$(url m/again/)" > /dev/null 2>&1 || fail "no serving after a refused reload"
stop_server

note "a daemon that stays root drops each session to its module's uid/gid"
rm -rf "$T/mod"/* "$T/owned"/*
chown nobody:nogroup "$T/owned"
conf "" "uid = nobody\ngid = nogroup"
start_server
ferry_c push -r "$T/src/" "$(url owned/)" > /dev/null 2>&1 || fail "push to the uid module"
bad=$(find "$T/owned" -mindepth 1 \( ! -user nobody -o ! -group nogroup \) | head -n1)
[ -z "$bad" ] || fail "$bad is not nobody:nogroup"
ferry_c push -r "$T/src/" "$(url rootmod/)" > /dev/null 2>&1 || fail "push to the root module"
bad=$(find "$T/rootmod" -mindepth 1 ! -user root | head -n1)
[ -z "$bad" ] || fail "$bad in the module without uid is not root's"
ids "$SERVER_PID" | grep -q "^Uid: 0 0 0 0;" || fail "the daemon itself did not stay root"
# the session cannot reach what nobody cannot: a root-only file under it
mkdir -p "$T/owned/locked"; chmod 700 "$T/owned/locked"; chown root "$T/owned/locked"
expect_rc 23 ferry_c push -r "$T/src/" "$(url owned/locked/)"
grep -qi "permission denied" "$T/last.err" || { cat "$T/last.err"; fail "no 'permission denied' for locked"; }
stop_server

note "bad settings: one clear line from --check-config"
check_bad() {  # WANT GLOBAL MODULE
  conf "$2" "$3"
  rc=0
  $FERRY_SERVER serve --config "$T/ferry.conf" --check-config > "$T/out" 2> "$T/err" || rc=$?
  [ "$rc" != 0 ] || fail "accepted: $2 / $3"
  [ "$(wc -l < "$T/err")" = 1 ] || { cat "$T/err"; fail "not one line: $2 / $3"; }
  grep -qF "$1" "$T/err" || { cat "$T/err"; fail "no '$1' for: $2 / $3"; }
}
check_bad "user: no user 'no-such-user-xyz' on this system" "user = no-such-user-xyz" ""
check_bad "group: no group 'no-such-group-xyz'" "user = nobody\ngroup = no-such-group-xyz" ""
check_bad "user 4242424 has no passwd entry" "user = 4242424" ""
check_bad "uid 4242424 has no passwd entry: set gid too" "" "uid = 4242424"
check_bad "uid and gid need a daemon that stays root" "user = nobody" "uid = nobody"
check_bad "user: empty" "user =" ""
conf "user = 4242424\ngroup = 4242" ""
$FERRY_SERVER serve --config "$T/ferry.conf" --check-config > /dev/null 2>&1 ||
  fail "a numeric user with a numeric group was refused"

note "a daemon that is not root cannot become another user"
mkdir -p "$T/nkeys"; chown nobody "$T/nkeys"
HOSTKEY=$T/nkeys/host_key conf "user = root" ""
rc=0
FERRY_HOME=$T/serverhome setpriv --reuid=nobody --regid=nogroup --clear-groups \
  $FERRY_SERVER serve --config "$T/ferry.conf" > /dev/null 2> "$T/err" &
pid=$!
for _ in $(seq 1 100); do kill -0 $pid 2> /dev/null || break; sleep 0.05; done
wait $pid || rc=$?
[ "$rc" != 0 ] || fail "a nobody daemon with user = root started"
grep -q "user = root: cannot become uid 0 gid 0: running as uid $NOBODY, not root" "$T/err" ||
  { cat "$T/err"; fail "no clear line for a daemon that cannot switch"; }
echo "privdrop: ok"
