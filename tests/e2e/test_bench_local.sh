#!/usr/bin/env bash
# ferry bench disk / crypto, locally (no daemon): a small, short disk run on
# tmpfs and on a temporary directory, its JSON (schema and keys) and SVG
# (well-formed XML, every stage) checked by Python's parsers, its files gone
# afterwards; bad paths and options give one error line and ferry's exit
# codes; `ferry bench crypto --json`.
set -euo pipefail

: "${FERRY:?FERRY must name the ferry binary}"
T=$(mktemp -d "${TMPDIR:-/tmp}/ferry-e2e-bench.XXXXXX")
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "== $*"; }

# check_json FILE KIND: the schema, the keys docs/BENCH.md promises, and
# the stages; prints "name verdict" per stage.
check_json() {
  python3 -m json.tool "$1" > /dev/null || fail "$1 is not JSON"
  python3 - "$1" "$2" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
kind = sys.argv[2]
def need(obj, keys, where):
    for k in keys:
        if k not in obj:
            sys.exit("missing key %s in %s" % (k, where))
need(d, ["schema", "kind", "command", "ferry_version", "host", "seconds_limit", "elapsed_s",
         "stages"], "report")
assert d["schema"] == "ferry-bench/1", d["schema"]
assert d["kind"] == kind, d["kind"]
need(d["host"], ["kernel", "cpu", "cpus", "link"], "host")
stage_keys = ["name", "label", "unit", "rate", "seconds", "bytes", "ops", "method", "verdict",
              "note", "sample_interval_s", "samples"]
if kind == "disk":
    need(d["target"], ["path", "fstype", "device", "model", "usb", "memory", "block_device",
                       "free_bytes", "size_bytes"], "target")
    stage_keys += ["device_bytes", "cliff"]
    names = [s["name"] for s in d["stages"]]
    assert names == ["seq_write", "seq_read", "rand_write_4k", "small_files"], names
else:
    need(d["crypto"], ["record_bytes", "hw_aes", "backend", "connection_cipher",
                       "connection_note"], "crypto")
    assert d["crypto"]["record_bytes"] == 65519
    assert d["crypto"]["connection_cipher"] in ("ChaChaPoly", "AESGCM")
    stage_keys += ["cipher", "backend", "mode"]
    names = [s["name"] for s in d["stages"]]
    for n in ("chachapoly_libsodium_encrypt", "chachapoly_libsodium_integrity"):
        assert n in names, names
for s in d["stages"]:
    need(s, stage_keys, "stage " + s["name"])
    assert s["verdict"] in ("device", "cached", "memory", "unverified", "cpu"), s["verdict"]
    assert isinstance(s["rate"], (int, float)) and s["rate"] > 0, (s["name"], s["rate"])
    assert s["unit"] in ("MB/s", "IOPS", "files/s")
    if kind == "disk":
        need(s["cliff"], ["found", "burst", "sustained", "bytes", "at_s"], "cliff")
    print(s["name"], s["verdict"])
PY
}

# check_svg FILE JSON: well-formed, one <g id="stage-NAME"> per stage.
check_svg() {
  python3 - "$1" "$2" << 'PY'
import json, sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
ids = {g.get("id") for g in root.iter("{http://www.w3.org/2000/svg}g")}
for s in json.load(open(sys.argv[2]))["stages"]:
    assert "stage-" + s["name"] in ids, (s["name"], ids)
PY
}

# run_disk DIR TAG: a small run; JSON and SVG checked, nothing left behind.
run_disk() {
  local dir=$1 tag=$2 before after
  before=$(ls -A "$dir" | sort)
  "$FERRY" bench disk "$dir" --size 8M --seconds 4 --json --svg "$T/$tag.svg" \
    > "$T/$tag.json" 2> "$T/$tag.err" || { cat "$T/$tag.err" >&2; fail "bench disk $dir"; }
  check_json "$T/$tag.json" disk > "$T/$tag.verdicts" || fail "$tag: JSON checks"
  check_svg "$T/$tag.svg" "$T/$tag.json" || fail "$tag: SVG checks"
  after=$(ls -A "$dir" | sort)
  [ "$before" = "$after" ] || fail "$tag: bench left files behind: $after"
  cat "$T/$tag.verdicts"
}

