# cmake/toolchains/common.cmake - shared part of ferry's cross toolchain files.
# Do not use directly: use cmake/toolchains/<ARCH>.cmake, which sets
# FERRY_CROSS_ARCH, FERRY_CROSS_TRIPLET, FERRY_CROSS_QEMU and
# CMAKE_SYSTEM_PROCESSOR, then includes this file.
#
# The sysroot (target libc + libsodium + libxxhash + cmocka) is made by
#   scripts/cross/setup-sysroot.sh <ARCH>
# and found, in this order, at: -DFERRY_SYSROOT=DIR, $FERRY_SYSROOT,
# $FERRY_CROSS_DIR/sysroot-<ARCH>, <source>/.cross/sysroot-<ARCH>.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${FERRY_CROSS_TRIPLET}-gcc)

# try_compile() projects re-read this file: pass the sysroot choice on.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES FERRY_SYSROOT)
if(NOT FERRY_SYSROOT)
  if(DEFINED ENV{FERRY_SYSROOT})
    set(FERRY_SYSROOT "$ENV{FERRY_SYSROOT}")
  elseif(DEFINED ENV{FERRY_CROSS_DIR})
    set(FERRY_SYSROOT "$ENV{FERRY_CROSS_DIR}/sysroot-${FERRY_CROSS_ARCH}")
  else()
    set(FERRY_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../../.cross/sysroot-${FERRY_CROSS_ARCH}")
  endif()
endif()
get_filename_component(FERRY_SYSROOT "${FERRY_SYSROOT}" ABSOLUTE)
set(FERRY_SYSROOT "${FERRY_SYSROOT}" CACHE PATH "Target sysroot (scripts/cross/setup-sysroot.sh)")
if(NOT EXISTS "${FERRY_SYSROOT}/.ferry-sysroot")
  message(FATAL_ERROR "No ${FERRY_CROSS_ARCH} sysroot at ${FERRY_SYSROOT}: "
                      "run scripts/cross/setup-sysroot.sh ${FERRY_CROSS_ARCH}")
endif()

if(FERRY_CROSS_ARCH STREQUAL "mipsel-musl")
  # musl: the sysroot's compiler wrapper passes gcc a specs file that
  # replaces its include and library paths with the sysroot's musl ones.
  # With FERRY_STATIC every program is linked statically, tests included;
  # without, against musl's loader (/lib/ld-musl-mipsel.so.1, which qemu -L
  # finds in the sysroot).
  set(CMAKE_C_COMPILER "${FERRY_SYSROOT}/bin/mipsel-linux-musl-gcc")
  list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES FERRY_STATIC)
  if(FERRY_STATIC)
    set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")   # (the C flags, specs included, reach the link too)
  endif()
  set(CMAKE_FIND_ROOT_PATH "${FERRY_SYSROOT}")
elseif(FERRY_CROSS_ARCH STREQUAL "mips")
  # No Debian port: the compiler's own glibc (libc6-dev-mips-cross, under
  # /usr/mips-linux-gnu) plus libraries built into FERRY_SYSROOT/usr, whose
  # lib/ is a link to that glibc so that qemu -L finds both.
  set(CMAKE_FIND_ROOT_PATH "${FERRY_SYSROOT}" /usr/${FERRY_CROSS_TRIPLET})
else()
  # A Debian bookworm sysroot: the compiler gets --sysroot.
  set(CMAKE_SYSROOT "${FERRY_SYSROOT}")
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# The target's .pc files only, re-rooted into the sysroot.
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${FERRY_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR}
    "${FERRY_SYSROOT}/usr/lib/${FERRY_CROSS_TRIPLET}/pkgconfig:${FERRY_SYSROOT}/usr/lib/pkgconfig:${FERRY_SYSROOT}/usr/share/pkgconfig")
unset(ENV{PKG_CONFIG_PATH})

# ctest (and add_test/add_custom_command using target executables) run the
# target's binaries through qemu user-mode emulation. qemu-mipsel keeps its
# default CPU on purpose: Debian's mipsel is hard-float, the FPU-less 24Kc model
# gets SIGILL. -DFERRY_QEMU_CPU=... picks another model (e.g. cortex-a7).
set(CMAKE_CROSSCOMPILING_EMULATOR ${FERRY_CROSS_QEMU})
if(FERRY_QEMU_CPU)
  list(APPEND CMAKE_CROSSCOMPILING_EMULATOR -cpu ${FERRY_QEMU_CPU})
endif()
list(APPEND CMAKE_CROSSCOMPILING_EMULATOR -L "${FERRY_SYSROOT}")
