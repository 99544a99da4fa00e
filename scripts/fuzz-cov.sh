#!/usr/bin/env bash
# Line and function coverage of each harness's target by the committed
# corpus (fuzz/corpus/<harness>/), with clang's source-based coverage:
#   CC=clang cmake -S . -B build-cov -DFERRY_FUZZ=ON -DFERRY_TESTS=OFF \
#     -DCMAKE_C_FLAGS="-fprofile-instr-generate -fcoverage-mapping" \
#     -DCMAKE_EXE_LINKER_FLAGS=-fprofile-instr-generate
#   cmake --build build-cov --target fuzz_proto_msg ...   (the fuzz_* targets)
#   scripts/fuzz-cov.sh build-cov
# Prints a markdown table (docs/FUZZING.md keeps the latest).
set -euo pipefail
B=${1:?usage: fuzz-cov.sh BUILD_COV_DIR}
SRC=$(cd "$(dirname "$0")/.." && pwd)
PROFDATA=$(command -v llvm-profdata || ls /usr/bin/llvm-profdata-* | head -n1)
COV=$(command -v llvm-cov || ls /usr/bin/llvm-cov-* | head -n1)
declare -A TARGET=(
  [fuzz_channel_opening]="src/channel/opening.c"
  [fuzz_channel_handshake]="src/channel/noise.c"
  [fuzz_channel_record]="src/channel/record.c"
  [fuzz_proto_msg]="src/proto/msg.c src/proto/wire.c"
  [fuzz_proto_zchunk]="src/proto/zchunk.c"
  [fuzz_util_filter]="src/util/filter.c"
  [fuzz_util_config]="src/util/config.c"
  [fuzz_fs_snapidx]="src/fs/snapidx.c src/fs/snapstore.c"
)
mkdir -p "$B/cov"
echo "| harness | corpus inputs | file | lines covered | functions covered |"
echo "|---|---:|---|---:|---:|"
for name in $(printf '%s\n' "${!TARGET[@]}" | sort); do
  f=$B/fuzz/$name corpus=$SRC/fuzz/corpus/$name
  [ -x "$f" ] && [ -d "$corpus" ] || continue
  rm -f "$B/cov/$name".*
  LLVM_PROFILE_FILE="$B/cov/$name.%p.profraw" "$f" -runs=0 "$corpus" > /dev/null 2>&1 || true
  "$PROFDATA" merge -sparse "$B/cov/$name".*.profraw -o "$B/cov/$name.profdata"
  for t in ${TARGET[$name]}; do
    "$COV" report "$f" -instr-profile="$B/cov/$name.profdata" "$SRC/$t" 2> /dev/null |
      awk -v h="$name" -v t="$SRC/$t" -v s="$t" -v n="$(ls "$corpus" | wc -l)" '
        $1 == t { printf "| %s | %s | %s | %s | %s |\n", h, n, s, $10, $7 }'
  done
done
