#!/usr/bin/env bash
# ferry bench HOST:MODULE (issue 14, item 3) against a real daemon on
# loopback: every stage at every protection level the module takes, the
# server's disk measured in the module by the same code as `bench disk`,
# a file up and back, the verdict for each direction; its JSON keys, the
# table's verdict lines, nothing left behind on either side; `bench = no`,
# a read-only module (network only), a module with a minimum protection
# (the weaker levels skipped), a bad operand.
. "$(dirname "$0")/lib.sh"

write_config "[ro]" "path = $T/ro" "read only = yes" "protection = none" \
  "[nobench]" "path = $T/nb" "bench = no" "protection = none" \
  "[strict]" "path = $T/strict" "protection = encrypt"
mkdir -p "$T/ro" "$T/nb" "$T/strict" "$T/local"
start_server

bench() { ferry_c bench --local "$T/local" --size 8M --seconds 0.3 "$@"; }

note "a full run at encrypt: JSON with every stage and both verdicts, and the SVG"
expect_rc 0 bench --json --svg "$T/run.svg" "$(url m)"
cp "$T/last.out" "$T/run.json"
# the SVG: well-formed, one <g id="stage-NAME"> per stage, the end-to-end
# lines and both verdicts; and it renders (rsvg-convert, librsvg)
python3 - "$T/run.svg" "$T/run.json" << 'PY'
import json, sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
ids = {g.get("id") for g in root.iter(ns + "g")}
for s in json.load(open(sys.argv[2]))["stages"]:
    assert "stage-" + s["name"] in ids, (s["name"], ids)
assert "e2e_up-line" in ids and "e2e_down-line" in ids, ids
text = " ".join(t.text or "" for t in root.iter(ns + "text"))
assert "Upload is limited by: " in text and "Download is limited by: " in text, text
PY
rsvg-convert -o "$T/run.png" "$T/run.svg" || fail "rsvg-convert could not render the SVG"
python3 -c 'import sys; d = open(sys.argv[1], "rb").read(24); assert d[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(d[16:20], "big") > 100' "$T/run.png" ||
  fail "the rendered SVG is not a PNG of some width"
python3 - "$T/run.json" "$FERRY_SERVER $FERRY_CLIENT" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
emulated = "qemu" in sys.argv[2]
assert d["schema"] == "ferry-bench/1" and d["kind"] == "remote", (d["schema"], d["kind"])
m = d["remote"]
for k in ("server", "server_host", "server_disk", "protection", "local_dir", "rtt_ms", "upload", "download"):
    assert k in m, k
assert m["protection"] == "encrypt", m["protection"]
assert 0 < m["rtt_ms"] < 100, m["rtt_ms"]
names = [s["name"] for s in d["stages"]]
for lvl in ("none", "integrity", "encrypt"):
    for dr in ("up", "down"):
        assert "net_%s_%s" % (dr, lvl) in names, (dr, lvl, names)
for n in ("server_seq_write", "server_seq_read", "server_rand_write_4k", "server_small_files",
          "client_write", "client_read", "e2e_up", "e2e_down"):
    assert n in names, (n, names)
for s in d["stages"]:
    assert s["rate"] > 0, (s["name"], s["rate"])
    if s["name"].startswith("net_"):
        assert 0 <= s["server_cpu"] <= 1.5 and 0 <= s["client_cpu"] <= 1.5, s
        assert s["bytes"] >= 4 << 20, s
        # loopback: next to nothing is lost; the kernel says unless the sender
        # runs under qemu-user (which does not pass TCP_INFO through)
        r = s["retransmitted"]
        assert (r is None and emulated) or 0 <= r < 0.5, s
    if s["name"].startswith("e2e_"):
        assert s["bytes"] == 8 << 20, s
for dr in ("upload", "download"):
    v = m[dr]
    assert v["limit"] and v["limit"] != "unknown", v
    assert "end to end" in v["figures"], v
    print(dr, "->", v["limit"], "|", v["figures"])
PY
[ -z "$(ls -A "$T/local")" ] || fail "the client left files: $(ls -A "$T/local")"
[ -z "$(ls -A "$T/mod")" ] || fail "the server left files in the module: $(ls -A "$T/mod")"

