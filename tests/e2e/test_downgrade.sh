#!/usr/bin/env bash
# Downgrade and garbage before the handshake.
# 1. A man in the middle removes AESGCM from the client's offer, so the
#    server picks ChaChaPoly: both opening lines are the Noise prologue, the
#    two ends disagree on it, the handshake must fail (client exit 2, server
#    logs a handshake failure). Only meaningful where both ends would pick
#    AESGCM, i.e. with hardware AES on both.
# 2. Garbage opening lines: the server answers "FERRY/1 ERROR ..." or closes,
#    never crashes, and keeps serving.
. "$(dirname "$0")/lib.sh"

[ -x "$PROXY" ] || fail "ferry-proxy not built in $FERRY_TOOLS"

# shellcheck disable=SC2086
cv=$($FERRY_CLIENT version 2>&1) || fail "ferry version failed"
# shellcheck disable=SC2086
sv=$($FERRY_SERVER version 2>&1) || fail "ferry version failed (server)"
case "$cv$sv" in
  *"hardware AES no"*)
    echo "SKIP: no hardware AES on one end ($cv / $sv): AESGCM would not be chosen anyway"
    exit 77 ;;
esac
grep -q "hardware AES yes" <<< "$cv" || fail "ferry version does not say 'hardware AES yes|no': $cv"

write_config
start_server
mkdir -p "$T/src"
echo hello > "$T/src/file"

PROXY_TIMEOUT=30   # start_proxy, stop_proxy, purl: lib.sh

# A refused or failed session in a row is penalised; a good one clears it.
unpenalize() {
  # The refusing session's status reaches the daemon after the client has
  # its answer: let it land first, then let the good session's land.
  sleep 0.1
  for _ in 1 2 3 4 5 6 7 8; do
    ferry_c ls -q "$(url m)" > /dev/null 2>&1 && { sleep 0.1; return 0; }
    sleep 1
  done
  fail "the daemon keeps refusing a good ls"
}

note "control: through the proxy, untouched, both ends choose AESGCM"
start_proxy
expect_rc 0 ferry_c push -v "$T/src/" "$(purl m/control)"
stop_proxy
grep -q 'Noise_XX_25519_AESGCM_BLAKE2b' "$T/last.err" ||
  { cat "$T/last.err" >&2; fail "AESGCM was not chosen with hardware AES on both ends"; }

note "the proxy strips AESGCM from the client's offer: the handshake fails"
fails0=$(grep -c 'handshake failed' "$T/server.log" || true)
start_proxy --strip-aesgcm
expect_rc 2 ferry_c push -v "$T/src/" "$(purl m/downgraded)"
stop_proxy
grep -q 'proxy: stripped AESGCM' "$T/proxy.err" || { cat "$T/proxy.err" >&2; fail "nothing was stripped"; }
echo "   client: $(tr '\n' ' ' < "$T/last.err" | cut -c1-200)"
for _ in $(seq 1 40); do
  [ "$(grep -c 'handshake failed' "$T/server.log" || true)" -gt "$fails0" ] && break
  sleep 0.05
done
[ "$(grep -c 'handshake failed' "$T/server.log" || true)" -gt "$fails0" ] ||
  fail "the server did not log a handshake failure"
echo "   server: $(grep 'handshake failed' "$T/server.log" | tail -n 1)"
[ ! -e "$T/mod/downgraded" ] || fail "a downgraded session wrote to the module"
unpenalize

note "a client that only offers ChaChaPoly is not affected by the proxy"
start_proxy --strip-aesgcm
expect_rc 0 ferry_c push -v --cipher chachapoly "$T/src/" "$(purl m/chacha)"
stop_proxy
grep -q 'Noise_XX_25519_ChaChaPoly_BLAKE2b' "$T/last.err" || fail "ChaChaPoly not in use"
same_tree "$T/src" "$T/mod/chacha"

note "garbage opening lines"
# send_raw BYTES: writes them to the server, collects its answer (5 s at most).
send_raw() {
  : > "$T/raw.out"
  exec 3<> "/dev/tcp/127.0.0.1/$PORT" || fail "cannot connect to the server"
  printf '%b' "$1" >&3 2> /dev/null || true
  timeout 5 cat <&3 > "$T/raw.out" 2> /dev/null || true
  exec 3>&- 3<&-
}
LONGLINE=$(printf 'A%.0s' $(seq 1 400))
i=0
for garbage in 'GET / HTTP/1.0\r\n\r\n' 'FERRY/2 Noise_XX_25519_ChaChaPoly_BLAKE2b\n' \
               'FERRY/1 \n' '\n' 'FERRY/1 Noise_XX_448_Foo_SHA512\n' 'FERRY/1 a  b\n' \
               "FERRY/1 $LONGLINE\n" "$LONGLINE" 'FERRY/1 Noise_XX_25519_ChaChaPoly_BLAKE2b\n\x00\x05hello' \
               'FERRY/1 Noise_XX_25519_ChaChaPoly_BLAKE2b\n\xff\xff' '\x00\x01\x02\xff\xfe\n' \
               'SSH-2.0-OpenSSH_9.2\r\n'; do
  i=$((i + 1))
  send_raw "$garbage"
  answer=$(head -c 200 "$T/raw.out" | tr -c '[:print:]' '.')
  echo "   garbage $i: answer: ${answer:-<closed>}"
  # Only an error line (or nothing) may come back; never a handshake message
  # for a malformed or unsupported line.
  if [ -s "$T/raw.out" ]; then
    case $garbage in
      'FERRY/1 Noise_XX_25519_ChaChaPoly_BLAKE2b\n'*) ;;   # a valid line, junk after it
      *) head -c 14 "$T/raw.out" | grep -q '^FERRY/1 ERROR' ||
           fail "garbage $i: unexpected answer: $answer" ;;
    esac
  fi
  kill -0 "$SERVER_PID" || fail "the daemon died after garbage $i"
  unpenalize
done

note "the daemon still serves"
if grep -qE 'died of signal|runtime error:|Sanitizer' "$T/server.log"; then fail "a session process crashed"; fi
expect_rc 0 ferry_c push -q "$T/src/" "$(url m/after)"
same_tree "$T/src" "$T/mod/after"
note "ok"
