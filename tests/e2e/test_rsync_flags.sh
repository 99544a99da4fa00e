#!/usr/bin/env bash
# Issue 10, defect 9, the flag rule: every flag of rsync's OPTIONS SUMMARY
# (read from the installed rsync's --help: the oracle) is either accepted by
# ferry push/pull with rsync's meaning or refused with one line that says
# why; none gets a bare getopt error. ferry(1) lists each of them.
. "$(dirname "$0")/lib.sh"

command -v rsync > /dev/null || fail "rsync is needed as the oracle (make deps installs it)"
mkdir -p "$T/src" "$T/dst"
echo x > "$T/src/f"
# Nothing listens on 127.0.0.1:1: an accepted flag ends in "cannot connect" (10).
dead="ferry://127.0.0.1:1/m/x"
dead6="ferry://[::1]:1/m/x"   # for -6: IPv6 only

# "--name=ARG, -x  text" / "--name, -x  text" / "-D  text" lines -> one flag per line
rsync --help | sed -n '/^Options/,$p' | grep -E '^ *-' | sed 's/  .*//' | tr ',' '\n' |
  sed 's/^ *//; s/ *$//' | grep -E '^-' | sort -u > "$T/flags"
[ "$(wc -l < "$T/flags")" -gt 150 ] || fail "could not read rsync's option list"

value_for() {   # a sample value for an option's placeholder
  case "$1" in
    *=FLAGS) echo progress2 ;; *=SIZE) echo 1M ;; *=NUM | *=MINS) echo 1 ;;
    *=SECONDS) echo 5 ;; *=PORT) echo 1 ;; *=RATE) echo 1M ;; *=CHMOD) echo u+w ;;
    *=SUFFIX) echo .bak ;; *=FILE) echo "$T/log" ;; *=DIR) echo bak ;;
    *=USER:GROUP | *=USER*) echo nobody ;; *) echo x ;;
  esac
}

bad=0 n=0 yes=0 refused=0
# under the sanitizers one command: both parse with the same code
CMDS="push pull"; [ "${FERRY_SANITIZED:-0}" = 1 ] && CMDS=push
while read -r spec; do
  case "$spec" in --help | -h* | --version | -V | --no-OPTION) continue ;; esac
  name=${spec%%=*}
  args=("$name")
  [ "$name" != "$spec" ] && args=("$name=$(value_for "$spec")")
  # short forms whose argument rsync's --help shows on the long form only
  [ "$name" = -f ] && args=(-f "- x")
  [ "$name" = -@ ] && args=(-@ 1)
  for cmd in $CMDS; do
    n=$((n + 1))
    url=$dead
    case "$name" in -6 | --ipv6) url=$dead6 ;; esac
    if [ $cmd = push ]; then set -- "${args[@]}" "$T/src/" "$url"; else set -- "${args[@]}" "$url" "$T/dst/"; fi
    rc=0
    timeout 10 $FERRY_CLIENT $cmd --identity "$T/clienthome/id_ferry" --known-hosts "$T/kh" "$@" \
      > "$T/out" 2> "$T/err" < /dev/null || rc=$?
    lines=$(wc -l < "$T/err")
    if grep -Eqi "unrecognized option|invalid option|requires an argument" "$T/err"; then
      echo "getopt error for $cmd ${args[*]}: $(cat "$T/err")"; bad=$((bad + 1))
    elif [ "$rc" = 10 ] && grep -q "cannot connect" "$T/err"; then
      yes=$((yes + 1))
    elif [ "$rc" = 1 ] && [ "$lines" = 1 ] && grep -q -- "${name}" "$T/err" &&
         grep -Eq "not supported|ferry|is not|: " "$T/err"; then
      refused=$((refused + 1))
    else
      echo "unexpected for $cmd ${args[*]}: rc=$rc, stderr: $(cat "$T/err")"; bad=$((bad + 1))
    fi
  done
done < "$T/flags"
echo "rsync flags checked: $n uses; accepted $yes, refused with a reason $refused, wrong $bad"
[ "$bad" = 0 ] || fail "$bad rsync flags without rsync's meaning or a one-line reason"
[ "$yes" -gt 40 ] || fail "too few flags accepted ($yes)"

note "-h alone is help; -avh is archive, verbose, human-readable"
expect_rc 0 $FERRY_CLIENT push -h
grep -q "Usage:" "$T/last.out" || fail "push -h printed no help"
expect_rc 10 ferry_c push -avh "$T/src/" "$dead"

note "-i is --itemize-changes; the old use as -i KEY gets a clear line"
expect_rc 1 $FERRY_CLIENT push -i "$T/clienthome/id_ferry" "$T/src/" "$dead"
grep -q "is a ferry private key: -i means --itemize-changes.*--identity" "$T/last.err" ||
  fail "no explanation for -i KEY"

note "an unknown option gets one line, not getopt's"
expect_rc 1 $FERRY_CLIENT push --frobnicate "$T/src/" "$dead"
[ "$(wc -l < "$T/last.err")" = 1 ] && grep -q "unknown option --frobnicate" "$T/last.err" ||
  fail "unknown option: $(cat "$T/last.err")"
expect_rc 1 $FERRY_CLIENT push -e ssh "$T/src/" "$dead"
grep -q "no remote shell" "$T/last.err" || fail "-e does not say why"

note "ferry(1) lists every rsync flag"
man1=${FERRY_SRC:-$(dirname "$0")/../..}/docs/ferry.1
missing=0
while read -r spec; do
  name=${spec%%=*}
  case "$name" in --help | -h* | --version | -V) continue ;; esac
  grep -qF -- "$(echo "$name" | sed 's/-/\\-/g')" "$man1" || { echo "ferry(1) lacks $name"; missing=$((missing + 1)); }
done < "$T/flags"
[ "$missing" = 0 ] || fail "$missing rsync flags are not in ferry(1)"
