#!/usr/bin/env bash
# Runs every packaging test (tests/packaging/test_*.sh): the OpenWrt UCI
# translation and package Makefile, and the Debian package built and unpacked
# into a throwaway root. Installs the packaging tools it needs first
# (`--deps`: only that).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export FERRY_SRC=${FERRY_SRC:-$(cd "$HERE/../.." && pwd)}
[ "${1:-}" = --deps ] || : "${FERRY:?FERRY must name the ferry binary}"
"$FERRY_SRC/scripts/install-deps.sh" dpkg-dev debhelper fakeroot systemd
[ "${1:-}" = --deps ] && exit 0
export FERRY_DEB_INSTALL_DEPS=1
failed=0
for t in "$HERE"/test_*.sh; do
  echo "== packaging: $(basename "$t")"
  rc=0
  bash "$t" || rc=$?
  if [ $rc -ne 0 ]; then
    echo "packaging test $(basename "$t") failed (exit $rc)" >&2
    failed=1
  fi
done
exit $failed
