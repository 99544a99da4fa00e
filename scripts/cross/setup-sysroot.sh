#!/usr/bin/env bash
# scripts/cross/setup-sysroot.sh [--host-pkgs] ARCH [ARCH...]
#
# Prepares everything needed to cross-build and emulate ferry for ARCH on a
# Debian 12 x86-64 host, cached under .cross/ (FERRY_CROSS_DIR):
#   - host packages: cross gcc, libc6-dev-ARCH-cross, qemu-user (apt-get
#     install when missing and we are root; FERRY_CROSS_NO_APT=1 forbids it)
#   - .cross/sysroot-ARCH: the target's libc, libsodium, libxxhash, libzstd and cmocka
#       mipsel/armhf/aarch64: Debian bookworm .debs fetched with a *private*
#         apt configuration (.cross/apt-ARCH, --download-only) and unpacked with
#         dpkg-deb -x. The system's dpkg architectures and /etc/apt are never
#         touched (no dpkg --add-architecture).
#       mips (big-endian): Debian has no such port. The sysroot's lib/ is the
#         host's cross glibc (/usr/mips-linux-gnu/lib, from libc6-dev-mips-cross)
#         and libsodium, xxhash, zstd and cmocka are built from Debian's *source*
#         packages (private deb-src list, apt-get source) with the cross gcc.
#       mipsel-musl: Debian's mipsel musl-dev .deb (unpacked as above) and the
#         same four libraries built from source against it, static + shared.
# Re-running is cheap: a sysroot whose stamp matches this script's recipe is
# kept. FERRY_CROSS_FORCE=1 rebuilds it. FERRY_CROSS_EXTRA_PKGS adds Debian
# packages to the Debian sysroots (e.g. "libssl-dev" for -DFERRY_OPENSSL=ON).
# --host-pkgs installs the host packages alone (make check does so before its
# suites, and builds the sysroots beside them).
set -euo pipefail
# shellcheck source=scripts/cross/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || { sed -n '2,23p' "$0"; exit 2; }

RECIPE_VERSION=8
DEB_PKGS="libc6-dev libsodium-dev libxxhash-dev libzstd-dev libcmocka-dev ${FERRY_CROSS_EXTRA_PKGS:-}"

# ------------------------------------------------------------ private apt
apt_opts() {  # $1 = debian arch, or "src" for the deb-src tree
  local R=$FERRY_CROSS_DIR/apt-$1
  [ "$1" = src ] || printf -- '-o APT::Architecture=%s -o APT::Architectures::=%s ' "$1" "$1"
  printf -- '-o Dir::Etc=%s ' "$R/etc/apt"
  printf -- '-o Dir::Etc::SourceParts=%s -o Dir::Etc::PreferencesParts=%s ' \
    "$R/etc/apt/sources.list.d" "$R/etc/apt/preferences.d"
  printf -- '-o Dir::State=%s -o Dir::State::status=%s ' "$R/state" "$R/state/status"
  printf -- '-o Dir::Cache=%s -o Debug::NoLocking=1 -o APT::Sandbox::User=root ' "$R/cache"
  printf -- '-o Acquire::Retries=3 -o Acquire::Languages=none -o APT::Get::AllowUnauthenticated=false'
}
apt_init() {  # $1 = debian arch or src; writes sources and runs apt-get update
  local a=$1 R=$FERRY_CROSS_DIR/apt-$1 i
  mkdir -p "$R/etc/apt/sources.list.d" "$R/etc/apt/preferences.d" "$R/etc/apt/apt.conf.d" \
           "$R/state/lists/partial" "$R/cache/archives/partial"
  : > "$R/state/status"           # empty dpkg status: apt fetches the full closure
  local M=$FERRY_DEBIAN_MIRROR S=$FERRY_DEBIAN_SUITE K=$FERRY_KEYRING
  if [ "$a" = src ]; then
    echo "deb-src [signed-by=$K] $M $S main" > "$R/etc/apt/sources.list"
  else
    # bookworm-security has no mipsel at all and its armhf index has been seen
    # inconsistent on mirrors; libsodium/xxhash/cmocka/glibc-dev from the point
    # release are all we need, so use main + updates only.
    printf 'deb [arch=%s signed-by=%s] %s %s main\ndeb [arch=%s signed-by=%s] %s %s-updates main\n' \
      "$a" "$K" "$M" "$S" "$a" "$K" "$M" "$S" > "$R/etc/apt/sources.list"
  fi
  if [ -n "$(find "$R/state/lists" -maxdepth 1 -name '*Packages*' -o -maxdepth 1 -name '*Sources*' -mmin -1440 2>/dev/null | head -1)" ]; then
    return 0                      # lists younger than a day: reuse
  fi
  for i in 1 2 3; do
    # shellcheck disable=SC2046
    apt-get $(apt_opts "$a") -q update > "$R/update.log" 2>&1 && return 0
    sleep $((i * 3))
  done
  cat "$R/update.log" >&2
  cross_die "apt-get update failed for $a (log: $R/update.log)"
}

