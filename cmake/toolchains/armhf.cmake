# cmake/toolchains/armhf.cmake - ARMv7 hard-float (Raspberry Pi, 32-bit OS), Debian armhf
#   scripts/cross/setup-sysroot.sh armhf     # once: target libraries into .cross/
#   cmake -S . -B .cross/build-armhf -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/armhf.cmake \
#         -DFERRY_OPENSSL=OFF -DCMAKE_BUILD_TYPE=MinSizeRel
# Compiler: Debian's gcc-arm-linux-gnueabihf (+ libc6-dev-armhf-cross). Tests run under qemu-arm.
set(FERRY_CROSS_ARCH armhf)
set(FERRY_CROSS_TRIPLET arm-linux-gnueabihf)
set(FERRY_CROSS_QEMU qemu-arm)
set(CMAKE_SYSTEM_PROCESSOR arm)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
