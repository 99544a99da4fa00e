#!/usr/bin/env bash
# bench/w8.sh -- W8 (issue 13): a week of backups. A tree of W8_FILES files
# (W8_MB in all, mixed sizes) is backed up as day 0, then W8_DAYS-1 more days,
# each with 1 % of the files modified (a 4 KiB region of a big one, a small
# one rewritten), 0.5 % added and 0.5 % deleted, one snapshot a day, by:
#   ferry        push -a --delete to a module with `snapshots = yes` (encrypt)
#   rsync-ld     the rsync daemon, rsync -a --delete --link-dest=../dayN-1 into
#                dayN/ (rsnapshot's hardlink farm)
#   borg         borg create over ssh (borg serve on the "box", a private sshd)
#   restic       restic backup to an sftp repository on the same sshd
# all on loopback, the "box" a tmpfs directory. Reported per tool: the median
# wall and server CPU of days 1.., day 0's, bytes and inodes the box holds
# after the week, the wall of restoring day 0's whole tree and one file of it,
# and of deleting (pruning) the oldest day; and ferry's snapshot push with
# nothing changed against its plain no-op re-sync (medians of W8_NOOP runs).
#
#   bench/w8.sh                       10,000 files, 200 MB, 7 days (a few minutes)
#   W8_FILES=1000 W8_MB=20 bench/w8.sh   a quick look
# Knobs: W8_FILES W8_MB W8_DAYS [7] W8_NOOP [5] W8_RESTORES [3] W8_TOOLS ["ferry rsync-ld borg restic"]
#   W8_ROOT [/dev/shm] FERRY [build/ferry]. Root (sshd). Prints a markdown table.
# Also a section of bench/run.sh (w8; W8=0 skips it; tiny sizes under --smoke).
set -euo pipefail
REPO=$(realpath "$(dirname "$0")/..")
FILES=${W8_FILES:-10000} MB=${W8_MB:-200} DAYS=${W8_DAYS:-7} NOOP=${W8_NOOP:-5}
RESTORES=${W8_RESTORES:-3}   # restores of day 0 and of one file: the table has their medians
TOOLS=${W8_TOOLS:-"ferry rsync-ld borg restic"}
FERRY=$(realpath "${FERRY:-$REPO/build/ferry}")
[ -x "$FERRY" ] || { echo "w8: build first (make build)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "w8: needs root (a private sshd)" >&2; exit 2; }
for t in $TOOLS; do
  case $t in
    rsync-ld) command -v rsync > /dev/null || { echo "w8: rsync is needed" >&2; exit 2; } ;;
    borg|restic) command -v "$t" > /dev/null || { echo "w8: $t is needed (apt-get install borgbackup restic)" >&2; exit 2; } ;;
  esac
done
W=$(mktemp -d "${W8_ROOT:-/dev/shm}/ferry-w8.XXXXXX")
cleanup() { for p in ${PIDS:-}; do kill "$p" 2> /dev/null || true; done; sleep 0.2; rm -rf "$W"; }
trap cleanup EXIT
PIDS=
log() { echo "[w8 $(date +%H:%M:%S)] $*" >&2; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
secs() { python3 -c "print(f'{$2 - $1:.3f}')"; }
median() { python3 -c "import statistics, sys; v = [float(x) for x in sys.argv[1:]]; print(f'{statistics.median(v):.3f}' if v else 'n/a')" "$@"; }
# the CPU seconds a server process and the children it reaped have used
cpu_of() { python3 -c "
import os, sys
f = open(f'/proc/{sys.argv[1]}/stat').read().rsplit(')', 1)[1].split()
print((int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])) / os.sysconf('SC_CLK_TCK'))" "$1"; }

