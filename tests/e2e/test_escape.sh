#!/usr/bin/env bash
# Escaping the module: bad paths in REQUEST, bad names and directories in a
# push's listing, symlinks inside the module pointing outside. Every attempt
# must be refused with nothing written (or read) outside the module, and the
# daemon must keep serving afterwards.
. "$(dirname "$0")/lib.sh"

EVIL=$FERRY_TOOLS/ferry-evil
[ -x "$EVIL" ] || fail "ferry-evil not built in $FERRY_TOOLS"
KEY=$T/clienthome/id_ferry

write_config
mkdir -p "$T/outside" "$T/secret" "$T/outside2"
echo TOPSECRET > "$T/secret/secret.txt"
echo ORIGINAL > "$T/outside2/target"
ln -s "$T/outside" "$T/mod/link"              # a symlinked directory inside the module
ln -s "$T/secret" "$T/mod/slink"              # one to read through
ln -s "$T/outside2/target" "$T/mod/victim"    # a symlink to a file outside
ln -s "$T/outside2" "$T/mod/vdir"             # a symlink to a directory outside
start_server

outside_empty() {
  local left
  left=$(find "$T/outside" -mindepth 1 | head -n 5)
  [ -z "$left" ] || fail "$1: written outside the module: $left"
  [ "$(cat "$T/outside2/target")" = ORIGINAL ] || fail "$1: outside file changed"
  [ "$(find "$T/outside2" -mindepth 1 | wc -l)" = 1 ] || fail "$1: new file in outside2"
}

# The daemon penalises an address after two refused sessions in a row (any
# refusal counts, bad paths included); a successful session clears it. So
# every attempt that is meant to fail is followed by a good `ls`.
unpenalize() {
  local i
  # The refusing session's status reaches the daemon after the client has
  # its answer: let it land first, then let the good session's land.
  sleep 0.1
  for i in 1 2 3 4 5 6 7 8; do
    ferry_c ls -q "$(url m)" > /dev/null 2>&1 && { sleep 0.1; return 0; }
    sleep 1
  done
  fail "the daemon keeps refusing a good ls"
}

evil() {
  local rc=0
  "$EVIL" "$1" 127.0.0.1 "$PORT" "$KEY" m "${@:2}" || rc=$?
  unpenalize
  return $rc
}

# show WHAT FILE: one line of what happened, for the log.
show() { echo "   $1: exit ${rc:-?}: $(tr '\n' ' ' < "$2" | cut -c1-200)"; }

# try_c ARGS...: the client, expected to fail or not; output in $T/last.out, exit in $rc.
try_c() {
  rc=0
  ferry_c "$@" > "$T/last.out" 2>&1 || rc=$?
  unpenalize
}

# expect_evil CODE WHAT ARGS...: runs ferry-evil, wants exit CODE, keeps its output in $T/evil.out
expect_evil() {
  local want=$1 what=$2 rc=0; shift 2
  evil "$@" > "$T/evil.out" 2>&1 || rc=$?
  [ "$rc" = "$want" ] || { cat "$T/evil.out" >&2; fail "$what: ferry-evil exited $rc, wanted $want"; }
}

LONG=$(printf 'a%.0s' $(seq 1 300))
VERYLONG=$(printf 'abcdefgh/%.0s' $(seq 1 460))x   # > 4096 bytes

note "REQUEST paths: refused as bad paths (code 5) for push, pull and list"
for op in push pull list; do
  for p in "../x" ".." "/etc" "/" "a//b" "a/../../x" "./a" "a/." "a/" "link/../../x" "$LONG" "a/$LONG/b"; do
    expect_evil 5 "$op '$p'" request-path "$p" "$op"
    grep -q '^REFUSE 5 ' "$T/evil.out" || { cat "$T/evil.out" >&2; fail "$op '$p': not refused as a bad path"; }
  done
  # Longer than the 4096-byte message limit: malformed or refused, never accepted.
  rc=0; evil request-path "$VERYLONG" "$op" > "$T/evil.out" 2>&1 || rc=$?
  [ "$rc" != 0 ] || fail "$op: a path over 4096 bytes was accepted"
done
outside_empty "REQUEST paths"

note "the normal client: '..' and absolute-looking paths never land outside"
mkdir -p "$T/src/sub"
echo hello > "$T/src/file"
echo world > "$T/src/sub/inner"
for dest in "m/../x" "m/a/../../x" "m/a/./../../b" "m/$LONG"; do
  try_c push -q "$T/src/" "$(url "$dest")"
  show "push to $dest" "$T/last.out"
  [ "$rc" != 0 ] || fail "push to $dest succeeded"
done
outside_empty "client paths"

note "push through a symlinked directory (m/link/x) is refused"
try_c push -q "$T/src/" "$(url m/link/x)"
show "m/link/x" "$T/last.out"
[ "$rc" != 0 ] || fail "push to m/link/x succeeded"
try_c push -q "$T/src/" "$(url m/link/)"
show "m/link/" "$T/last.out"
outside_empty "push m/link/ (exit $rc)"
try_c push -q "$T/src/file" "$(url m/link/file)"
show "m/link/file" "$T/last.out"
[ "$rc" != 0 ] || fail "push of one file to m/link/file succeeded"
outside_empty "push m/link/*"

