#!/usr/bin/env bash
# make check's stages, each timed ("[check] NAME: N s"). The suites keep both
# cores busy and run one after another; the bench smoke waits on links, sleeps
# and daemons most of its time (39 % of 2 cores when alone), so the emulated
# boxes and the packaging run beside it, niced, on what it leaves: the smoke's
# timings stay its own (load.sh's time limits), the boxes only take longer.
set -euo pipefail
cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
M=("$MAKE" --no-print-directory)
T0=$SECONDS

stage() {  # stage NAME CMD...: runs CMD, says how long it took
  local name=$1 t=$SECONDS; shift
  "$@"
  echo "[check] $name: $((SECONDS - t)) s"
}

stage "native suite" "${M[@]}" test
stage "ASan+UBSan suite" "${M[@]}" asan
stage "clang -Werror build" "${M[@]}" clang
stage "fuzz smoke" "${M[@]}" fuzz
# the packages both sides need, first, so that two apt-gets never race for dpkg's lock
stage "packaging and bench deps" bash -c 'bash tests/packaging/run-all.sh --deps && bench/run.sh --deps'

SMOKE_LOG=${BUILD:-build}/bench-smoke.log
t=$SECONDS
# not `make bench-smoke`: its cmake would run beside the boxes' on the same build tree
FERRY=$PWD/${BUILD:-build}/ferry bench/run.sh --smoke > "$SMOKE_LOG" 2>&1 &
smoke=$!
boxes=0
nice -n 10 "${M[@]}" cross-mips cross-musl static-packaging || boxes=$?
echo "[check] MIPS, mipsel-musl, static and packaging (niced, beside the bench smoke): $((SECONDS - t)) s"
rc=0; wait "$smoke" || rc=$?
cat "$SMOKE_LOG"
echo "[check] bench smoke: done $((SECONDS - t)) s after it started"
[ "$boxes" = 0 ] || { echo "make check: the emulated boxes or the packaging failed" >&2; exit 1; }
[ "$rc" = 0 ] || { echo "make check: the bench smoke failed" >&2; exit 1; }
echo "make check: all suites passed in $((SECONDS - T0)) s"
