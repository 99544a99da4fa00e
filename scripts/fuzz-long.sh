#!/usr/bin/env bash
# Runs every libFuzzer harness in BUILD_DIR for SECONDS each (default 3600),
# one after another, each growing its own corpus in BUILD_DIR/long/<name>
# (seeded with fuzz/corpus/<name>), then merges what it found into
# fuzz/corpus/<name>/ (libFuzzer -merge=1: only inputs that add coverage), so
# that `make fuzz` in `make check` replays them. A crash stops the run and
# leaves its input in BUILD_DIR/crashes/ (turn it into a regression test).
#   make fuzz FUZZ_SECONDS=1 && scripts/fuzz-long.sh build-fuzz 3600
#   FUZZ_ONLY="fuzz_proto_msg" scripts/fuzz-long.sh build-fuzz 600
set -euo pipefail
B=${1:?usage: fuzz-long.sh BUILD_DIR [SECONDS]}
S=${2:-3600}
SRC=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$B/crashes" "$B/long"
for f in "$B"/fuzz/fuzz_*; do
  [ -x "$f" ] || continue
  name=$(basename "$f")
  case " ${FUZZ_ONLY:-$name} " in *" $name "*) ;; *) continue ;; esac
  work=$B/long/$name corpus=$SRC/fuzz/corpus/$name
  mkdir -p "$work" "$corpus"
  echo "fuzz-long: $name for ${S}s ($(date -u +%H:%M:%S))"
  if ! "$f" -max_total_time="$S" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$B/crashes/$name-" "$work" "$corpus" > "$B/long/$name.log" 2>&1; then
    tail -n 40 "$B/long/$name.log" >&2
    echo "fuzz-long: $name FAILED (input in $B/crashes/)" >&2
    exit 1
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$B/long/$name.log" | sed "s/^/  $name /"
  before=$(ls "$corpus" | wc -l)
  "$f" -merge=1 "$corpus" "$work" > "$B/long/$name.merge.log" 2>&1
  echo "  $name: corpus $before -> $(ls "$corpus" | wc -l) inputs"
done
