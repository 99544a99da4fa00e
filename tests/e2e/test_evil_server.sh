#!/usr/bin/env bash
# A malicious server against `ferry pull` (audit, issue 9, finding 1): with
# a destination that does not exist (no trailing /), the client's jail is
# the destination's parent. A root listing flagged "single file" must then
# bring exactly one regular file, written under the destination's name, and
# nothing else; any other root may only fill the destination directory.
# Every variant runs in a fresh $T/home; whatever the server sends, nothing
# outside $T/home/x may change (names, types, modes, sizes, mtimes,
# contents, link targets, and the mode of $T/home itself).
. "$(dirname "$0")/lib.sh"

[ -x "$FERRY_TOOLS/ferry-evil" ] || fail "ferry-evil not built in $FERRY_TOOLS"

# Failures are collected, so that one run tells which variants fail.
BAD=
bad() { echo "FAIL: $*" >&2; BAD="$BAD
  $*"; }

# new_home: $T/home with an ssh key list, a sibling file, a sibling tree and a link.
new_home() {
  rm -rf "${T:?}/home"
  mkdir -p "$T/home/.ssh" "$T/home/sib/deep"
  echo "AAAAthe-real-key me@pc" > "$T/home/.ssh/authorized_keys"
  chmod 600 "$T/home/.ssh/authorized_keys"
  chmod 700 "$T/home/.ssh"
  echo notes > "$T/home/notes.txt"
  echo deep > "$T/home/sib/deep/f"
  ln -s notes.txt "$T/home/link"
  chmod 755 "$T/home" "$T/home/sib"
}

# outside_manifest: everything under $T/home except x, and $T/home's own mode
# (its mtime changes legitimately when x is created).
outside_manifest() {
  (
    cd "$T/home" || exit 1
    stat -c 'home mode %a' .
    find . -mindepth 1 -path ./x -prune -o -printf '%y %m %s %T@ %p -> %l\n' | LC_ALL=C sort
    find . -mindepth 1 -path ./x -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum
  )
}

# pull_evil NAME [PULL-OPTIONS...]: plays $T/v.script from the evil server to
# `ferry pull OPTIONS .../m/x $T/home/x`; the client's exit code in $rc, its
# output in $T/v.out and $T/v.err; the outside of $T/home checked unchanged.
pull_evil() {
  local name=$1; shift
  outside_manifest > "$T/before"
  start_evil_server "$T/v.script"
  rc=0
  ferry_e pull "$@" "$(eurl m/x)" "$T/home/x" > "$T/v.out" 2> "$T/v.err" || rc=$?
  stop_evil_server
  echo "   $name: client exit $rc: $(grep -v "^ferry: added " "$T/v.err" | tr "\n" " " | cut -c1-160)"
  outside_manifest > "$T/after"
  if ! diff "$T/before" "$T/after" > "$T/diff.out"; then
    sed 's/^/     /' "$T/diff.out" | head -n 12 >&2
    bad "$name: changed outside the destination (client exit $rc)"
  fi
}

# expect_protocol NAME: the client refused the stream as a protocol error.
# (-EBADMSG from the receiver is EXIT_STREAM, 12, today; 2 is EXIT_PROTOCOL.)
expect_protocol() {
  if [ "$rc" != 2 ] && [ "$rc" != 12 ]; then
    bad "$1: client exit $rc, wanted a protocol error (2 or 12)"
  elif ! grep -q 'protocol' "$T/v.err"; then
    bad "$1: client exit $rc without saying 'protocol'"
  fi
}

# dest_single_ok NAME: x is absent or one regular file (never a directory or a link).
dest_single_ok() {
  if [ -L "$T/home/x" ] || { [ -e "$T/home/x" ] && [ ! -f "$T/home/x" ]; }; then
    bad "$1: the destination became $(stat -c %F "$T/home/x")"
  fi
}

# single VARIANT-NAME [PULL-OPTIONS...] < script: a single-file root followed
# by something a single-file root may not have: refused, nothing outside changed.
single() {
  local name=$1; shift
  cat > "$T/v.script"
  new_home
  pull_evil "$name" "$@"
  expect_protocol "$name"
  dest_single_ok "$name"
}

note "the audit's sequence: .ssh/authorized_keys overwritten, the home made 0777"
single "audit sequence" <<'EOF'
DIR_BEGIN 3 ""
ENTRY file decoy
DIR_END
DIR_BEGIN 0 .ssh
ENTRY file authorized_keys
DIR_END
DIR_META 0777 ""
END
EOF

note "after a single-file root: one message of each kind it may not be followed by"
single "second ENTRY in the root" <<'EOF'
DIR_BEGIN 3 ""
ENTRY file decoy
ENTRY file notes.txt
DIR_END
END
EOF
single "single entry is a directory" <<'EOF'
DIR_BEGIN 3 ""
ENTRY dir decoy
DIR_END
END
EOF
single "single entry is a symlink" <<'EOF'
DIR_BEGIN 3 ""
ENTRY link decoy 0777 0 .ssh/authorized_keys
DIR_END
END
EOF
single "DIR_BEGIN of a sibling directory" <<'EOF'
DIR_BEGIN 3 ""
ENTRY file decoy
DIR_END
DIR_BEGIN 0 sib
ENTRY file planted
DIR_END
END
EOF
single "DIR_META of the root" <<'EOF'
DIR_BEGIN 3 ""
ENTRY file decoy
DIR_END
DIR_META 0777 ""
END
EOF
single "DIR_META of a sibling" <<'EOF'
DIR_BEGIN 3 ""
ENTRY file decoy
DIR_END
DIR_META 0777 sib
END
EOF

note "type changes outside the destination after a single-file root"
single "file -> dir (.ssh/authorized_keys)" <<'EOF'
DIR_BEGIN 3 ""
ENTRY file decoy
DIR_END
DIR_BEGIN 0 .ssh
ENTRY dir authorized_keys
DIR_END
END
EOF
single "dir -> link (sib/deep)" <<'EOF'
DIR_BEGIN 3 ""
ENTRY file decoy
DIR_END
DIR_BEGIN 0 sib
ENTRY link deep 0777 0 /
DIR_END
END
EOF

note "--delete after a single-file root: a second root listing of the parent"
single "--delete: second DIR_BEGIN of the root" --delete <<'EOF'
DIR_BEGIN 3 ""
ENTRY file decoy
DIR_END
DIR_BEGIN 0 ""
DIR_END
END
EOF

note "--delete: a single-file root without the synthetic flag deletes nothing"
cat > "$T/v.script" <<'EOF'
DIR_BEGIN 2 ""
ENTRY file decoy
DIR_END
END
EOF
new_home
pull_evil "--delete: single root, not synthetic" --delete
dest_single_ok "--delete: single root, not synthetic"

note "a directory root (synthetic, not single): everything lands inside x"
cat > "$T/v.script" <<'EOF'
DIR_BEGIN 1 ""
ENTRY dir sub
ENTRY file top
DIR_END
DIR_BEGIN 0 sub
ENTRY file f1
ENTRY file f2
DIR_END
DIR_META 0700 sub
DIR_META 0777 ""
END
EOF
new_home
pull_evil "directory root"
[ "$rc" = 0 ] || bad "directory root: client exit $rc, wanted 0"
for f in top sub/f1 sub/f2; do
  [ "$(cat "$T/home/x/$f" 2> /dev/null)" = "evil data" ] || bad "directory root: x/$f did not land"
done

note "--delete into an existing destination: only its own contents go"
cat > "$T/v.script" <<'EOF'
DIR_BEGIN 0 ""
ENTRY file notes.txt
ENTRY dir sib
ENTRY link link 0777 0 notes.txt
DIR_END
END
EOF
new_home
mkdir "$T/home/x"
echo old > "$T/home/x/old.txt"
pull_evil "--delete, destination exists" --delete
[ "$rc" = 0 ] || bad "--delete, destination exists: client exit $rc, wanted 0"
[ ! -e "$T/home/x/old.txt" ] || bad "--delete, destination exists: x/old.txt was not deleted"
[ "$(cat "$T/home/x/notes.txt" 2> /dev/null)" = "evil data" ] ||
  bad "--delete, destination exists: x/notes.txt did not land"

note "--delete into a missing destination (a plain root listing): x is created, nothing else goes"
new_home
pull_evil "--delete, destination missing" --delete
[ "$rc" = 0 ] || bad "--delete, destination missing: client exit $rc, wanted 0"
[ -d "$T/home/x" ] && [ ! -L "$T/home/x" ] || bad "--delete, destination missing: x is not a directory"

[ -z "$BAD" ] || fail "variants that failed:$BAD"
note "ok"
