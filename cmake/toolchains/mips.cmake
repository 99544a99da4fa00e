# cmake/toolchains/mips.cmake - MIPS32 big-endian (Atheros/QCA routers), glibc
#   scripts/cross/setup-sysroot.sh mips     # once: target libraries into .cross/
#   cmake -S . -B .cross/build-mips -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mips.cmake \
#         -DFERRY_OPENSSL=OFF -DCMAKE_BUILD_TYPE=MinSizeRel
# Compiler: Debian's gcc-mips-linux-gnu (+ libc6-dev-mips-cross). Tests run under qemu-mips.
set(FERRY_CROSS_ARCH mips)
set(FERRY_CROSS_TRIPLET mips-linux-gnu)
set(FERRY_CROSS_QEMU qemu-mips)
set(CMAKE_SYSTEM_PROCESSOR mips)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
