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

# A 63-bit LCG of our own: the same cases on every bash.
S=0
rnd() { S=$(((S * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff)); R=$(((S >> 31) % $1)); }
pick() { rnd $#; shift "$R"; P=$1; }

NAMES=(a b c foo bar foo.o bar.c x.tmp "a b" .cache .hidden node_modules build src lib core
  README.md data.txt "[x]" x_y ab abc "x*y" 'a\b' 1 2.txt)
WILDS=('*' '*.o' '*.tmp' '*.c' 'foo*' '*o*' '?' '??' '???*' '[ab]*' '[!a]*' '[^.]*' '[a-c]'
  '*[[:digit:]]*' '.*' '[[:upper:]]*' '*[]x]*' '\[x]' '[x]' '*\*y' 'a\b' 'b?r*' '[[:alpha:]]?'
  '*.[ch]' '[.]*' 'x[*]y' '*e' 'node_*' 'ab*')
PREFIXES=("- " "- " "- " "+ " "+ " "P " "-! " "+! " "H " "S " "R " "-s " "+s " "-r " "+r "
  "exclude " "include " "-_" "+_" "-sr " "protect " "hide " "show " "risk " "-,! " "+,s ")

# The tree is planned first (DIRS, FILES, LINKS), then made with few forks.
declare -A SEEN=()
plan_tree() {   # DIR DEPTH
  local d=$1 depth=$2 n i name
  rnd 6
  n=$((R + (depth == 0 ? 3 : 0)))
  for ((i = 0; i < n; i++)); do
    pick "${NAMES[@]}"
    name=$P
    [ -z "${SEEN[$d/$name]-}" ] || continue
    SEEN[$d/$name]=1
    rnd 20
    if ((R < 8 && depth < 4)); then
      DIRS+=("$d/$name")
      plan_tree "$d/$name" $((depth + 1))
    elif ((R == 8)); then
      LINKS+=("$d/$name")   # to its own name: never a directory to rsync -a
    else
      FILES+=("$d/$name")
    fi
  done
}

gen_tree() {
  local f
  DIRS=() FILES=() LINKS=() SEEN=()
  plan_tree "$TREE" 0
  [ ${#DIRS[@]} -eq 0 ] || mkdir "${DIRS[@]}"
  for f in "${FILES[@]}"; do : > "$f"; done
  for f in "${LINKS[@]}"; do ln -s "${f##*/}" "$f"; done
}

component() {   # sets C: one path component of a pattern
  rnd 100
  if ((R < 50)); then pick "${NAMES[@]}"; C=$P
  elif ((R < 90)); then pick "${WILDS[@]}"; C=$P
  else C='**'; fi
}

gen_pat() {   # sets PAT
  local k i
  rnd 10
  k=$((R < 6 ? 1 : R < 9 ? 2 : 3))
  PAT=
  for ((i = 0; i < k; i++)); do
    component
    PAT+=${PAT:+/}$C
  done
  rnd 100
  if ((R < 25)); then PAT=/$PAT; fi
  rnd 100
  if ((R < 20)); then PAT+=/
  elif ((R < 25)); then PAT+='/***'
  elif ((R < 28)); then PAT="**$PAT"; fi
  return 0
}

# dir-merge files: .ferry-filter holds full rules, .fexcl and .fincl bare
# patterns (for ":- .fexcl" and ":+ .fincl").
write_dir_files() {
  local d n i f
  for d in "$TREE" "${DIRS[@]}"; do
    for f in .ferry-filter .fexcl .fincl; do
      rnd 100
      ((R < 35)) || continue
      rnd 4
      n=$((R + 1))
      : > "$d/$f"
      for ((i = 0; i < n; i++)); do
        gen_pat
        if [ $f = .ferry-filter ]; then
          rnd 12
          if ((R == 0)); then echo "# a comment" >> "$d/$f"; fi
          if ((R == 1)); then echo >> "$d/$f"; fi
          pick "${PREFIXES[@]}"
          printf '%s%s\n' "$P" "$PAT" >> "$d/$f"
        else
          printf '%s\n' "$PAT" >> "$d/$f"
        fi
      done
    done
  done
}

# FARGS for ferry-filter, RARGS for rsync: the same rules.
add_rule() { FARGS+=("$1"); RARGS+=("${2-$1}"); }

gen_rules() {
  local n i fc=0 file j m
  rnd 6
  n=$((R + 1))
  for ((i = 0; i < n; i++)); do
    rnd 100
    if ((R < 45)); then
      gen_pat; pick "${PREFIXES[@]}"; add_rule "--filter=$P$PAT"
    elif ((R < 60)); then
      gen_pat; add_rule "--exclude=$PAT"
    elif ((R < 70)); then
      gen_pat; add_rule "--include=$PAT"
    elif ((R < 78)); then
      file=$CASE/from$i
      : > "$file"
      rnd 4
      for ((j = 0; j <= R; j++)); do
        gen_pat
        pick "" "" "- " "+ " "# " "; "
        printf '%s%s\n' "$P" "$PAT" >> "$file"
      done
      pick --exclude-from --include-from
      add_rule "$P=$file"
    elif ((R < 84)); then
      file=$CASE/merge$i
      : > "$file"
      rnd 4
      for ((j = 0; j <= R; j++)); do
        rnd 10
        if ((R == 0)); then echo ": .ferry-filter" >> "$file"; continue; fi
        gen_pat; pick "${PREFIXES[@]}" "# " "; "
        printf '%s%s\n' "$P" "$PAT" >> "$file"
      done
      pick ". " "merge " ".,- " ".,+ "
      add_rule "--filter=$P$file"
    else
      pick ": .ferry-filter" ":n .ferry-filter" ":e .ferry-filter" "dir-merge .ferry-filter" \
        ":- .fexcl" ":+ .fincl" ":n- .fexcl" "dir-merge,+ .fincl" -F -F
      m=$P
      if [ "$m" = -F ]; then
        fc=$((fc + 1))
        case $fc in
          1) add_rule -F "--filter=: /.ferry-filter" ;;
          2) add_rule -F "--filter=- .ferry-filter" ;;
          *) FARGS+=(-F) ;;   # a third -F is nothing, to rsync too
        esac
      else
        add_rule "--filter=$m"
      fi
    fi
  done
}

show_case() {   # the case, to reproduce by hand
  echo "--- case $1 of seed $SEED (FILTER_SEED=$SEED FILTER_ONLY=$1) ---"
  echo "ferry-filter args:"; printf '  %q\n' "${FARGS[@]}"
  echo "rsync args:"; printf '  %q\n' "${RARGS[@]}"
  echo "tree:"; (cd "$TREE" && find . | LC_ALL=C sort | sed 's/^/  /')
  (cd "$CASE" && find . -name '.f*' -o -name 'from*' -o -name 'merge*' | LC_ALL=C sort) |
    while IFS= read -r f; do echo "$f:"; sed 's/^/  | /' "$CASE/$f"; done
}

keep_case() {
  local keep
  keep=$(mktemp -d "${TMPDIR:-/tmp}/ferry-filter-case.XXXXXX")
  cp -a "$CASE/." "$keep/"
  echo "the case's files are kept in $keep"
}

# rsync lists "./" when the root's attributes differ; ferry-filter never.
without_root() {
  local line out=
  while IFS= read -r line; do
    [ "$line" = ./ ] || out+=$line$'\n'
  done <<< "$1"
  printf '%s' "${out%$'\n'}"
}

# The "deleting NAME" lines for files in directories the sender sent (a
# deleted directory's contents, and whether rsync says so for a directory
# it cannot empty, are the receiver's business, not the filter's).
declare -A SENT=()
deleted_files() {
  local line out=
  while IFS= read -r line; do
    case "$line" in deleting\ *) line=${line#deleting } ;; *) continue ;; esac
    case "$line" in */) continue ;; */*) [ -n "${SENT[${line%/*}/]-}" ] || continue ;; esac
    out+=$line$'\n'
  done <<< "$1"
  printf '%s' "${out%$'\n'}"
}

EMPTY=$T/empty
mkdir "$EMPTY"
agree=0 deletions=0 start=$SECONDS
first=0 last=$((CASES - 1))
[ -n "$ONLY" ] && first=$ONLY last=$ONLY
for ((c = first; c <= last; c++)); do
  S=$((SEED * 1000003 + c))
  rnd 2
  CASE=$T/case
  rm -rf "$CASE"
  TREE=$CASE/tree
  mkdir -p "$TREE"
  FARGS=() RARGS=()
  gen_tree
  write_dir_files
  gen_rules

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
    cp -a "$TREE" "$DEST"
    for d in "$DEST" "${DIRS[@]/#$TREE/$DEST}"; do
      rnd 3
      ((R == 0)) || continue
      pick extra new.o zz.tmp keep.c "b c" .old
      [ -e "$d/$P" ] || [ -L "$d/$P" ] || : > "$d/$P"
    done
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
