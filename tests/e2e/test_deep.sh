#!/usr/bin/env bash
# The deepest tree the path limits allow: a chain of 2048 directories "a"
# (4095 bytes; path_check takes up to PATH_MAX_WIRE = 4096, so a 2049th level
# would not fit) with a file at level 2047 (also 4095 bytes), pulled from a
# real `ferry serve` and pushed to it, with -P (which counts the tree before
# the walk) and without, at the default stack size: a walk that recursed with
# two path buffers per level on the C stack died of SIGSEGV here, in the
# daemon on a pull and in the client on a push (issue 9, F3).
#
# lib.sh's same_tree cannot be used: diff -r opens every file by its whole
# path, which is longer than PATH_MAX below the top directory, and it only
# reports "Only in" for what it cannot open. deep_same compares the same
# manifest (type, mode, size, mtime of every entry) and each file's bytes
# through a path relative to the tree's root.
. "$(dirname "$0")/lib.sh"

chain() { printf 'a%.0s/' $(seq 1 "$1"); }
c2047=$(chain 2047)                 # "a/" x 2047: 4094 bytes
c2048=${c2047}a                     # 4095 bytes

# make_deep DIR: the tree in DIR, with a mode and an mtime to keep at the bottom.
make_deep() {
  mkdir -p "$1"
  (cd "$1" && mkdir -p "$c2048" && printf 'at the bottom\n' > "${c2047}f" &&
    chmod 750 "${c2047}a" && touch -d '2004-05-06 07:08:09.5' "${c2047}f" "${c2047}a" &&
    touch -d '2005-01-01 00:00:01' "${c2047%/}")
}

# deep_same A B: as same_tree, through paths relative to A and B.
deep_same() {
  diff <(tree_manifest "$1") <(tree_manifest "$2") > "$T/diff.out" ||
    { head -c 2000 "$T/diff.out" >&2; fail "metadata differ: $1 $2"; }
  local n=0 p
  while IFS= read -r p; do
    cmp -s <(cd "$1" && cat -- "$p") <(cd "$2" && cat -- "$p") || fail "contents differ: ${p: -40}"
    n=$((n + 1))
  done < <(cd "$1" && find . -type f -printf '%P\n')
  [ $n -ge 1 ] || fail "no file in $1"
}

make_deep "$T/mod"
longest=$(cd "$T/mod" && find . -printf '%P\n' | awk '{ if (length($0) > m) m = length($0) } END { print m }')
[ "$longest" = 4095 ] || fail "the test tree's longest path is $longest bytes, not 4095"
[ "$(cd "$T/mod" && find . -type d | wc -l)" = 2049 ] || fail "the test tree is not 2048 levels deep"

mkdir -p "$T/mod2" "$T/mod3"
write_config "[m2]" "path = $T/mod2" "protection = none" "[m3]" "path = $T/mod3" "protection = none"
start_server

# Every directory open goes through the jail by path, component by component
# where openat2 is missing (qemu-user 7.2): 2048 levels cost about 2 million
# openat calls a walk, 10-20 s emulated. So under emulation only the two -P
# transfers run (each walks and counts: the daemon, then the client, one by
# the root's fd and one by name); natively the others too.
note "pull -P of the chain by name (the daemon counts, then walks, 2048 levels)"
expect_rc 0 ferry_c pull -P "$(url m/a)" "$T/back1"
deep_same "$T/mod" "$T/back1"

note "push -P of the contents (the client counts, then walks)"
expect_rc 0 ferry_c push -P "$T/back1/" "$(url m2/)"
deep_same "$T/mod" "$T/mod2"

if [ -z "${FERRY_EMULATOR:-}" ]; then
  note "pull of the contents, push by name, without -P"
  expect_rc 0 ferry_c pull "$(url m/)" "$T/back2"
  deep_same "$T/mod" "$T/back2"
  expect_rc 0 ferry_c push "$T/back2/a" "$(url m3/)"
  deep_same "$T/mod" "$T/mod3"

  note "a second pull changes nothing"
  expect_rc 0 ferry_c pull -P -v "$(url m/)" "$T/back2"
  if grep -Eq '^(new|update) ' "$T/last.out"; then head -5 "$T/last.out"; fail "unchanged files sent again"; fi
  deep_same "$T/mod" "$T/back2"
fi
no_temp_files "$T/mod2"
echo "PASS"