relativise_symlinks() {  # absolute symlinks in a sysroot would point into the host
  (cd "$1" && find . -type l -lname '/*' | while read -r l; do
     t=$(readlink "$l")
     ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" ".$t")" "$l"
   done)
}

# ------------------------------------------------ Debian binary sysroots
debian_sysroot() {
  local a=$1 deb S R
  deb=$(cross_debarch "$a"); S=$(cross_sysroot "$a"); R=$FERRY_CROSS_DIR/apt-$deb
  apt_init "$deb"
  cross_log "$a: downloading $DEB_PKGS (+ dependencies) for $deb"
  rm -f "$R"/cache/archives/*.deb
  # shellcheck disable=SC2046,SC2086
  apt-get $(apt_opts "$deb") -y -q --download-only --no-install-recommends install $DEB_PKGS >/dev/null
  rm -rf "$S"; mkdir -p "$S"
  local d n=0
  for d in "$R"/cache/archives/*.deb; do dpkg-deb -x "$d" "$S"; n=$((n + 1)); done
  cross_log "$a: unpacked $n .debs into $S"
  relativise_symlinks "$S"
}

# ---------------------------------- big-endian mips: from Debian sources
fetch_sources() {  # unpacked Debian source trees in .cross/src/
  local D=$FERRY_CROSS_DIR/src p
  mkdir -p "$D"
  for p in libsodium xxhash libzstd cmocka; do
    if ! ls -d "$D/$p"-*/ >/dev/null 2>&1; then
      apt_init src
      cross_log "apt-get source $p"
      # shellcheck disable=SC2046
      (cd "$D" && apt-get $(apt_opts src) -q source "$p" >/dev/null 2>"$D/$p.log") ||
        { cat "$D/$p.log" >&2; cross_die "apt-get source $p failed"; }
    fi
  done
}
srcdir_of() { ls -d "$FERRY_CROSS_DIR/src/$1"-*/ | head -1; }