# --- the tree and its days
mutate() {   # mutate DIR DAY: day 0 makes the tree
  python3 - "$1" "$2" "$FILES" "$MB" << 'EOF'
import os, random, sys
root, day, files, mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(8000 + day)
def size():   # most files small, a few big: about mb MB for `files` files
    r = rng.random()
    avg = mb * 1e6 / files
    return int(rng.expovariate(1 / (avg * 0.25))) if r < 0.9 else int(rng.expovariate(1 / (avg * 7.75)))
def write(p, n):
    with open(p, "wb") as f:
        f.write(rng.randbytes(n))
if day == 0:
    dirs = max(1, files // 50)
    for i in range(files):
        d = f"{root}/d{i % dirs:04}"
        os.makedirs(d, exist_ok=True)
        write(f"{d}/f{i:06}", size())
    sys.exit(0)
all_ = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)
for p in rng.sample(all_, max(1, len(all_) // 100)):          # 1 % modified
    n = os.path.getsize(p)
    if n > 65536:
        with open(p, "r+b") as f:
            f.seek(rng.randrange(n - 4096)); f.write(rng.randbytes(4096))
    else:
        write(p, max(1, n))
left = [p for p in all_]
for p in rng.sample(left, max(1, len(left) // 200)):          # 0.5 % deleted
    os.unlink(p)
dirs = sorted({os.path.dirname(p) for p in all_})
for i in range(max(1, len(all_) // 200)):                      # 0.5 % added
    write(f"{rng.choice(dirs)}/new{day}_{i}", size())
EOF
}

BOX=$W/box SRC=$W/src K=$W/keys
mkdir -p "$BOX" "$SRC" "$K" && chmod 700 "$K"
log "making the tree: $FILES files, about $MB MB"
mutate "$SRC" 0
for d in $(seq 1 $((DAYS - 1))); do
  cp -a "$SRC" "$W/day$((d - 1))"
  mutate "$SRC" "$d"
done
cp -a "$SRC" "$W/day$((DAYS - 1))"
# the days are made once, the same for every tool: $W/dayN
rm -rf "$SRC"
ONE=$(cd "$W/day0" && find . -type f -size +100k | LC_ALL=C sort | sed -n "1s|^\./||p")   # sed reads it all: no SIGPIPE under pipefail

# --- servers: ferry, rsyncd, a private sshd (borg serve, sftp)
ssh-keygen -q -t ed25519 -N '' -C w8 -f "$K/id"
ssh-keygen -q -t ed25519 -N '' -C w8-host -f "$K/host"
cp "$K/id.pub" "$K/authorized_keys"
PS=$(free_port) PR=$(free_port) PF=$(free_port)
echo "[127.0.0.1]:$PS $(cut -d' ' -f1,2 "$K/host.pub")" > "$K/known_hosts"
cat > "$W/sshd.conf" << EOF
Port $PS
ListenAddress 127.0.0.1
HostKey $K/host
PidFile none
AuthorizedKeysFile $K/authorized_keys
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
Subsystem sftp /usr/lib/openssh/sftp-server
LogLevel ERROR
EOF
SSH="ssh -F /dev/null -i $K/id -o IdentitiesOnly=yes -o UserKnownHostsFile=$K/known_hosts -o BatchMode=yes -p $PS"
unshare -m --propagation private sh -c 'mount -t tmpfs -o size=1m w8 /run && mkdir -m 755 /run/sshd &&
  exec /usr/sbin/sshd -D -e -f "$1"' sh "$W/sshd.conf" 2> "$W/sshd.log" &
P_SSHD=$!; PIDS="$PIDS $P_SSHD"
mkdir -p "$BOX/ferry" "$BOX/rsync" "$W/fh/c" "$W/fh/s" && chmod 700 "$W/fh/c" "$W/fh/s"
"$FERRY" keygen -f "$W/fh/c/id_ferry" > /dev/null 2>&1
cp "$W/fh/c/id_ferry.pub" "$W/fh/s/ak"
mkdir -p "$BOX/plain"
printf '[global]\nlisten = 127.0.0.1:%s\nhost key = %s/hk\nauthorized keys = %s/ak\nnice = 0\n[m]\npath = %s\nsnapshots = yes\n[plain]\npath = %s\n' \
  "$PF" "$W/fh/s" "$W/fh/s" "$BOX/ferry" "$BOX/plain" > "$W/ferry.conf"
FERRY_HOME=$W/fh/s "$FERRY" serve --config "$W/ferry.conf" 2> "$W/ferry.log" &
P_FERRY=$!; PIDS="$PIDS $P_FERRY"
printf 'use chroot = no\n[box]\npath = %s\nread only = no\nuid = root\ngid = root\n' "$BOX/rsync" > "$W/rsyncd.conf"
rsync --daemon --no-detach --port "$PR" --address 127.0.0.1 --config "$W/rsyncd.conf" &
P_RSYNC=$!; PIDS="$PIDS $P_RSYNC"
FC=(--identity "$W/fh/c/id_ferry" --known-hosts "$W/fh/c/kh" --accept-new)
up() { for _ in $(seq 1 100); do "$@" > /dev/null 2>&1 && return 0; sleep 0.05; done; return 1; }
up "$FERRY" ls "${FC[@]}" "ferry://127.0.0.1:$PF/m/" || { cat "$W/ferry.log" >&2; echo "w8: ferry did not start" >&2; exit 1; }
up rsync "rsync://127.0.0.1:$PR/" || { echo "w8: rsyncd did not start" >&2; exit 1; }
up bash -c "exec 3<> /dev/tcp/127.0.0.1/$PS" || { cat "$W/sshd.log" >&2; echo "w8: sshd did not start" >&2; exit 1; }
export BORG_RSH="$SSH" BORG_PASSPHRASE=w8 BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes
export BORG_RELOCATED_REPO_ACCESS_IS_OK=yes RESTIC_PASSWORD=w8
BORG_REPO="ssh://root@127.0.0.1:$PS$BOX/borg"
RESTIC_REPO="sftp:root@127.0.0.1:$BOX/restic"
RESTIC_OPT=(-o "sftp.command=$SSH root@127.0.0.1 -s sftp" --no-cache -q)

# one day's backup of $W/dayN (the client's tree, copied into place: the
# tools see one path, as a PC's home directory would be)
prepare() { rm -rf "$W/pc" && cp -a "$W/day$1" "$W/pc"; }   # not timed
backup() {
  local tool=$1 d=$2
  case $tool in
    ferry) "$FERRY" push "${FC[@]}" -a --delete "$W/pc/" "ferry://127.0.0.1:$PF/m/" > /dev/null ;;
    rsync-ld)
      if [ "$d" = 0 ]; then rsync -a "$W/pc/" "rsync://127.0.0.1:$PR/box/day0/"
      else rsync -a --delete --link-dest="../day$((d - 1))" "$W/pc/" "rsync://127.0.0.1:$PR/box/day$d/"; fi ;;
    borg) (cd "$W/pc" && borg create "$BORG_REPO::day$d" .) ;;
    restic) restic -r "$RESTIC_REPO" "${RESTIC_OPT[@]}" backup --host pc --tag "day$d" "$W/pc" > /dev/null ;;
  esac
}
server_pid() { case $1 in ferry) echo "$P_FERRY" ;; rsync-ld) echo "$P_RSYNC" ;; *) echo "$P_SSHD" ;; esac; }
# the tool's store on the box
store() { case $1 in ferry) echo "$BOX/ferry" ;; rsync-ld) echo "$BOX/rsync" ;; *) echo "$BOX/$1" ;; esac; }
# removing the last restore's 10,000 files is no part of the next one's time
fresh_out() { rm -rf "$W/out" && mkdir -p "$W/out"; }
restore_all() {   # into an empty $W/out (fresh_out, not timed)
  case $1 in
    ferry) "$FERRY" pull "${FC[@]}" -a "ferry://127.0.0.1:$PF/m@-$((DAYS - 1))/" "$W/out/" > /dev/null ;;
    rsync-ld) rsync -a "rsync://127.0.0.1:$PR/box/day0/" "$W/out/" ;;
    borg) (cd "$W/out" && borg extract "$BORG_REPO::day0") ;;
    restic) restic -r "$RESTIC_REPO" "${RESTIC_OPT[@]}" restore "$(restic_id day0)" --target "$W/out" > /dev/null ;;
  esac
}
restore_one() {   # into an empty $W/out (fresh_out, not timed)
  case $1 in
    ferry) "$FERRY" pull "${FC[@]}" "ferry://127.0.0.1:$PF/m@-$((DAYS - 1))/$ONE" "$W/out/" > /dev/null ;;
    rsync-ld) rsync -a "rsync://127.0.0.1:$PR/box/day0/$ONE" "$W/out/" ;;
    borg) (cd "$W/out" && borg extract "$BORG_REPO::day0" "$ONE") ;;
    restic) restic -r "$RESTIC_REPO" "${RESTIC_OPT[@]}" restore "$(restic_id day0)" --target "$W/out" --include "$W/pc/$ONE" > /dev/null ;;
  esac
}
restic_id() { restic -r "$RESTIC_REPO" "${RESTIC_OPT[@]}" snapshots --tag "$1" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["short_id"])'; }
prune_oldest() {
  case $1 in
    ferry) "$FERRY" admin delete "$BOX/ferry" "$("$FERRY" admin list "$BOX/ferry" | sed -n 2p | awk '{print $1}')" > /dev/null ;;
    rsync-ld) rm -rf "$BOX/rsync/day0" ;;
    borg) borg delete "$BORG_REPO::day0" && borg compact "$BORG_REPO" ;;
    restic) restic -r "$RESTIC_REPO" "${RESTIC_OPT[@]}" forget --prune "$(restic_id day0)" > /dev/null ;;
  esac
  sync
}
# where a restore puts the tree (restic keeps the absolute path it backed up)
rroot() { if [ "$1" = restic ]; then echo "$W/out$W/pc"; else echo "$W/out"; fi; }
# the restored tree is day 0's (contents)
check_restore() { diff -r "$W/day0" "$(rroot "$1")" > /dev/null || { echo "w8: $1 restored something else" >&2; exit 1; }; }

