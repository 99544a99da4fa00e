#!/usr/bin/env bash
# -u/--update, as rsync: a file that is newer on the receiver is kept (push
# and pull); an older one, or one with an equal time but another size, is
# replaced; without -u the sender's version always wins.
. "$(dirname "$0")/lib.sh"

write_config
start_server
src=$T/src
mkdir -p "$src"
echo "sender old" > "$src/older-here"       # the receiver's copy will be newer
echo "sender new" > "$src/newer-there"      # the receiver's copy will be older
echo "same time, longer" > "$src/same-time"
touch -d '2020-01-01 00:00:00' "$src/older-here"
touch -d '2024-01-01 00:00:00' "$src/newer-there" "$src/same-time"
expect_rc 0 ferry_c push "$src/" "$(url m/u)"

note "push -u keeps the receiver's newer file and replaces the older ones"
echo "receiver edited" > "$T/mod/u/older-here"
touch -d '2023-01-01 00:00:00' "$T/mod/u/older-here"
echo "receiver stale" > "$T/mod/u/newer-there"
touch -d '2021-01-01 00:00:00' "$T/mod/u/newer-there"
echo "x" > "$T/mod/u/same-time"
touch -d '2024-01-01 00:00:00' "$T/mod/u/same-time"
expect_rc 0 ferry_c push -u "$src/" "$(url m/u)"
[ "$(cat "$T/mod/u/older-here")" = "receiver edited" ] || fail "push -u replaced a newer file"
cmp -s "$src/newer-there" "$T/mod/u/newer-there" || fail "push -u kept an older file"
cmp -s "$src/same-time" "$T/mod/u/same-time" || fail "push -u kept a file of equal time and other size"

note "push without -u: the sender's version wins"
expect_rc 0 ferry_c push "$src/" "$(url m/u)"
cmp -s "$src/older-here" "$T/mod/u/older-here" || fail "push without -u kept the receiver's file"

note "pull -u keeps the local newer file"
mkdir -p "$T/back"
expect_rc 0 ferry_c pull "$(url m/u/)" "$T/back/"
echo "local edit" > "$T/back/older-here"
touch -d '2025-01-01 00:00:00' "$T/back/older-here"
expect_rc 0 ferry_c pull -u "$(url m/u/)" "$T/back/"
[ "$(cat "$T/back/older-here")" = "local edit" ] || fail "pull -u replaced a newer local file"
expect_rc 0 ferry_c pull "$(url m/u/)" "$T/back/"
cmp -s "$src/older-here" "$T/back/older-here" || fail "pull without -u kept the local file"
echo "PASS"
