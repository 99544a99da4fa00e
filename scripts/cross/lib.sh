# shellcheck shell=bash
# scripts/cross/lib.sh - shared definitions for ferry's cross-build scripts.
# Sourced by setup-sysroot.sh, check.sh and bench/size.sh; not run directly.
#
# ARCH names used throughout (cmake/toolchains/ARCH.cmake has the same names):
#   mips     MIPS32 big-endian (Atheros/QCA routers). Debian has no such port:
#            glibc from the host's libc6-dev-mips-cross, libraries built from
#            Debian's source packages.
#   mipsel   MIPS32r2 little-endian (MT7621 class routers); Debian bookworm
#   armhf    ARMv7 hard-float (Raspberry Pi 2/3/4, 32-bit OS); Debian bookworm
#   aarch64  ARMv8 64-bit (Raspberry Pi 3/4/5, 64-bit OS); Debian bookworm arm64
#   mipsel-musl  mipsel with musl, as on OpenWrt, linked statically (or, with
#            FERRY_STATIC=OFF, dynamically as the OpenWrt package is): Debian's
#            mipsel musl-dev .deb, libraries built from Debian's source packages
#            against it; the compiler is still gcc-mipsel-linux-gnu.

FERRY_SRC=${FERRY_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# Everything downloaded or built lives here (gitignored); override to share a
# cache between work trees: FERRY_CROSS_DIR=/var/cache/ferry-cross
FERRY_CROSS_DIR=${FERRY_CROSS_DIR:-$FERRY_SRC/.cross}
FERRY_DEBIAN_MIRROR=${FERRY_DEBIAN_MIRROR:-http://deb.debian.org/debian}
FERRY_DEBIAN_SUITE=${FERRY_DEBIAN_SUITE:-bookworm}
FERRY_KEYRING=${FERRY_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
JOBS=${JOBS:-2}

cross_die() { echo "cross: error: $*" >&2; exit 1; }
cross_log() { printf '[cross %4ss] %s\n' "$SECONDS" "$*" >&2; }

cross_arch() {  # normalise user spelling -> ARCH
  case $1 in
    mips|mipsbe|mipseb) echo mips;;
    mipsel|mipsle) echo mipsel;;
    armhf|arm|armv7) echo armhf;;
    aarch64|arm64) echo aarch64;;
    mipsel-musl|musl) echo mipsel-musl;;
    *) cross_die "unknown ARCH '$1' (mips, mipsel, armhf, aarch64, mipsel-musl)";;
  esac
}
cross_triplet() { case $1 in
  mips) echo mips-linux-gnu;; mipsel|mipsel-musl) echo mipsel-linux-gnu;;
  armhf) echo arm-linux-gnueabihf;; aarch64) echo aarch64-linux-gnu;; esac; }
cross_debarch() { case $1 in aarch64) echo arm64;; mipsel-musl) echo mipsel;; *) echo "$1";; esac; }
cross_qemu() { case $1 in
  mips) echo qemu-mips;; mipsel|mipsel-musl) echo qemu-mipsel;;
  armhf) echo qemu-arm;; aarch64) echo qemu-aarch64;; esac; }
cross_sysroot() { echo "$FERRY_CROSS_DIR/sysroot-$1"; }
# Static or not: FERRY_STATIC when set; otherwise mipsel-musl is static (the one
# file to copy onto a router) and the rest dynamic. FERRY_STATIC=OFF gives the
# musl build the OpenWrt package's shape (musl's loader, libsodium.so).
cross_static() {
  if [ -n "${FERRY_STATIC:-}" ]; then echo "$FERRY_STATIC"
  elif [ "$1" = mipsel-musl ]; then echo ON
  else echo OFF; fi
}
cross_builddir() {
  if [ "$1" = mipsel-musl ] && [ "$(cross_static "$1")" = OFF ]; then
    echo "$FERRY_CROSS_DIR/build-$1-dynamic"
  else
    echo "$FERRY_CROSS_DIR/build-$1"
  fi
}
cross_toolchain_file() { echo "$FERRY_SRC/cmake/toolchains/$1.cmake"; }
# The command prefix that runs a target binary on this host. qemu-mipsel must
# keep its default CPU: Debian's mipsel userland is hard-float and the FPU-less
# 24Kc model gets SIGILL. FERRY_QEMU_CPU overrides for experiments.
cross_emulator() {
  echo "$(cross_qemu "$1")${FERRY_QEMU_CPU:+ -cpu $FERRY_QEMU_CPU} -L $(cross_sysroot "$1")"
}