note "the table: the header, every stage, a verdict per direction"
expect_rc 0 bench --protection none "$(url m)"
grep -q "^round trip .* ms; disk and end-to-end stages at protection none" "$T/last.out" && grep -q "^server 127.0.0.1:[0-9]*:m: ferry " "$T/last.out" ||
  { cat "$T/last.out"; fail "no header"; }
grep -q "^Upload is limited by: " "$T/last.out" && grep -q "^Download is limited by: " "$T/last.out" ||
  { cat "$T/last.out"; fail "no verdict lines"; }
grep -q "^server: sequential write" "$T/last.out" || { cat "$T/last.out"; fail "no server disk row"; }

note "a read-only module: the network only, and the disk said not measured"
expect_rc 0 bench --json "$(url ro)"
python3 - "$T/last.out" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = [s["name"] for s in d["stages"]]
assert "net_up_encrypt" in names and not any(n.startswith("server_") or n.startswith("e2e") for n in names), names
assert d["remote"]["server_disk"].startswith("not measured: a read-only module without a file"), d["remote"]["server_disk"]
assert d["remote"]["upload"]["limit"] == "unknown"
PY
[ -z "$(ls -A "$T/ro")" ] || fail "files in the read-only module"

note "a read-only module with files: the read test alone, of the largest, nothing written"
mkdir -p "$T/ro/sub"
head -c 3000000 /dev/urandom > "$T/ro/small.bin"
head -c 6000000 /dev/urandom > "$T/ro/sub/big.bin"
ln -s /etc/passwd "$T/ro/link"
(cd "$T/ro" && find . -exec stat -c '%n %s %Y %i' {} + | sort) > "$T/ro.before"
expect_rc 0 bench --json --size 4M "$(url ro)"
python3 - "$T/last.out" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
st = {s["name"]: s for s in d["stages"]}
assert "server_seq_read" in st and "server_seq_write" not in st, list(st)
assert not any(n.startswith("e2e") for n in st), list(st)
r = st["server_seq_read"]
assert r["bytes"] == 4 << 20 and r["rate"] > 0, r
assert r["note"].startswith("an existing file of 5 MiB (read-only module)"), r
assert not d["remote"]["server_disk"].startswith("not measured"), d["remote"]["server_disk"]
PY
(cd "$T/ro" && find . -exec stat -c '%n %s %Y %i' {} + | sort) > "$T/ro.after"
cmp -s "$T/ro.before" "$T/ro.after" || { diff "$T/ro.before" "$T/ro.after"; fail "the read-only module changed"; }
rm -rf "$T/ro"/* "$T/ro/link" 2> /dev/null || true

note "a module that requires encrypt: none and integrity skipped, encrypt measured"
expect_rc 0 bench --json "$(url strict)"
python3 - "$T/last.out" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = [s["name"] for s in d["stages"]]
assert "net_up_encrypt" in names and "net_up_none" not in names and "e2e_up" in names, names
PY
grep -q "requires protection" "$T/last.err" || { cat "$T/last.err"; fail "the skipped levels were not said"; }

note "bench = no: refused, exit 5, one line"
expect_rc 5 bench "$(url nobench)"
grep -q "does not allow ferry bench (bench = no)" "$T/last.err" || { cat "$T/last.err"; fail "no reason"; }
grep -q "bench on module" "$T/server.log" || fail "the server did not log the bench session"

note "a size the server does not take: its disk not measured, no file sent, its reason shown"
expect_rc 0 ferry_c bench --json --local "$T/local" --size 1G --seconds 0.2 "$(url m)"
python3 - "$T/last.out" << 'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["remote"]["server_disk"] == "not measured: this server measures at most 256 MiB (1024 MiB asked)", d["remote"]["server_disk"]
assert not any(s["name"].startswith("e2e") for s in d["stages"])
PY

# The server's cleanup when its client dies (what this case checks) runs
# natively and in cross-musl's emu-server mode; an emulated client
# (emu-client mode) did not reach its upload in 3 minutes (not understood
# yet), so with a client under qemu the case is left out.
if [[ "$FERRY_CLIENT" != *qemu* ]]; then
note "the client killed mid-upload: the server removes its file"
KSIZE=256M
"$FERRY_CLIENT" bench --identity "$T/clienthome/id_ferry" --known-hosts "$T/clienthome/known_hosts" \
  --local "$T/local" --size $KSIZE --seconds 0.2 "$(url m)" > /dev/null 2>&1 &
cpid=$!
for _ in $(seq 1 3600); do   # the upload's file appears in the module (3 minutes at most)
  ls -A "$T/mod" | grep -q '^\.ferry-.*\.bench$' && break
  sleep 0.05
done
ls -A "$T/mod" | grep -q '^\.ferry-.*\.bench$' || fail "no upload seen in the module"
kill -9 $cpid; wait $cpid 2> /dev/null || true
for _ in $(seq 1 100); do [ -z "$(ls -A "$T/mod")" ] && break; sleep 0.05; done
[ -z "$(ls -A "$T/mod")" ] || fail "left in the module after the client died: $(ls -A "$T/mod")"
rm -f "$T"/local/.ferry-bench-*   # what the killed client could not remove
expect_rc 0 ferry_c ls "$(url m)"

fi

# A network step is bounded by time, not size (the server's hook
# FERRY_TEST_BENCH_NET_S stands in for its 20 s; test builds have it, the
# cross builds do not): an upload still coming past it ends the session,
# the server logs why, the client says what happened (the server's ERROR,
# or, when the reset of the close discarded it, the likely cause), nothing
# is left in the module and the daemon serves on.
if [[ "$FERRY_SERVER" != *qemu* ]] && [[ "$FERRY_SERVER" == "$FERRY" ]]; then
note "an upload step past the server's time for it: the session ends, said on both sides"
stop_server
FERRY_TEST_BENCH_NET_S=0.3 start_server
rc=0
ferry_c bench --local "$T/local" --size 4M --seconds 3 --protection none "$(url m)" > /dev/null 2> "$T/last.err" || rc=$?
[ "$rc" != 0 ] || fail "a bench whose upload the server ended succeeded"
grep -q "upload step still had .* bytes to come after 0.3 s\|lost during an upload step (a server ends one still running after 20 s" \
  "$T/last.err" || { cat "$T/last.err"; fail "the client did not say why the step ended"; }
[ "$(grep -c . "$T/last.err")" -le 2 ] || { cat "$T/last.err"; fail "more than one line of error"; }
grep -q "upload step still had [0-9]* bytes to come after 0.3 s" "$T/server.log" ||
  fail "the server did not log why the step ended"
[ -z "$(ls -A "$T/mod")" ] || fail "left in the module: $(ls -A "$T/mod")"
expect_rc 0 ferry_c ls "$(url m)"
stop_server
start_server

# A disk step asked with size 0 (the server's default, up to 256 MiB) once
# cost nothing of the session's 1 GiB to write, so a crafted client could
# make the box write without bound: after 513 MiB written, it must be refused.
note "a session's bytes to write cover a disk step of the default size"
"$FERRY_TOOLS/ferry-evil" bench-steps 127.0.0.1 "$PORT" "$T/clienthome/id_ferry" m \
  5:268435456 5:268435456 5:1048576 4:0 > "$T/evil.out" 2>&1 || true
[ "$(grep -c '^DONE 5 ' "$T/evil.out")" = 3 ] || { cat "$T/evil.out"; fail "the uploads were not measured"; }
grep -q "^DONE 4 .*this session's bytes to write are spent" "$T/evil.out" ||
  { cat "$T/evil.out"; fail "a default-sized disk step past the session's budget ran"; }
[ -z "$(ls -A "$T/mod")" ] || fail "left in the module: $(ls -A "$T/mod")"
fi

note "bad operands"
expect_rc 1 ferry_c bench "$(url m)/sub"
grep -q "measures a module, not a path" "$T/last.err" || fail "a path was not refused"
expect_rc 1 ferry_c bench --local /tmp disk /tmp
expect_rc 3 ferry_c bench --local "$T/no-such-dir" --size 1M --seconds 0.2 "$(url m)"
grep -q "local .*no-such-dir: not a directory" "$T/last.err" || { cat "$T/last.err"; fail "a bad --local was not named"; }
[ -z "$(ls -A "$T/mod")" ] || fail "the server left files in the module: $(ls -A "$T/mod")"
