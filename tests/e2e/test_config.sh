#!/usr/bin/env bash
# The daemon's configuration: a bad line is one error naming file:line, and
# --check-config accepts a good file.
. "$(dirname "$0")/lib.sh"

write_config "read only = no" "comment = test module"
note "a good config is accepted"
# shellcheck disable=SC2086
expect_rc 0 $FERRY_SERVER serve --config "$T/ferry.conf" --check-config
grep -q "configuration OK: 1 module" "$T/last.out" || fail "check-config did not confirm"

note "an unknown key is an error with its line number"
write_config "read only = no" "colour = blue"
# shellcheck disable=SC2086
expect_rc 1 $FERRY_SERVER serve --config "$T/ferry.conf" --check-config
line=$(grep -n '^colour' "$T/ferry.conf" | cut -d: -f1)
grep -q "ferry.conf:$line:" "$T/last.err" || { cat "$T/last.err"; fail "no file:line in the error"; }
[ "$(wc -l < "$T/last.err")" -eq 1 ] || { cat "$T/last.err"; fail "more than one error line"; }

note "a bad value names its line"
write_config "protection = paranoid"
# shellcheck disable=SC2086
expect_rc 1 $FERRY_SERVER serve --config "$T/ferry.conf" --check-config
line=$(grep -n 'paranoid' "$T/ferry.conf" | cut -d: -f1)
grep -q "ferry.conf:$line:" "$T/last.err" || { cat "$T/last.err"; fail "no file:line for a bad value"; }

note "a snapshot module inside a writable module's tree is refused (its clients could change the history)"
mkdir -p "$T/mod/inner"
write_config "[inner]" "path = $T/mod/inner/" "append only = yes"
# shellcheck disable=SC2086
expect_rc 1 $FERRY_SERVER serve --config "$T/ferry.conf" --check-config
line=$(grep -n '^\[inner\]' "$T/ferry.conf" | cut -d: -f1)
grep -q "ferry.conf:$line: module 'inner' keeps snapshots, and its path is in the tree of module 'm'" "$T/last.err" ||
  { cat "$T/last.err"; fail "a nested snapshot module was not refused"; }
write_config "read only = yes" "[inner]" "path = $T/mod/inner" "append only = yes"
# shellcheck disable=SC2086
expect_rc 0 $FERRY_SERVER serve --config "$T/ferry.conf" --check-config
write_config "snapshots = yes" "[same]" "path = $T/mod/." "protection = none"
# shellcheck disable=SC2086
expect_rc 1 $FERRY_SERVER serve --config "$T/ferry.conf" --check-config
grep -q "module 'm' keeps snapshots, and its path is in the tree of module 'same'" "$T/last.err" ||
  { cat "$T/last.err"; fail "the same path under two names was not refused"; }
rmdir "$T/mod/inner"

note "a module whose path does not exist is refused at startup"
write_config
printf '[gone]\npath = %s/does-not-exist\n' "$T" >> "$T/ferry.conf"
# shellcheck disable=SC2086
expect_rc 1 $FERRY_SERVER serve --config "$T/ferry.conf" --check-config
grep -q "does-not-exist" "$T/last.err" || fail "missing module path not named"

note "a missing config file is named"
# shellcheck disable=SC2086
expect_rc 1 $FERRY_SERVER serve --config "$T/nope.conf" --check-config
grep -q "nope.conf" "$T/last.err" || fail "missing file not named"

note "bad command lines get one clear line"
expect_rc 1 ferry_c push --protection paranoid "$T" "ferry://127.0.0.1:1/m"
grep -q -- "--protection paranoid" "$T/last.err" || fail "bad --protection not named"
expect_rc 1 ferry_c push --bwlimit lots "$T" "ferry://127.0.0.1:1/m"
grep -q -- "--bwlimit lots" "$T/last.err" || fail "bad --bwlimit not named"
expect_rc 1 ferry_c push "$T" "ferry://127.0.0.1:99999/m"
grep -q "bad port" "$T/last.err" || fail "bad port not named"
expect_rc 23 ferry_c push "$T/does-not-exist" "ferry://127.0.0.1:1/m"   # as rsync: reported, and 23
grep -q "does-not-exist: No such file" "$T/last.err" || fail "missing source not named"

note "--help after a command prints the usage, as rsync's and scp's users expect"
for cmd in push pull ls serve keygen; do
  expect_rc 0 ferry_c $cmd --help
  grep -q "^Usage:" "$T/last.out" || fail "ferry $cmd --help printed no usage"
done
expect_rc 0 $FERRY_CLIENT push -h   # -h alone is help; with other options it is --human-readable
grep -q "push/pull/ls options" "$T/last.out" || fail "ferry push -h printed no options"
echo "PASS"
