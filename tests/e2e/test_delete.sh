#!/usr/bin/env bash
# --delete mirrors (files, trees, links), --dry-run lists and changes nothing.
. "$(dirname "$0")/lib.sh"

src=$T/src
mkdir -p "$src/keep" "$src/sub"
echo one > "$src/keep/one"
echo two > "$src/sub/two"
write_config
start_server
expect_rc 0 ferry_c push "$src/" "$(url m/mirror)"
# extra things on the receiver
mkdir -p "$T/mod/mirror/extra-dir/deep"
echo x > "$T/mod/mirror/extra-dir/deep/x"
echo y > "$T/mod/mirror/keep/extra-file"
ln -s /etc/passwd "$T/mod/mirror/extra-link"
echo changed > "$src/sub/two"
touch -d '2010-01-01' "$src/sub/two"
before=$(tree_manifest "$T/mod/mirror")

note "dry run: reports, changes nothing"
expect_rc 0 ferry_c push -n --delete "$src/" "$(url m/mirror)"
grep -q '^delete  *extra-dir' "$T/last.out" || { cat "$T/last.out"; fail "dry run did not list extra-dir"; }
grep -q '^delete  *keep/extra-file' "$T/last.out" || fail "dry run did not list keep/extra-file"
grep -q '^update  *sub/two' "$T/last.out" || fail "dry run did not list the changed file"
[ "$before" = "$(tree_manifest "$T/mod/mirror")" ] || fail "dry run changed the destination"

note "without --delete nothing is removed"
expect_rc 0 ferry_c push "$src/" "$(url m/mirror)"
[ -e "$T/mod/mirror/extra-dir/deep/x" ] || fail "removed without --delete"

note "--delete mirrors"
expect_rc 0 ferry_c push --delete "$src/" "$(url m/mirror)"
same_tree "$src" "$T/mod/mirror"
[ -e /etc/passwd ] || fail "followed a symlink while deleting"

note "pull --delete mirrors locally"
mkdir -p "$T/local"
echo stale > "$T/local/stale"
expect_rc 0 ferry_c pull --delete "$(url m/mirror/)" "$T/local"
same_tree "$src" "$T/local"

note "pull --dry-run changes nothing locally"
echo stale > "$T/local/stale2"
expect_rc 0 ferry_c pull -n --delete "$(url m/mirror/)" "$T/local"
[ -e "$T/local/stale2" ] || fail "dry-run pull deleted a file"
grep -q '^delete  *stale2' "$T/last.out" || fail "dry-run pull did not list stale2"
echo "PASS"
