#!/usr/bin/env bash
# Issue 10, defect 7: after a server's key was replaced on purpose, one
# command forgets the old one (ssh-keygen -R): `ferry known-hosts --remove`.
. "$(dirname "$0")/lib.sh"

write_config
start_server
kh=$T/clienthome/known_hosts
expect_rc 0 ferry_c ls "$(url m)"
grep -q "^127.0.0.1:$PORT " "$kh" || fail "first contact not recorded"
# --port names the host as the URL's port does: one line, found both ways
expect_rc 0 ferry_c ls --port "$PORT" "127.0.0.1:m"
[ "$(grep -c "^127.0.0.1" "$kh")" = 1 ] || { cat "$kh"; fail "--port recorded the host under another name"; }
expect_rc 0 $FERRY_CLIENT ls --identity "$T/clienthome/id_ferry" --known-hosts "$kh" --port "$PORT" "127.0.0.1:m"
echo "other.example AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= keep me" >> "$kh"

note "a replaced host key is refused, and the message names the way out"
stop_server
rm "$T/serverhome/host_key"
start_server   # a new port: the old line is moved to it below
sed -i "s/^127.0.0.1:[0-9]* /127.0.0.1:$PORT /" "$kh"
expect_rc 6 ferry_c ls "$(url m)"
grep -q "CHANGED" "$T/last.err" || fail "no CHANGED warning"
grep -q "ferry known-hosts --remove" "$T/last.err" || { cat "$T/last.err"; fail "the warning does not name the fix"; }

note "--remove forgets it (given as HOST:PORT or as the URL), other lines stay"
expect_rc 0 $FERRY_CLIENT known-hosts --known-hosts "$kh" --remove "$(url m/some/path)"
grep -q "^127.0.0.1:$PORT " "$kh" && fail "the line is still there"
grep -q "^other.example .* keep me$" "$kh" || fail "another host's line was lost"
expect_rc 1 $FERRY_CLIENT known-hosts --known-hosts "$kh" -R "127.0.0.1:$PORT"
grep -q "no key for 127.0.0.1:$PORT" "$T/last.err" || fail "no message for a host that is not there"
expect_rc 0 ferry_c ls "$(url m)"
grep -q "^127.0.0.1:$PORT " "$kh" || fail "the new key was not recorded"

note "ferry serve DIR and ferry serve --config FILE keep the same host key"
stop_server
mkdir -p "$T/plain" "$T/etc"
# shellcheck disable=SC2086
FERRY_HOME=$T/serverhome $FERRY_SERVER serve "$T/plain" --listen 127.0.0.1:0 > /dev/null 2> "$T/server.log" &
SERVER_PID=$!
wait_listening
fp1=$(grep -o 'host key BLAKE2b:[^ ]*' "$T/server.log")
stop_server
printf '[global]\nlisten = 127.0.0.1:0\nauthorized keys = %s\n[m]\npath = %s\n' \
  "$T/serverhome/authorized_keys" "$T/plain" > "$T/etc/ferry.conf"
: > "$T/server.log"
# shellcheck disable=SC2086
FERRY_HOME=$T/serverhome $FERRY_SERVER serve --config "$T/etc/ferry.conf" > /dev/null 2> "$T/server.log" &
SERVER_PID=$!
wait_listening
fp2=$(grep -o 'host key BLAKE2b:[^ ]*' "$T/server.log")
[ -n "$fp1" ] && [ "$fp1" = "$fp2" ] || fail "the host key changed between the two ways to start: $fp1 / $fp2"
[ ! -e "$T/etc/host_key" ] || fail "a second host key was made next to the config file"