# The four libraries from Debian's source trees, static and shared, built
# with compiler $CC (a command without arguments) and $LIBCFLAGS into sysroot
# $S (prefix /usr, libdir /usr/lib), work dir $B.
build_libsodium() {
  cross_log "$A: libsodium (autotools)"
  cp -a "$(srcdir_of libsodium)" "$B/libsodium"
  (cd "$B/libsodium"
   [ -x configure ] || autoreconf -fi >/dev/null 2>&1
   ./configure --host="$(cross_triplet "$A")" --prefix=/usr --libdir=/usr/lib \
     --disable-dependency-tracking $SODIUM_LINK CC="$CC" \
     CFLAGS="$LIBCFLAGS" >"$B/libsodium.log" 2>&1
   make -j"$JOBS" >>"$B/libsodium.log" 2>&1
   make install DESTDIR="$S" >>"$B/libsodium.log" 2>&1) ||
    { tail -30 "$B/libsodium.log" >&2; cross_die "libsodium build failed"; }
  rm -f "$S"/usr/lib/*.la
}

build_xxhash() {
  local X xv tr; X=$(srcdir_of xxhash); tr=$(cross_triplet "$A")
  cross_log "$A: libxxhash (xxhash.c -> libxxhash.a + libxxhash.so.0)"
  # shellcheck disable=SC2086
  (cd "$B" && mkdir -p xxhash && cd xxhash &&
   "$CC" $LIBCFLAGS -fPIC -c "$X/xxhash.c" -o xxhash.o &&
   "$tr-ar" rcs "$S/usr/lib/libxxhash.a" xxhash.o &&
   "$CC" -shared -Wl,-soname,libxxhash.so.0 -o "$S/usr/lib/libxxhash.so.0" xxhash.o &&
   ln -sf libxxhash.so.0 "$S/usr/lib/libxxhash.so") || cross_die "xxhash build failed"
  cp "$X/xxhash.h" "$S/usr/include/"
  [ -f "$X/xxh3.h" ] && cp "$X/xxh3.h" "$S/usr/include/"
  xv=$(basename "$X"); xv=${xv#xxhash-}
  cat > "$S/usr/lib/pkgconfig/libxxhash.pc" <<PC
prefix=/usr
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: xxhash
Description: extremely fast hash algorithm (cross-built from Debian's source package)
Version: ${xv%/}
Libs: -L\${libdir} -lxxhash
Cflags: -I\${includedir}
PC
}

# zstd's library only (no programs, no legacy formats, no threads, no
# x86 assembly), compiled file by file as xxhash is: what -z needs.
build_zstd() {
  local Z zv tr o c objs=(); Z=$(srcdir_of libzstd); tr=$(cross_triplet "$A")
  cross_log "$A: libzstd (lib/{common,compress,decompress}/*.c -> libzstd.a + libzstd.so.1)"
  mkdir -p "$B/zstd"
  for c in "$Z"/lib/common/*.c "$Z"/lib/compress/*.c "$Z"/lib/decompress/*.c; do
    o=$B/zstd/$(basename "$(dirname "$c")")-$(basename "$c" .c).o
    # shellcheck disable=SC2086
    "$CC" $LIBCFLAGS -fPIC -DZSTD_LEGACY_SUPPORT=0 -DZSTD_DISABLE_ASM \
      -I"$Z/lib" -I"$Z/lib/common" -c "$c" -o "$o" 2>>"$B/zstd.log" ||
      { tail -20 "$B/zstd.log" >&2; cross_die "zstd: $c failed"; }
    objs+=("$o")
  done
  "$tr-ar" rcs "$S/usr/lib/libzstd.a" "${objs[@]}" &&
  "$CC" -shared -Wl,-soname,libzstd.so.1 -o "$S/usr/lib/libzstd.so.1" "${objs[@]}" &&
  ln -sf libzstd.so.1 "$S/usr/lib/libzstd.so" || cross_die "zstd link failed"
  cp "$Z"/lib/zstd.h "$Z"/lib/zstd_errors.h "$Z"/lib/zdict.h "$S/usr/include/"
  zv=$(sed -n 's/^#define ZSTD_VERSION_\(MAJOR\|MINOR\|RELEASE\) *\([0-9]*\).*/\2/p' "$Z/lib/zstd.h" |
       paste -sd.)
  cat > "$S/usr/lib/pkgconfig/libzstd.pc" <<PC
prefix=/usr
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: zstd
Description: fast lossless compression algorithm library (cross-built from Debian's source package)
Version: ${zv}
Libs: -L\${libdir} -lzstd
Cflags: -I\${includedir}
PC
}

