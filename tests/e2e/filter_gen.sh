# Shared by test_filter_oracle.sh and test_filter_push.sh: random small trees
# (dir-merge files written into them) and random rule sets, as ferry's
# arguments (FARGS) and rsync's (RARGS), from a 63-bit LCG of our own (the
# same cases on every bash). Expects T, SEED; sets TREE, CASE's files, DIRS,
# FILES, LINKS.
# shellcheck shell=bash
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

# make_dest DEST: a copy of TREE with extra files in some of its directories,
# for a --delete case (the same draws in every test that uses it).
make_dest() {
  local dd
  cp -a "$TREE" "$1"
  for dd in "$1" "${DIRS[@]/#$TREE/$1}"; do
    rnd 3
    ((R == 0)) || continue
    pick extra new.o zz.tmp keep.c "b c" .old
    [ -e "$dd/$P" ] || [ -L "$dd/$P" ] || : > "$dd/$P"
  done
}

# new_case N: case N of SEED in $T/case (emptied, the directory kept: a
# module may point at it): its tree, dir-merge files and rules.
new_case() {
  S=$((SEED * 1000003 + $1))
  rnd 2
  CASE=$T/case
  mkdir -p "$CASE"
  find "$CASE" -mindepth 1 -delete
  TREE=$CASE/tree
  mkdir -p "$TREE"
  FARGS=() RARGS=()
  gen_tree
  write_dir_files
  gen_rules
}
