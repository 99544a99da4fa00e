#!/usr/bin/env bash
# --modify-window=N, against the real rsync: mtimes no more than N seconds
# apart (whole seconds) are the same, for the up-to-date check and for -u;
# N=0 compares whole seconds, a negative N nanoseconds (ferry's own way).
# On push (the box's receiver, told in the REQUEST) and on pull (the PC's);
# a box older than the option is refused in one line.
. "$(dirname "$0")/lib.sh"

command -v rsync > /dev/null || fail "rsync is needed as the oracle (make deps installs it)"
src=$T/src
mkdir -p "$src"
# the destination's copy of each: the same bytes, its time shifted by...
declare -A shift=( [same]=0 [ns]=0.4 [plus1]=1 [minus1]=-1 [plus2]=2 [minus3]=-3 [plus1ns]=1.6 )
for f in "${!shift[@]}"; do head -c 3000 /dev/urandom > "$src/$f"; done
touch -d '2024-05-05 10:00:10.3' "$src"/*
declare -A at   # each copy's time, as touch -d takes it
for f in "${!shift[@]}"; do at[$f]=$(awk "BEGIN { printf \"@%.9f\", 1714903210.3 + ${shift[$f]} }"); done
seed() {   # seed DIR: the copies, with their shifted times
  rm -rf "$1"; mkdir -p "$1"
  for f in "${!shift[@]}"; do
    cp "$src/$f" "$1/$f"
    touch -d "${at[$f]}" "$1/$f"
  done
  touch -r "$src" "$1"
}
sent() {   # sent FILE: the names rsync's or ferry's -i says it transferred
  sed -n 's/^[<>]f[^ ]* //p' "$1" | sort | tr '\n' ' '
}
write_config
start_server
mkdir -p "$T/mod/src"; cp -p "$src"/* "$T/mod/src/"   # what a pull takes

# (-u with a negative window is left out: rsync 3.5 then skips only what is
# newer by more than a second, an off-by-one of its own; ferry's -u keeps
# whatever is newer, ferry(1))
for w in 1 0 2 -1 ""; do
  opt=${w:+--modify-window=$w}
  for u in "" -u; do
    [ -n "$u" ] && [ "${w:--1}" -lt 0 ] && continue
    note "push and pull ${opt:-(no --modify-window)} $u"
    seed "$T/oracle"
    # shellcheck disable=SC2086
    rsync -ai $u ${opt:---modify-window=-1} "$src/" "$T/oracle/" > "$T/r.out" || fail "the rsync oracle failed"
    want=$(sent "$T/r.out")
    seed "$T/mod/p"
    # shellcheck disable=SC2086
    expect_rc 0 ferry_c push -ai $u $opt "$src/" "$(url m/p)"
    [ "$(sent "$T/last.out")" = "$want" ] || { cat "$T/r.out" "$T/last.out"; fail "push $opt $u: sent '$(sent "$T/last.out")', rsync '$want'"; }
    seed "$T/back"
    # shellcheck disable=SC2086
    expect_rc 0 ferry_c pull -ai $u $opt "$(url m/src/)" "$T/back"
    [ "$(sent "$T/last.out")" = "$want" ] || { cat "$T/r.out" "$T/last.out"; fail "pull $opt $u: received '$(sent "$T/last.out")', rsync '$want'"; }
  done
done

note "-u keeps what is newer here, or not the window older, even with other contents; -c and --size-only too"
# (each copy here differs in contents and size; rsync -u -i is the oracle)
seed_other() {   # seed_other DIR: other contents, the shifted times
  seed "$1"
  for f in "${!shift[@]}"; do
    t=$(stat -c %y "$1/$f"); echo "other $f" >> "$1/$f"; touch -d "$t" "$1/$f"
  done
}
for w in 1 2 0; do
  for extra in "" -c --size-only; do
    seed_other "$T/oracle"
    # shellcheck disable=SC2086
    rsync -ai -u --modify-window=$w $extra "$src/" "$T/oracle/" > "$T/r.out" || fail "the rsync oracle failed"
    seed_other "$T/mod/p"
    # shellcheck disable=SC2086
    expect_rc 0 ferry_c push -ai -u --modify-window=$w $extra "$src/" "$(url m/p)"
    [ "$(sent "$T/last.out")" = "$(sent "$T/r.out")" ] ||
      { cat "$T/r.out" "$T/last.out"; fail "push -u --modify-window=$w $extra: sent '$(sent "$T/last.out")', rsync '$(sent "$T/r.out")'"; }
    python3 "$(dirname "$0")/treecmp.py" "$T/oracle" "$T/mod/p" > "$T/cmp.out" ||
      { cat "$T/cmp.out"; fail "push -u --modify-window=$w $extra: not rsync's tree (times kept?)"; }
  done
done
# -u with -c: a newer copy here with the same contents keeps its own time
cp -p "$src/plus1" "$T/mod/p/plus1"; touch -d '2030-01-01' "$T/mod/p/plus1"
expect_rc 0 ferry_c push -a -u -c "$src/" "$(url m/p)"
[ "$(stat -c %Y "$T/mod/p/plus1")" = "$(date -d 2030-01-01 +%s)" ] || fail "-u -c: a newer file's time was set back"

note "a bad window is refused with one line"
for v in x 1.5 99999999999; do
  expect_rc 1 ferry_c push --modify-window="$v" "$src/" "$(url m/t)"
  [ "$(wc -l < "$T/last.err")" = 1 ] && grep -q -- "--modify-window=$v" "$T/last.err" ||
    { cat "$T/last.err"; fail "--modify-window=$v: not one line naming it"; }
done

if [[ "$FERRY_SERVER" != *qemu* ]] && [[ "$FERRY_SERVER" == "$FERRY" ]]; then
  note "an older server: push --modify-window is refused here, pull works"
  stop_server
  FERRY_TEST_OLD_HELLO=1 start_server
  expect_rc 0 ferry_c pull -a --modify-window=1 "$(url m/src/)" "$T/back"
  expect_rc 5 ferry_c push -a --modify-window=1 "$src/" "$(url m/old)"
  [ "$(wc -l < "$T/last.err")" = 1 ] && grep -q "is older than --modify-window" "$T/last.err" ||
    { cat "$T/last.err"; fail "push --modify-window to an older server: not one line saying why"; }
fi
echo "ok"
