#!/usr/bin/env bash
# Every protection level with every cipher: a small tree and a 20 MiB random
# file pushed and pulled back intact; `-v` names the cipher and the level in
# use. Then the two AEAD backends against each other (FERRY_AEAD is read at
# run time): server libsodium / client OpenSSL and the other way round.
. "$(dirname "$0")/lib.sh"

MODPROT=none write_config
mkdir -p "$T/src/dir/sub" "$T/src/empty"
echo one > "$T/src/a"
printf 'two\n%.0s' $(seq 1 100) > "$T/src/dir/b"
: > "$T/src/dir/zero"
head -c 70000 /dev/urandom > "$T/src/dir/sub/c"   # more than one record
ln -s dir/b "$T/src/link"
chmod 640 "$T/src/dir/b"
head -c $((20 * 1024 * 1024)) /dev/urandom > "$T/src/big"
touch -d '2001-02-03 04:05:06.789' "$T/src/a"

# AESGCM needs both ends able to run it: AES instructions, or OpenSSL's
# software AES-GCM (libsodium has none). An emulated MIPS end has neither.
CIPHERS="chachapoly aesgcm"
# shellcheck disable=SC2086
for end in "$($FERRY_CLIENT version 2>&1)" "$($FERRY_SERVER version 2>&1)"; do
  case $end in *"hardware AES no"*)
    case $end in *libsodium*) CIPHERS=chachapoly; echo "   an end without AES-GCM: ChaChaPoly only";; esac ;;
  esac
done

cipher_name() { [ "$1" = aesgcm ] && echo AESGCM || echo ChaChaPoly; }

# roundtrip TAG LEVEL CIPHER: push src, check, pull it back, check; asserts -v.
roundtrip() {
  local tag=$1 level=$2 cipher=$3 cn
  cn=$(cipher_name "$cipher")
  expect_rc 0 ferry_c push -v --protection "$level" --cipher "$cipher" "$T/src/" "$(url "m/$tag")"
  grep -q "Noise_XX_25519_${cn}_BLAKE2b" "$T/last.err" ||
    { cat "$T/last.err" >&2; fail "$tag: push -v does not show $cn"; }
  grep -q "protection $level" "$T/last.err" ||
    { cat "$T/last.err" >&2; fail "$tag: push -v does not show protection $level"; }
  same_tree "$T/src" "$T/mod/$tag"
  expect_rc 0 ferry_c pull -v --protection "$level" --cipher "$cipher" "$(url "m/$tag/")" "$T/back-$tag/"
  grep -q "Noise_XX_25519_${cn}_BLAKE2b" "$T/last.err" || fail "$tag: pull -v does not show $cn"
  grep -q "protection $level" "$T/last.err" || fail "$tag: pull -v does not show protection $level"
  same_tree "$T/src" "$T/back-$tag"
  no_temp_files "$T/mod"
  echo "   $tag: $(grep -h 'connected to' "$T/last.err" | sed 's/.*Noise/Noise/; s/, host key.*//')"
  rm -rf "$T/mod/$tag" "$T/back-$tag"
}

start_server
for level in encrypt integrity none; do
  for cipher in $CIPHERS; do
    note "protection $level, cipher $cipher"
    roundtrip "$level-$cipher" "$level" "$cipher"
  done
done

note "protection none --no-verify: sendfile and splice, no hash"
truncate -s 3G "$T/src/sparse"
echo tail >> "$T/src/sparse"
expect_rc 0 ferry_c push -v --protection none --no-verify "$T/src/" "$(url m/raw)"
grep -q "protection none, unverified" "$T/last.err" || { cat "$T/last.err" >&2; fail "-v does not say unverified"; }
same_tree "$T/src" "$T/mod/raw"
expect_rc 0 ferry_c pull --protection none --no-verify "$(url m/raw/)" "$T/back-raw"
same_tree "$T/src" "$T/back-raw"
no_temp_files "$T/mod"
rm -rf "$T/mod/raw" "$T/back-raw" "$T/src/sparse"
expect_rc 1 ferry_c push --no-verify "$T/src/" "$(url m/raw)"
grep -q -- "--no-verify goes with --protection none" "$T/last.err" || fail "--no-verify at encrypt not refused"

note "the default is encrypt"
expect_rc 0 ferry_c push -v "$T/src/" "$(url m/default)"
grep -q "protection encrypt" "$T/last.err" || fail "the default protection is not encrypt"
same_tree "$T/src" "$T/mod/default"
rm -rf "$T/mod/default"
stop_server

note "AEAD backends against each other"
# shellcheck disable=SC2086
so=$(FERRY_AEAD=sodium $FERRY_CLIENT version 2>&1; FERRY_AEAD=sodium $FERRY_SERVER version 2>&1)
# shellcheck disable=SC2086
os=$(FERRY_AEAD=openssl $FERRY_CLIENT version 2>&1; FERRY_AEAD=openssl $FERRY_SERVER version 2>&1)
# both ends must have both backends (an emulated MIPS end has libsodium only)
if [ "$(grep -c 'backend libsodium' <<< "$so")" != 2 ] || [ "$(grep -c 'backend openssl' <<< "$os")" != 2 ]; then
  echo "   SKIPPED: this build does not have both backends ($so / $os)"
  note "ok (backend interop not tested)"
  exit 0
fi
for pair in sodium:openssl openssl:sodium; do
  sb=${pair%%:*} cb=${pair##*:}
  export FERRY_AEAD=$sb
  start_server
  # shellcheck disable=SC2086
  $FERRY_SERVER version | grep -q "backend $( [ "$sb" = sodium ] && echo libsodium || echo openssl)" ||
    fail "the server side does not use $sb"
  export FERRY_AEAD=$cb
  for cipher in $CIPHERS; do
    note "server $sb, client $cb, $cipher"
    roundtrip "x-$sb-$cb-$cipher" encrypt "$cipher"
    want=$( [ "$cb" = sodium ] && echo libsodium || echo openssl)
    grep -q "($want)" "$T/last.err" || { cat "$T/last.err" >&2; fail "the client did not use $want"; }
  done
  unset FERRY_AEAD
  stop_server
done
if grep -qE 'died of signal|runtime error:|Sanitizer' "$T/server.log"; then fail "a session process crashed"; fi
note "ok"
