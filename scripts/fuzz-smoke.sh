#!/usr/bin/env bash
# Runs every libFuzzer harness in BUILD_DIR for SECONDS each, seeded with the
# corpus in fuzz/corpus/<name>/ when there is one, FUZZ_JOBS (default: the
# number of CPUs) at a time: each harness is one single-threaded process. A
# crash fails the run and leaves its input in build-fuzz/crashes/ (turn it
# into a regression test).
set -euo pipefail
B=${1:?usage: fuzz-smoke.sh BUILD_DIR SECONDS}
S=${2:-15}
J=${FUZZ_JOBS:-$(nproc)}
SRC=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$B/crashes" "$B/work"

one() {  # one HARNESS: runs it, prints its log's tail and fails on a crash
  local f=$1 name work seeds=()
  name=$(basename "$f")
  work="$B/work/$name"
  mkdir -p "$work"
  [ -d "$SRC/fuzz/corpus/$name" ] && seeds+=("$SRC/fuzz/corpus/$name")
  echo "fuzz: $name for ${S}s"
  if ! "$f" -max_total_time="$S" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
       -artifact_prefix="$B/crashes/$name-" "$work" "${seeds[@]}" > "$B/work/$name.log" 2>&1; then
    tail -n 40 "$B/work/$name.log" >&2
    echo "fuzz: $name FAILED (input in $B/crashes/)" >&2
    return 1
  fi
}

ran=0 failed=0 running=0
for f in "$B"/fuzz/fuzz_*; do
  [ -x "$f" ] || continue
  if [ $running -ge "$J" ]; then
    wait -n || failed=$((failed + 1))
    running=$((running - 1))
  fi
  one "$f" &
  running=$((running + 1)) ran=$((ran + 1))
done
while [ $running -gt 0 ]; do
  wait -n || failed=$((failed + 1))
  running=$((running - 1))
done
[ $ran -gt 0 ] || { echo "fuzz: no harness was built" >&2; exit 1; }
[ $failed -eq 0 ] || { echo "fuzz: $failed of $ran harnesses FAILED" >&2; exit 1; }
echo "fuzz: $ran harnesses ran ${S}s each without a crash ($J at a time)"
