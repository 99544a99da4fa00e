# ferry: the two quick-start commands and the build/test plumbing behind them.
#   make demo    install what is missing, build, run a real daemon on 127.0.0.1, push, pull, verify
#   make check   install what is missing, build, run every test (normal, sanitizers, fuzz smoke,
#                emulated big-endian MIPS, packaging)
# Quiet unless V=1. Other targets: build, test, asan, clang, fuzz, cross-mips, cross-mips-big, packaging, bench.

JOBS    ?= 2
# ctest's slots, three per core: a CPU-bound test takes two, one that mostly
# waits one (tests/CMakeLists.txt). The native suite kept the 2 cores 60-75 %
# busy at -j2 and took 340 s; this way 95 % and 278 s.
CTEST_SLOTS ?= $(shell echo $$((3 * $(JOBS))))
BUILD   ?= build
V       ?= 0
CMAKE_Q  = $(if $(filter 1,$(V)),,> /dev/null)

# Debian packages the build and the tests need (the cross toolchain is
# installed by scripts/cross/setup-sysroot.sh when the MIPS tests run).
DEPS = build-essential cmake pkgconf libsodium-dev libxxhash-dev libzstd-dev libssl-dev libseccomp-dev libcmocka-dev rsync \
       clang libclang-rt-dev iproute2 procps python3 util-linux acl attr faketime nftables e2fsprogs \
       librsvg2-bin

.PHONY: all deps build test demo check static-packaging asan clang fuzz cross-mips cross-mips-big cross-musl packaging bench bench-smoke static clean faults bench-verdict

all: build

deps:
	@scripts/install-deps.sh $(DEPS)

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFERRY_TEST_HOOKS=ON $(CMAKE_Q)
	@cmake --build $(BUILD) -j$(JOBS) $(if $(filter 1,$(V)),,--  --no-print-directory -s)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j$(CTEST_SLOTS)

demo: build
	@scripts/demo.sh $(BUILD)/ferry

# Sanitizers: clang with ASan + UBSan runs the whole suite (unit and e2e); the
# random campaigns (fault runs, filter cases, forged snapshots, the kill
# points of a snapshot's deletion) are shorter here than in `test`, which runs
# them in full: under the sanitizers they look for memory errors. -O1, as ASan's documentation advises (the suite took 472 s
# at -O0 in a clean-clone CI run, 428 s at -O1 here).
asan: deps
	@CC=clang cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=-g -O1" \
	  -DFERRY_SANITIZE=ON -DFERRY_TEST_HOOKS=ON $(CMAKE_Q)
	@cmake --build build-asan -j$(JOBS) -- -s
	@cd build-asan && FAULT_RUNS=7 FILTER_CASES=100 SNAP_FORGED=50 SNAP_KILL_DENSE=6 SNAP_KILL_EVERY=7 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j$(CTEST_SLOTS)

# gcc's and clang's -Werror both: the clang build compiles everything, tests included.
clang: deps
	@CC=clang cmake -S . -B build-clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFERRY_TEST_HOOKS=ON $(CMAKE_Q)
	@cmake --build build-clang -j$(JOBS) -- -s

# libFuzzer harnesses, each run for FUZZ_SECONDS (a crash fails the target).
FUZZ_SECONDS ?= 5
fuzz: deps
	@CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DFERRY_FUZZ=ON -DFERRY_SANITIZE=ON -DFERRY_TESTS=OFF $(CMAKE_Q)
	@cmake --build build-fuzz -j$(JOBS) -- -s
	@scripts/fuzz-smoke.sh build-fuzz $(FUZZ_SECONDS)

# Big-endian 32-bit MIPS under qemu-user: unit tests and end-to-end tests against native peers.
# The e2e subset that runs emulated (three ways: both ends emulated, and each
# end emulated against the native other): what depends on the CPU (byte order,
# 32-bit sizes, the cipher without AES instructions, the jail's syscalls).
CROSS_E2E ?= tree sparse delete interrupt protection escape auth deep evil_memory delta resume compress metadata snapshots
# mode:test pairs left out: where the emulated side is the client, the box's
# jail (escape) is the native one the native suite tests; compress, resume,
# protection, interrupt and delta are about the two byte orders meeting,
# which the two mixed modes cover (each end emulated once); the cipher and
# zstd run both ways on the emulated box in emu-server (it decrypts and
# decompresses a push, encrypts and compresses a pull), so emu-client does
# not repeat protection and compress; sparse and deep exercise what the box
# does with its disk: emu-server alone (the emulated client took 40-50 s each).
# delta and resume push and pull both, so emu-server already runs each of
# their roles (sender, receiver, the signature's and the partial file's
# makers) on the emulated CPU against the native one; the emulated client
# repeated that in 71 s of qemu.
CROSS_SKIP ?= emu-client:escape emulated:compress emulated:resume emulated:escape \
              emulated:protection emulated:interrupt emulated:delta \
              emu-client:protection emu-client:compress \
              emulated:sparse emu-client:sparse emulated:deep emu-client:deep \
              emu-client:delta emu-client:resume
cross-mips: build
	@FERRY_NATIVE=$(CURDIR)/$(BUILD)/ferry FERRY_TOOLS=$(CURDIR)/$(BUILD)/tests \
	  FERRY_E2E_TESTS="$(foreach t,$(CROSS_E2E),$(CURDIR)/tests/e2e/test_$(t).sh)" \
	  FERRY_E2E_SKIP="$(CROSS_SKIP)" SNAP_QUICK=1 \
	  scripts/cross/check.sh mips

