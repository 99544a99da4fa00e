#!/usr/bin/env bash
# tests/packaging/test_deb.sh - builds the Debian package and checks it.
#
# The tree is copied to a temp dir first (the source tree stays clean): by
# default the working tree's files that git does not ignore; FERRY_DEB_FROM=HEAD
# takes the last commit instead (git archive). Then `dpkg-buildpackage -us -uc
# -b` (unit tests run inside, as debian/rules says; DEB_BUILD_OPTIONS=nocheck
# to skip), and the .deb is unpacked with dpkg -x into a throwaway root:
#   - control fields, dependencies, conffiles, maintainer scripts
#   - the binary runs (`ferry version`) and accepts the shipped example config
#     (`ferry serve --config ... --check-config`)
#   - the systemd unit passes `systemd-analyze verify` (when available) and
#     has the hardening the issue asks for
#   - the man page is shipped when docs/ferry.1 exists
# Missing build dependencies: exit 77 (skip), unless FERRY_DEB_INSTALL_DEPS=1
# (as root: apt-get build-dep on the copy). FERRY_DEB_KEEP=DIR keeps the .deb.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${FERRY_SRC:-$(cd "$HERE/../.." && pwd)}
T=$(mktemp -d "${TMPDIR:-/tmp}/ferry-deb.XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "ok   - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $*"; }

for tool in dpkg-buildpackage dpkg-deb; do
	command -v $tool >/dev/null || { echo "SKIP - $tool missing (apt-get install dpkg-dev debhelper)"; exit 77; }
done

# 1. a clean copy
W=$T/ferry
mkdir -p "$W"
if [ "${FERRY_DEB_FROM:-worktree}" = HEAD ]; then
	git -C "$SRC" archive HEAD | tar -x -C "$W"
elif git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$SRC" && git ls-files -z --cached --others --exclude-standard |
	 while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	 tar --null -T - -cf -) | tar -xf - -C "$W"
else
	(cd "$SRC" && tar --exclude=./.cross --exclude='./build*' --exclude=./.git -cf - .) | tar -xf - -C "$W"
fi

if ! (cd "$W" && dpkg-checkbuilddeps) > "$T/deps.log" 2>&1; then
	if [ "${FERRY_DEB_INSTALL_DEPS:-0}" = 1 ] && [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -q "$W" > "$T/deps.log" 2>&1 ||
			{ cat "$T/deps.log"; bad "apt-get build-dep"; exit 1; }
	else
		echo "SKIP - $(cat "$T/deps.log") (FERRY_DEB_INSTALL_DEPS=1 installs them)"
		exit 77
	fi
fi

# 2. build
t0=$SECONDS
if (cd "$W" && dpkg-buildpackage -us -uc -b -j"${JOBS:-2}") > "$T/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b ($((SECONDS - t0)) s)"
else
	tail -40 "$T/build.log"; bad "dpkg-buildpackage failed (see above)"
	echo "deb: $pass passed, $fail failed"; exit 1
fi
grep -E '^ *[0-9]+% tests passed|No tests were found' "$T/build.log" | sed 's/^/    unit tests in the build: /'
DEB=$(ls "$T"/ferry_*.deb 2>/dev/null | grep -v dbgsym | head -1)
[ -n "$DEB" ] && ok "built $(basename "$DEB")" || { bad "no .deb"; exit 1; }
[ -n "${FERRY_DEB_KEEP:-}" ] && mkdir -p "$FERRY_DEB_KEEP" && cp "$T"/*.deb "$FERRY_DEB_KEEP"/
# (others may edit the tree meanwhile: look for build products, not git status)
leftovers=$(cd "$SRC" && ls -d obj-* debian/.debhelper debian/ferry debian/files debian/*.substvars \
            debian/debhelper-build-stamp 2>/dev/null)
[ -z "$leftovers" ] && ok "no build products in the source tree" || bad "build products in the source tree: $leftovers"

# 3. metadata
version=$(dpkg-deb -f "$DEB" Version)
upstream=$(sed -n 's/^project(ferry VERSION \([0-9.]*\).*/\1/p' "$W/CMakeLists.txt")
[ "${version%-*}" = "$upstream" ] && ok "package version $version matches CMakeLists.txt ($upstream)" ||
	bad "package version $version vs CMakeLists.txt $upstream"
deps=$(dpkg-deb -f "$DEB" Depends)
for d in adduser libc6; do
	echo "$deps" | grep -q "$d" && ok "Depends has $d" || bad "Depends lacks $d: $deps"
done
C=$T/control; dpkg-deb -e "$DEB" "$C"
grep -qx /etc/ferry/ferry.conf "$C/conffiles" 2>/dev/null && ok "/etc/ferry/ferry.conf is a conffile" ||
	bad "conffiles: $(cat "$C/conffiles" 2>/dev/null)"
grep -q 'adduser --system' "$C/postinst" && ok "postinst creates the ferry system user" || bad "postinst: no adduser --system"
if grep -qE 'systemctl.*(enable|start)|deb-systemd-invoke start' "$C/postinst"; then
	bad "postinst enables/starts the service"
else
	ok "postinst neither enables nor starts the service"
fi

# 4. unpacked contents
R=$T/root; dpkg -x "$DEB" "$R"
BIN=$R/usr/bin/ferry
[ -x "$BIN" ] && ok "/usr/bin/ferry" || bad "no /usr/bin/ferry"
# shlibs: every library the binary links must be a dependency
needed=$(LC_ALL=C readelf -d "$BIN" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
for lib in sodium xxhash zstd crypto; do
	case " $needed" in
		*" lib$lib.so"*)
			pkgs=$(dpkg -S "lib$lib.so" 2>/dev/null | grep -v -- -dev | cut -d: -f1 | sort -u | head -1)
			echo "$deps" | grep -q "${pkgs:-lib$lib}" && ok "links lib$lib, Depends has ${pkgs:-lib$lib}" ||
				bad "links lib$lib but Depends lacks ${pkgs:-it}: $deps" ;;
		*) echo "NOTE - the binary does not link lib$lib (yet)" ;;
	esac
