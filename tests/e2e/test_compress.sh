#!/usr/bin/env bash
# Issue 11, item 3: -z. zstd-compressed file data (ZDATA) at every protection
# level, pushed and pulled, against modules with compress = yes / no / auto:
# every copy is byte-identical; text really travels compressed with `yes`
# and random data raw (wire bytes counted by ferry-proxy and --stats); auto
# sends raw on loopback and compresses behind a slow link; deltas compress
# their literal data; a malicious peer's ZDATA (bombs, bad lengths, no
# negotiation) is a protocol error with nothing written, the daemon serving on.
. "$(dirname "$0")/lib.sh"

write_config "compress = yes" "[no]" "path = $T/no" "protection = none" "compress = no" \
  "[auto]" "path = $T/auto" "protection = none"
mkdir -p "$T/no" "$T/auto"
start_server
S=$T/src
mkdir -p "$S"

# text that compresses about 4x, random that does not, and both in one file
text() { # BYTES: lines of words, varied enough not to be trivial
  awk -v n="$1" 'BEGIN { srand(7); s = 0
    while (s < n) { l = sprintf("%08d the quick brown %s fox jumps over the lazy %s dog %d\n", s,
      substr("abcdefghij", int(rand() * 10) + 1, 3), substr("klmnopqrst", int(rand() * 10) + 1, 4),
      int(rand() * 1000)); printf "%s", l; s += length(l) } }' | head -c "$1" || true
}
# Under qemu (scripts/cross/check.sh) the files are half the size, the
# slow link slower, and auto's loopback verdict only shown: an emulated CPU
# compresses at the speed of an emulated loopback. The slow-link file is
# 12 MiB everywhere: the first ~4 MiB go raw into the sender's autotuned
# socket buffer before the link is seen to be slow (tcp_wmem's maximum).
MiB=1048576 RATE=3000000 SLOW=$((12 * 1048576))
[ -n "${FERRY_EMULATOR:-}" ] && MiB=524288 RATE=1000000
text $((2 * MiB)) > "$S/text"
head -c $((2 * MiB)) /dev/urandom > "$S/rand"
{ text $MiB; head -c $MiB /dev/urandom; text $MiB; } > "$S/mixed"
text 5000 > "$S/small"
: > "$S/empty"
TEXT_BYTES=$((2 * MiB + 2 * MiB + 5000))   # the text in text, mixed and small
RAND_BYTES=$((3 * MiB))
TOTAL=$(cat "$S"/* | wc -c)

stat_of() { sed -n "s/^$1: \([0-9]*\) bytes\$/\1/p" "$T/last.out"; }
same_files() { for f in text rand mixed small empty; do cmp "$S/$f" "$1/$f" || fail "$2: $f differs"; done; }

note "the matrix: protection x module x push/pull x -z or not"
for prot in none integrity encrypt; do
  for mod in m no auto; do
    for z in -z ""; do
      d=$prot${z:+-z}
      rm -rf "${T:?}/$mod/$d" "$T/back"
      # shellcheck disable=SC2086
      expect_rc 0 ferry_c push -v --stats --protection $prot $z "$S/" "$(url $mod/$d)"
      dir=$T/mod; [ $mod = m ] || dir=$T/$mod
      same_files "$dir/$d" "push $mod $prot $z"
      zr=$(stat_of "Compressed data (before)"); sent=$(stat_of "Total bytes sent")
      if [ $mod = m ] && [ -n "$z" ]; then
        # every text chunk but those right after random ones (back-off) went compressed,
        # no random chunk did, and the wire carried far less than the files
        [ "$zr" -ge $((TEXT_BYTES * 7 / 10)) ] && [ "$zr" -le $((TOTAL - RAND_BYTES)) ] ||
          fail "push yes $prot: $zr bytes compressed of $TEXT_BYTES text, $RAND_BYTES random"
        [ "$sent" -lt $((TOTAL - TEXT_BYTES / 2)) ] || fail "push yes $prot: $sent bytes on the wire"
      elif [ $mod = no ] || [ -z "$z" ]; then
        [ "$zr" = 0 ] || fail "push $mod $prot '$z': $zr bytes compressed"
      fi
      if [ $mod = no ] && [ -n "$z" ]; then
        grep -q "module 'no' does not compress" "$T/last.err" || fail "-z to compress = no: not told"
      fi
      # shellcheck disable=SC2086
      expect_rc 0 ferry_c pull --stats --protection $prot $z "$(url $mod/$d/)" "$T/back/"
      same_files "$T/back" "pull $mod $prot $z"
      zr=$(stat_of "Compressed data (before)"); got=$(stat_of "Total bytes received")
      if [ $mod = m ] && [ -n "$z" ]; then
        [ "$zr" -ge $((TEXT_BYTES * 7 / 10)) ] && [ "$zr" -le $((TOTAL - RAND_BYTES)) ] ||
          fail "pull yes $prot: $zr bytes compressed"
        [ "$got" -lt $((TOTAL - TEXT_BYTES / 2)) ] || fail "pull yes $prot: $got bytes on the wire"
      elif [ $mod = no ] || [ -z "$z" ]; then
        [ "$zr" = 0 ] || fail "pull $mod $prot '$z': $zr bytes compressed"
      fi
    done
  done
done

note "--no-verify with -z: no sendfile, the data still compressed, and right"
rm -rf "$T/mod/nv" "$T/back"
expect_rc 0 ferry_c push --stats -z --protection none --no-verify "$S/" "$(url m/nv)"
same_files "$T/mod/nv" "push --no-verify -z"
[ "$(stat_of "Compressed data (before)")" -ge $((TEXT_BYTES * 7 / 10)) ] || fail "--no-verify -z did not compress"
expect_rc 0 ferry_c pull --stats -z --protection none --no-verify "$(url m/nv/)" "$T/back/"
same_files "$T/back" "pull --no-verify -z"
[ "$(stat_of "Compressed data (before)")" -ge $((TEXT_BYTES * 7 / 10)) ] || fail "pull --no-verify -z did not compress"

note "wire bytes through ferry-proxy: text compressed, random raw (compress = yes)"
for prot in none encrypt; do
  for f in text rand; do
    start_proxy
    expect_rc 0 ferry_c push -z --protection $prot "$S/$f" "$(purl m/proxy-$prot-$f)"
    stop_proxy
    cmp "$S/$f" "$T/mod/proxy-$prot-$f" || fail "push via proxy: $f differs"
    c2s=$(sed -n 's/^BYTES c2s=\([0-9]*\) .*/\1/p' "$T/proxy.out")
    size=$(stat -c %s "$S/$f")
    [ -n "$c2s" ] || fail "the proxy counted nothing"
    echo "push -z $prot $f: $size bytes of file, $c2s bytes on the wire"
    if [ $f = text ]; then
      [ "$c2s" -lt $((size / 3)) ] || fail "text went with $c2s wire bytes for $size"
    else
      [ "$c2s" -ge "$size" ] && [ "$c2s" -lt $((size + size / 50)) ] ||
        fail "random went with $c2s wire bytes for $size"
    fi
    start_proxy
    expect_rc 0 ferry_c pull -z --protection $prot "$(purl m/proxy-$prot-$f)" "$T/pp-$prot-$f"
    stop_proxy
    cmp "$S/$f" "$T/pp-$prot-$f" || fail "pull via proxy: $f differs"
    s2c=$(sed -n 's/^BYTES c2s=[0-9]* s2c=\([0-9]*\)$/\1/p' "$T/proxy.out")
    echo "pull -z $prot $f: $size bytes of file, $s2c bytes on the wire"
    if [ $f = text ]; then
      [ "$s2c" -lt $((size / 3)) ] || fail "pulled text went with $s2c wire bytes for $size"
    else
      [ "$s2c" -ge "$size" ] || fail "pulled random went with $s2c wire bytes for $size"
    fi
  done
done

note "compress = auto: raw on loopback, compressed behind a slow link"
text $((24 * MiB)) > "$S/big"
expect_rc 0 ferry_c push --stats -z "$S/big" "$(url auto/big)"
cmp "$S/big" "$T/auto/big" || fail "auto push differs"
zr=$(stat_of "Compressed data (before)")
echo "auto on loopback: $zr of $((24 * MiB)) bytes went compressed"
[ -n "${FERRY_EMULATOR:-}" ] || [ "$zr" -lt $((24 * MiB / 2)) ] || fail "auto compressed $zr bytes on loopback"
text $SLOW > "$S/slow"
start_proxy --rate $RATE
expect_rc 0 ferry_c push --stats -z "$S/slow" "$(purl auto/slow)"
stop_proxy
cmp "$S/slow" "$T/auto/slow" || fail "auto push via a slow link differs"
zr=$(stat_of "Compressed data (before)")
echo "auto behind $RATE bytes/s (push): $zr of $SLOW bytes went compressed"
[ "$zr" -gt $((SLOW * 3 / 10)) ] || fail "auto did not compress behind a slow link ($zr)"
start_proxy --rate $RATE
expect_rc 0 ferry_c pull --stats -z "$(purl auto/slow)" "$T/slow-back"
stop_proxy
cmp "$S/slow" "$T/slow-back" || fail "auto pull via a slow link differs"
zr=$(stat_of "Compressed data (before)")
echo "auto behind $RATE bytes/s (pull, the box decides): $zr of $SLOW bytes went compressed"
[ "$zr" -gt $((SLOW * 3 / 10)) ] || fail "the box's auto did not compress behind a slow link ($zr)"

note "a delta with -z: its literal data compressed, both ways"
{ text $((3 * MiB)); } > "$S/d"
expect_rc 0 ferry_c push "$S/d" "$(url m/d)"
cp "$S/d" "$T/d-old"
{ head -c $((MiB - 48576)) "$S/d"; text $((MiB * 2 / 5)) | tr a-z A-Z
  tail -c +$((MiB - 48576 + MiB * 2 / 5 + 1)) "$S/d"; } > "$S/d.new"
mv "$S/d.new" "$S/d"; touch -d '2030-01-01' "$S/d"
expect_rc 0 ferry_c push -z --stats "$S/d" "$(url m/d)"
cmp "$S/d" "$T/mod/d" || fail "delta push -z differs"
lit=$(stat_of "Literal data"); match=$(stat_of "Matched data"); zr=$(stat_of "Compressed data (before)")
echo "delta push -z: literal $lit, matched $match, compressed $zr"
[ "$match" -gt $MiB ] && [ "$zr" -gt $((lit / 2)) ] || fail "delta push -z: literal $lit matched $match compressed $zr"
expect_rc 0 ferry_c pull -z --stats "$(url m/d)" "$T/d-old"
cmp "$S/d" "$T/d-old" || fail "delta pull -z differs"
lit=$(stat_of "Literal data"); match=$(stat_of "Matched data"); zr=$(stat_of "Compressed data (before)")
echo "delta pull -z: literal $lit, matched $match, compressed $zr"
[ "$match" -gt $MiB ] && [ "$zr" -gt $((lit / 2)) ] || fail "delta pull -z: literal $lit matched $match compressed $zr"

note "--compress-level, and the flags that stay refused"
expect_rc 0 ferry_c push --compress-level=19 --stats "$S/text" "$(url m/lvl19)"
cmp "$S/text" "$T/mod/lvl19" || fail "level 19 differs"
[ "$(stat_of "Compressed data (before)")" -gt 0 ] || fail "--compress-level=19 did not imply -z"
expect_rc 0 ferry_c push -z --zl=0 --stats "$S/text" "$(url m/lvl0)"
[ "$(stat_of "Compressed data (before)")" = 0 ] || fail "--compress-level=0 still compressed"
expect_rc 1 ferry_c push --compress-level=23 "$S/text" "$(url m/x)"
expect_rc 1 ferry_c push --skip-compress=gz "$S/text" "$(url m/x)"
grep -q "incompressible" "$T/last.err" || fail "--skip-compress: $(cat "$T/last.err")"

note "ZDATA from a malicious client: a protocol error, nothing written, the daemon serving on"
EVIL=$FERRY_TOOLS/ferry-evil
ZF=0x10010   # REQ_COMPRESS | REQ_CHANGES
evil_push() { # MODULE FLAGS LINES...: the script after a one-file listing; output in evil.out
  local mod=$1 flags=$2; shift 2
  { printf 'DIR_BEGIN 0 ""\nENTRY file zf 0644 10\nDIR_END\nEND\nFILE_BEGIN 0 10\n'
    printf '%s\n' "$@"; printf 'FILE_END\n'; } > "$T/z.script"
  rc=0
  EVIL_PROTECTION=0 "$EVIL" push-script 127.0.0.1 "$PORT" "$T/clienthome/id_ferry" "$mod" ev \
    "$T/z.script" "$flags" > "$T/evil.out" 2>&1 || rc=$?
}
evil_push m $ZF "ZFRAME 10 10"   # the tool itself is right: a good frame lands
grep -q "RESULT errors=0 files=1" "$T/evil.out" || { cat "$T/evil.out"; fail "a good ZDATA was refused"; }
[ "$(cat "$T/mod/ev/zf")" = AAAAAAAAAA ] || fail "a good ZDATA wrote the wrong bytes"
rm -rf "$T/mod/ev"
refused() { # WHAT PATTERN: the last evil_push was refused with PATTERN, nothing written
  grep -q "ERROR.*$2" "$T/evil.out" || { cat "$T/evil.out"; fail "$1 was not refused ($2)"; }
  echo "$1: $(grep -m1 "ERROR" "$T/evil.out")"
  [ ! -e "$T/mod/ev/zf" ] && [ ! -e "$T/no/ev/zf" ] || fail "$1 wrote the file"
  no_temp_files "$T/mod"
  no_temp_files "$T/no"
  expect_rc 0 ferry_c ls "$(url m)"
}
evil_push m 0x10 "ZFRAME 10 10"; refused "ZDATA without -z" "not negotiated"
evil_push no $ZF "ZFRAME 10 10"; refused "ZDATA to compress = no" "not negotiated"
evil_push m $ZF "ZFRAME 10 1048576"; refused "a bomb (1 MiB as 10)" "protocol"
evil_push m $ZF "ZFRAME 10 1048576 nocsize"; refused "a bomb without content size" "protocol"
evil_push m $ZF "ZFRAME 10 9" "ZFRAME 1 1"; refused "a frame shorter than announced" "protocol"
evil_push m $ZF "ZDATA 10 50"; refused "garbage as a frame" "protocol"
evil_push m $ZF "ZDATA 0 5"; refused "raw_len 0" "protocol"
evil_push m $ZF "ZDATA 131073 5"; refused "raw_len over 128 KiB" "protocol"
evil_push m $ZF "ZDATA 10 0"; refused "zlen 0" "protocol"
evil_push m $ZF "ZDATA 10 131585"; refused "zlen over the bound" "protocol"
evil_push m $ZF "ZFRAME 20 20"; refused "ZDATA past the file's end" "only 10 left"

note "ZDATA from a malicious server: the client refuses it, nothing written"
mkdir -p "$T/epull"
printf 'DIR_BEGIN 0x02 ""\nENTRY file ef 0644 10\nDIR_END\nEND\n' > "$T/e.script"
epull() { # EXPECTED-RC ARGS...
  local want=$1; shift
  start_evil_server "$T/e.script"
  expect_rc "$want" ferry_e pull "$@" "$(eurl m/ef)" "$T/epull/ef"
  stop_evil_server
}
EVIL_ACCEPT_FLAGS=1 EVIL_ZDATA=ok epull 0 -z
[ "$(cat "$T/epull/ef")" = "evil data" ] || fail "a good ZDATA from a server was not written"
rm -f "$T/epull/ef"
EVIL_ACCEPT_FLAGS=1 EVIL_ZDATA=bomb epull 12 -z
grep -q "protocol" "$T/last.err" || fail "a server's bomb: $(cat "$T/last.err")"
echo "a server's bomb: $(cat "$T/last.err")"
EVIL_ZDATA=ok epull 12 -z
grep -q "not negotiated" "$T/last.err" || fail "a server's ZDATA without ACCEPT's flag: $(cat "$T/last.err")"
EVIL_ACCEPT_FLAGS=1 epull 2
grep -q "not asked for" "$T/last.err" || fail "compression the client did not ask for: $(cat "$T/last.err")"
[ ! -e "$T/epull/ef" ] || fail "a refused server's file was written"
no_temp_files "$T/epull"
note "all compression checks passed"