declare -A R
for tool in $TOOLS; do
  log "$tool: a week"
  case $tool in
    borg) borg init -e none "$BORG_REPO" ;;
    restic) restic -r "$RESTIC_REPO" "${RESTIC_OPT[@]}" init > /dev/null ;;
  esac
  walls=() cpus=()
  sp=$(server_pid "$tool")
  for d in $(seq 0 $((DAYS - 1))); do
    prepare "$d"
    c0=$(cpu_of "$sp"); t0=$(now)
    backup "$tool" "$d"
    t1=$(now); sleep 1.5; c1=$(cpu_of "$sp")   # once the daemon has reaped the session
    w=$(secs "$t0" "$t1") c=$(secs "$c0" "$c1")
    if [ "$d" = 0 ]; then R[$tool,w0]=$w R[$tool,c0]=$c; else walls+=("$w"); cpus+=("$c"); fi
  done
  R[$tool,wall]=$(median "${walls[@]}") R[$tool,cpu]=$(median "${cpus[@]}")
  sync
  R[$tool,bytes]=$(du -sb "$(store "$tool")" | cut -f1)
  R[$tool,inodes]=$(find "$(store "$tool")" -printf '%i\n' | sort -u | wc -l)   # hard links once
done

# Restores in rounds, each tool once a round: a slow spell of this shared
# machine then costs every tool alike (one tool's restores after another's
# once put 0.54x and 0.80x in two runs of the same build).
declare -A RA RB
for _ in $(seq 1 "$RESTORES"); do
  for tool in $TOOLS; do
    fresh_out; t0=$(now); restore_all "$tool"; t1=$(now); RA[$tool]+=" $(secs "$t0" "$t1")"
    check_restore "$tool"
    fresh_out; t0=$(now); restore_one "$tool"; t1=$(now); RB[$tool]+=" $(secs "$t0" "$t1")"
    cmp -s "$(rroot "$tool")/$ONE" "$W/day0/$ONE" || cmp -s "$W/out/$(basename "$ONE")" "$W/day0/$ONE" ||
      { echo "w8: $tool restored another $ONE" >&2; exit 1; }
  done
