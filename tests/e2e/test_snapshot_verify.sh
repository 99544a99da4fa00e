#!/usr/bin/env bash
# Issue 13.5: `ferry admin verify` finds bit rot. A snapshot module's
# receiver records each file's xxh3-128 when it writes it; verify reads every
# stored file again (the tree and each version in the history) and names
# the damaged ones by snapshot and path. Here one byte is flipped in a file
# of the tree and in a version that only an older snapshot has; verify must
# name both, and nothing else. Then: a pass cut short resumes, --if-older
# skips a recent pass, --restart starts over.
. "$(dirname "$0")/lib.sh"

WEEK=$(dirname "$0")/snapweek.py
write_config "snapshots = yes"
start_server
admin() { $FERRY_CLIENT admin "$@"; }

src=$T/src
python3 "$WEEK" init "$src" 31 80
for d in 0 1 2; do
  [ "$d" = 0 ] || python3 "$WEEK" day "$src" 31 "$d"
  ferry_c push -a --delete "$src/" "$(url m)/" > /dev/null || fail "push $d"
done

note "a clean pass"
admin verify "$T/mod" > "$T/v" || { cat "$T/v"; fail "verify of an intact module"; }
grep -q " 0 damaged; 0 without a recorded hash" "$T/v" || fail "clean pass: $(cat "$T/v")"
files=$(sed -n 's/^verify: \([0-9]*\) files.*/\1/p' "$T/v")
inhist=$(find "$T/mod/.ferry-history/snaps" -path '*/inc/o/*' -type f | wc -l)
intree=$(find "$T/mod" -path "$T/mod/.ferry-history" -prune -o -type f -print | wc -l)
[ "$files" -ge $((intree + 1)) ] || fail "verify read $files files; the tree has $intree"
[ "$files" -le $((intree + inhist)) ] || fail "verify read $files files of $((intree + inhist))"

note "one byte flipped in the tree and in a version only an older snapshot has"
flip() { python3 -c "
import sys, os
p = sys.argv[1]; st = os.stat(p)
with open(p, 'r+b') as f:
    f.seek(st.st_size // 2); b = f.read(1); f.seek(st.st_size // 2); f.write(bytes([b[0] ^ 0x10]))
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))" "$1"; }
tfile=$(cd "$T/mod" && find . -path ./.ferry-history -prune -o -type f -size +1k -print |
  LC_ALL=C sort | head -n 1 | cut -c3-)
flip "$T/mod/$tfile"
# a regular file kept by the newest increment, and its path from the index
read -r hobj hpath < <(python3 - "$T/mod/.ferry-history/snaps" << 'EOF'
import os, sys
snaps = sys.argv[1]
names = sorted(n for n in os.listdir(snaps) if n[0].isdigit())
inc = os.path.join(snaps, names[-1], "inc")
for rec in open(os.path.join(inc, "idx.0"), "rb").read().split(b"\0")[:-1]:
    kind, obj, path = rec[:1], rec[1:9].decode(), rec[9:].decode()
    p = os.path.join(inc, "o", obj)
    if kind == b"O" and os.path.isfile(p) and not os.path.islink(p) and os.path.getsize(p) > 0:
        print(p, path)
        break
EOF
)
[ -n "$hobj" ] || fail "no regular file in the newest increment"
flip "$hobj"
prev=$(admin list "$T/mod" | tail -n +2 | tail -n 2 | head -n 1 | awk '{print $1}')
rc=0
admin verify "$T/mod" > "$T/v" || rc=$?
[ "$rc" = 23 ] || { cat "$T/v"; fail "verify of a damaged module: exit $rc"; }
grep -qx "DAMAGED: the tree: $tfile" "$T/v" || { cat "$T/v"; fail "the tree's damaged file is not named"; }
grep -qx "DAMAGED: snapshot $prev: $hpath" "$T/v" ||
  { cat "$T/v"; fail "the history's damaged version ($prev: $hpath) is not named"; }
[ "$(grep -c '^DAMAGED' "$T/v")" = 2 ] || { cat "$T/v"; fail "more than the two damaged files"; }

note "a pass cut short resumes where it stopped; --if-older skips a recent one"
rc=0
FERRY_TEST_VERIFY_STOP=5 admin verify "$T/mod" > /dev/null 2>&1 || rc=$?
[ "$rc" = 99 ] || fail "the cut pass: exit $rc (a test build has FERRY_TEST_HOOKS)"
admin verify "$T/mod" > "$T/v" || true
grep -q "a resumed pass" "$T/v" || { cat "$T/v"; fail "the pass did not resume"; }
admin verify "$T/mod" --if-older 1d > "$T/v" || true
grep -q "nothing read" "$T/v" || { cat "$T/v"; fail "--if-older read again"; }
rc=0
admin verify "$T/mod" --restart > "$T/v" || rc=$?
[ "$rc" = 23 ] && ! grep -q "a resumed pass" "$T/v" || { cat "$T/v"; fail "--restart"; }

