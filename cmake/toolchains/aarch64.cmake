# cmake/toolchains/aarch64.cmake - AArch64 (Raspberry Pi 3/4/5, 64-bit OS), Debian arm64
#   scripts/cross/setup-sysroot.sh aarch64     # once: target libraries into .cross/
#   cmake -S . -B .cross/build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64.cmake \
#         -DFERRY_OPENSSL=OFF -DCMAKE_BUILD_TYPE=MinSizeRel
# Compiler: Debian's gcc-aarch64-linux-gnu (+ libc6-dev-arm64-cross). Tests run under qemu-aarch64.
set(FERRY_CROSS_ARCH aarch64)
set(FERRY_CROSS_TRIPLET aarch64-linux-gnu)
set(FERRY_CROSS_QEMU qemu-aarch64)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
