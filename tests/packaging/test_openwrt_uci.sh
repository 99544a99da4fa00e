#!/usr/bin/env bash
# tests/packaging/test_openwrt_uci.sh - checks the UCI -> ferry.conf translation
# of packaging/openwrt/ferry/files/ferry.init (ferry_generate_config).
#
# Runs the function in each available POSIX shell (dash as sh, bash, busybox
# ash: OpenWrt's own shell) with tests/packaging/uci_stub.sh standing in for
# /lib/functions.sh, on tests/packaging/data/openwrt/ferry, and compares the
# result with data/openwrt/ferry.conf.expected. Then, if $FERRY is set (path
# or command), asks the daemon: `$FERRY serve --config FILE --check-config`
# must accept the generated file and reject a broken one. Until that option
# is implemented a binary that accepts the broken file only gives a NOTE;
# FERRY_REQUIRE_CHECK_CONFIG=1 makes that a failure.
# Exit: 0 pass, 1 fail.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${FERRY_SRC:-$(cd "$HERE/../.." && pwd)}
INIT=$SRC/packaging/openwrt/ferry/files/ferry.init
DATA=$HERE/data/openwrt
T=$(mktemp -d "${TMPDIR:-/tmp}/ferry-uci.XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok()  { pass=$((pass + 1)); echo "ok   - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $*"; }

run_translation() {  # shell outdir [uci dir]
	mkdir -p "$2"
	UCI_CONFIG_DIR=${3:-$DATA} "$1" -c '. "$1"; . "$2"; ferry_generate_config "$3/ferry.conf" "$3/keys"' \
		sh "$HERE/uci_stub.sh" "$INIT" "$2" 2> "$2/stderr"
}

shells=()
for s in sh dash bash "busybox ash"; do
	cmd=${s%% *}
	command -v "$cmd" >/dev/null 2>&1 || continue
	if [ "$s" = "busybox ash" ]; then
		printf '#!/bin/sh\nexec busybox ash "$@"\n' > "$T/ash"; chmod +x "$T/ash"; s=$T/ash
	fi
	real=$(readlink -f "$(command -v "${s%% *}")")
	case " ${seen:-} " in *" $real "*) continue;; esac   # sh is often dash
	seen="${seen:-} $real"
	shells+=("$s")
done

for sh in "${shells[@]}"; do
	name=$(basename "$sh")
	O=$T/out-$name
	if ! run_translation "$sh" "$O"; then
		bad "$name: ferry_generate_config failed: $(cat "$O/stderr")"; continue
	fi
	sed "s#@KEYDIR@#$O/keys#g" "$DATA/ferry.conf.expected" > "$O/expected"
	if diff -u "$O/expected" "$O/ferry.conf" > "$O/diff"; then
		ok "$name: generated ferry.conf matches the expected file"
	else
		bad "$name: generated ferry.conf differs:"; cat "$O/diff"
	fi
	[ "$(wc -l < "$O/keys/global.keys")" = 1 ] && grep -q ' admin@desk$' "$O/keys/global.keys" &&
		ok "$name: global.keys has the main section's key" || bad "$name: global.keys"
	[ "$(wc -l < "$O/keys/backup.keys")" = 2 ] && ! grep -q 'not a key' "$O/keys/backup.keys" &&
		ok "$name: backup.keys has the 2 valid keys, the malformed one dropped" ||
		bad "$name: backup.keys: $(cat "$O/keys/backup.keys")"
	[ ! -e "$O/keys/photos.keys" ] && ok "$name: no keys file for a module without keys" ||
		bad "$name: photos.keys should not exist"
	perm=$(stat -c %a:%G "$O/keys"):$(stat -c %a:%G "$O/keys/backup.keys")
	# the daemon (user nobody) reads them at each session
	[ "$perm" = 750:nogroup:640:nogroup ] && ok "$name: keys dir 0750 and keys 0640, group nogroup" ||
		bad "$name: keys dir and file mode/group $perm"
	for w in "bad name" "'relative': path must be absolute" "'weak': bad protection" \
	         "malformed authorized_key 'not a key!'" "invalid value 'fast' for 'bwlimit'" \
	         "has no option name"; do
		grep -qF "$w" "$O/stderr" && ok "$name: warns: $w" || bad "$name: no warning '$w' in: $(cat "$O/stderr")"
	done
	# a second run replaces everything (no stale keys files, same output)
	touch "$O/keys/stale.keys"
	cp "$O/ferry.conf" "$O/first.conf"
	run_translation "$sh" "$O" >/dev/null
	cmp -s "$O/first.conf" "$O/ferry.conf" && [ ! -e "$O/keys/stale.keys" ] && [ ! -e "$O/ferry.conf.tmp" ] &&
		ok "$name: regeneration is idempotent and removes stale keys files" || bad "$name: regeneration"
done
[ ${#shells[@]} -gt 0 ] || bad "no POSIX shell found"

# The daemon's own verdict on the generated file.
if [ -n "${FERRY:-}" ]; then
	O=$T/check; mkdir -p "$O/uci"
	# module paths under $T so that a check that stats them can pass
	sed "s#'/mnt/usb/#'$O/mnt/#; s#'/etc/ferry/host_key'#'$O/host_key'#" "$DATA/ferry" > "$O/uci/ferry"
	mkdir -p "$O/mnt/backup" "$O/mnt/photos"
	run_translation sh "$O/gen" "$O/uci"
	# shellcheck disable=SC2086
	if $FERRY serve --config "$O/gen/ferry.conf" --check-config > "$O/good.log" 2>&1; then
		ok "ferry serve --check-config accepts the generated file"
	else
		bad "ferry serve --check-config rejects the generated file:"; cat "$O/good.log"
	fi
	printf '[global]\nno such key = 1\n[x]\npath = relative\n' > "$O/broken.conf"
	# shellcheck disable=SC2086
	if ! $FERRY serve --config "$O/broken.conf" --check-config > "$O/bad.log" 2>&1; then
		ok "ferry serve --check-config rejects a broken file"
	elif [ "${FERRY_REQUIRE_CHECK_CONFIG:-0}" = 1 ]; then
		bad "ferry serve --check-config accepts a broken file"
	else
		echo "NOTE - ferry serve --check-config accepted a broken file: not implemented yet? (FERRY_REQUIRE_CHECK_CONFIG=1 makes this fail)"
	fi
else
	echo "NOTE - FERRY not set: the daemon's --check-config was not asked"
fi

echo "openwrt-uci: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
