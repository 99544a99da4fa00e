#!/usr/bin/env bash
# Push and pull of a tree with what a backup must keep: unicode names, spaces,
# empty files and directories, symlinks (one pointing outside the tree),
# modes and nanosecond mtimes; a second push changes nothing.
. "$(dirname "$0")/lib.sh"

src=$T/src
mkdir -p "$src/dir with spaces/nested" "$src/ünïcødé/日本語" "$src/empty dir" "$T/outside"
echo "hello" > "$src/a.txt"
printf 'x%.0s' $(seq 1 5000) > "$src/dir with spaces/file one.txt"
: > "$src/empty file"
head -c 300000 /dev/urandom > "$src/ünïcødé/日本語/データ.bin"
head -c 70000 /dev/urandom > "$src/dir with spaces/nested/record-edge.bin"   # > one record
chmod 640 "$src/a.txt"
chmod 700 "$src/dir with spaces/nested"
chmod 1755 "$src/empty file"   # sticky is kept; setuid/setgid: test_setid.sh
ln -s a.txt "$src/rel-link"
ln -s "$T/outside/target" "$src/outside-link"
ln -s "../../a.txt" "$src/ünïcødé/日本語/up-link"
touch -d '2001-02-03 04:05:06.123456789' "$src/a.txt"
touch -h -d '2002-03-04 05:06:07.987654321' "$src/rel-link"
touch -d '1999-12-31 23:59:59.5' "$src/empty dir"

write_config
start_server

note "push src/ (contents) into m/backup"
expect_rc 0 ferry_c push "$src/" "$(url m/backup)"
same_tree "$src" "$T/mod/backup"
[ -L "$T/mod/backup/outside-link" ] || fail "symlink not kept as a link"
[ "$(readlink "$T/mod/backup/outside-link")" = "$T/outside/target" ] || fail "link target changed"
[ -z "$(ls -A "$T/outside")" ] || fail "something was written outside the tree"
no_temp_files "$T/mod"

note "push src (the directory itself) into m/"
expect_rc 0 ferry_c push "$src" "$(url m/)"
same_tree "$src" "$T/mod/src"

note "second push: nothing to send"
expect_rc 0 ferry_c push -v "$src/" "$(url m/backup)"
if grep -Eq '^(new|update) ' "$T/last.out"; then cat "$T/last.out"; fail "unchanged files were sent again"; fi

note "a changed file is sent, the old one replaced"
echo "changed" > "$src/a.txt"
touch -d '2003-01-01 00:00:00.000000001' "$src/a.txt"
expect_rc 0 ferry_c push -v "$src/" "$(url m/backup)"
grep -q '^update  *a.txt' "$T/last.out" || { cat "$T/last.out"; fail "changed file not reported"; }
same_tree "$src" "$T/mod/backup"

note "same size and mtime: skipped; with --checksum the contents decide"
cp -p "$src/a.txt" "$T/a.saved"
printf 'CHANGED\n' > "$src/a.txt"        # same size as "changed\n"
touch -d '2003-01-01 00:00:00.000000001' "$src/a.txt"
expect_rc 0 ferry_c push -v "$src/" "$(url m/backup)"
if grep -q 'a.txt' "$T/last.out"; then fail "a file with equal size and mtime was sent without -c"; fi
cmp -s "$src/a.txt" "$T/mod/backup/a.txt" && fail "quick check should have skipped a.txt"
expect_rc 0 ferry_c push -v -c "$src/" "$(url m/backup)"
grep -q '^update  *a.txt' "$T/last.out" || { cat "$T/last.out"; fail "-c did not send the changed file"; }
cmp "$src/a.txt" "$T/mod/backup/a.txt" || fail "-c: contents differ"
expect_rc 0 ferry_c push -v -c "$src/" "$(url m/backup)"
if grep -Eq '^(new|update) ' "$T/last.out"; then fail "-c sent unchanged files"; fi
same_tree "$src" "$T/mod/backup"

note "pull it back (contents) into a new directory"
expect_rc 0 ferry_c pull "$(url m/backup/)" "$T/restore"
same_tree "$src" "$T/restore"

note "pull a directory by name, and a single file to a new name"
mkdir -p "$T/restore2"
expect_rc 0 ferry_c pull "$(url m/backup/ünïcødé)" "$T/restore2"
same_tree "$src/ünïcødé" "$T/restore2/ünïcødé"
expect_rc 0 ferry_c pull "$(url m/backup/a.txt)" "$T/single-copy.txt"
cmp "$src/a.txt" "$T/single-copy.txt" || fail "single file pull differs"

note "push a single file to a new name, and into an existing directory"
expect_rc 0 ferry_c push "$src/a.txt" "$(url m/renamed.txt)"
cmp "$src/a.txt" "$T/mod/renamed.txt" || fail "single file push to a new name"
expect_rc 0 ferry_c push "$src/a.txt" "$(url m/backup/nested-target/)"
cmp "$src/a.txt" "$T/mod/backup/nested-target/a.txt" || fail "single file push into a directory"
expect_rc 0 ferry_c push "$src/a.txt" "$(url m/new-parent/deeper/named.txt)"
cmp "$src/a.txt" "$T/mod/new-parent/deeper/named.txt" || fail "single file push under missing directories"
[ -f "$T/mod/new-parent/deeper/named.txt" ] || fail "named.txt should be a file"
mkdir -p "$T/mod/existing-dir"
expect_rc 0 ferry_c push "$src/a.txt" "$(url m/existing-dir)"
cmp "$src/a.txt" "$T/mod/existing-dir/a.txt" || fail "single file push into an existing directory named without /"

note "ls shows the module"
expect_rc 0 ferry_c ls "$(url m/backup)"
grep -q 'a.txt' "$T/last.out" || fail "ls does not show a.txt"
grep -q '^d.* empty dir$' "$T/last.out" || fail "ls does not show the empty directory"
grep -q '^l.*rel-link -> a.txt' "$T/last.out" || fail "ls does not show the link"
no_temp_files "$T/mod"
echo "PASS"
