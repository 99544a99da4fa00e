#!/usr/bin/env bash
# Issue 12.4, end to end: filter rules given to `ferry push` and `ferry pull`
# against a real daemon, with the real rsync as the oracle. Each case is a
# random tree and rule set from filter_gen.sh (the generator of
# test_filter_oracle.sh, which checks the matcher alone):
#   push:   `ferry push -a RULES TREE/ box:m/pN/` leaves on the box what
#           `rsync -a RULES TREE/ ORACLE/` leaves locally (the client's sender
#           skips; -F and dir-merge files are read from the tree);
#   pull:   `ferry pull RULES box:t/tree/ DEST/` likewise (the rules travel in
#           the request, the box's sender reads the dir-merge files in the
#           module, through its jail);
#   delete: for one case in two, DEST on the box is a copy of TREE plus extra
#           files; `ferry push --delete [--delete-excluded] RULES` against
#           `rsync -a --delete [--delete-excluded] RULES` on the same copy
#           (the box's receiver protects what the rules exclude, reading its
#           own dir-merge files in the destination).
# FILTER_E2E_CASES (default 40), FILTER_SEED (default 1), FILTER_ONLY=N.
. "$(dirname "$0")/lib.sh"

command -v rsync > /dev/null || fail "rsync is needed as the oracle (make deps installs it)"
CASES=${FILTER_E2E_CASES:-40}
SEED=${FILTER_SEED:-1}
ONLY=${FILTER_ONLY:-}
case "$CASES$SEED$ONLY" in *[!0-9]*) fail "FILTER_E2E_CASES, FILTER_SEED and FILTER_ONLY are numbers" ;; esac
d=$T
while :; do   # rsync's -F reads the parents' files too; ours from the root down
  [ -e "$d/.ferry-filter" ] && fail "$d/.ferry-filter exists: -F cases would read it in rsync only"
  [ "$d" = / ] && break
  d=$(dirname "$d")
done
. "$(dirname "$0")/filter_gen.sh"

mkdir -p "$T/case"
write_config "[t]" "path = $T/case" "protection = none"
start_server

listing() { (cd "$1" && find . -mindepth 1 -printf '%y %P\n' | LC_ALL=C sort); }

# compare WHAT WANT_DIR GOT_DIR
compare() {
  local want got
  want=$(listing "$2")
  got=$(listing "$3")
  if [ "$want" != "$got" ]; then
    show_case "$c"
    echo "$1: diff (< rsync, > ferry):"; diff <(echo "$want") <(echo "$got") || true
    keep_case
    fail "case $c: $1 differs from rsync's"
  fi
}

# ferry_ok WHAT ARGS...: ferry_c that must succeed
ferry_ok() {
  local what=$1; shift
  if ! ferry_c "$@" > "$T/ferry.out" 2>&1; then
    show_case "$c"; cat "$T/ferry.out"
    keep_case
    fail "case $c: ferry $what failed"
  fi
}

O=(-a -q --protection none)
pushes=0 pulls=0 deletions=0
first=0 last=$((CASES - 1))
[ -n "$ONLY" ] && first=$ONLY last=$ONLY
for ((c = first; c <= last; c++)); do
  new_case "$c"
  W=$T/work
  rm -rf "$W" "$T/mod"
  mkdir -p "$W" "$T/mod"

  rsync -a "${RARGS[@]}" "$TREE/" "$W/oracle/" 2> "$W/rsync.err" ||
    { show_case "$c"; cat "$W/rsync.err"; fail "case $c: rsync refused the rules (a generator bug)"; }
  ferry_ok push push "${O[@]}" "${FARGS[@]}" "$TREE/" "$(url "m/p$c/")"
  compare "push" "$W/oracle" "$T/mod/p$c"
  pushes=$((pushes + 1))

  ferry_ok pull pull "${O[@]}" "${FARGS[@]}" "$(url t/tree/)" "$W/pulled/"
  compare "pull" "$W/oracle" "$W/pulled"
  pulls=$((pulls + 1))

  rnd 2
  if ((R == 0)); then
    DEST=$T/mod/d$c
    make_dest "$DEST"
    cp -a "$DEST" "$W/odel"
    de=(--delete)
    rnd 2
    ((R == 0)) && de=(--delete-excluded)
    rsync -a "${de[@]}" "${RARGS[@]}" "$TREE/" "$W/odel/" 2> "$W/rsync.err" ||
      { show_case "$c"; cat "$W/rsync.err"; fail "case $c: rsync --delete failed"; }
    ferry_ok "push ${de[*]}" push "${O[@]}" "${de[@]}" "${FARGS[@]}" "$TREE/" "$(url "m/d$c/")"
    compare "push ${de[*]}" "$W/odel" "$DEST"
    deletions=$((deletions + 1))
  fi
done
note "$pushes pushes, $pulls pulls and $deletions deleting pushes agree with rsync (seed $SEED)"
