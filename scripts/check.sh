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

# the packages every stage needs, first, so that two apt-gets never race for
# dpkg's lock (the cross toolchains' too: their sysroots are built beside the suites)
stage "packaging, bench and cross deps" bash -c \
  'bash tests/packaging/run-all.sh --deps && bench/run.sh --deps && scripts/cross/setup-sysroot.sh --host-pkgs mips mipsel-musl'

# The two cross sysroots compile libsodium, zstd and cmocka from Debian's
# sources (about 150 s of CPU each, much of it configure scripts running
# one process at a time). The suites leave about a sixth of the 2 cores idle
# (they wait on daemons and sleeps): built there, at the lowest priority,
# they cost the suites nothing and the emulated boxes no longer wait for them.
SYSROOT_LOG=${BUILD:-build}/cross-sysroots.log
mkdir -p "${BUILD:-build}"
# (its own process group, so that a failing suite stops its compilers too)
setsid nice -n 19 bash -c 't=$SECONDS; scripts/cross/setup-sysroot.sh mips mipsel-musl; rc=$?
  echo "[check] cross sysroots: ready $((SECONDS - t)) s after they started (rc $rc)"; exit $rc' \
  > "$SYSROOT_LOG" 2>&1 &
sysroots=$!
trap 'kill -- -"$sysroots" 2>/dev/null || true' EXIT

stage "native suite" "${M[@]}" test
stage "ASan+UBSan suite" "${M[@]}" asan
stage "clang -Werror build" "${M[@]}" clang
stage "fuzz smoke" "${M[@]}" fuzz
t=$SECONDS
wait "$sysroots" || { cat "$SYSROOT_LOG"; echo "make check: the cross sysroots failed" >&2; exit 1; }
trap - EXIT
tail -1 "$SYSROOT_LOG"
echo "[check] cross sysroots: the boxes waited $((SECONDS - t)) s for them"

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
