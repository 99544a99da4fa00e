# cmake/toolchains/mipsel-musl.cmake - mipsel with musl, by default linked statically: the
# libc OpenWrt uses, and one self-contained file to copy onto a router.
#   scripts/cross/setup-sysroot.sh mipsel-musl    # once: musl + libraries into .cross/
#   cmake -S . -B .cross/build-mipsel-musl -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mipsel-musl.cmake \
#         -DFERRY_OPENSSL=OFF -DFERRY_STATIC=ON -DCMAKE_BUILD_TYPE=MinSizeRel
# -DFERRY_STATIC=OFF links against musl's loader and libsodium.so instead, as the
# OpenWrt package does. Compiler: Debian's gcc-mipsel-linux-gnu, turned into a
# musl compiler by the wrapper and specs file the sysroot script writes (from
# Debian's mipsel musl-dev).
set(FERRY_CROSS_ARCH mipsel-musl)
set(FERRY_CROSS_TRIPLET mipsel-linux-gnu)
set(FERRY_CROSS_QEMU qemu-mipsel)
set(CMAKE_SYSTEM_PROCESSOR mips)
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
