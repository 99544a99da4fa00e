#!/usr/bin/env bash
# make demo: a real `ferry serve` on 127.0.0.1 with a throwaway module and a
# throwaway client key, a push of a sample tree with the progress line, a pull
# back, a byte-for-byte check, and the daemon stopped. Leaves nothing behind.
set -euo pipefail
FERRY=$(readlink -f "${1:-build/ferry}")
D=$(mktemp -d "${TMPDIR:-/tmp}/ferry-demo.XXXXXX")
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2> /dev/null; wait 2> /dev/null; rm -rf "$D"; }
trap cleanup EXIT
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

mkdir -p "$D/server" "$D/client" "$D/module" "$D/sample/photos/2024" "$D/sample/docs"
export FERRY_HOME=$D/client
say "a throwaway client key (ferry keygen)"
"$FERRY" keygen -f "$D/client/id_ferry" -C demo > "$D/client/pub"
cat "$D/client/pub"
cp "$D/client/pub" "$D/server/authorized_keys"

say "a sample tree: 200 small files, one 64 MiB file, a symlink, an empty directory"
for i in $(seq 1 200); do head -c $((RANDOM % 16384 + 1)) /dev/urandom > "$D/sample/docs/note-$i.txt"; done
head -c $((64 << 20)) /dev/urandom > "$D/sample/photos/2024/holiday.raw"
ln -s photos/2024/holiday.raw "$D/sample/latest"
mkdir "$D/sample/empty"

say "ferry serve on 127.0.0.1 (module 'demo')"
cat > "$D/server/ferry.conf" << CONF
[global]
listen = 127.0.0.1:0
host key = $D/server/host_key
nice = 0
[demo]
path = $D/module
comment = throwaway demo module
authorized keys = $D/server/authorized_keys
protection = encrypt
CONF
cat "$D/server/ferry.conf"
"$FERRY" serve --config "$D/server/ferry.conf" 2> "$D/server/log" &
PID=$!
PORT=
for _ in $(seq 1 100); do
  PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$D/server/log" | head -n1)
  [ -n "$PORT" ] && break
  sleep 0.05
done
[ -n "$PORT" ] || { cat "$D/server/log"; echo "demo: the daemon did not start" >&2; exit 1; }
cat "$D/server/log"

say "ferry push -P -v (first contact: --accept-new records the server's key)"
"$FERRY" push -P -v --accept-new "$D/sample/" "ferry://127.0.0.1:$PORT/demo/backup" | tail -n 3

say "ferry ls"
"$FERRY" ls "ferry://127.0.0.1:$PORT/demo/backup"

say "ferry push again: nothing changed, nothing sent"
"$FERRY" push -v "$D/sample/" "ferry://127.0.0.1:$PORT/demo/backup"

say "ferry pull -P into a new directory"
"$FERRY" pull -P "ferry://127.0.0.1:$PORT/demo/backup/" "$D/restore" | tail -n 1

say "verify byte for byte (diff -r) and metadata (mode, mtime, links)"
diff -r --no-dereference "$D/sample" "$D/restore"
m() { (cd "$1" && find . -mindepth 1 -printf '%y %m %T@ %p %l\n' | LC_ALL=C sort); }
diff <(m "$D/sample") <(m "$D/restore")
echo "identical: $(find "$D/restore" -type f | wc -l) files, $(du -sb "$D/restore" | cut -f1) bytes"

say "the daemon's log"
kill -TERM "$PID"; wait "$PID" || true; PID=
cat "$D/server/log"
say "demo OK"
