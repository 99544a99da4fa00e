#!/usr/bin/env bash
# Audit finding 5: a daemon (often root) does not take setuid/setgid bits from
# a client, on files (new and up to date), directories and DIR_META; a pull
# to the user's own machine keeps them.
. "$(dirname "$0")/lib.sh"

src=$T/src
mkdir -p "$src/sgid-dir"
cp /bin/true "$src/suid-true"
chmod 6755 "$src/suid-true"
chmod 2775 "$src/sgid-dir"
echo x > "$src/sgid-dir/f"
chmod 4644 "$src/sgid-dir/f"
write_config
start_server

mode() { stat -c %a "$1"; }

note "push: setuid/setgid stripped on files and directories"
expect_rc 0 ferry_c push "$src/" "$(url m/b)"
[ "$(mode "$T/mod/b/suid-true")" = 755 ] || fail "setuid file arrived as $(mode "$T/mod/b/suid-true")"
[ "$(mode "$T/mod/b/sgid-dir")" = 775 ] || fail "setgid directory arrived as $(mode "$T/mod/b/sgid-dir")"
[ "$(mode "$T/mod/b/sgid-dir/f")" = 644 ] || fail "setuid file arrived as $(mode "$T/mod/b/sgid-dir/f")"

note "an up-to-date file whose mode differs only by setuid is not given the bit"
expect_rc 0 ferry_c push "$src/" "$(url m/b)"
[ "$(mode "$T/mod/b/suid-true")" = 755 ] || fail "setuid bit applied on an up-to-date file"

note "a new directory created by an entry is not setgid either"
mkdir -p "$src/new/deeper"; chmod 2755 "$src/new" "$src/new/deeper"
expect_rc 0 ferry_c push "$src/new" "$(url m/b)"
[ "$(mode "$T/mod/b/new/deeper")" = 755 ] || fail "setgid subdirectory: $(mode "$T/mod/b/new/deeper")"

note "pull: the client keeps the bits of what it restores"
chmod 4755 "$T/mod/b/suid-true"
expect_rc 0 ferry_c pull "$(url m/b/suid-true)" "$T/restored"
[ "$(mode "$T/restored")" = 4755 ] || fail "pull lost the setuid bit: $(mode "$T/restored")"
