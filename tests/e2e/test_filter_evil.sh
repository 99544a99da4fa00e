#!/usr/bin/env bash
# Issue 12: filter rules from a malicious or careless client, and dir-merge
# files that try to lead the box out of its module. Every case: one clear
# refusal or error, nothing written or deleted, and the daemon serves the
# next client.
. "$(dirname "$0")/lib.sh"

EVIL=$FERRY_TOOLS/ferry-evil
write_config
start_server
mkdir -p "$T/mod/d"
echo keep > "$T/mod/d/keep"
before=$(tree_manifest "$T/mod")

# wire LEN COUNT: a wire form (docs/FILTERS.md) of COUNT rules "- xxx..." of LEN bytes each
wire() {
  python3 - "$1" "$2" << 'EOF'
import struct, sys
n, count = int(sys.argv[1]), int(sys.argv[2])
rule = b"- " + b"x" * (n - 2)
sys.stdout.buffer.write(struct.pack(">BBH", 1, 0, count) +
                        b"".join(struct.pack(">H", len(rule)) + rule for _ in range(count)))
EOF
}

# one_rule RULE: a wire form of that one rule
one_rule() {
  python3 -c 'import struct, sys; r = sys.argv[1].encode()
sys.stdout.buffer.write(struct.pack(">BBHH", 1, 0, 1, len(r)) + r)' "$1"
}

evil() {   # evil OP PATH: prints the answer into $T/evil.out, returns the tool's code
  local rc=0
  EVIL_PROTECTION=0 "$EVIL" request-path 127.0.0.1 "$PORT" "$T/clienthome/id_ferry" m "$2" "$1" \
    > "$T/evil.out" 2>&1 || rc=$?
  return $rc
}

unchanged() {
  [ "$before" = "$(tree_manifest "$T/mod")" ] || fail "$1: the module changed"
  expect_rc 0 ferry_c ls --protection none "$(url m/)"
}

# refused WHAT FILE OP REASON: the rules in FILE with a REQUEST for OP are
# refused (REFUSE 9) with REASON, and nothing in the module changed
refused() {
  local rc=0
  note "$1: refused"
  EVIL_FILTER=$2 evil "$3" d || rc=$?
  [ "$rc" = 5 ] && grep -q "^REFUSE 9 " "$T/evil.out" && grep -qF -- "$4" "$T/evil.out" ||
    { cat "$T/evil.out"; fail "$1: not refused with '$4' (rc $rc)"; }
  unchanged "$1"
}

wire 4000 25 > "$T/big.bin"
refused "100,000 bytes of rules" "$T/big.bin" push "filter rules: 100054 bytes (at most 67540)"
wire 3300 20 > "$T/big2.bin"
refused "66,000 bytes of rule text in a wire form that fits" "$T/big2.bin" push \
  "filter rules: more than 65536 bytes"
one_rule ". /etc/passwd" > "$T/merge.bin"
refused "a merge rule from the client (the box would read /etc/passwd)" "$T/merge.bin" pull \
  "merge rule is not accepted"
one_rule "-x nope" > "$T/bad.bin"
refused "a bad rule in the wire form" "$T/bad.bin" push "rule '-x nope'"

note "more FILTER bytes announced than the protocol allows: a protocol error"
wire 100 10 > "$T/small.bin"
rc=0; EVIL_FILTER=$T/small.bin EVIL_FILTER_TOTAL=200000 evil pull d || rc=$?
[ "$rc" != 0 ] || { cat "$T/evil.out"; fail "a total of 200000 bytes was accepted"; }
grep -q "protocol" "$T/server.log" || fail "the daemon did not log the protocol error"
unchanged "oversized total"

note "a dir-merge file on the box that is a symlink is never followed (push --delete)"
mkdir -p "$T/src"
echo new > "$T/src/new"
ln -s /etc/passwd "$T/mod/d/.ferry-filter"
before=$(tree_manifest "$T/mod")
expect_rc 23 ferry_c push --protection none --delete -f ': .ferry-filter' "$T/src/" "$(url m/d/)"
grep -q "symlink (not followed)" "$T/last.err" || { cat "$T/last.err"; fail "the symlink was not named"; }
[ -f "$T/mod/d/keep" ] || fail "--delete removed files although the rules could not be read"
[ -f "$T/mod/d/new" ] || fail "the file was not sent"
rm "$T/mod/d/new"
before=$(tree_manifest "$T/mod")

note "... nor by the box's sender (pull): that directory is not sent"
expect_rc 23 ferry_c pull --protection none -f ': .ferry-filter' "$(url m/d/)" "$T/pulled/"
grep -q "symlink (not followed)" "$T/last.err" || { cat "$T/last.err"; fail "the symlink was not named"; }
[ ! -e "$T/pulled/keep" ] || fail "a directory whose rules could not be read was sent"
unchanged "dir-merge symlink"

note "a client's merge file is its own, read on the PC"
printf -- '- keep\n' > "$T/rules"
expect_rc 0 ferry_c pull --protection none -f ". $T/rules" "$(url m/d/)" "$T/pulled2/"
[ ! -e "$T/pulled2/keep" ] || fail "the merge file's rule was not applied"

note "a list from a pipe, as rsync: --exclude-from=-, -f '. -', <(...)"
printf -- 'new\n' | expect_rc 0 ferry_c push --protection none --exclude-from=- "$T/src/" "$(url m/p1/)"
[ -d "$T/mod/p1" ] && [ ! -e "$T/mod/p1/new" ] || fail "--exclude-from=- from a pipe: not applied"
printf -- '- new\n' | expect_rc 0 ferry_c push --protection none -f '. -' "$T/src/" "$(url m/p2/)"
[ -d "$T/mod/p2" ] && [ ! -e "$T/mod/p2/new" ] || fail "-f '. -' from a pipe: not applied"
expect_rc 0 ferry_c push --protection none --exclude-from=<(echo new) "$T/src/" "$(url m/p3/)"
[ -d "$T/mod/p3" ] && [ ! -e "$T/mod/p3/new" ] || fail "--exclude-from=<(...): not applied"
expect_rc 1 ferry_c push --protection none --exclude-from="$T" "$T/src/" "$(url m/p4/)"
grep -q "not a file, a pipe or a terminal" "$T/last.err" || { cat "$T/last.err"; fail "a directory as --exclude-from"; }

note "a missing --exclude-from file: one line, exit 1, nothing sent"
expect_rc 1 ferry_c push --protection none --exclude-from "$T/nothere" "$T/src/" "$(url m/x/)"
[ "$(wc -l < "$T/last.err")" = 1 ] && grep -q -- "--exclude-from: .*nothere" "$T/last.err" ||
  { cat "$T/last.err"; fail "a missing --exclude-from file was not named in one line"; }
[ ! -e "$T/mod/x" ] || fail "something was sent"
note "the daemon is still serving"
expect_rc 0 ferry_c push --protection none "$T/src/" "$(url m/y/)"
[ -f "$T/mod/y/new" ] || fail "the daemon did not serve after the bad clients"