note "push of one file onto the symlink itself replaces the link, never follows it"
try_c push -q "$T/src/file" "$(url m/link)"
show "m/link" "$T/last.out"
outside_empty "push file to m/link (exit $rc)"
if [ "$rc" = 0 ]; then
  [ -f "$T/mod/link" ] && [ ! -L "$T/mod/link" ] || fail "m/link: neither kept nor replaced"
  rm -f "$T/mod/link"
  ln -s "$T/outside" "$T/mod/link"
fi

note "pull through symlinks reads nothing outside"
mkdir -p "$T/pulled"
for src in "m/slink/" "m/slink/secret.txt" "m/slink"; do
  try_c pull -q "$(url "$src")" "$T/pulled/"
  if grep -rqs TOPSECRET "$T/pulled"; then fail "pull $src read a file outside the module"; fi
  find "$T/pulled" -mindepth 1 ! -type l -name 'secret*' | grep -q . &&
    fail "pull $src created a regular file named secret*"
  show "pull $src" "$T/last.out"
done

note "crafted listings: DIR_BEGIN through a symlink, bad entry names"
# A file into the symlinked directory: the jail refuses the directory (a
# per-file error in RESULT) or the session ends with ERROR; never a write.
rc=0; evil push-entry link x file > "$T/evil.out" 2>&1 || rc=$?
show "push-entry link x file" "$T/evil.out"
grep -qE '^(RESULT errors=[1-9]|ERROR )' "$T/evil.out" ||
  { cat "$T/evil.out" >&2; fail "DIR_BEGIN(link) + file: not refused (exit $rc)"; }
outside_empty "DIR_BEGIN(link)"
rc=0; evil push-entry link sub dir > "$T/evil.out" 2>&1 || rc=$?
show "push-entry link sub dir" "$T/evil.out"
grep -qE '^(RESULT errors=[1-9]|ERROR )' "$T/evil.out" ||
  { cat "$T/evil.out" >&2; fail "DIR_BEGIN(link) + dir: not refused (exit $rc)"; }
outside_empty "DIR_BEGIN(link) dir"
rc=0; evil push-entry link ln link /etc > "$T/evil.out" 2>&1 || rc=$?
show "push-entry link ln link /etc" "$T/evil.out"
grep -qE '^(RESULT errors=[1-9]|ERROR )' "$T/evil.out" ||
  { cat "$T/evil.out" >&2; fail "DIR_BEGIN(link) + link: not refused (exit $rc)"; }
outside_empty "DIR_BEGIN(link) link"

# Names and directories that are not plain relative names: the server ends
# the session with an ERROR message (ferry-evil exit 6).
for name in ".." "." "a/b" "../x" "/x" "$LONG"; do
  expect_evil 6 "entry name '$name'" push-entry "" "$name" file
  grep -q '^ERROR ' "$T/evil.out" || fail "entry name '$name': no ERROR"
done
expect_evil 6 "dir entry '..'" push-entry "" ".." dir
expect_evil 6 "link entry '..'" push-entry "" ".." link /tmp
for dir in ".." "../x" "/tmp" "a//b" "a/" "link/.." "sub/../.."; do
  expect_evil 6 "DIR_BEGIN '$dir'" push-entry "$dir" x file
  grep -q '^ERROR ' "$T/evil.out" || fail "DIR_BEGIN '$dir': no ERROR"
done
outside_empty "crafted names"
[ ! -e "$T/x" ] && [ ! -e "$T/tmp/x" ] || fail "something landed next to the module"

note "a symlink planted by a push, then written through: refused"
expect_evil 0 "planting a link" push-entry "" planted link "$T/outside"
[ -L "$T/mod/planted" ] || fail "the link entry was not created"
rc=0; evil push-entry planted x file > "$T/evil.out" 2>&1 || rc=$?
show "push-entry planted x file" "$T/evil.out"
grep -qE '^(RESULT errors=[1-9]|ERROR )' "$T/evil.out" ||
  { cat "$T/evil.out" >&2; fail "DIR_BEGIN(planted) + file: not refused (exit $rc)"; }
try_c push -q "$T/src/" "$(url m/planted/y)"
show "m/planted/y" "$T/last.out"
[ "$rc" != 0 ] || fail "push to m/planted/y succeeded"
outside_empty "planted link"

note "symlinks stored in the module are replaced, not followed, by regular entries"
mkdir -p "$T/src2/vdir"
echo NEW > "$T/src2/victim"
echo NEWFILE > "$T/src2/vdir/f"
expect_rc 0 ferry_c push -q "$T/src2/" "$(url m)"
[ -f "$T/mod/victim" ] && [ ! -L "$T/mod/victim" ] || fail "m/victim is still a symlink"
[ "$(cat "$T/mod/victim")" = NEW ] || fail "m/victim has the wrong content"
[ -d "$T/mod/vdir" ] && [ ! -L "$T/mod/vdir" ] || fail "m/vdir is still a symlink"
[ "$(cat "$T/mod/vdir/f")" = NEWFILE ] || fail "m/vdir/f has the wrong content"
outside_empty "replaced symlinks"

note "the daemon still serves, and never crashed"
kill -0 "$SERVER_PID" || fail "the daemon died"
expect_rc 0 ferry_c push -q "$T/src/" "$(url m/after)"
same_tree "$T/src" "$T/mod/after"
no_temp_files "$T/mod"
if grep -qE 'died of signal|runtime error:|Sanitizer' "$T/server.log"; then fail "a session process crashed"; fi
outside_empty "end"
note "ok"
