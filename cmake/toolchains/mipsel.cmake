# cmake/toolchains/mipsel.cmake - MIPS32r2 little-endian (MT7621 class routers), Debian mipsel
#   scripts/cross/setup-sysroot.sh mipsel     # once: target libraries into .cross/
#   cmake -S . -B .cross/build-mipsel -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mipsel.cmake \
#         -DFERRY_OPENSSL=OFF -DCMAKE_BUILD_TYPE=MinSizeRel
# Compiler: Debian's gcc-mipsel-linux-gnu (+ libc6-dev-mipsel-cross). Tests run under qemu-mipsel.
set(FERRY_CROSS_ARCH mipsel)
set(FERRY_CROSS_TRIPLET mipsel-linux-gnu)
set(FERRY_CROSS_QEMU qemu-mipsel)
set(CMAKE_SYSTEM_PROCESSOR mips)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
