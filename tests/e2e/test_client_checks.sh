#!/usr/bin/env bash
# What the client checks of the server (audit, issue 9), against the evil
# server (tests/tools/ferry-evil.c, mode serve):
#  - finding 12a: an ACCEPT with weaker protection than asked is refused
#    (exit 2, both levels named) before anything of the transfer is sent;
#  - finding 9: names, link targets, CHANGE paths, RESULT messages, REFUSE
#    and ERROR reasons from the server reach the terminal quoted, with no
#    control byte, while valid UTF-8 stays readable.
. "$(dirname "$0")/lib.sh"

[ -x "$FERRY_TOOLS/ferry-evil" ] || fail "ferry-evil not built in $FERRY_TOOLS"

# Failures are collected, so that one run tells which checks fail.
BAD=
bad() { echo "FAIL: $*" >&2; BAD="$BAD
  $*"; }

mkdir -p "$T/src/sub"
echo secret-contents > "$T/src/file"
echo more > "$T/src/sub/inner"

# evil_run SCRIPT-TEXT CLIENT-ARGS...: the evil server plays SCRIPT-TEXT to
# one `ferry_e CLIENT-ARGS...`, where an argument "@/MODULE[/PATH]" is its URL
# (known only once it listens); exit code in $rc, stdout+stderr in $T/c.out,
# the server's exit code in $ERC and its output in $T/evil.out.
evil_run() {
  local a args=()
  printf '%s\n' "$1" > "$T/c.script"
  shift
  start_evil_server "$T/c.script"
  for a in "$@"; do
    case $a in @/*) args+=("$(eurl "${a#@/}")") ;; *) args+=("$a") ;; esac
  done
  rc=0
  ferry_e "${args[@]}" > "$T/c.out" 2>&1 || rc=$?
  stop_evil_server
}

LISTING='DIR_BEGIN 0 ""
ENTRY file file
DIR_END
END'

note "finding 12a: a weaker protection in ACCEPT is refused"
for pair in encrypt:0:none integrity:0:none encrypt:1:integrity; do
  asked=${pair%%:*} got=${pair##*:} num=${pair#*:}; num=${num%%:*}
  for op in push pull; do
    rm -rf "$T/pulled"
    if [ $op = push ]; then
      EVIL_ACCEPT_PROT=$num evil_run 'RESULT 0 0 0' push -q --protection "$asked" "$T/src/" @/m/
    else
      EVIL_ACCEPT_PROT=$num evil_run "$LISTING" pull -q --protection "$asked" @/m/ "$T/pulled/"
    fi
    what="$op --protection $asked, ACCEPT $got"
    echo "   $what: client exit $rc: $(grep -v '^ferry: added ' "$T/c.out" | tr '\n' ' ' | cut -c1-150)"
    [ "$rc" = 2 ] || bad "$what: client exit $rc, wanted 2"
    grep -q "'$asked'.*'$got'\|'$got'.*'$asked'" "$T/c.out" ||
      bad "$what: the error does not name both levels"
    # After ACCEPT the client may say why it stops (ERROR), nothing else.
    if sed '1,/^REQUEST /d' "$T/evil.out" | grep -Eq '^(DIR_BEGIN|ENTRY|DIR_END|END|TOTALS|FILE_BEGIN|DATA|WANT|DECIDED|RESULT)'; then
      bad "$what: the client went on after the ACCEPT: $(sed '1,/^REQUEST /d' "$T/evil.out" | tr '\n' ' ' | cut -c1-120)"
    fi
    if [ $op = pull ] && [ -e "$T/pulled/file" ]; then bad "$what: a file was received"; fi
  done
done

note "the same level, and a stronger one, are accepted (the evil server's data at none is verified)"
rm -rf "$T/pulled"
evil_run "$LISTING" pull -q --protection none @/m/ "$T/pulled/"
[ "$rc" = 0 ] && [ "$(cat "$T/pulled/file" 2> /dev/null)" = "evil data" ] ||
  { cat "$T/c.out" >&2; fail "pull at none from the evil server: exit $rc"; }
rm -rf "$T/pulled"
EVIL_ACCEPT_PROT=2 evil_run "$LISTING" pull -q --protection integrity @/m/ "$T/pulled/"
[ "$rc" = 0 ] && [ "$(cat "$T/pulled/file" 2> /dev/null)" = "evil data" ] ||
  { cat "$T/c.out" >&2; fail "pull at integrity answered with encrypt: exit $rc"; }

# --- finding 9 ------------------------------------------------------------------

PWN='\e]0;pwned\a\e[2J'                      # retitle the window, clear the screen
QPWN='"\x1b]0;pwned\x07\x1b[2J'              # how the client must show it

# clean_output WHAT [FIXED-STRING...]: no control byte but \n in the client's
# output (C1 bytes included: the strings here use no UTF-8 that has them),
# and every FIXED-STRING present.
clean_output() {
  local what=$1 s; shift
  if LC_ALL=C grep -qP '[\x00-\x09\x0b-\x1f\x7f-\x9f]' "$T/c.out"; then
    bad "$what: control bytes reached the terminal: $(od -c "$T/c.out" | grep -m2 -E '033|007|233' | tr -s ' \n' ' ')"
  fi
  for s in "$@"; do
    grep -qF -- "$s" "$T/c.out" || bad "$what: '$s' not shown"
  done
}

note "finding 9: ls shows names and link targets quoted, UTF-8 readable"
evil_run 'DIR_BEGIN 0 ""
ENTRY file '"$PWN"'x
ENTRY link lnk 0777 0 '"$PWN"'target
ENTRY file raw\x9b31mc1
ENTRY file utf8\xc2\x9bc1
ENTRY dir café
ENTRY file quote"and\\backslash
DIR_END
END' ls @/m/
echo "   ls: client exit $rc"
[ "$rc" = 0 ] || bad "ls: client exit $rc, wanted 0"
clean_output "ls" "${QPWN}x\"" "lnk -> ${QPWN}target\"" '"raw\x9b31mc1"' '"utf8\xc2\x9bc1"' " café" 'quote"and\backslash'

note "finding 9: pull -v change lines"
rm -rf "$T/pulled"
evil_run 'DIR_BEGIN 0 ""
ENTRY file '"$PWN"'x
ENTRY dir '"$PWN"'dir
DIR_END
DIR_BEGIN 0 '"$PWN"'dir
ENTRY file inner
DIR_END
END' pull -v @/m/ "$T/pulled/"
echo "   pull -v: client exit $rc"
[ "$rc" = 0 ] || bad "pull -v: client exit $rc, wanted 0"
clean_output "pull -v" "new     ${QPWN}x\"" "mkdir   ${QPWN}dir\"" "${QPWN}dir/inner\""

note "finding 9: a push's CHANGE paths and RESULT message"
evil_run 'CHANGE new '"$PWN"'x
CHANGE failed '"$PWN"'y
RESULT 1 0 0 '"$PWN"'boom disk full' push -v "$T/src/" @/m/
echo "   push: client exit $rc"
[ "$rc" = 23 ] || bad "push with a failing RESULT: client exit $rc, wanted 23"
clean_output "push CHANGE/RESULT" "new     ${QPWN}x\"" "FAILED  ${QPWN}y\"" "${QPWN}boom disk full\""

note "finding 9: a REFUSE reason"
EVIL_REFUSE="2:key not authorized $PWN (go away)" evil_run 'END' ls @/m/
echo "   REFUSE: client exit $rc"
[ "$rc" = 5 ] || bad "REFUSE: client exit $rc, wanted 5"
clean_output "REFUSE" "refused: \"key not authorized \x1b]0;pwned\x07\x1b[2J (go away)\""

note "finding 9: an ERROR reason, to a pull and to a push"
evil_run 'ERROR 8 '"$PWN"'internal' pull -q @/m/ "$T/pulled/"
echo "   ERROR to a pull: client exit $rc"
[ "$rc" != 0 ] || bad "ERROR to a pull: client exit 0"
clean_output "ERROR to a pull" '\x1b]0;pwned\x07\x1b[2Jinternal"'
evil_run 'ERROR 8 '"$PWN"'internal' push -q "$T/src/" @/m/
echo "   ERROR to a push: client exit $rc"
[ "$rc" != 0 ] || bad "ERROR to a push: client exit 0"
clean_output "ERROR to a push" '\x1b]0;pwned\x07\x1b[2Jinternal"'

# Nothing listening: every command says so and exits 10 (a pull once
# crashed here, freeing a channel it never had).
note "no server: exit 10 and one line, never a crash"
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$T/nowhere"
for cmd in "push $T/nowhere/ ferry://127.0.0.1:$closed/m/x" "pull ferry://127.0.0.1:$closed/m/x $T/nowhere/" \
  "ls ferry://127.0.0.1:$closed/m"; do
  rc=0
  # shellcheck disable=SC2086
  ferry_c $cmd > "$T/nc.out" 2>&1 || rc=$?
  [ "$rc" = 10 ] || bad "${cmd%% *} with nothing listening: exit $rc, not 10: $(cat "$T/nc.out")"
  grep -q 'cannot connect' "$T/nc.out" || bad "${cmd%% *}: no 'cannot connect' line"
done

# A server whose session dies during the opening or the handshake: the
# connection broke, so exit 10 as after it (CI once saw exit 2, "protocol
# error", when the fault campaign killed a session that early).
note "a server gone during the handshake: exit 10, 'connection closed'"
for stage in opening handshake; do
  python3 - "$stage" > "$T/hs.port" 2> "$T/hs.err" <<'PY' &
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
s.settimeout(30)
print(s.getsockname()[1], flush=True)
c, _ = s.accept()
c.settimeout(10)
def read(n):
    got = b""
    while len(got) < n:
        b = c.recv(n - len(got))
        if not b:
            sys.exit("the client closed first")
        got += b
    return got
line = b""
while not line.endswith(b"\n"):      # the client's opening line
    line += read(1)
if sys.argv[1] == "handshake":
    c.sendall(b"FERRY/1 Noise_XX_25519_ChaChaPoly_BLAKE2b\n")
    read(2 + 32)                       # the client's first handshake message, all of it
else:
    c.sendall(b"FERRY/1 Noise_XX")     # half an opening line
c.close()
PY
  hpid=$!
  for _ in $(seq 1 100); do [ -s "$T/hs.port" ] && break; sleep 0.05; done
  rc=0
  ferry_c ls "ferry://127.0.0.1:$(cat "$T/hs.port")/m" > "$T/hs.out" 2>&1 || rc=$?
  wait "$hpid" || bad "the $stage stand-in failed: $(cat "$T/hs.err")"
  : > "$T/hs.port"
  echo "   closed during the $stage: client exit $rc: $(cat "$T/hs.out")"
  [ "$rc" = 10 ] || bad "closed during the $stage: exit $rc, not 10"
  grep -q "connection closed" "$T/hs.out" || bad "closed during the $stage: no 'connection closed' line"
done

[ -z "$BAD" ] || fail "checks that failed:$BAD"
note "ok"
