#!/usr/bin/env bash
# A man in the middle flips one byte after the handshake (ferry-proxy).
# Control messages are always AEAD-protected: a flip there fails at every
# protection level. File data: at encrypt and integrity the record's tag
# fails and the session ends; at none the whole-file xxh3 hash catches it and
# only that file fails (exit 23). In no case does a file land under its final
# name, and no temporary file is left once the receiver has noticed.
. "$(dirname "$0")/lib.sh"

[ -x "$PROXY" ] || fail "ferry-proxy not built in $FERRY_TOOLS"

MODPROT=none write_config
start_server

mkdir -p "$T/src/tamper"
head -c $((4 * 1024 * 1024)) /dev/urandom > "$T/src/tamper/big"
echo small > "$T/src/tamper/small"
# A known good copy in the module for the pull cases.
expect_rc 0 ferry_c push -q "$T/src/tamper/" "$(url m/good)"
same_tree "$T/src/tamper" "$T/mod/good"

# Known bugs in src/ that this test found. By default their checks are
# reported and tolerated (main stays green); FERRY_STRICT_KNOWN_BUGS=1 makes
# them fail, to see whether a fix worked.
STRICT=${FERRY_STRICT_KNOWN_BUGS:-1}
known_bug() {
  if [ "$STRICT" = 1 ]; then fail "KNOWN BUG: $*"; fi
  echo "   KNOWN BUG (tolerated; FERRY_STRICT_KNOWN_BUGS=1 to fail): $*"
}

PROXY_TIMEOUT=50   # start_proxy, stop_proxy, purl: lib.sh

# wait_no_temp DIR: the receiver notices and cleans up (bounded wait). What
# arrived before the tampered record may stay as a partial (resume): at
# encrypt and integrity it passed the AEAD, and whatever the level a later
# run reuses only the blocks that match the sender's signature.
wait_no_temp() {
  for _ in $(seq 1 100); do
    [ -z "$(find "$1" -name '.ferry-*' ! -name '.ferry-part.*' | head -n 1)" ] && return 0
    sleep 0.05
  done
  no_temp_but_partials "$1"
}

# The daemon penalises an address after two refused sessions in a row; a
# tampered session does not count as refused, but keep it clean anyway.
good_session() { expect_rc 0 ferry_c ls -q "$(url m)"; }

# run_case NAME LEVEL DIR SKIP WANT OP: one tampered transfer.
#   OP push: push src/tamper/ to m/NAME;   OP pull: pull m/good/ into T/dl-NAME
#   WANT: "fail" (any non-zero exit but 23), "partial" (exit 23), or a number.
run_case() {
  local name=$1 level=$2 dir=$3 skip=$4 want=$5 op=$6 rc=0 dest
  start_proxy --flip-after-handshake --dir "$dir" --skip "$skip"
  if [ "$op" = push ]; then
    dest=$T/mod/$name
    ferry_c push -q --timeout 15 --protection "$level" "$T/src/tamper/" "$(purl "m/$name")" \
      > "$T/case.out" 2>&1 || rc=$?
  else
    dest=$T/dl-$name
    ferry_c pull -q --timeout 15 --protection "$level" "$(purl m/good/)" "$dest/" \
      > "$T/case.out" 2>&1 || rc=$?
  fi
  stop_proxy
  grep -q 'proxy: flipped' "$T/proxy.err" ||
    { cat "$T/proxy.err" >&2; fail "$name: the proxy flipped nothing (offset $skip too far?)"; }
  echo "   $name ($op, $level, $dir byte $skip): exit $rc: $(tr '\n' ' ' < "$T/case.out" | cut -c1-160)"
  if [ "$rc" -ge 128 ] || grep -qE 'runtime error:|Sanitizer' "$T/case.out"; then
    # BUG (src/session/filedata.c, stream_extent): chan_data_buf() returns
    # NULL once the peer has gone (out_reserve fails); the NULL is passed to
    # pread (EFAULT) and then memset -> SIGSEGV. Seen in the client pushing
    # when the server ends the session (tampered listing or data record): a
    # race with the client's next data buffer, so any push case can hit it.
    # (Under -DFERRY_SANITIZE=ON: "filedata.c:102: runtime error: null pointer".)
    if grep -qE 'runtime error:|Sanitizer' "$T/case.out" && ! grep -q 'filedata.c' "$T/case.out"; then
      cat "$T/case.out" >&2; fail "$name: a sanitizer report"
    fi
    known_bug "$name: client crashed (exit $rc): stream_extent() uses a NULL chan_data_buf()"
    rc=10
  fi
  case $want in
    fail) { [ "$rc" != 0 ] && [ "$rc" != 23 ]; } ||
            { cat "$T/case.out" >&2; fail "$name: wanted a failed session, got exit $rc"; } ;;
    partial) [ "$rc" = 23 ] || { cat "$T/case.out" >&2; fail "$name: wanted exit 23, got $rc"; } ;;
    *) [ "$rc" = "$want" ] || { cat "$T/case.out" >&2; fail "$name: wanted exit $want, got $rc"; } ;;
  esac
  # The big file never lands under its final name (tampered or not sent).
  [ ! -e "$dest/big" ] || fail "$name: the tampered file was committed as $dest/big"
  if [ -d "$dest" ]; then wait_no_temp "$dest"; fi
  wait_no_temp "$T/mod"
  good_session
}

