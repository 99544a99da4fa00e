#!/usr/bin/env bash
# Temporaries that a killed session left behind are swept (issue 9, F7): at
# start the daemon removes, in every module and at any depth, files named
# exactly as fs_tmp_name makes them (".ferry-" + 6 letters or digits + 4
# that check them and the rest of the name + ".") that nobody has modified or
# changed for `stale temporaries`, and tagged partials; anything else stays:
# fresh temporaries, look-alike names (a user's ".ferry-backup.tar", an
# untagged ".ferry-part.notes"), directories, and whatever lies behind a
# symlink.
. "$(dirname "$0")/lib.sh"

# seconds: ctime counts too, and no test can make an old ctime. Partials get
# AGE+5. Made at 0 s, the old files; at AGE+1, the young partial; at 2*AGE+3,
# the fresh temporaries, just before the daemon starts. Each is then on its
# side of its limit by 2 s or more, plus or minus the time the sweep takes to
# begin (it runs at the lowest priority after the daemon starts, which takes
# a while on a loaded machine or under ASan)
AGE=4
# tmpname RANDOM6 FINAL: the name fs_tmp_name gives FINAL with those letters
tmpname() {
  python3 - "$1" "$2" <<'PY'
import sys
A = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
h = 0xcbf29ce484222325
for b in (sys.argv[1] + sys.argv[2]).encode():
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
c = ""
for _ in range(4):
    c += A[h % 62]
    h //= 62
print(".ferry-" + sys.argv[1] + c + "." + sys.argv[2])
PY
}
# tag FILE: the tag a partial of ferry's carries (fs/partial.c: the source's
# size and mtime)
tag() { setfattr -n user.ferry.src -v 0x0000000000000001000000000000000100000000 "$1"; }
# (the names are made now: the sleeps below set the ages, nothing between)
fresh=$T/mod/a/b/$(tmpname Fr3sh0 new) landing=$T/mod/a/b/c/$(tmpname Lnd1ng file)
write_config
sed -i "/^\[global\]$/a stale temporaries = ${AGE}s\nstale partials = $((AGE + 5))s" "$T/ferry.conf"
deep=$T/mod/a/b/c/d/e/f/g/h
mkdir -p "$deep" "$T/outside" "$T/mod/$(tmpname Dir123 x)"
# the disk test's directory of a ferry bench whose daemon was killed (at the
# module's root only; look-alikes and one holding a directory stay)
mkdir -p "$T/mod/.ferry-bench-a1b2c3" "$T/mod/a/.ferry-bench-d4e5f6" "$T/mod/.ferry-bench-xyz123" \
  "$T/mod/.ferry-bench-0f0f0f/sub"
head -c 100000 /dev/zero > "$T/mod/.ferry-bench-a1b2c3/seq"
echo s > "$T/mod/.ferry-bench-a1b2c3/small-000001"
echo s > "$T/mod/a/.ferry-bench-d4e5f6/seq"
old=$deep/$(tmpname Ab12Cd big.bin)
echo partial > "$old"
link=$deep/$(tmpname Lk34Ef link)
ln -s nowhere "$link"
echo notes > "$T/mod/.ferry-notes"
echo almost > "$T/mod/a/.ferry-ab12.short"
echo user > "$T/mod/a/.ferry-backup.tar"          # a user's look-alikes
echo user > "$T/mod/a/.ferry-Ab12CdXYZW.forged"   # (the check letters do not agree)
echo user > "$T/mod/a/.ferry-part.notes"          # (no tag)
outside=$T/outside/$(tmpname Ou56Gh x)
echo outside > "$outside"
ln -s "$T/outside" "$T/mod/a/b/link"
# partials (resume) have an age of their own: one old enough, one not yet,
# and one old but locked by a session still writing it
echo old > "$deep/.ferry-part.gone.bin"
tag "$deep/.ferry-part.gone.bin"
touch -d '2 days ago' "$deep/.ferry-part.gone.bin"
echo locked > "$T/mod/a/.ferry-part.busy.bin"
tag "$T/mod/a/.ferry-part.busy.bin"
touch -d '2 days ago' "$T/mod/a/.ferry-part.busy.bin"
flock "$T/mod/a/.ferry-part.busy.bin" sleep 30 &
locker=$!
touch -h -d '2 days ago' "$old" "$link" "$T/mod/.ferry-notes" "$T/mod/a/.ferry-ab12.short" \
  "$outside" "$T/mod/$(tmpname Dir123 x)" "$T/mod/a/.ferry-backup.tar" \
  "$T/mod/a/.ferry-Ab12CdXYZW.forged" "$T/mod/a/.ferry-part.notes"
