#!/usr/bin/env bash
# FIFOs never hold a session (issue 9, F11). A FIFO that is there when the
# directory is listed is skipped as a special file (push, pull, ls). A file
# that a local user replaces by a FIFO after the listing, while earlier files
# are still being sent (slowly, --bwlimit), made the sender block forever in
# open(), waiting for a writer: now it is refused as no longer a regular file,
# the transfer goes on with the next file and ends with exit 23. Both ways:
# the client sends (push, --bwlimit), and the daemon sends (pull, from a
# module with a bwlimit: the sender itself must be slow, or it runs ahead of
# the receiver by the socket buffers and opens the file before the swap).
. "$(dirname "$0")/lib.sh"

# ferry_t ARGS...: ferry_c that gives up after 20 s (exit 124: it hung).
ferry_t() {
  local cmd=$1; shift
  # shellcheck disable=SC2086
  timeout -k 5 20 $FERRY_CLIENT "$cmd" --identity "$T/clienthome/id_ferry" \
    --known-hosts "$T/clienthome/known_hosts" --accept-new "$@"
}

# slow_tree DIR: a-slow.bin takes about 4 s at 1 MiB/s; m-victim.txt is
# sent after it, z-after.txt last (the sender follows the listing's order).
slow_tree() {
  mkdir -p "$1"
  head -c $((4 << 20)) /dev/urandom > "$1/a-slow.bin"
  echo "the victim" > "$1/m-victim.txt"
  echo "after the victim" > "$1/z-after.txt"
}

# swap_when_started DEST SRC: once the first file's temporary shows up in DEST
# (so SRC has been listed and a-slow.bin is on its way), replaces
# SRC/m-victim.txt by a FIFO. Fails if the transfer never starts.
swap_when_started() {
  for _ in $(seq 1 200); do
    if [ -n "$(find "$1" -name '.ferry-*' 2> /dev/null | head -n 1)" ]; then
      rm "$2/m-victim.txt"
      mkfifo "$2/m-victim.txt"
      return 0
    fi
    sleep 0.05
  done
  fail "the slow transfer did not start"
}

# check_swapped RC ERRFILE DEST SRC: exit 23 within the time limit, the
# victim named, the other files there, no FIFO and no temporary left.
check_swapped() {
  [ "$1" != 124 ] || fail "the transfer hung on the FIFO (killed after 20 s)"
  [ "$1" = 23 ] || { cat "$2" >&2; fail "expected exit 23, got $1"; }
  grep -q "m-victim.txt" "$2" || { cat "$2" >&2; fail "the refused file is not named"; }
  cmp "$4/a-slow.bin" "$3/a-slow.bin" || fail "a-slow.bin differs"
  cmp "$4/z-after.txt" "$3/z-after.txt" || fail "the file after the FIFO did not arrive"
  [ ! -e "$3/m-victim.txt" ] || fail "something arrived for the FIFO"
  no_temp_files "$3"
}

mkdir -p "$T/mod/srv"
echo "served" > "$T/mod/srv/file.txt"
mkfifo "$T/mod/srv/pipe"
mkdir -p "$T/slow"
write_config "[slow]" "path = $T/slow" "protection = none" "bwlimit = 1M"
start_server

note "push of a tree with a FIFO: skipped, the rest arrives"
mkdir -p "$T/src/sub"
echo one > "$T/src/one.txt"
echo two > "$T/src/sub/two.txt"
mkfifo "$T/src/pipe" "$T/src/sub/pipe"
expect_rc 0 ferry_t push "$T/src/" "$(url m/pushed)"
cmp "$T/src/one.txt" "$T/mod/pushed/one.txt" || fail "one.txt"
cmp "$T/src/sub/two.txt" "$T/mod/pushed/sub/two.txt" || fail "sub/two.txt"
if [ -e "$T/mod/pushed/pipe" ] || [ -e "$T/mod/pushed/sub/pipe" ]; then fail "a FIFO was created"; fi
# said by default, in rsync's words
grep -q 'skipping non-regular file "sub/pipe"' "$T/last.err" || { cat "$T/last.err"; fail "the skipped FIFO was not named"; }

note "ls and pull of a module directory with a FIFO: skipped"
expect_rc 0 ferry_t ls "$(url m/srv)"
grep -q 'file.txt' "$T/last.out" || fail "ls does not show file.txt"
if grep -q 'pipe' "$T/last.out"; then fail "ls shows the FIFO"; fi
expect_rc 0 ferry_t pull "$(url m/srv/)" "$T/pulled-srv"
cmp "$T/mod/srv/file.txt" "$T/pulled-srv/file.txt" || fail "file.txt"
[ ! -e "$T/pulled-srv/pipe" ] || fail "the FIFO was pulled"

note "push: a file replaced by a FIFO after the listing is refused, the rest goes on"
slow_tree "$T/swap-src"
mkdir -p "$T/mod/swap"
rc=0
ferry_t push --bwlimit 1M "$T/swap-src/" "$(url m/swap)" > "$T/swap.out" 2> "$T/swap.err" &
pid=$!
swap_when_started "$T/mod/swap" "$T/swap-src"
wait $pid || rc=$?
check_swapped "$rc" "$T/swap.err" "$T/mod/swap" "$T/swap-src"

note "pull: the same in a module, with the daemon sending"
slow_tree "$T/slow"
cp -a "$T/slow" "$T/swap2-orig"
mkdir -p "$T/pulled2"
rc=0
ferry_t pull "$(url slow/)" "$T/pulled2" > "$T/swap2.out" 2> "$T/swap2.err" &
pid=$!
swap_when_started "$T/pulled2" "$T/slow"
wait $pid || rc=$?
check_swapped "$rc" "$T/swap2.err" "$T/pulled2" "$T/swap2-orig"
grep -q "m-victim.txt" "$T/server.log" || fail "the daemon did not log the refused file"

note "the daemon still serves"
expect_rc 0 ferry_t ls "$(url m/)"
echo "PASS"