# Offsets counted from the first transport byte of the direction.
#   c2s 5: inside the REQUEST record's ciphertext (control).
#   s2c 5: inside the server's first record, ACCEPT (control).
#   c2s 150: inside the listing (DIR_BEGIN/ENTRY records, ~200 bytes in all
#            before the first FILE_BEGIN, which waits for a WANT).
#   s2c 30: past ACCEPT (26 bytes): the first WANT record.
#   c2s/s2c 1 MiB + 123: inside the big file's data (it is the first and
#   only large file; the listing and the small file come to a few hundred bytes).
DATA_OFF=$((1024 * 1024 + 123))
for level in encrypt integrity none; do
  note "protection $level"
  # Control records. The client sees a tampered ACCEPT itself (decryption
  # failed, -EBADMSG) yet exits 10, not 12: client_open() maps every receive
  # error to EXIT_SOCKET (see the report); "fail" accepts both.
  run_case "req-$level" "$level" c2s 5 fail push
  run_case "acc-$level" "$level" s2c 5 fail push
  run_case "list-$level" "$level" c2s 150 fail push
  run_case "want-$level" "$level" s2c 30 fail push
  if [ "$level" = none ]; then
    # Data travels raw: only the whole-file hash stands between the flip and the disk.
    run_case "pushdata-$level" "$level" c2s "$DATA_OFF" partial push
    [ "$(cat "$T/mod/pushdata-$level/small")" = small ] ||
      fail "pushdata-$level: the untouched small file was not transferred"
    run_case "pulldata-$level" "$level" s2c "$DATA_OFF" partial pull
    [ "$(cat "$T/dl-pulldata-$level/small")" = small ] ||
      fail "pulldata-$level: the untouched small file was not transferred"
  else
    run_case "pushdata-$level" "$level" c2s "$DATA_OFF" fail push
    run_case "pulldata-$level" "$level" s2c "$DATA_OFF" fail pull
  fi
done


note "a client that vanishes in the middle of a pull"
ended0=$(grep -cE 'died of signal|session failed' "$T/server.log" || true)
# The session process must end cleanly (not by a signal) when its peer is gone.
mkdir -p "$T/mod/huge"
head -c $((200 * 1024 * 1024)) /dev/zero > "$T/mod/huge/zeros"   # not sparse-detected: written
for i in 1 2; do
  mkdir -p "$T/dl-vanish$i"
  # shellcheck disable=SC2086
  timeout -s KILL 0.3 $FERRY_CLIENT pull -q --identity "$T/clienthome/id_ferry" \
    --known-hosts "$T/clienthome/known_hosts" --accept-new --protection none \
    "$(url m/huge/)" "$T/dl-vanish$i/" > /dev/null 2>&1 || true
  sleep 0.3
done
rm -rf "$T/mod/huge"
# Wait until both sessions have ended (failed or crashed), then judge.
for _ in $(seq 1 100); do
  [ "$(grep -cE 'died of signal|session failed' "$T/server.log" || true)" -ge $((ended0 + 2)) ] && break
  sleep 0.05
done
# BUG (same as above, server side): stream_extent() crashes the session
# process of a pull (SIGSEGV) when the client disconnects mid-file; it can
# also happen in the tampered pull cases above, when the client leaves first.
CRASH='died of signal|runtime error:|Sanitizer'
if grep -qE "$CRASH" "$T/server.log"; then
  known_bug "session process(es) crashed: $(grep -E "$CRASH" "$T/server.log" | head -n 3 | cut -c1-160 | tr '\n' ' ')"
  if grep -qE 'runtime error:|Sanitizer' "$T/server.log" && ! grep -q 'filedata.c' "$T/server.log"; then
    grep -E 'runtime error:|Sanitizer' "$T/server.log" >&2; fail "a sanitizer report in the server log"
  fi
fi
crashes_known=$(grep -cE "$CRASH" "$T/server.log" || true)

note "the server logged the failures and keeps serving"
grep -q 'session failed' "$T/server.log" || fail "no session failure in the server log"
expect_rc 0 ferry_c push -q "$T/src/tamper/" "$(url m/after)"
[ "$(grep -cE "$CRASH" "$T/server.log" || true)" = "$crashes_known" ] ||
  fail "a session process crashed"
same_tree "$T/src/tamper" "$T/mod/after"
no_temp_but_partials "$T/mod"
note "ok"
