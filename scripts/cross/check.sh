#!/usr/bin/env bash
# scripts/cross/check.sh ARCH [--no-unit] [--no-e2e]
#
# Cross-builds ferry for ARCH (mips, mipsel, armhf, aarch64) and tests it under
# qemu user-mode emulation on this x86-64 host:
#   1. scripts/cross/setup-sysroot.sh ARCH  (toolchain + sysroot, cached in .cross/)
#   2. configure + build in .cross/build-ARCH (cmake/toolchains/ARCH.cmake)
#   3. smoke: the emulated binary runs (`ferry version`)
#   4. unit tests: ctest -L unit; CMAKE_CROSSCOMPILING_EMULATOR runs them in qemu
#   5. e2e tests (tests/e2e/test_*.sh) in three modes:
#        emulated       server and client both emulated
#        emu-server     emulated `ferry serve`, native client
#        emu-client     native `ferry serve`, emulated client
#      The tests get FERRY (a path), FERRY_SERVER and FERRY_CLIENT (commands,
#      word-split, may hold "qemu-ARCH -L SYSROOT /path/ferry"), FERRY_SRC,
#      FERRY_BUILD, plus FERRY_CROSS_ARCH and FERRY_EMULATOR for information.
#      A test exiting 77 counts as skipped.
#
# Environment:
#   JOBS=2                       build parallelism
#   FERRY_CROSS_BUILD_TYPE       default MinSizeRel (what ships)
#   FERRY_CROSS_CMAKE_ARGS       extra cmake arguments for the cross build
#   FERRY_STATIC=ON|OFF          link statically (default: ON for mipsel-musl only)
#   FERRY_NATIVE=/path/ferry     native binary for the mixed modes; default:
#                                built in .cross/build-native
#   FERRY_E2E_MODES              default "emulated emu-server emu-client"
#   FERRY_E2E_TESTS              glob, default "$FERRY_SRC/tests/e2e/test_*.sh"
#   FERRY_E2E_SKIP               MODE:NAME pairs (NAME without test_) not run
#   FERRY_E2E_TIMEOUT            seconds per test script, default 300
#   E2E_JOBS                     e2e scripts run at once, default JOBS
# Exit status: 0 when everything that ran passed.
set -euo pipefail
# shellcheck source=scripts/cross/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || { sed -n '2,32p' "$0"; exit 2; }
A=$(cross_arch "$1"); shift
RUN_UNIT=1 RUN_E2E=1
for o in "$@"; do case $o in
  --no-unit) RUN_UNIT=0;; --no-e2e) RUN_E2E=0;;
  *) cross_die "unknown option $o";; esac; done

B=$(cross_builddir "$A")
S=$(cross_sysroot "$A")
EMU=$(cross_emulator "$A")
LOGS=$FERRY_CROSS_DIR/logs/$A
STATIC=$(cross_static "$A")
mkdir -p "$LOGS"
FAILED=()

# 1. toolchain + sysroot
FERRY_STATIC=$STATIC "$FERRY_SRC/scripts/cross/setup-sysroot.sh" "$A"

# 2. configure + build
FERRY_STATIC=$STATIC cross_build "$A"
BIN=$B/ferry
# A plain executable path for tests that exec "$FERRY" directly.
printf '#!/bin/sh\nexec %s %s "$@"\n' "$EMU" "$BIN" > "$B/ferry-emu"
chmod +x "$B/ferry-emu"

# 3. smoke
info=$(LC_ALL=C readelf -h "$BIN" | awk -F: '/Class|Data|Machine/{gsub(/^ +/,"",$2); printf "%s; ", $2}')
if out=$($EMU "$BIN" version 2>&1); then
  cross_log "$A: $info emulated 'ferry version': $out"
else
  cross_log "$A: emulated 'ferry version' FAILED: $out"; FAILED+=("smoke")
fi

# 4. unit tests under qemu
if [ $RUN_UNIT = 1 ]; then
  cross_log "$A: unit tests (ctest -L unit, under $(cross_qemu "$A"))"
  if ctest --test-dir "$B" -L unit --output-on-failure -j"$((3 * JOBS))" --timeout 600 \
       2>&1 | tee "$LOGS/unit.log" | grep -E '^ *[0-9]+/[0-9]+ Test|tests passed|No tests were found|Failed|\*\*\*' >&2; then :; fi
  grep -q '100% tests passed\|No tests were found' "$LOGS/unit.log" || FAILED+=("unit")
