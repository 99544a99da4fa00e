#!/usr/bin/env bash
# A source file that shrinks while it is sent (a log rotated, a download
# truncated): the sender pads the promised length with zeros and marks the
# file changed; the receiver must not put that under the final name, the older
# version stays intact, no temporary is left, and the client says which file
# and exits 23 (some files failed), as rsync does. Through the user-space path
# (encrypt) and the sendfile path (none --no-verify, where the padding is
# sent from a zero buffer).
. "$(dirname "$0")/lib.sh"

write_config
start_server

for mode in encrypt raw; do
  args=(--protection encrypt)
  [ $mode = raw ] && args=(--protection none --no-verify)
  note "$mode: a file that shrinks mid-transfer is not committed"
  src=$T/src-$mode
  mkdir -p "$src"
  echo "old version" > "$src/grow.log"
  expect_rc 0 ferry_c push "${args[@]}" "$src/" "$(url "m/$mode")"
  cp "$T/mod/$mode/grow.log" "$T/old-$mode"

  head -c $((48 << 20)) /dev/urandom > "$src/grow.log"
  rc=0
  # 8 MiB/s: the 48 MiB take about 6 s, so the cut 0.5 s after the file's
  # temporary appears on the server lands mid-file.
  (for _ in $(seq 1 200); do
     ls -a "$T/mod/$mode" 2> /dev/null | grep -q '^\.ferry-' && break
     sleep 0.05
   done
   sleep 0.5; truncate -s $((1 << 20)) "$src/grow.log") &
  cut=$!
  ferry_c push "${args[@]}" --bwlimit 8M "$src/" "$(url "m/$mode")" \
    > "$T/shrink.out" 2> "$T/shrink.err" || rc=$?
  wait $cut
  [ "$rc" = 23 ] || { cat "$T/shrink.err" >&2; fail "$mode: expected exit 23, got $rc"; }
  grep -q "grow.log: file shrank while it was sent" "$T/shrink.err" ||
    { cat "$T/shrink.err" >&2; fail "$mode: the shrunk file is not named"; }
  cmp "$T/old-$mode" "$T/mod/$mode/grow.log" || fail "$mode: the old version was replaced"
  no_temp_files "$T/mod"

  note "$mode: the next push sends the file as it is now"
  expect_rc 0 ferry_c push "${args[@]}" "$src/" "$(url "m/$mode")"
  cmp "$src/grow.log" "$T/mod/$mode/grow.log" || fail "$mode: the new version differs"
done

note "a file written in place while it is read: said, and the next push sends it again"
src=$T/src-mix
mkdir -p "$src" && head -c $((4 << 20)) /dev/zero > "$src/vm.img"
(for _ in $(seq 1 200); do
   ls -a "$T/mod/mix" 2> /dev/null | grep -q '^\.ferry-' && break
   sleep 0.05
 done
 printf 'changed' | dd of="$src/vm.img" bs=1 seek=100 conv=notrunc status=none) &
cut=$!
expect_rc 0 ferry_c push --bwlimit 2M "$src/" "$(url m/mix)"
wait $cut
grep -q "vm.img: changed while it was read: the copy may mix old and new data" "$T/last.err" ||
  { cat "$T/last.err"; fail "a file changed during its read was not named"; }
expect_rc 0 ferry_c push "$src/" "$(url m/mix)"
cmp "$src/vm.img" "$T/mod/mix/vm.img" || fail "the next push did not send the changed file"
echo "PASS"