sleep $((AGE + 1))
echo young > "$T/mod/a/b/.ferry-part.young.bin"   # older than AGE at the sweep, younger than AGE+5: kept
tag "$T/mod/a/b/.ferry-part.young.bin"
sleep $((AGE + 2))
# A temporary in progress: fresh, or with the source's old mtime already set
# just before its rename (its ctime is fresh then).
echo writing > "$fresh"
echo landing > "$landing"
touch -d '2 days ago' "$landing"

note "the daemon sweeps its modules at start"
start_server
for _ in $(seq 1 400); do
  grep -q "sweep of module 'm'" "$T/server.log" && break
  sleep 0.05
done
grep -q "sweep of module 'm': 3 stale temporaries removed, 1 stale partials removed" \
  "$T/server.log" || fail "the sweep is not logged, or did not remove 3 and 1"
[ ! -e "$T/mod/.ferry-bench-a1b2c3" ] || fail "the stale bench directory is still there"
for keep in "$T/mod/a/.ferry-bench-d4e5f6" "$T/mod/.ferry-bench-xyz123" "$T/mod/.ferry-bench-0f0f0f/sub"; do
  [ -d "$keep" ] || fail "the sweep removed $keep"
done
[ ! -e "$deep/.ferry-part.gone.bin" ] || fail "the stale partial is still there"
[ -f "$T/mod/a/b/.ferry-part.young.bin" ] || fail "the sweep removed a young partial"
[ -f "$T/mod/a/.ferry-part.busy.bin" ] || fail "the sweep removed a partial being written"
kill $locker 2> /dev/null || true
[ ! -e "$old" ] || fail "the stale temporary deep in the module is still there"
[ ! -L "$link" ] || fail "the stale temporary symlink is still there"
for keep in "$fresh" "$landing" "$T/mod/.ferry-notes" "$T/mod/a/.ferry-ab12.short" "$outside" \
  "$T/mod/a/.ferry-backup.tar" "$T/mod/a/.ferry-Ab12CdXYZW.forged" "$T/mod/a/.ferry-part.notes"; do
  [ -f "$keep" ] || fail "the sweep removed $keep"
done
[ -d "$T/mod/$(tmpname Dir123 x)" ] || fail "the sweep removed a directory"

note "a user's look-alikes are data: listed, pulled"
ferry_c ls -r "$(url m/a)" > "$T/ls.out" || fail "ls"
for n in .ferry-backup.tar .ferry-Ab12CdXYZW.forged .ferry-part.notes; do
  grep -q " $n\$" "$T/ls.out" || { cat "$T/ls.out"; fail "ls does not list $n"; }
done
grep -q "ferry-part.busy\|ferry-part.young" "$T/ls.out" && fail "ls lists a partial of ferry's"
rm -rf "$T/back" && expect_rc 0 ferry_c pull -a "$(url m/a/)" "$T/back"
for n in .ferry-backup.tar .ferry-Ab12CdXYZW.forged .ferry-part.notes; do
  [ "$(cat "$T/back/$n")" = user ] || fail "pull did not bring $n"
done
[ -L "$T/mod/a/b/link" ] || fail "the sweep removed the symlink to a directory"

note "the sweep does not hold up sessions"
expect_rc 0 ferry_c ls -q "$(url m)"
stop_server

note "stale temporaries = 0: no sweep"
echo partial > "$old"
touch -d '2 days ago' "$old"
sed -i "s/^stale temporaries = .*/stale temporaries = 0/" "$T/ferry.conf"
sleep $((AGE + 1))
: > "$T/server.log"   # start_server must not read the last server's port
start_server
expect_rc 0 ferry_c ls -q "$(url m)"
sleep 0.5
[ -e "$old" ] || fail "a sweep ran although it was switched off"
stop_server
echo "PASS"