fi

# 5. e2e tests: emulated and mixed emulated/native
if [ $RUN_E2E = 1 ]; then
  shopt -s nullglob
  # shellcheck disable=SC2206
  tests=(${FERRY_E2E_TESTS:-$FERRY_SRC/tests/e2e/test_*.sh})
  shopt -u nullglob
  if [ ${#tests[@]} -eq 0 ]; then
    cross_log "$A: no e2e tests (tests/e2e/test_*.sh) yet"
  else
    NB=$FERRY_CROSS_DIR/build-native
    modes=${FERRY_E2E_MODES:-emulated emu-server emu-client}
    NATIVE=
    if [ "$modes" != emulated ]; then NATIVE=$(native_build); NB=$(dirname "$NATIVE"); fi
    # The pairs run E2E_JOBS at a time (default JOBS): an emulated end keeps
    # one core busy and the native end little, and the tests already run side
    # by side under ctest -j (their own temporary directories and ports).
    pass=0 fail=0 skip=0 running=0 R=$LOGS/e2e-results
    rm -rf "$R"; mkdir -p "$R"
    # reap: wait for one pair and count it
    reap() {
      local r rc name mode secs w=0 got=0
      wait -n || w=$?
      for r in "$R"/*.rc; do
        [ -e "$r" ] || continue
        read -r rc secs < "$r"; name=$(basename "$r" .rc); mode=${name%%:*}; name=${name#*:}
        rm -f "$r"; running=$((running - 1))
        case $rc in
          0)  pass=$((pass + 1)); r=PASS;;
          77) skip=$((skip + 1)); r=SKIP;;
          *)  fail=$((fail + 1)); r="FAIL (exit $rc, log $LOGS/e2e-$mode-$name.log)"
              FAILED+=("e2e/$mode/$name")
              tail -15 "$LOGS/e2e-$mode-$name.log" | sed 's/^/    | /' >&2;;
        esac
        cross_log "$A: e2e $mode $name: $r ($secs s)"; got=1
      done
      [ "$w" != 127 ] || [ "$got" = 1 ] || cross_die "$A: e2e: a test ended without a result"
    }
    for mode in $modes; do
      case $mode in
        emulated)   f=$B/ferry-emu fb=$B srv="$EMU $BIN" cli="$EMU $BIN";;
        emu-server) f=$NATIVE fb=$NB srv="$EMU $BIN" cli=$NATIVE;;
        emu-client) f=$NATIVE fb=$NB srv=$NATIVE cli="$EMU $BIN";;
        *) cross_die "unknown e2e mode $mode";;
      esac
      for t in "${tests[@]}"; do
        name=$(basename "$t" .sh)
        # mode:name pairs that repeat what another mode already covers
        if [[ " ${FERRY_E2E_SKIP:-} " == *" $mode:${name#test_} "* ]]; then
          continue
        fi
        while [ "$running" -ge "${E2E_JOBS:-$JOBS}" ]; do reap; done
        (t0=$SECONDS rc=0
         FERRY=$f FERRY_SERVER=$srv FERRY_CLIENT=$cli FERRY_SRC=$FERRY_SRC FERRY_BUILD=$fb \
         FERRY_CROSS_ARCH=$A FERRY_EMULATOR="$EMU" \
           timeout --kill-after=10 "${FERRY_E2E_TIMEOUT:-300}" bash "$t" \
             > "$LOGS/e2e-$mode-$name.log" 2>&1 || rc=$?
         echo "$rc $((SECONDS - t0))" > "$R/$mode:$name.tmp" && mv "$R/$mode:$name.tmp" "$R/$mode:$name.rc") &
        running=$((running + 1))
      done
    done
    while [ "$running" -gt 0 ]; do reap; done
    echo "e2e ($A): $pass passed, $fail failed, $skip skipped"
  fi
fi

if [ ${#FAILED[@]} -gt 0 ]; then
  cross_log "$A: FAILED: ${FAILED[*]}"; exit 1
fi
cross_log "$A: all checks passed"