# One real, fully written file of 4 GiB + 1 MiB pushed to the emulated MIPS
# daemon at protection none, hashed and spliced (tests/e2e/big_4g.sh): a u64
# DATA length on a 32-bit receiver. About a minute, but it writes and compares
# 8.4 GB under $TMPDIR, so it is not part of check.
cross-mips-big: build
	@FERRY_NATIVE=$(CURDIR)/$(BUILD)/ferry FERRY_TOOLS=$(CURDIR)/$(BUILD)/tests \
	  FERRY_E2E_MODES=emu-server FERRY_E2E_TIMEOUT=900 \
	  FERRY_E2E_TESTS="$(CURDIR)/tests/e2e/big_4g.sh" \
	  scripts/cross/check.sh mips --no-unit

# mipsel with musl, OpenWrt's libc, linked statically (the one file to copy
# onto a router): unit tests under qemu-mipsel and end-to-end tests against the
# native peer both ways; then linked dynamically (the OpenWrt package's shape,
# the same code and libsodium, without OpenSSL as the static one) and served a
# tree to a native client: the test is that it loads and runs.
MUSL_E2E ?= tree sparse protection escape bench_remote pair
# as CROSS_SKIP: the jail and the sparse writes are the box's, so emu-server only;
# the cipher runs both ways on the box in emu-server (as CROSS_SKIP says)
MUSL_SKIP ?= emu-client:escape emu-client:sparse emu-client:protection
cross-musl: build
	@FERRY_NATIVE=$(CURDIR)/$(BUILD)/ferry FERRY_TOOLS=$(CURDIR)/$(BUILD)/tests \
	  FERRY_E2E_MODES="emu-server emu-client" FERRY_E2E_SKIP="$(MUSL_SKIP)" \
	  FERRY_E2E_TESTS="$(foreach t,$(MUSL_E2E),$(CURDIR)/tests/e2e/test_$(t).sh)" \
	  scripts/cross/check.sh mipsel-musl
	@FERRY_STATIC=OFF FERRY_NATIVE=$(CURDIR)/$(BUILD)/ferry FERRY_TOOLS=$(CURDIR)/$(BUILD)/tests \
	  FERRY_E2E_MODES="emu-server" FERRY_E2E_TESTS="$(CURDIR)/tests/e2e/test_tree.sh" \
	  scripts/cross/check.sh mipsel-musl --no-unit

# -DFERRY_STATIC=ON: one self-contained file (libsodium only, as on a router),
# checked against the native build end to end.
static: build
	@cmake -S . -B build-static -DCMAKE_BUILD_TYPE=MinSizeRel -DFERRY_STATIC=ON -DFERRY_OPENSSL=OFF -DFERRY_TESTS=OFF $(CMAKE_Q)
	@cmake --build build-static -j$(JOBS) --target ferry -- -s 2>&1 | grep -v -e "statically linked applications" -e "in function" || true
	@file build-static/ferry | grep -q "statically linked" || { echo "build-static/ferry is not static"; exit 1; }
	@for t in tree protection; do \
	  FERRY_CLIENT=$(CURDIR)/build-static/ferry FERRY=$(CURDIR)/$(BUILD)/ferry FERRY_TOOLS=$(CURDIR)/$(BUILD)/tests \
	    bash tests/e2e/test_$$t.sh > build-static/test_$$t.log 2>&1 || { tail -20 build-static/test_$$t.log; exit 1; }; \
	  FERRY_SERVER=$(CURDIR)/build-static/ferry FERRY=$(CURDIR)/$(BUILD)/ferry FERRY_TOOLS=$(CURDIR)/$(BUILD)/tests \
	    bash tests/e2e/test_$$t.sh > build-static/test_$$t-srv.log 2>&1 || { tail -20 build-static/test_$$t-srv.log; exit 1; }; \
	done
	@echo "static build: $$(stat -c %s build-static/ferry) bytes, e2e tree+protection passed both ways"

packaging: build
	@FERRY=$(CURDIR)/$(BUILD)/ferry bash tests/packaging/run-all.sh

# The peer benchmark at tiny sizes: every tool runs, every copy is verified,
# the table is produced (needs root for its network namespaces).
bench-smoke: build
	@FERRY=$(CURDIR)/$(BUILD)/ferry bench/run.sh --smoke

# Every suite, each timed: scripts/check.sh (the bench smoke runs beside the
# emulated boxes and the packaging, which use the CPU it leaves idle)
check: deps
	@MAKE="$(MAKE)" BUILD=$(BUILD) scripts/check.sh

static-packaging: static packaging

bench: build
	@bench/run.sh

# The fault campaign (issue 15): FAULT_RUNS runs of one fault each (kill -9 of
# the client, the session or the daemon, the link cut, ENOSPC, EIO, the clock
# stepped) at a random point of a push or pull; make check runs 14 of them.
# About 8 minutes; root.
FAULT_RUNS ?= 100
.PHONY: faults
faults: build
	@FAULT_RUNS=$(FAULT_RUNS) FERRY=$(CURDIR)/$(BUILD)/ferry bash tests/e2e/test_faults.sh

# ferry bench's verdict test bed with larger stages than make check's (root; ~2 minutes)
bench-verdict: build
	@BENCH_VERDICT_SIZE=64M BENCH_VERDICT_SECONDS=2 FERRY=$(CURDIR)/$(BUILD)/ferry \
	  FERRY_TOOLS=$(CURDIR)/$(BUILD)/tests bash tests/e2e/test_bench_verdict.sh

clean:
	rm -rf build build-asan build-clang build-fuzz build-static

# ferry bench against fio and openssl speed: ext4 on loop devices and a tmpfs,
# medians of RUNS rounds (root; docs/BENCH.md has the figures).
.PHONY: bench-agree
bench-agree: build
	@FERRY=$(CURDIR)/$(BUILD)/ferry bench/agree.sh