note "asked by a client: ferry verify HOST:MODULE names the same two, exit 23"
rc=0
ferry_c verify --restart "$(url m)" > "$T/v" 2> "$T/v.err" || rc=$?
[ "$rc" = 23 ] || { cat "$T/v" "$T/v.err"; fail "ferry verify HOST:MODULE of a damaged module: exit $rc"; }
grep -qx "DAMAGED: the tree: $tfile" "$T/v" && grep -qx "DAMAGED: snapshot $prev: $hpath" "$T/v" &&
  [ "$(grep -c '^DAMAGED' "$T/v")" = 2 ] || { cat "$T/v"; fail "the client was not told the two damaged files"; }
grep -q "^verify: [0-9]* files, [0-9]* bytes read; 2 damaged" "$T/v" || { cat "$T/v"; fail "no summary"; }
grep -q "verify: damaged: the tree: $tfile" "$T/server.log" || fail "the box did not log what it found"
# the last pass found two: a pass skipped by --if-older still says so, exit 23
rc=0
ferry_c verify --if-older 1d "$(url m)" > "$T/v" || rc=$?
[ "$rc" = 23 ] || { cat "$T/v"; fail "--if-older from a client after a damaged pass: exit $rc"; }
grep -q "nothing read; it found 2 damaged" "$T/v" || { cat "$T/v"; fail "--if-older from a client read again"; }
note "ferry verify MODULE|DIR on the box is admin verify"
rc=0
$FERRY_CLIENT verify --restart "$T/mod" > "$T/v" || rc=$?
[ "$rc" = 23 ] && [ "$(grep -c '^DAMAGED' "$T/v")" = 2 ] || { cat "$T/v"; fail "ferry verify DIR: exit $rc"; }

note "refusals: verify = no, a module without snapshots, a path or a snapshot"
stop_server
write_config "snapshots = yes" "verify = no" "[plain]" "path = $T/plain"
mkdir -p "$T/plain"
start_server
expect_rc 5 ferry_c verify "$(url m)"
grep -q "does not let clients verify it (verify = no)" "$T/last.err" || { cat "$T/last.err"; fail "verify = no"; }
expect_rc 3 ferry_c verify "$(url plain)"
grep -q "keeps no snapshots" "$T/last.err" || { cat "$T/last.err"; fail "a plain module"; }
expect_rc 1 ferry_c verify --config x "$(url m)"

note "a restore of a damaged file fails and says so: whole, from history, and as a delta"
# (a newcomer trial restored a version verify had called damaged, exit 0)
mkdir -p "$T/restore"
expect_rc 23 ferry_c pull "$(url "m/$tfile")" "$T/restore/"
grep -q "damaged on the box" "$T/last.err" || { cat "$T/last.out" "$T/last.err"; fail "the tree's damaged file was not named"; }
[ -z "$(ls -A "$T/restore")" ] || fail "a damaged file was written: $(ls -A "$T/restore")"
expect_rc 23 ferry_c pull "$(url "m@$prev/$hpath")" "$T/restore/"
grep -q "damaged on the box" "$T/last.err" || { cat "$T/last.err"; fail "the history's damaged version was not named"; }
[ -z "$(ls -A "$T/restore")" ] || fail "a damaged version was written"
head -c 300000 /dev/urandom > "$src/big.bin"
ferry_c push -a "$src/" "$(url m)/" > /dev/null || fail "push of big.bin"
cp "$src/big.bin" "$T/restore/big.bin"
printf 'local edit' | dd of="$T/restore/big.bin" bs=1 seek=1000 conv=notrunc status=none
cp "$T/restore/big.bin" "$T/local-version"
flip "$T/mod/big.bin"
expect_rc 23 ferry_c pull -v "$(url m/big.bin)" "$T/restore/"
grep -q "damaged on the box" "$T/last.err" || { cat "$T/last.out" "$T/last.err"; fail "a delta pull of a damaged file"; }
cmp "$T/local-version" "$T/restore/big.bin" || fail "the local version was replaced by a damaged one"
ferry_c pull "$(url m/big.bin)" "$T/restore/" --no-whole-file > /dev/null 2>&1 && fail "no error the second time"
grep -q "big.bin: damaged on the box" "$T/server.log" || fail "the box did not log the damaged file"
echo "ok"