note "disk, temporary directory"
mkdir "$T/disk"
run_disk "$T/disk" tmp

if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
  note "disk, tmpfs: the device is memory, every stage says so"
  mkdir "$T/shm-mark"
  S=$(mktemp -d /dev/shm/ferry-e2e-bench.XXXXXX)
  trap 'rm -rf "$S"; chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
  run_disk "$S" shm
  [ "$(grep -c ' memory$' "$T/shm.verdicts")" = 4 ] || fail "tmpfs not reported as memory"
  grep -q '"memory": true' "$T/shm.json" || fail "tmpfs target not memory"
  "$FERRY" bench disk "$S" --size 4M --seconds 2 > "$T/shm.table" 2>&1 || fail "table run"
  grep -q 'the device is memory' "$T/shm.table" || fail "table does not say memory"
  grep -q '^sequential write ' "$T/shm.table" || fail "table has no sequential write row"
  grep -q "^\$ ferry bench disk $S --size 4M --seconds 2$" "$T/shm.table" ||
    fail "table header does not show the command"
  [ -z "$(ls -A "$S")" ] || fail "tmpfs run left files"
fi

# expect_error CODE CMD...: exit code CODE and exactly one line, "ferry: ...".
expect_error() {
  local want=$1 rc=0
  shift
  "$@" > "$T/out" 2> "$T/err" || rc=$?
  [ "$rc" = "$want" ] || { cat "$T/err" >&2; fail "'$*' exited $rc, not $want"; }
  [ "$(wc -l < "$T/err")" = 1 ] || { cat "$T/err" >&2; fail "'$*': not one error line"; }
  grep -q '^ferry: ' "$T/err" || fail "'$*': error line is not ferry's"
  [ ! -s "$T/out" ] || fail "'$*' wrote a report"
  cat "$T/err"
}

note "bad input"
expect_error 3 "$FERRY" bench disk "$T/does-not-exist"
grep -q 'does-not-exist: No such file or directory' "$T/err" || fail "missing path not named"
touch "$T/plain-file"
expect_error 3 "$FERRY" bench disk "$T/plain-file"
mkdir "$T/ro"
chmod 555 "$T/ro"
if [ "$(id -u)" != 0 ]; then
  expect_error 3 "$FERRY" bench disk "$T/ro" --size 1M
elif command -v setpriv > /dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups \
      "$FERRY" version > /dev/null 2>&1; then
  chmod 755 "$T"
  expect_error 3 setpriv --reuid=65534 --regid=65534 --clear-groups "$FERRY" bench disk "$T/ro" --size 1M
  grep -q 'Permission denied' "$T/err" || fail "unwritable path: no reason given"
else
  echo "(root, and nobody cannot run $FERRY: the unwritable-directory case is skipped)"
fi
expect_error 1 "$FERRY" bench disk
expect_error 1 "$FERRY" bench disk "$T/disk" --size lots
expect_error 1 "$FERRY" bench disk "$T/disk" --seconds 0
expect_error 1 "$FERRY" bench fast
expect_error 1 "$FERRY" bench crypto --size 1M
expect_error 3 "$FERRY" bench disk "$T/disk" --size 9000T
grep -q "does not fit" "$T/err" || fail "too big a --size not explained"

note "crypto --json"
"$FERRY" bench crypto --json --seconds 1 > "$T/crypto.json" || fail "bench crypto"
check_json "$T/crypto.json" crypto || fail "crypto JSON checks"
"$FERRY" bench crypto --seconds 1 --svg "$T/crypto.svg" > "$T/crypto.table" || fail "crypto table"
check_svg "$T/crypto.svg" "$T/crypto.json" || fail "crypto SVG checks"
grep -q 'ChaCha20-Poly1305 encrypt' "$T/crypto.table" || fail "crypto table"
echo "test_bench_local: ok"