# Host packages needed to cross-build for ARCH.
cross_host_pkgs() {
  local a=$1 tr deb
  tr=$(cross_triplet "$a"); deb=$(cross_debarch "$a")
  echo "cmake make pkgconf qemu-user dpkg-dev xz-utils debian-archive-keyring gcc-$tr libc6-dev-$deb-cross"
  case $a in mips|mipsel-musl) echo "autoconf automake libtool";; esac
  return 0
}

cross_install_host_pkgs() {  # install what is missing (needs root + apt)
  local missing=() p
  # shellcheck disable=SC2046
  for p in $(cross_host_pkgs "$1"); do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "${FERRY_CROSS_NO_APT:-0}" = 1 ] || [ "$(id -u)" != 0 ]; then
    cross_die "missing host packages: ${missing[*]} (apt-get install --no-install-recommends ${missing[*]})"
  fi
  cross_log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null; then
    apt-get update -q >/dev/null || true
    apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
  fi
}

# cross_build ARCH [TARGET...]: configure + build ferry for ARCH in
# $(cross_builddir ARCH) (logs in $FERRY_CROSS_DIR/logs/ARCH). Knobs:
# FERRY_CROSS_BUILD_TYPE (MinSizeRel), FERRY_STATIC (OFF), FERRY_CROSS_CMAKE_ARGS.
# -Os makes gcc 12 report possible snprintf truncation that -O2 does not
# see: kept a warning, not an error, in size builds.
cross_build() {
  local a=$1 B L bt st extra=()
  shift
  B=$(cross_builddir "$a"); L=$FERRY_CROSS_DIR/logs/$a
  bt=${FERRY_CROSS_BUILD_TYPE:-MinSizeRel}
  st=$(cross_static "$a")
  mkdir -p "$L"
  # (in the build type's flags: CMAKE_C_FLAGS would replace the toolchain's own)
  [ "$bt" = MinSizeRel ] && extra+=("-DCMAKE_C_FLAGS_MINSIZEREL=-Os -DNDEBUG -Wno-error=format-truncation")
  cross_log "$a: configure + build ($bt, static=$st) in $B"
  # shellcheck disable=SC2086
  cmake -S "$FERRY_SRC" -B "$B" -DCMAKE_TOOLCHAIN_FILE="$(cross_toolchain_file "$a")" \
    -DCMAKE_BUILD_TYPE="$bt" -DFERRY_OPENSSL=OFF -DFERRY_STATIC="$st" \
    "${extra[@]}" ${FERRY_CROSS_CMAKE_ARGS:-} > "$L/configure.log" 2>&1 ||
    { tail -40 "$L/configure.log" >&2; cross_die "$a: cmake configure failed"; }
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  cmake --build "$B" -j"$JOBS" "${targets[@]}" > "$L/build.log" 2>&1 ||
    { grep -E 'error|Error' "$L/build.log" | head -40 >&2; cross_die "$a: build failed (log: $L/build.log)"; }
}

# native_build: the host's ferry (client/server peer for mixed runs) in
# $FERRY_CROSS_DIR/build-native; prints its path. FERRY_NATIVE=/path skips it.
native_build() {
  if [ -n "${FERRY_NATIVE:-}" ]; then echo "$FERRY_NATIVE"; return 0; fi
  local NB=$FERRY_CROSS_DIR/build-native
  mkdir -p "$FERRY_CROSS_DIR/logs"
  cross_log "native build in $NB"
  # shellcheck disable=SC2086
  { cmake -S "$FERRY_SRC" -B "$NB" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFERRY_TESTS=OFF \
      ${FERRY_NATIVE_CMAKE_ARGS:-} && cmake --build "$NB" -j"$JOBS" --target ferry; } \
    > "$FERRY_CROSS_DIR/logs/native.log" 2>&1 ||
    { tail -30 "$FERRY_CROSS_DIR/logs/native.log" >&2; cross_die "native build failed"; }
  echo "$NB/ferry"
}
