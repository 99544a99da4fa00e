#!/usr/bin/env bash
# Issue 12.4: ferry's filter rules (src/util/filter.c, through
# tests/tools/ferry-filter) against the real rsync, the oracle. Each case is
# a random small tree (nested directories, dots, spaces, [x], node_modules,
# .cache, *.tmp, foo.o, build/, symlinks, dir-merge files written into it)
# and a random rule set drawn from the syntax ferry supports (--filter with
# + - P H S R and their ! s r modifiers, long names, --exclude, --include,
# --exclude-from, --include-from, merge files, dir-merge with n e - +, -F,
# anchored, unanchored, trailing '/', *, ?, **, ***, classes, escapes).
#   sender:   `rsync -an --out-format=%n RULES TREE/ EMPTY/` against
#             `ferry-filter TREE RULES`, both sorted (rsync lists a
#             directory's files before its subdirectories).
#   receiver: for one case in three, DEST = a copy of TREE plus some extra
#             files, `rsync -an --delete [--delete-excluded]` against
#             `ferry-filter --deletions DEST`: the files deleted in the
#             directories rsync sends (what P, R, H, S, s, r and
#             --delete-excluded change).
# Every case must agree. FILTER_CASES (default 300), FILTER_SEED (default
# 1); FILTER_ONLY=N runs case N of that seed alone. A failing case is
# printed and kept in a directory it names. docs/FILTERS.md.
. "$(dirname "$0")/lib.sh"

command -v rsync > /dev/null || fail "rsync is needed as the oracle (make deps installs it)"
FF=$FERRY_TOOLS/ferry-filter
[ -x "$FF" ] || fail "$FF is not built"
CASES=${FILTER_CASES:-300}
SEED=${FILTER_SEED:-1}
ONLY=${FILTER_ONLY:-}
case "$CASES$SEED$ONLY" in *[!0-9]*) fail "FILTER_CASES, FILTER_SEED and FILTER_ONLY are numbers" ;; esac

# -F makes rsync read /.ferry-filter, /tmp/.ferry-filter, ... down to the
# transfer root; ferry-filter reads from the root down only.
d=$T
while :; do
  [ -e "$d/.ferry-filter" ] && fail "$d/.ferry-filter exists: -F cases would read it in rsync only"
  [ "$d" = / ] && break
  d=$(dirname "$d")
done

. "$(dirname "$0")/filter_gen.sh"

EMPTY=$T/empty
mkdir "$EMPTY"
agree=0 deletions=0 start=$SECONDS
first=0 last=$((CASES - 1))
[ -n "$ONLY" ] && first=$ONLY last=$ONLY
for ((c = first; c <= last; c++)); do
  new_case "$c"

  if ! want=$(rsync -an --out-format=%n "${RARGS[@]}" "$TREE/" "$EMPTY/" 2> "$CASE/rsync.err" |
    LC_ALL=C sort); then
    show_case "$c"; cat "$CASE/rsync.err"
    fail "case $c: rsync refused the rules (a generator bug)"
  fi
  want=$(without_root "$want")
  if ! got=$("$FF" --sorted "$TREE" "${FARGS[@]}" 2> "$CASE/ferry.err"); then
    show_case "$c"; cat "$CASE/ferry.err"
    keep_case
    fail "case $c: ferry-filter refused rules rsync accepts"
  fi
  if [ "$want" != "$got" ]; then
    show_case "$c"
    echo "diff (< rsync, > ferry):"; diff <(echo "$want") <(echo "$got") || true
    keep_case
    fail "case $c: ferry's list differs from rsync's"
  fi

  rnd 3
  if ((R == 0)); then
    DEST=$CASE/dest
    make_dest "$DEST"
    de=()
    rnd 2
    ((R == 0)) && de=(--delete-excluded)
    SENT=()
    while IFS= read -r line; do [ -z "$line" ] || SENT[$line]=1; done <<< "$want"
    wantd=$(rsync -an --delete "${de[@]}" --out-format=%n "${RARGS[@]}" "$TREE/" "$DEST/" 2>&1 |
      LC_ALL=C sort)
    wantd=$(deleted_files "$wantd")
    gotd=$("$FF" "${de[@]}" --sorted --deletions "$DEST" "$TREE" "${FARGS[@]}" 2>&1)
    gotd=$(deleted_files "$gotd")
    if [ "$wantd" != "$gotd" ]; then
      show_case "$c"
      echo "dest:"; (cd "$DEST" && find . | LC_ALL=C sort | sed 's/^/  /')
      echo "with ${de[*]:---delete}"
      echo "deleted files, diff (< rsync, > ferry):"; diff <(echo "$wantd") <(echo "$gotd") || true
      keep_case
      fail "case $c: ferry's deletions differ from rsync's"
    fi
    deletions=$((deletions + 1))
  fi
  agree=$((agree + 1))
done
note "filter oracle: seed $SEED, $agree cases (of them $deletions with --delete) agree with rsync, $((SECONDS - start)) s"