done
for tool in $TOOLS; do
  log "$tool: restores of day 0${RA[$tool]} s, of one file${RB[$tool]} s"
  # shellcheck disable=SC2086 # a list of numbers
  R[$tool,rall]=$(median ${RA[$tool]}) R[$tool,rone]=$(median ${RB[$tool]})
  t0=$(now); prune_oldest "$tool"; t1=$(now); R[$tool,prune]=$(secs "$t0" "$t1")
done

NOOP_SNAP=n/a NOOP_PLAIN=n/a
if [[ " $TOOLS " == *" ferry "* ]]; then
  log "ferry: no-op pushes, snapshot module against a plain one"
  rm -rf "$W/pc" && cp -a "$W/day$((DAYS - 1))" "$W/pc"
  "$FERRY" push "${FC[@]}" -a --delete "$W/pc/" "ferry://127.0.0.1:$PF/plain/" > /dev/null
  a=() b=()
  for _ in $(seq 1 "$NOOP"); do
    t0=$(now); "$FERRY" push "${FC[@]}" -a --delete "$W/pc/" "ferry://127.0.0.1:$PF/m/" > /dev/null; t1=$(now)
    a+=("$(secs "$t0" "$t1")")
    t0=$(now); "$FERRY" push "${FC[@]}" -a --delete "$W/pc/" "ferry://127.0.0.1:$PF/plain/" > /dev/null; t1=$(now)
    b+=("$(secs "$t0" "$t1")")
  done
  NOOP_SNAP=$(median "${a[@]}") NOOP_PLAIN=$(median "${b[@]}")
fi

echo "## W8, a week of backups: $FILES files, $(du -sm "$W/day0" | cut -f1) MB, $DAYS days (1 % modified, 0.5 % added, 0.5 % deleted a day)"
echo
echo "| tool | day 0: wall (s) | day 0: server CPU (s) | a day: wall (s, median) | a day: server CPU (s, median) | box after the week: MB | inodes | restore day 0: wall (s, median) | one file of day 0: wall (s, median) | delete the oldest day: wall (s) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for tool in $TOOLS; do
  echo "| $tool | ${R[$tool,w0]} | ${R[$tool,c0]} | ${R[$tool,wall]} | ${R[$tool,cpu]} | $((R[$tool,bytes] / 1000000)) | ${R[$tool,inodes]} | ${R[$tool,rall]} | ${R[$tool,rone]} | ${R[$tool,prune]} |"
done
echo
echo "ferry, a push with nothing changed (median of $NOOP): to the snapshot module $NOOP_SNAP s, to a plain module $NOOP_PLAIN s."
