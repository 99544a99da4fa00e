#!/usr/bin/env bash
# 10,000 small files in 100 directories: push, an unchanged re-push that
# sends nothing, and a pull, all compared with contents and metadata.
. "$(dirname "$0")/lib.sh"

src=$T/src
for d in $(seq 0 99); do
  mkdir -p "$src/d$d"
  for f in $(seq 0 99); do
    echo "file $d/$f $RANDOM" > "$src/d$d/f$f.txt"
  done
done
write_config
start_server
expect_rc 0 ferry_c push "$src/" "$(url m/many)"
[ "$(find "$T/mod/many" -type f | wc -l)" -eq 10000 ] || fail "not all 10,000 files arrived"
same_tree "$src" "$T/mod/many"
expect_rc 0 ferry_c push -v "$src/" "$(url m/many)"
if grep -Eq '^(new|update) ' "$T/last.out"; then fail "re-push sent unchanged files"; fi
expect_rc 0 ferry_c pull "$(url m/many/)" "$T/back"
same_tree "$src" "$T/back"
no_temp_files "$T/mod"
echo "PASS"
