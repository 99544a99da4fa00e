#!/usr/bin/env bash
# tests/packaging/test_openwrt_makefile.sh - checks packaging/openwrt/ferry
# without an OpenWrt SDK: a stub TOPDIR (rules.mk, package.mk, cmake.mk)
# lets GNU make parse the package Makefile, then Build/Prepare and
# Package/ferry/install are run into a temp dir (with a fake built binary),
# and the variables OpenWrt relies on are checked. Also `sh -n` on the init
# script, and busybox ash -n when available.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${FERRY_SRC:-$(cd "$HERE/../.." && pwd)}
PKG=$SRC/packaging/openwrt/ferry
T=$(mktemp -d "${TMPDIR:-/tmp}/ferry-owrt.XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "ok   - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $*"; }

mkdir -p "$T/top/include" "$T/build" "$T/ipkg" "$T/inst/usr/bin"
cat > "$T/top/rules.mk" <<'MK'
INCLUDE_DIR:=$(TOPDIR)/include
INSTALL_DIR:=install -d -m0755
INSTALL_BIN:=install -m0755
INSTALL_CONF:=install -m0600
INSTALL_DATA:=install -m0644
CP:=cp -fpR
MK
cat > "$T/top/include/package.mk" <<'MK'
PKG_BUILD_DIR ?= $(BUILD_DIR)/$(PKG_NAME)-$(PKG_VERSION)
Build/Patch:=
define BuildPackage
$(eval $(Package/$(1)))
stub-vars:
	@echo 'PKG_NAME=$(PKG_NAME)'
	@echo 'PKG_VERSION=$(PKG_VERSION)'
	@echo 'PKG_RELEASE=$(PKG_RELEASE)'
	@echo 'PKG_LICENSE=$(PKG_LICENSE)'
	@echo 'DEPENDS=$(strip $(DEPENDS))'
	@echo 'USERID=$(strip $(USERID))'
	@echo 'CATEGORY=$(strip $(CATEGORY))'
	@echo 'CMAKE_OPTIONS=$(strip $(CMAKE_OPTIONS))'
	@echo 'CONFFILES=$(strip $(Package/$(1)/conffiles))'
stub-prepare:
	$(Build/Prepare)
stub-install:
	$(call Package/$(1)/install,$(IPKG_DIR))
endef
MK
echo '# cmake.mk stub' > "$T/top/include/cmake.mk"

mk() { make -s -C "$PKG" TOPDIR="$T/top" BUILD_DIR="$T/build" \
        PKG_INSTALL_DIR="$T/inst" IPKG_DIR="$T/ipkg" "$@"; }
if vars=$(mk stub-vars 2>"$T/err"); then
	ok "make parses the package Makefile"
else
	bad "make fails on the package Makefile: $(cat "$T/err")"; vars=
fi
echo "$vars" | sed 's/^/    /'
chk() { echo "$vars" | grep -qE -- "$2" && ok "$1" || bad "$1"; }
chk "PKG_NAME is ferry"                     '^PKG_NAME=ferry$'
chk "PKG_VERSION matches CMakeLists.txt"    "^PKG_VERSION=$(sed -n 's/^project(ferry VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")\$"
chk "DEPENDS has +libsodium +libxxhash +libzstd" '^DEPENDS=.*\+libsodium.*\+libxxhash.*\+libzstd'
chk "CMAKE_OPTIONS has -DFERRY_OPENSSL=OFF" '^CMAKE_OPTIONS=.*-DFERRY_OPENSSL=OFF'
chk "CMAKE_OPTIONS has -DFERRY_TESTS=OFF"   '^CMAKE_OPTIONS=.*-DFERRY_TESTS=OFF'
chk "/etc/config/ferry is a conffile"       '^CONFFILES=.*/etc/config/ferry'
chk "the package makes a ferry user and group" '^USERID=ferry=[0-9]+:ferry=[0-9]+$'
grep -q "^	option user 'ferry'$" "$SRC/packaging/openwrt/ferry/files/ferry.config" &&
	ok "the UCI default runs the daemon as ferry" || bad "the UCI default does not set user ferry"

if mk stub-prepare >"$T/prep.log" 2>&1 && [ -f "$T/build/ferry-"*/CMakeLists.txt ] &&
   [ -d "$T/build/ferry-"*/src ]; then
	ok "Build/Prepare copies the sources"
else
	bad "Build/Prepare: $(cat "$T/prep.log")"
fi
printf '#!/bin/sh\necho ferry\n' > "$T/inst/usr/bin/ferry"
if mk stub-install >"$T/inst.log" 2>&1; then
	ok "Package/ferry/install runs"
else
	bad "Package/ferry/install: $(cat "$T/inst.log")"
fi
for f in usr/bin/ferry etc/init.d/ferry etc/config/ferry lib/upgrade/keep.d/ferry; do
	[ -f "$T/ipkg/$f" ] && ok "package has /$f" || bad "package lacks /$f"
done
[ -x "$T/ipkg/etc/init.d/ferry" ] && ok "init script is executable" || bad "init script not executable"

INIT=$PKG/files/ferry.init
sh -n "$INIT" && ok "sh -n ferry.init" || bad "sh -n ferry.init"
if command -v busybox >/dev/null 2>&1; then
	busybox ash -n "$INIT" && ok "busybox ash -n ferry.init" || bad "busybox ash -n ferry.init"
fi
head -1 "$INIT" | grep -q '^#!/bin/sh /etc/rc.common$' && ok "init uses rc.common" || bad "init shebang"
for p in '^USE_PROCD=1$' '^START=95$' 'procd_set_param command "\$PROG" serve --config "\$FERRY_CONF"' \
         '^FERRY_CONF=/var/etc/ferry.conf$' 'procd_set_param respawn' 'procd_set_param stdout 1' \
         'procd_set_param stderr 1' 'procd_add_reload_trigger "ferry"'; do
	grep -qE -- "$p" "$INIT" && ok "init: $p" || bad "init lacks: $p"
done

echo "openwrt-makefile: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