build_cmocka() {
  cross_log "$A: cmocka (cmake)"
  cmake -S "$(srcdir_of cmocka)" -B "$B/cmocka" -DCMAKE_SYSTEM_NAME=Linux \
    -DCMAKE_SYSTEM_PROCESSOR=mips -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_LIBDIR=lib \
    -DUNIT_TESTING=OFF -DWITH_EXAMPLES=OFF -DPICKY_DEVELOPER=OFF -DWITH_STATIC_LIB=ON \
    >"$B/cmocka.log" 2>&1 &&
  cmake --build "$B/cmocka" -j"$JOBS" >>"$B/cmocka.log" 2>&1 &&
  DESTDIR="$S" cmake --install "$B/cmocka" >>"$B/cmocka.log" 2>&1 ||
    { tail -30 "$B/cmocka.log" >&2; cross_die "cmocka build failed"; }
  rm -rf "$S/usr/lib/cmake"
  # WITH_STATIC_LIB builds libcmocka-static.a beside the .so; static links
  # look for libcmocka.a.
  mv "$S/usr/lib/libcmocka-static.a" "$S/usr/lib/libcmocka.a"
}

build_sources() {  # A S B CC LIBCFLAGS set by the caller
  fetch_sources
  mkdir -p "$S/usr/lib/pkgconfig" "$S/usr/include" "$B"
  build_libsodium
  build_xxhash
  build_zstd
  build_cmocka
  # .pc files say prefix=/usr: the toolchain file sets PKG_CONFIG_SYSROOT_DIR.
  sed -i 's#^prefix=.*#prefix=/usr#' "$S"/usr/lib/pkgconfig/*.pc
  rm -rf "$B"
}

source_sysroot() {  # big-endian mips: the host's cross glibc + libraries from source
  local A=$1 tr S B CC LIBCFLAGS="-O2 -g0"
  tr=$(cross_triplet "$A"); S=$(cross_sysroot "$A"); B=$FERRY_CROSS_DIR/srcbuild-$A
  [ -e "/usr/$tr/lib/libc.so.6" ] || cross_die "/usr/$tr/lib/libc.so.6 missing (libc6-dev-$A-cross)"
  CC=$tr-gcc
  rm -rf "$S" "$B"; mkdir -p "$S"
  # qemu -L SYSROOT resolves the guest's /lib/ld.so.1 and /lib/libc.so.6 to the
  # host's cross glibc, and /usr/lib to the libraries built below.
  ln -s "/usr/$tr/lib" "$S/lib"
  build_sources
}

# ------------------------------- mipsel with musl (OpenWrt's libc)
# Debian's mipsel musl-dev ships libc.a, crt files and a gcc specs file that
# turns gcc-mipsel-linux-gnu into a musl compiler; its paths are absolute
# (/usr/lib/mipsel-linux-musl), so a copy re-rooted into the sysroot is used.
musl_sysroot() {
  # Static archives (for the one-file build: sections per function let the
  # link keep only what ferry calls) and shared libraries (the OpenWrt
  # package's shape), -Os as OpenWrt builds its packages.
  local A=$1 deb S B R CC d n=0 LIBCFLAGS="-Os -g0 -ffunction-sections -fdata-sections"
  deb=$(cross_debarch "$A"); S=$(cross_sysroot "$A"); B=$FERRY_CROSS_DIR/srcbuild-$A
  R=$FERRY_CROSS_DIR/apt-$deb
  apt_init "$deb"
  cross_log "$A: downloading musl-dev and linux-libc-dev for $deb"
  rm -f "$R"/cache/archives/*.deb
  # shellcheck disable=SC2046
  apt-get $(apt_opts "$deb") -y -q --download-only --no-install-recommends \
    install musl-dev linux-libc-dev >/dev/null
  rm -rf "$S" "$B"; mkdir -p "$S"
  for d in "$R"/cache/archives/musl*.deb "$R"/cache/archives/linux-libc-dev*.deb; do
    dpkg-deb -x "$d" "$S"; n=$((n + 1))
  done
  [ "$n" -ge 2 ] || cross_die "musl-dev or linux-libc-dev for $deb was not downloaded"
  relativise_symlinks "$S"
  local M=/usr/lib/mipsel-linux-musl I=/usr/include/mipsel-linux-musl
  [ -f "$S$M/libc.a" ] && [ -f "$S$M/musl-gcc.specs" ] || cross_die "$S$M: no libc.a or musl-gcc.specs"
  # The shared libc (also the loader) is in /lib/mipsel-linux-musl, outside
  # the specs' -L path: without this link every shared object would get its
  # own static copy of libc, and two libcs in one process abort at start.
  [ -f "$S/lib/mipsel-linux-musl/libc.so" ] || cross_die "$S/lib/mipsel-linux-musl/libc.so missing (musl)"
  [ -e "$S$M/libc.so" ] || ln -s ../../../lib/mipsel-linux-musl/libc.so "$S$M/libc.so"
  # musl has no kernel headers (<linux/openat2.h>, <linux/magic.h>); as in
  # OpenWrt's toolchain they sit beside the libc's own.
  cp -a "$S"/usr/include/linux "$S"/usr/include/asm-generic "$S$I/"
  cp -a "$S"/usr/include/mipsel-linux-gnu/asm "$S$I/"
  sed -e "s#$M#$S$M#g" -e "s#$I#$S$I#g" "$S$M/musl-gcc.specs" > "$S/musl-gcc.specs"
  # A compiler command without arguments (libtool repeats flags given in CC),
  # as musl-dev's own mipsel-linux-musl-gcc wrapper, with the re-rooted specs.
  mkdir -p "$S/bin"
  printf '#!/bin/sh\nexec %s "$@" -specs "%s"\n' "$(cross_triplet "$A")-gcc" "$S/musl-gcc.specs" \
    > "$S/bin/mipsel-linux-musl-gcc"
  chmod +x "$S/bin/mipsel-linux-musl-gcc"
  CC=$S/bin/mipsel-linux-musl-gcc
  build_sources
}

# ------------------------------------------------------------- main
if [ "$1" = --host-pkgs ]; then  # the host's packages alone (apt-get; no sysroot)
  shift
  for arg in "$@"; do cross_install_host_pkgs "$(cross_arch "$arg")"; done
  exit 0
fi
for arg in "$@"; do
  a=$(cross_arch "$arg")
  S=$(cross_sysroot "$a")
  # libsodium is the one slow library (libtool compiles it once per kind):
  # big-endian mips links dynamically unless FERRY_STATIC=ON, so it gets the
  # shared library alone (45 s less); musl needs both (one-file and package).
  SODIUM_LINK="--enable-static --enable-shared"
  [ "$a" = mips ] && [ "$(cross_static "$a")" = OFF ] && SODIUM_LINK="--disable-static --enable-shared"
  stamp="recipe=$RECIPE_VERSION arch=$a suite=$FERRY_DEBIAN_SUITE pkgs=$DEB_PKGS sodium=$SODIUM_LINK"
  both=${stamp%sodium=*}"sodium=--enable-static --enable-shared"   # serves a shared-only need too
  if [ "${FERRY_CROSS_FORCE:-0}" != 1 ] && [ -f "$S/.ferry-sysroot" ] &&
     { [ "$(cat "$S/.ferry-sysroot")" = "$stamp" ] || [ "$(cat "$S/.ferry-sysroot")" = "$both" ]; }; then
    cross_log "$a: sysroot up to date ($S)"
    continue
  fi
  cross_install_host_pkgs "$a"
  mkdir -p "$FERRY_CROSS_DIR"
  case $a in
    mips) source_sysroot "$a";;
    mipsel-musl) musl_sysroot "$a";;
    *) debian_sysroot "$a";;
  esac
  echo "$stamp" > "$S/.ferry-sysroot"
  cross_log "$a: sysroot ready: $S ($(du -sh "$S" | cut -f1))"
done
