#!/usr/bin/env bash
# What -z costs on incompressible data: the client's CPU (user + sys, from
# wait4, microseconds) pushing 256 MiB of /dev/urandom to a loopback daemon,
# without -z, with -z to a `compress = yes` module and to a `compress = auto`
# one, RUNS times each (default 7), alternating; prints the sorted times.
#   FERRY=build/ferry bench/zstd-random-cpu.sh
# (docs/DESIGN.md, "Compression", has the figures.)
set -euo pipefail
RUNS=${RUNS:-7}
FERRY_TOOLS=${FERRY_TOOLS:-$(dirname "$FERRY")/tests}
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/../tests/e2e/lib.sh"
write_config "compress = yes" "[auto]" "path = $T/auto" "protection = none"
mkdir -p "$T/auto"
start_server
head -c 268435456 /dev/urandom > "$T/rand256"
cpu() { # URL ARGS...: the push's CPU seconds
  local u=$1; shift
  rm -rf "${T:?}"/mod/* "${T:?}"/auto/*
  python3 -c '
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, st, ru = os.wait4(pid, 0)
if os.waitstatus_to_exitcode(st):
    sys.exit("push failed")
print("%.3f" % (ru.ru_utime + ru.ru_stime))
' $FERRY_CLIENT push --identity "$T/clienthome/id_ferry" --known-hosts "$T/clienthome/known_hosts" \
    --accept-new "$@" "$T/rand256" "$u"
}
for prot in encrypt none; do
  plain= yes= auto=
  for _ in $(seq "$RUNS"); do
    plain="$plain $(cpu "$(url m/r)" --protection $prot)"
    yes="$yes $(cpu "$(url m/r)" -z --protection $prot)"
    auto="$auto $(cpu "$(url auto/r)" -z --protection $prot)"
  done
  for k in plain yes auto; do
    echo "$prot $k: $(echo ${!k} | tr ' ' '\n' | sort -n | tr '\n' ' ')"
  done
done
