#!/usr/bin/env bash
# Issue 10, defect 3: push -c of a file whose contents are equal but whose
# mtime (or mode) is newer updates them on the receiver, as rsync does, so the
# next plain push sends nothing. Both directions. And -i -c's lines are
# rsync -aic's, its 'c' column included (the contents differ).
. "$(dirname "$0")/lib.sh"

write_config
start_server
mkdir -p "$T/src"
head -c 300000 /dev/urandom > "$T/src/big.iso"
expect_rc 0 ferry_c push "$T/src/" "$(url m/b)"

note "push -c after touch: contents equal, mtime updated, nothing sent"
touch -d '2030-01-02 03:04:05.5' "$T/src/big.iso"
chmod 600 "$T/src/big.iso"
expect_rc 0 ferry_c push -v -c "$T/src/" "$(url m/b)"
grep -q '^attrs  *big.iso' "$T/last.out" || { cat "$T/last.out"; fail "-c did not report the metadata change"; }
grep -Eq '^(new|update) ' "$T/last.out" && { cat "$T/last.out"; fail "-c sent equal contents"; }
[ "$(stat -c %Y.%a "$T/mod/b/big.iso")" = "$(stat -c %Y.%a "$T/src/big.iso")" ] ||
  fail "mtime/mode not updated: $(stat -c %y.%a "$T/mod/b/big.iso")"
same_tree "$T/src" "$T/mod/b"

note "the next plain push sends nothing"
expect_rc 0 ferry_c push -v "$T/src/" "$(url m/b)"
grep -Eq '^(new|update) ' "$T/last.out" && { cat "$T/last.out"; fail "plain push re-sent the file"; }

note "pull -c the same way"
expect_rc 0 ferry_c pull "$(url m/b/)" "$T/back"
touch -d '2031-01-01 00:00:00' "$T/mod/b/big.iso"
expect_rc 0 ferry_c pull -v -c "$(url m/b/)" "$T/back"
grep -q '^attrs  *big.iso' "$T/last.out" || { cat "$T/last.out"; fail "pull -c did not update the mtime"; }
[ "$(stat -c %Y "$T/back/big.iso")" = "$(stat -c %Y "$T/mod/b/big.iso")" ] || fail "pull -c: mtime stale"

note "-i -c: rsync's lines, 'c' where the contents differ (rsync -aic the oracle)"
mkcase() {   # mkcase SRC DST
  rm -rf "$1" "$2"; mkdir -p "$1" "$2"
  echo aaaa > "$1/same-size"; echo bbbb > "$2/same-size"
  echo aaaa > "$1/other-size"; echo bbbbbb > "$2/other-size"
  echo same > "$1/equal"; echo same > "$2/equal"
  echo new > "$1/new"
  touch -d '2024-03-03 03:03:03' "$1"/* "$1"; touch -d '2020-01-01' "$2"/* "$2"
  touch -d '2024-03-03 03:03:03' "$2/other-size"
}
mkcase "$T/cs" "$T/oracle"
rsync -aic "$T/cs/" "$T/oracle/" | sort > "$T/want" || fail "rsync -aic"
grep -q '^>fc\.t\.\.\.\.\.\. same-size$' "$T/want" || { cat "$T/want"; fail "rsync's oracle lines are not as expected"; }
mkcase "$T/cs" "$T/mod/cc"
expect_rc 0 ferry_c push -aic "$T/cs/" "$(url m/cc)"
grep -E '^[<>.c][fd]' "$T/last.out" | sort | diff <(sed 's/^>/</' "$T/want") - ||
  { cat "$T/last.out"; fail "push -aic: not rsync's lines"; }
mkcase "$T/mod/cc" "$T/cd"
expect_rc 0 ferry_c pull -aic "$(url m/cc/)" "$T/cd"
grep -E '^[<>.c][fd]' "$T/last.out" | sort | diff "$T/want" - ||
  { cat "$T/last.out"; fail "pull -aic: not rsync's lines"; }
