#!/usr/bin/env bash
# Audit findings 8 and 12b. A module file hard-linked (by a local user of the
# box) to a file outside the module: a push that changes only its mode must
# replace it through a temporary, never chmod the shared inode. And a
# --delete in one session must not remove another session's temporary.
. "$(dirname "$0")/lib.sh"

write_config
start_server
mkdir -p "$T/src" "$T/outside" "$T/mod/b"

note "finding 8: a mode change on a file with other links replaces it"
echo secret > "$T/outside/shadow"
chmod 600 "$T/outside/shadow"
ln "$T/outside/shadow" "$T/mod/b/f"                 # the local user's hard link
cp -p "$T/outside/shadow" "$T/src/f"                 # same size and mtime: "fresh"
chmod 666 "$T/src/f"
expect_rc 0 ferry_c push -v "$T/src/" "$(url m/b)"
[ "$(stat -c %a "$T/outside/shadow")" = 600 ] ||
  fail "the file outside the module was chmodded to $(stat -c %a "$T/outside/shadow")"
[ "$(stat -c %a "$T/mod/b/f")" = 666 ] || fail "the module file did not get its mode"
[ "$(stat -c %i "$T/mod/b/f")" != "$(stat -c %i "$T/outside/shadow")" ] ||
  fail "the module file still shares the outside inode"
cmp "$T/src/f" "$T/mod/b/f" || fail "contents differ"
no_temp_files "$T/mod"

note "a file with one link still gets its mode in place (no data sent)"
chmod 640 "$T/src/f"
expect_rc 0 ferry_c push -v "$T/src/" "$(url m/b)"
grep -q '^attrs  *f' "$T/last.out" || { cat "$T/last.out"; fail "mode change not made in place"; }
[ "$(stat -c %a "$T/mod/b/f")" = 640 ] || fail "mode not applied"

note "finding 12b: --delete leaves another session's temporary alone"
mkdir -p "$T/bigsrc" "$T/empty"
head -c $((24 << 20)) /dev/urandom > "$T/bigsrc/big"
# shellcheck disable=SC2086
$FERRY_CLIENT push --identity "$T/clienthome/id_ferry" --known-hosts "$T/clienthome/known_hosts" \
  --accept-new --bwlimit 3M "$T/bigsrc/" "$(url m/shared)" > "$T/slow.out" 2>&1 &
slow=$!
for _ in $(seq 1 200); do
  ls -a "$T/mod/shared" 2> /dev/null | grep -q '^\.ferry-' && break
  sleep 0.05
done
ls -a "$T/mod/shared" | grep -q '^\.ferry-' || fail "the slow push did not start"
echo keep > "$T/mod/shared/.ferry-notes"              # not a temporary's name: deleted
expect_rc 0 ferry_c push --delete "$T/empty/" "$(url m/shared)"
ls -a "$T/mod/shared" | grep -qE '^\.ferry-(..........|part)\.' ||
  fail "--delete removed the other session's temporary"
[ ! -e "$T/mod/shared/.ferry-notes" ] || fail "--delete kept a file that only looks like a temporary"
wait $slow || { cat "$T/slow.out"; fail "the slow push failed after the other session's --delete"; }
cmp "$T/bigsrc/big" "$T/mod/shared/big" || fail "the slow push's file is wrong"
no_temp_files "$T/mod"