done
out=$("$BIN" version 2>&1) && echo "$out" | grep -q "$upstream" &&
	ok "ferry version: $out" || bad "ferry version: $out"
[ -f "$R/etc/ferry/ferry.conf" ] && ok "/etc/ferry/ferry.conf shipped" || bad "no /etc/ferry/ferry.conf"
if "$BIN" serve --config "$R/etc/ferry/ferry.conf" --check-config > "$T/check.log" 2>&1; then
	ok "ferry serve --check-config accepts the shipped example"
else
	bad "ferry serve --check-config rejects the shipped example: $(cat "$T/check.log")"
fi
if [ -f "$W/docs/ferry.1" ]; then
	ls "$R"/usr/share/man/man1/ferry.1* >/dev/null 2>&1 && ok "man page shipped" || bad "docs/ferry.1 exists but is not in the package"
else
	echo "NOTE - docs/ferry.1 not written yet: no man page expected"
fi
UNIT=$(ls "$R"/lib/systemd/system/ferry.service "$R"/usr/lib/systemd/system/ferry.service 2>/dev/null | head -1)
if [ -n "$UNIT" ]; then
	ok "unit ${UNIT#"$R"}"
	for p in '^Type=simple$' '^ExecStart=/usr/bin/ferry serve --config /etc/ferry/ferry.conf$' \
	         '^ExecReload=/bin/kill -HUP \$MAINPID$' '^User=ferry$' '^NoNewPrivileges=yes$' \
	         '^ProtectSystem=strict$' '^PrivateTmp=yes$' '^ProtectHome=read-only$' '^PrivateDevices=yes$' \
	         '^ProtectKernelTunables=yes$' '^ProtectKernelModules=yes$' '^ProtectControlGroups=yes$' \
	         '^RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX$' '^SystemCallArchitectures=native$' \
	         '^CapabilityBoundingSet=$'; do
		grep -qE -- "$p" "$UNIT" && ok "unit: $p" || bad "unit lacks $p"
	done
	if command -v systemd-analyze >/dev/null 2>&1; then
		# a copy whose /usr/bin/ferry points into the unpacked root (the
		# host has no ferry); "man ferry(1)" fails on hosts without the page
		mkdir -p "$T/verify"
		sed "s#/usr/bin/ferry#$R/usr/bin/ferry#g" "$UNIT" > "$T/verify/ferry.service"
		SYSTEMD_LOG_LEVEL=warning systemd-analyze verify "$T/verify/ferry.service" > "$T/verify.log" 2>&1
		if grep -v -e "man ferry(1)" -e '^$' "$T/verify.log" | grep -q .; then
			bad "systemd-analyze verify: $(cat "$T/verify.log")"
		else
			ok "systemd-analyze verify"
		fi
	else
		echo "NOTE - systemd-analyze not available: unit not verified"
	fi
else
	bad "no systemd unit in the package"
fi
if command -v lintian >/dev/null 2>&1; then
	lintian --no-tag-display-limit "$DEB" 2>&1 | sed 's/^/    lintian: /' | head -30
fi

echo "deb: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
