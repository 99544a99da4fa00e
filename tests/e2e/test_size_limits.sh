#!/usr/bin/env bash
# --max-size and --min-size, against the real rsync: the same files are
# transferred for each size spelling (K and KiB powers of 1024, KB of 1000,
# fractions rounded as rsync's doubles, +1/-1), on push and pull; a file left out is a transfer rule,
# not an exclude: an older copy of it stays, even under --delete.
. "$(dirname "$0")/lib.sh"

command -v rsync > /dev/null || fail "rsync is needed as the oracle (make deps installs it)"
src=$T/src
mkdir -p "$src/sub"
for n in 0 1 102 103 512 1000 1023 1024 1025 2009 2010 1499999 1500000 1572864 1572865; do
  head -c "$n" /dev/urandom > "$src/f$n"
done
head -c 2000 /dev/urandom > "$src/sub/deep2000"
# a destination holding an older copy of two files and one extraneous file
seed() {
  rm -rf "$1"; mkdir -p "$1/sub"
  echo old > "$1/f1025"; echo old > "$1/f0"; echo stray > "$1/stray"
}
# what DIR holds: names and content sums
held() { (cd "$1" && find . -type f -exec md5sum {} + | LC_ALL=C sort -k2); }
write_config
start_server
expect_rc 0 ferry_c push -a "$src/" "$(url m/src)"

cases=("--max-size=1k" "--max-size=1kb" "--max-size=1KiB" "--max-size=1.5mb-1" "--max-size=1.5m"
  "--max-size=1.5M+1" "--max-size=0" "--max-size=0.1k" "--max-size=1000" "--max-size=1k-1"
  "--min-size=1k" "--min-size=1KB+1" "--min-size=1.5mb" "--min-size=0"
  "--min-size=103 --max-size=1025" "--max-size=2.01kb" "--min-size=k")
for c in "${cases[@]}"; do
  # shellcheck disable=SC2086
  { seed "$T/oracle"; rsync -a --delete $c "$src/" "$T/oracle/"; } || fail "the rsync oracle failed: $c"
  held "$T/oracle" > "$T/want"
  seed "$T/mod/t"
  # shellcheck disable=SC2086
  expect_rc 0 ferry_c push -a --delete $c "$src/" "$(url m/t)"
  held "$T/mod/t" | diff "$T/want" - || fail "push $c: not what rsync transferred"
  seed "$T/back"
  # shellcheck disable=SC2086
  expect_rc 0 ferry_c pull -a --delete $c "$(url m/src/)" "$T/back"
  held "$T/back" | diff "$T/want" - || fail "pull $c: not what rsync transferred"
done
note "${#cases[@]} size limits: push and pull transfer what rsync does"

# the limit is on the transfer, not the listing: a size-limited file stays
# up to date when it is, and -n shows nothing for it
seed "$T/mod/t"
expect_rc 0 ferry_c push -a -i -n --max-size=1k "$src/" "$(url m/t)"
grep -q "f1025" "$T/last.out" && { cat "$T/last.out"; fail "-n -i shows a file over --max-size"; }
grep -q "f1024" "$T/last.out" || { cat "$T/last.out"; fail "-n -i does not show a file within --max-size"; }

note "-H: a link group over the limit is left whole, as rsync leaves it"
mkdir -p "$T/hsrc"; head -c 2000 /dev/urandom > "$T/hsrc/big1"; ln "$T/hsrc/big1" "$T/hsrc/big2"
echo s > "$T/hsrc/small"
hseed() { rm -rf "$1"; mkdir -p "$1"; [ "$2" = old ] && { echo old1 > "$1/big1"; echo old2 > "$1/big2"; }; true; }
for start in empty old; do
  hseed "$T/oracle" $start; rsync -aH --max-size=1k "$T/hsrc/" "$T/oracle/" || fail "the rsync oracle failed (-H)"
  held "$T/oracle" > "$T/want"
  hseed "$T/mod/h" $start
  expect_rc 0 ferry_c push -aH --max-size=1k "$T/hsrc/" "$(url m/h)"
  held "$T/mod/h" | diff "$T/want" - || fail "push -H --max-size (destination $start): not what rsync left"
  [ "$start" = old ] && [ "$(stat -c %h "$T/mod/h/big2")" != 1 ] && fail "push -H: big2 was linked over"
  expect_rc 0 ferry_c push -aH "$T/hsrc/" "$(url m/hs)"
  hseed "$T/back" $start
  expect_rc 0 ferry_c pull -aH --max-size=1k "$(url m/hs/)" "$T/back"
  held "$T/back" | diff "$T/want" - || fail "pull -H --max-size (destination $start): not what rsync left"
done

note "bad sizes are refused with one line"
for v in x -1 1q 1kk 9999999999P ""; do
  expect_rc 1 ferry_c push --max-size="$v" "$src/" "$(url m/t)"
  [ "$(wc -l < "$T/last.err")" = 1 ] && grep -q -- "--max-size=$v:" "$T/last.err" ||
    { cat "$T/last.err"; fail "--max-size=$v: not one line naming it"; }
done
echo "PASS"
