#!/usr/bin/env bash
# ferry bench HOST:MODULE against a daemon on this machine's loopback: the
# tables in README.md and docs/BENCHMARKS.md ("Issue 14").
#   bench/remote.sh              native daemon, module in a directory under
#                                $MODULE_DIR (default /var/tmp: the machine's disk)
#   ROUTER=1 bench/remote.sh     the daemon is the static mipsel-musl build under
#                                qemu-mipsel (`make cross-musl` builds it in
#                                .cross/build-mipsel-musl): an emulated router
# Extra arguments go to `ferry bench` (e.g. --json, --size 16M, --protection none).
# Needs no root; contacts only 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
FERRY=${FERRY:-build/ferry}
[ -x "$FERRY" ] || { echo "bench/remote.sh: build ferry first (make build)" >&2; exit 1; }
SERVER=("$FERRY")
if [ "${ROUTER:-0}" = 1 ]; then
  BOX=.cross/build-mipsel-musl/ferry
  [ -x "$BOX" ] || { echo "bench/remote.sh: no $BOX (make cross-musl builds it)" >&2; exit 1; }
  SERVER=(qemu-mipsel "$BOX")
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/ferry-remote.XXXXXX")
M=$(mktemp -d "${MODULE_DIR:-/var/tmp}/ferry-remote-module.XXXXXX")
PID=
trap '[ -n "$PID" ] && kill "$PID" 2> /dev/null; wait 2> /dev/null; rm -rf "$T" "$M"' EXIT
mkdir -p "$T/client" "$T/server" "$T/local"
chmod 700 "$T/client" "$T/server"
FERRY_HOME=$T/client "$FERRY" keygen -f "$T/client/id_ferry" -C bench > /dev/null 2>&1
cp "$T/client/id_ferry.pub" "$T/server/authorized_keys"
cat > "$T/ferry.conf" << CONF
[global]
listen = 127.0.0.1:0
host key = $T/server/host_key
authorized keys = $T/server/authorized_keys
[m]
path = $M
protection = none
CONF
FERRY_HOME=$T/server "${SERVER[@]}" serve --config "$T/ferry.conf" 2> "$T/server.log" &
PID=$!
for _ in $(seq 1 300); do
  PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/server.log" | head -n1)
  [ -n "$PORT" ] && break
  sleep 0.05
done
[ -n "${PORT:-}" ] || { cat "$T/server.log" >&2; exit 1; }
# from inside the temporary directory: the report's header shows the
# command as typed, with relative paths
FERRY=$(realpath "$FERRY")
cd "$T"
FERRY_HOME=client "$FERRY" bench --identity client/id_ferry --known-hosts client/known_hosts \
  --accept-new --local local "$@" "ferry://127.0.0.1:$PORT/m" 2> >(grep -v "^ferry: added" >&2)
