#!/usr/bin/env bash
# bench/run.sh -- ferry against today's file-transfer tools, measured in the same run.
#
#   sudo bench/run.sh            full run (W1 = 1 GiB, W2 = 10,000 files, 3 rounds)
#   sudo bench/run.sh --smoke    tiny sizes, 1 round, every tool; fails unless every run
#                                passed verification and the table was produced (CI)
#   sudo bench/run.sh --deps     installs the peer tools (Debian packages) and stops
#
# Prints one markdown table and the issue's target checks; writes bench/out/<UTC time>/
# (results.csv, summary.md, env.txt, logs). Exit status 1 if any run failed.
# docs/BENCHMARKS.md explains every column and how CPU and memory are measured.
#
# Workloads (tmpfs to tmpfs, every copy verified with cmp / diff -r):
#   W1  one W1_MB MiB file of random bytes, push and pull
#   W2  W2_FILES files of 1-16 KiB in W2_DIRS dirs, push and pull
#   W3  W1 with 1 MiB in the middle changed, destination holds the old W1 (delta push)
#   W4  W2 pushed again, nothing changed (no-op re-sync)
#   slow CPU: push of SLOW_MB MiB, server pinned to one core under a CFS quota (20 %)
#   W5  "virtual router": W5_MB MiB push and pull to a server in its own network namespace
#       behind a veth shaped with tbf (100 Mbit), in a cgroup with a few % of one core and
#       W5_MEM_MB of memory; W5_DIRS may add W3push/W3pull (W3 of the W5 file)
# Issue 11 (delta, resume, compression; docs/BENCHMARKS.md, "Issue 11"):
#   i11     loopback: W3 push and pull (pull: the PC holds the old W1, the box the new),
#           degenerate W3 (basis = W1_MB MiB of zeros, new = that with 1 MiB of random data
#           in the middle) push and pull, W1 push with and without -z
#   resume  W1 push and W3 push killed (kill -9 of the client) when the receiver holds
#           RESUME_AT of the file, then the same command again: its wire bytes and wall
#   W7      "off-site": a server in its own network namespace behind a 20 Mbit, 40 ms RTT
#           link (tbf + a delay line: this kernel has no netem), 4 % of a core: W2 push and
#           a text tree (copies of /usr/share/doc and /usr/include) push; ferry -z, rsync
#           daemon -z, ferry without compression
# Tools (TOOLS): ferry-enc (--protection encrypt, default cipher), ferry-enc-z (the same
#   with -z; the module says compress = yes; rows say "n/a (no -z)" if this ferry has no -z),
#   rsyncd-z (rsync daemon, -z), ferry-chacha (encrypt,
#   --cipher chachapoly), ferry-int (integrity), ferry-none (none, whole-file hash checked),
#   ferry-raw (none --no-verify: sendfile/splice, no hash); peers: rsyncd (rsync
#   daemon), rsync-ssh (rsync over OpenSSH, default cipher), rsync-ssh-aesgcm, scp (OpenSSH,
#   SFTP protocol), rsync-dropbear (OpenSSH client -> dropbear), ftp (vsftpd; curl for W1,
#   lftp mirror for W2/W4); iperf3 as the TCP ceiling.
#
# Knobs (environment), defaults in brackets:
#   W6      (issue 12) bench/w6.sh: a million empty files in 10,000 directories pushed
#           fresh, again unchanged and with --delete, and 200,000 files in one directory,
#           ferry against the rsync daemon: wall and peak RSS (W6_* knobs: bench/w6.sh)
#   W8      (issue 13) bench/w8.sh: a week of backups (10,000 files, 200 MB, 1 % changed a
#           day) by ferry with snapshots, the rsync daemon with --link-dest, borg and restic
#           over a private sshd: wall and server CPU a day, the box's bytes and inodes, restores,
#           deleting the oldest day (W8_* knobs: bench/w8.sh; --smoke: ferry and rsync only)
#   LOAD    (issue 15) bench/load.sh: 64 clients at once, the 65th refused busy, 1,000
#           sessions in a row (daemon RSS and fds flat), 400 stalled connections, a 1 byte/s
#           client cut at the I/O timeout (LOAD_* knobs: bench/load.sh)
#   SECTIONS [lo i11 resume slow w5 w7 w6 w8 load router]: what runs; "issue11" = i11 resume w5 w7
#     router with W5_DIRS="W3push W3pull", W5_TOOLS="ferry-enc rsyncd" and only the W3
#     instruction counts (the issue-11 sections alone)
#   ROUNDS [3]  W1_MB [1024]  W2_FILES [10000]  W2_DIRS [100]  IPERF_SECS [5]
#   I11_TOOLS [ferry-enc rsyncd rsync-ssh] (W3 push/pull)  DEG_TOOLS [ferry-enc rsyncd]
#   Z_TOOLS [ferry-enc-z ferry-enc] (W1 push with/without -z)
#   RESUME_TOOLS [ferry-enc rsyncd]  RESUME_AT [0.5]  RESUME_MB [W1_MB]
#   DEG_TIMEOUT [30]: seconds a degenerate-W3 client may take (the target is 1.1x W3's)
#   W7_RATE [20mbit]  W7_DELAY_MS [20] (each way)  W7_QUOTA_US [2000]  W7_PERIOD_US [50000]
#   W7_ROUNDS [1]  W7_TOOLS [ferry-enc-z rsyncd-z ferry-enc]  W7_DIRS [W2push TXpush]
#   W7_TEXT_SRC [/usr/share/doc /usr/include]
#   LO [1] (0 skips W1-W4; SLOW=0, W5=0, W7=0, ROUTER=0 skip theirs)  TOOLS [all above
#   but the -z ones]  FERRY [build/ferry; built with make build if missing]  NO_FERRY=1
#   SLOW [1]  SLOW_MB [256]  SLOW_QUOTA_US [2000]  SLOW_PERIOD_US [10000]  SLOW_CPU [1]
#   SLOW_TOOLS [ferry-enc ferry-chacha rsyncd rsync-ssh scp]
#   W5 [1]  W5_MB [64]  W5_RATE [100mbit]  W5_QUOTA_US [2000]  W5_PERIOD_US [50000] (= 4 %)
#   W5_MEM_MB [128]  W5_TOOLS [ferry-enc ferry-chacha rsyncd scp rsync-dropbear]
#   W5_DIRS [W1push W1pull W3push W3pull]
#   W5 hooks for an emulated router build (e.g. mipsel, see bench/insns.sh):
#   W5_FERRY, W5_RSYNC, W5_DROPBEAR name target binaries for the W5 servers, each run as
#   $W5_WRAP BINARY ... (e.g. W5_WRAP="qemu-mipsel -L SYSROOT"); servers not named stay native.
#   PORT_BASE [61000]  CLIENT_TIMEOUT [600]  OUTDIR [bench/out/<time>]  NO_INSTALL=1
#   ROUTER [1]: before the loopback runs, build ferry for mipsel (scripts/cross/check.sh) and
#   count server-side instructions per byte under qemu (bench/insns.sh); 0 skips (smoke skips)
#
# Isolation: the script re-executes itself in private network + mount namespaces (own lo,
# own port reservations, a tmpfs that vanishes with it). sshd gets a tmpfs /run, dropbear a
# tmpfs /root holding only the bench key; keys and configs live in a mktemp dir. It never
# touches ~/.ssh, the system's ssh config or /etc (beyond installing missing Debian
# packages), and removes its cgroups, namespaces and processes on exit.
set -uo pipefail
umask 022
export LC_ALL=C

BENCH=$(cd "$(dirname "$0")" && pwd)
REPO=$(dirname "$BENCH")
SMOKE=0 DEPS_ONLY=0
case ${1:-} in
  --smoke) SMOKE=1 ;;
  --deps) DEPS_ONLY=1 ;;
  "") ;;
  -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "usage: $0 [--smoke | --deps]" >&2; exit 2 ;;
esac
if [ "$SMOKE" = 1 ]; then   # small defaults; still every tool and every section
  : "${ROUNDS:=1}" "${W1_MB:=8}" "${W2_FILES:=300}" "${W2_DIRS:=10}" "${IPERF_SECS:=1}"
  : "${SLOW_MB:=4}" "${W5_MB:=2}" "${RESUME_MB:=32}"
  # the router's 4 % of a core made scp's set-up alone take 20 s a run: 20 %
  : "${W5_QUOTA_US:=10000}"
  : "${W7_TEXT_SRC:=/usr/share/doc/rsync /usr/include/linux/netfilter}"
fi
# Sections: the legacy switches (LO=0, SLOW=0, W5=0, W7=0, ROUTER=0) drop theirs.
ISSUE11=${FB_ISSUE11:-0}
case " ${SECTIONS:-} " in *" issue11 "*) ISSUE11=1 ;; esac
export FB_ISSUE11=$ISSUE11
SECTIONS=${SECTIONS:-"lo i11 resume slow w5 w7 w6 w8 load router"}
SECTIONS=${SECTIONS//issue11/i11 resume w5 w7 router}
for pair in LO:lo SLOW:slow W5:w5 W7:w7 W6:w6 W8:w8 LOAD:load ROUTER:router; do
  v=${pair%%:*}
  [ "${!v:-1}" = 0 ] && SECTIONS=" $SECTIONS " && SECTIONS=${SECTIONS// ${pair#*:} / }
done
[ "$SMOKE" = 1 ] && SECTIONS=" $SECTIONS " && SECTIONS=${SECTIONS// router / }   # smoke: no cross build
read -ra _secs <<< "$SECTIONS"; SECTIONS="${_secs[*]}"
for sec in $SECTIONS; do
  case $sec in lo|i11|resume|slow|w5|w7|w6|w8|load|router) ;; *) echo "unknown section $sec (SECTIONS)" >&2; exit 2 ;; esac
done
has() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; }   # has LIST WORD
sec_on() { has "$SECTIONS" "$1"; }
export SECTIONS
ROUNDS=${ROUNDS:-3}
W1_MB=${W1_MB:-1024}
W2_FILES=${W2_FILES:-10000}
W2_DIRS=${W2_DIRS:-100}
IPERF_SECS=${IPERF_SECS:-5}
LO=0; sec_on lo && LO=1
SLOW=0; sec_on slow && SLOW=1
W5=0; sec_on w5 && W5=1
SLOW_MB=${SLOW_MB:-256}
SLOW_QUOTA_US=${SLOW_QUOTA_US:-2000}
SLOW_PERIOD_US=${SLOW_PERIOD_US:-10000}
SLOW_CPU=${SLOW_CPU:-1}
W5_MB=${W5_MB:-64}
W5_RATE=${W5_RATE:-100mbit}
W5_QUOTA_US=${W5_QUOTA_US:-2000}
W5_PERIOD_US=${W5_PERIOD_US:-50000}
W5_MEM_MB=${W5_MEM_MB:-128}
if [ "$ISSUE11" = 1 ]; then : "${W5_DIRS:=W3push W3pull}" "${W5_TOOLS:=ferry-enc rsyncd}"; fi
W5_DIRS=${W5_DIRS:-"W1push W1pull W3push W3pull"}
W5_WRAP=${W5_WRAP:-}
PORT_BASE=${PORT_BASE:-61000}
CLIENT_TIMEOUT=${CLIENT_TIMEOUT:-600}
NO_FERRY=${NO_FERRY:-0}
FERRY_TOOLS="ferry-enc ferry-chacha ferry-int ferry-none ferry-raw"
TOOLS=${TOOLS:-"$FERRY_TOOLS rsyncd rsync-ssh rsync-ssh-aesgcm scp rsync-dropbear ftp"}
SLOW_TOOLS=${SLOW_TOOLS:-"ferry-enc ferry-chacha rsyncd rsync-ssh scp"}
W5_TOOLS=${W5_TOOLS:-"ferry-enc ferry-chacha rsyncd scp rsync-dropbear"}
I11_TOOLS=${I11_TOOLS:-"ferry-enc rsyncd rsync-ssh"}
DEG_TOOLS=${DEG_TOOLS:-"ferry-enc rsyncd"}
Z_TOOLS=${Z_TOOLS:-"ferry-enc-z ferry-enc"}
RESUME_TOOLS=${RESUME_TOOLS:-"ferry-enc rsyncd"}
RESUME_AT=${RESUME_AT:-0.5}
RESUME_MB=${RESUME_MB:-$W1_MB}
DEG_TIMEOUT=${DEG_TIMEOUT:-30}
W7=0; sec_on w7 && W7=1
W7_RATE=${W7_RATE:-20mbit}
W7_DELAY_MS=${W7_DELAY_MS:-20}
W7_QUOTA_US=${W7_QUOTA_US:-2000}
W7_PERIOD_US=${W7_PERIOD_US:-50000}
W7_ROUNDS=${W7_ROUNDS:-1}
W7_TOOLS=${W7_TOOLS:-"ferry-enc-z rsyncd-z ferry-enc"}
W7_DIRS=${W7_DIRS:-"W2push TXpush"}
W7_TEXT_SRC=${W7_TEXT_SRC:-"/usr/share/doc /usr/include"}
if [ "$NO_FERRY" = 1 ]; then
  drop_ferry() { local t o=""; for t in $1; do case $t in ferry-*) ;; *) o+="$t ";; esac; done; echo "$o"; }
  TOOLS=$(drop_ferry "$TOOLS"); SLOW_TOOLS=$(drop_ferry "$SLOW_TOOLS"); W5_TOOLS=$(drop_ferry "$W5_TOOLS")
  I11_TOOLS=$(drop_ferry "$I11_TOOLS"); DEG_TOOLS=$(drop_ferry "$DEG_TOOLS"); Z_TOOLS=$(drop_ferry "$Z_TOOLS")
  RESUME_TOOLS=$(drop_ferry "$RESUME_TOOLS"); W7_TOOLS=$(drop_ferry "$W7_TOOLS")
fi
PY=/usr/bin/python3
LIB=$BENCH/benchlib.py

P_FTP=$((PORT_BASE + 21)); P_SSH=$((PORT_BASE + 22)); P_DB=$((PORT_BASE + 23))
P_IPERF=$((PORT_BASE + 52)); P_RSYNC=$((PORT_BASE + 73)); P_FERRY=$((PORT_BASE + 80))
P_PASV_MIN=$((PORT_BASE + 100)); P_PASV_MAX=$((PORT_BASE + 199))

log() { printf '[bench %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (sudo $0): servers, namespaces and cgroups need it"

# ---------------------------------------------------------------- outside the namespaces
if [ -z "${FB_IN_NS:-}" ]; then
  # 1. peers from Debian packages (program -> package)
  missing=""
  for pair in rsync:rsync /usr/sbin/sshd:openssh-server ssh:openssh-client \
              /usr/lib/openssh/sftp-server:openssh-sftp-server /usr/sbin/dropbear:dropbear-bin \
              dropbearkey:dropbear-bin /usr/sbin/vsftpd:vsftpd curl:curl lftp:lftp iperf3:iperf3 \
              /usr/bin/time:time ip:iproute2 tc:iproute2 nsenter:util-linux unshare:util-linux \
              $PY:python3 openssl:openssl; do
    b=${pair%%:*}
    command -v "$b" >/dev/null 2>&1 || [ -x "$b" ] || case " $missing " in
      *" ${pair#*:} "*) ;; *) missing+=" ${pair#*:}" ;; esac
  done
  if [ -n "$missing" ]; then
    [ "${NO_INSTALL:-0}" = 1 ] && die "missing packages:$missing (NO_INSTALL=1)"
    log "installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null && \
      apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 $missing >/dev/null \
      || die "apt-get install$missing failed"
  fi
  [ "$DEPS_ONLY" = 1 ] && exit 0
  # 2. ferry
  if [ "$NO_FERRY" != 1 ]; then
    if [ -z "${FERRY:-}" ]; then
      FERRY=$REPO/build/ferry
      if [ ! -x "$FERRY" ]; then
        log "building ferry (make build, else cmake Release)"
        { [ -f "$REPO/Makefile" ] && make -C "$REPO" build; } >&2 ||
          { cmake -S "$REPO" -B "$REPO/build" -DCMAKE_BUILD_TYPE=Release &&
            cmake --build "$REPO/build" -j"$(nproc)"; } >&2
      fi
    fi
    FERRY=$(realpath "$FERRY" 2>/dev/null) && [ -x "$FERRY" ] ||
      die "no ferry binary (set FERRY=path, or NO_FERRY=1 to measure the peers only)"
    "$FERRY" version >/dev/null 2>&1 || die "$FERRY version failed"
    export FERRY
  fi
  # The virtual router's instruction counts (deterministic, so they may run
  # first): a mipsel build (scripts/cross, the embedded-targets issue) and
  # bench/insns.sh. ROUTER=0 skips it; smoke runs skip it.
  # SECTIONS=issue11 counts only the W3 cases (unless CASES says otherwise).
  if sec_on router && [ "${NO_FERRY:-0}" != 1 ]; then
    FB_INSNS=$(mktemp /tmp/ferry-bench-insns.XXXXXX)
    [ "$ISSUE11" = 1 ] && : "${CASES:=ferry-chacha:w3push ferry-chacha:w3pull}" && export CASES
    if "$REPO/scripts/cross/check.sh" mipsel --no-unit --no-e2e > "$FB_INSNS.log" 2>&1 &&
       FERRY_MIPSEL="$REPO/.cross/build-mipsel/ferry" SYSROOT="$REPO/.cross/sysroot-mipsel" \
         bash "$BENCH/insns.sh" > "$FB_INSNS" 2>> "$FB_INSNS.log"; then
      export FB_INSNS
    else
      log "router instruction counts skipped (see $FB_INSNS.log)"
    fi
  fi
  export FB_IN_NS=1
  exec unshare --net --mount --propagation private "$0" "$@"
fi

# ---------------------------------------------------------------- inside the namespaces
ip link set lo up
echo "$P_FTP,$P_SSH,$P_DB,$P_IPERF,$P_RSYNC,$P_FERRY,$P_PASV_MIN-$P_PASV_MAX" \
  > /proc/sys/net/ipv4/ip_local_reserved_ports    # this netns only: no client port collides
HZ=$(getconf CLK_TCK)
OUTDIR=${OUTDIR:-$BENCH/out/$([ "$SMOKE" = 1 ] && echo smoke-)$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUTDIR"
T=$(mktemp -d /tmp/ferry-bench.XXXXXX)
chmod 755 "$T"
D=$T/data                        # tmpfs: src/ (sources), srv/TOOL (server side), cli/TOOL
S=$D/src
CSV=$OUTDIR/results.csv
EXPECT=$OUTDIR/expect.txt
CLOG=$OUTDIR/client.log
SRV_PID="" SAMP_PID="" VR_HOLD="" DL_PID="" CG_DIRS=()

cleanup() {
  set +e
  [ -n "$SAMP_PID" ] && kill -TERM "$SAMP_PID" 2>/dev/null && wait "$SAMP_PID"
  [ -n "$SRV_PID" ] && kill -TERM "$SRV_PID" 2>/dev/null && wait "$SRV_PID"
  [ -n "$DL_PID" ] && kill -TERM "$DL_PID" 2>/dev/null && wait "$DL_PID"
  [ -n "$VR_HOLD" ] && kill -KILL "$VR_HOLD" 2>/dev/null && wait "$VR_HOLD"
  local c; for c in "${CG_DIRS[@]}"; do [ -d "$c" ] && rmdir "$c"; done
  mountpoint -q "$D" && umount "$D"
  rm -rf "$T"
} 2>/dev/null
trap cleanup EXIT
trap 'log interrupted; exit 130' INT TERM

mkdir -p "$D"
TEXT_MB=0
if [ "$W7" = 1 ] && has "$W7_DIRS" TXpush; then
  TEXT_MB=$(du -scm $W7_TEXT_SRC 2>/dev/null | tail -1 | cut -f1)
  [ -n "$TEXT_MB" ] || die "W7_TEXT_SRC ($W7_TEXT_SRC) cannot be read"
fi
R_MB=0; [ "$RESUME_MB" != "$W1_MB" ] && R_MB=$RESUME_MB
mount -t tmpfs -o size=$((W1_MB * 7 + R_MB * 4 + W5_MB * 4 + TEXT_MB * 3 + 3072))m,mode=755 ferrybench "$D" ||
  die "cannot mount a tmpfs on $D"
mkdir -p "$S/w2" "$S/w3" "$D/srv" "$D/cli" "$T/vsftpd-empty" "$T/ferry-home"
export FERRY_HOME=$T/ferry-home

{
  echo "date_utc: $(date -u '+%F %T')"
  echo "host: $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) x $(nproc)," \
       "$(free -g | awk '/Mem:/{print $2}') GiB, loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "ferry: ${FERRY:-skipped} $([ -n "${FERRY:-}" ] && "$FERRY" version 2>&1 | head -1)"
  echo "ferry git: $(git -C "$REPO" describe --always --dirty 2>/dev/null)"
  echo "rsync: $(rsync --version | head -1)"
  echo "openssh: $(ssh -V 2>&1)"
  echo "dropbear: $(/usr/sbin/dropbear -V 2>&1 | head -1)"
  echo "vsftpd: $(dpkg-query -W -f='${Version}' vsftpd 2>/dev/null)  curl: $(curl --version | head -1)"
  echo "lftp: $(lftp --version | head -1)  iperf3: $(iperf3 --version | head -1)"
  echo "openssl: $(openssl version)"
  echo "knobs: ROUNDS=$ROUNDS W1_MB=$W1_MB W2_FILES=$W2_FILES W2_DIRS=$W2_DIRS SLOW=$SLOW" \
       "SLOW_MB=$SLOW_MB SLOW_QUOTA_US=$SLOW_QUOTA_US SLOW_PERIOD_US=$SLOW_PERIOD_US" \
       "W5=$W5 W5_MB=$W5_MB W5_RATE=$W5_RATE W5_QUOTA_US=$W5_QUOTA_US W5_PERIOD_US=$W5_PERIOD_US" \
       "W5_MEM_MB=$W5_MEM_MB W5_WRAP='$W5_WRAP' TOOLS='$TOOLS'"
  echo "sections: $SECTIONS; W5_DIRS='$W5_DIRS' W5_TOOLS='$W5_TOOLS' I11_TOOLS='$I11_TOOLS'" \
       "DEG_TOOLS='$DEG_TOOLS' Z_TOOLS='$Z_TOOLS' RESUME_TOOLS='$RESUME_TOOLS' RESUME_AT=$RESUME_AT" \
       "RESUME_MB=$RESUME_MB DEG_TIMEOUT=$DEG_TIMEOUT W7_RATE=$W7_RATE W7_DELAY_MS=$W7_DELAY_MS W7_QUOTA_US=$W7_QUOTA_US" \
       "W7_PERIOD_US=$W7_PERIOD_US W7_ROUNDS=$W7_ROUNDS W7_TOOLS='$W7_TOOLS' W7_DIRS='$W7_DIRS'" \
       "W7_TEXT_SRC='$W7_TEXT_SRC'"
  echo "rsync compression (-z picks the first both ends have): $(rsync --version | grep -i 'compress' | tr -s ' ' | head -2 | tr '\n' ' ')"
} > "$OUTDIR/env.txt"
emu=""
for v in W5_FERRY W5_RSYNC W5_DROPBEAR; do [ -n "${!v:-}" ] && emu+="${emu:+, }${v#W5_} ${!v##*/}"; done
printf 'SLOW_MB=%s\nW5_MB=%s\nW5_EMULATED=%s\nW7_RATE=%s\nW7_RTT_MS=%s\nRESUME_AT=%s\nDEG_TIMEOUT=%s\n' \
  "$SLOW_MB" "$W5_MB" "${emu:+$emu under ${W5_WRAP%% *}}" "$W7_RATE" $((2 * W7_DELAY_MS)) "$RESUME_AT" \
  "$DEG_TIMEOUT" > "$OUTDIR/meta.txt"

# ---------------------------------------------------------------- keys (fresh each run)
K=$T/keys; mkdir -m 700 "$K"
ssh-keygen -q -t ed25519 -N '' -C bench-client -f "$K/id"
ssh-keygen -q -t ed25519 -N '' -C bench-sshd -f "$K/sshd_host"
dropbearkey -t ed25519 -f "$K/dropbear_host" >/dev/null 2>&1
cp "$K/id.pub" "$K/authorized_keys"
{ echo "bench-sshd $(cut -d' ' -f1,2 "$K/sshd_host.pub")"
  echo "bench-dropbear $(dropbearkey -y -f "$K/dropbear_host" | grep '^ssh-' | cut -d' ' -f1,2)"
} > "$K/known_hosts"
SSHO=(-F /dev/null -i "$K/id" -o IdentitiesOnly=yes -o UserKnownHostsFile="$K/known_hosts"
      -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes -o BatchMode=yes
      -o ControlMaster=no -o ControlPath=none -o LogLevel=ERROR)
if [ "$NO_FERRY" != 1 ]; then
  "$FERRY" keygen -f "$K/ferry_id" </dev/null >>"$OUTDIR/client.log" 2>&1 || die "ferry keygen failed (see $OUTDIR/client.log)"
  cp "$K/ferry_id.pub" "$K/ferry_authorized_keys"
fi

# ---------------------------------------------------------------- server configs
# Two sites: "lo" = 127.0.0.1 in our netns; "vr" = 10.199.0.2 in the router netns (W5).
for site in lo vr; do
  h=127.0.0.1; [ $site = vr ] && h=10.199.0.2
  cat > "$T/sshd-$site.conf" <<EOF
Port $P_SSH
ListenAddress $h
HostKey $K/sshd_host
PidFile none
AuthorizedKeysFile $K/authorized_keys
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
AllowTcpForwarding no
Subsystem sftp /usr/lib/openssh/sftp-server
LogLevel ERROR
MaxStartups 100:30:200
EOF
  cat > "$T/ferry-$site.conf" <<EOF
[global]
listen = $h:$P_FERRY
max connections = 8
host key = $K/ferry_host_key
nice = 0
[bench]
path = $D
read only = no
authorized keys = $K/ferry_authorized_keys
protection = none
EOF
  # -z rows: the module compresses; the rows they are compared with: it does not
  { cat "$T/ferry-$site.conf"; echo "compress = yes"; } > "$T/ferry-$site-z.conf"
  { cat "$T/ferry-$site.conf"; echo "compress = no"; } > "$T/ferry-$site-nz.conf"
done
# Does this ferry have -z (issue 11's compression)? Its help must offer it (today's lists
# -z among the rsync flags it does not support) and its config must take "compress".
Z_OK=0
if [ "$NO_FERRY" != 1 ] && ! "$FERRY" help --rsync 2>&1 | grep -E '^ *-z, --compress' | grep -q ' no:' &&
   { "$FERRY" push --help 2>&1; "$FERRY" help --rsync 2>&1; } | grep -qE -- '(^|[ ,])(-z|--compress)\b' &&
   "$FERRY" serve --check-config --config "$T/ferry-lo-z.conf" >/dev/null 2>&1; then
  Z_OK=1
fi
echo "ferry -z: $([ $Z_OK = 1 ] && echo supported || echo 'not supported (the -z rows say n/a)')" >> "$OUTDIR/env.txt"
cat > "$T/rsyncd.conf" <<EOF
use chroot = yes
log file = $T/rsyncd.log
transfer logging = no
[bench]
  path = $D
  read only = no
  uid = root
  gid = root
EOF
cat > "$T/vsftpd.conf" <<EOF
listen=YES
listen_ipv6=NO
listen_address=127.0.0.1
listen_port=$P_FTP
background=NO
anonymous_enable=YES
local_enable=NO
write_enable=YES
anon_upload_enable=YES
anon_mkdir_write_enable=YES
anon_other_write_enable=YES
anon_world_readable_only=YES
anon_root=$D
no_anon_password=YES
anon_umask=022
ftp_username=ftp
pasv_enable=YES
pasv_address=127.0.0.1
pasv_min_port=$P_PASV_MIN
pasv_max_port=$P_PASV_MAX
connect_from_port_20=NO
secure_chroot_dir=$T/vsftpd-empty
seccomp_sandbox=NO
isolate=NO
isolate_network=NO
xferlog_enable=NO
dirmessage_enable=NO
max_clients=0
max_per_ip=0
tcp_wrappers=NO
EOF

# ---------------------------------------------------------------- data
log "generating data in $D"
# W1 is needed by lo, i11 and resume, W2 by lo and W7; otherwise keep them tiny
{ [ "$LO" = 1 ] || sec_on i11 || sec_on resume; } || W1_MB=1
{ [ "$LO" = 1 ] || { [ "$W7" = 1 ] && has "$W7_DIRS" W2push; }; } || W2_FILES=1
mk_new() {  # mk_new FILE: $S/w3/FILE = $S/FILE with 1 MiB of random data in the middle
  local mb=$(($(stat -c %s "$S/$1") / 1048576))
  cp "$S/$1" "$S/w3/$1"
  openssl rand 1048576 | dd of="$S/w3/$1" bs=1M seek=$((mb / 2)) conv=notrunc status=none
  touch -d '+1 hour' "$S/w3/$1"      # newer mtime, same size: a delta, not a skip
}
openssl rand $((W1_MB * 1048576)) > "$S/w1.bin"
W2_BYTES=$($PY "$LIB" genw2 "$S/w2" "$W2_FILES" "$W2_DIRS" 42)
mk_new w1.bin
if sec_on i11 && [ -n "$DEG_TOOLS" ]; then   # degenerate W3: a basis of real zeros (no holes)
  dd if=/dev/zero of="$S/z.bin" bs=1M count="$W1_MB" status=none
  mk_new z.bin
fi
RF=w1.bin                                     # the resume section's file
if sec_on resume && [ "$RESUME_MB" != "$W1_MB" ]; then
  RF=r.bin; openssl rand $((RESUME_MB * 1048576)) > "$S/r.bin"; mk_new r.bin
fi
[ "$SLOW" = 1 ] && openssl rand $((SLOW_MB * 1048576)) > "$S/w1s.bin"
if [ "$W5" = 1 ]; then
  openssl rand $((W5_MB * 1048576)) > "$S/w5.bin"
  case " $W5_DIRS " in *" W3p"*) mk_new w5.bin ;; esac
fi
TEXT_BYTES=0 TEXT_FILES=0
if [ "$TEXT_MB" != 0 ]; then                  # the W7 text tree, copied once
  mkdir -p "$S/text"
  for src in $W7_TEXT_SRC; do cp -a "$src" "$S/text/$(basename "$src")" || die "copying $src failed"; done
  read -r TEXT_FILES TEXT_BYTES < <(find "$S/text" -type f -printf '%s\n' | awk '{n++; s += $1} END {print n + 0, s + 0}')
fi
chmod -R a+rX "$S"
log "W1 $W1_MB MiB, W2 $W2_FILES files / $W2_BYTES B, slow $SLOW_MB MiB, W5 $W5_MB MiB," \
    "resume $RF, text tree $TEXT_FILES files / $TEXT_BYTES B"

# ---------------------------------------------------------------- servers
# server_cmd TOOL SITE SECTION -> SRV_CMD (argv), SRV_PORT; SITE vr runs it in the router
# netns (W5 and W7). ferry's -z rows get a module with compress = yes; in the sections that
# compare them (i11, W7) the other ferry rows get compress = no (when this ferry has -z).
server_cmd() {
  local tool=$1 site=$2 h=127.0.0.1 pre=() wrap=() fbin=(${FERRY:-}) rbin=(rsync) dbin=(/usr/sbin/dropbear)
  local conf=ferry-$site
  case $tool in
    ferry-*-z) conf+=-z ;;
    ferry-*) case $3 in i11|off) [ "$Z_OK" = 1 ] && conf+=-nz ;; esac ;;
  esac
  SRV_CMD=(); SRV_PORT=""
  if [ "$site" = vr ]; then
    h=10.199.0.2; pre=(nsenter --net=/proc/$VR_HOLD/ns/net --)
    read -ra wrap <<< "$W5_WRAP"      # emulated router: only the binaries given are wrapped
    [ -n "${W5_FERRY:-}" ] && fbin=("${wrap[@]}" "$W5_FERRY")
    [ -n "${W5_RSYNC:-}" ] && rbin=("${wrap[@]}" "$W5_RSYNC")
    [ -n "${W5_DROPBEAR:-}" ] && dbin=("${wrap[@]}" "$W5_DROPBEAR")
  fi
  case $tool in
    ferry-*) SRV_PORT=$P_FERRY
      SRV_CMD=("${pre[@]}" "${fbin[@]}" serve --config "$T/$conf.conf") ;;
    rsyncd|rsyncd-z) SRV_PORT=$P_RSYNC
      SRV_CMD=("${pre[@]}" "${rbin[@]}" --daemon --no-detach --config="$T/rsyncd.conf"
               --address="$h" --port="$P_RSYNC") ;;
    rsync-ssh*|scp) SRV_PORT=$P_SSH    # private mount ns with a tmpfs /run for /run/sshd
      SRV_CMD=("${pre[@]}" unshare -m --propagation private sh -c 'mount -t tmpfs -o size=1m fb /run &&
        mkdir -m 755 /run/sshd && exec /usr/sbin/sshd -D -e -f "$1"' sh "$T/sshd-$site.conf") ;;
    rsync-dropbear) SRV_PORT=$P_DB     # private mount ns: tmpfs /root holding only our key
      SRV_CMD=("${pre[@]}" unshare -m --propagation private sh -c 'mount -t tmpfs -o mode=700,size=1m fb /root &&
        mkdir -m 700 /root/.ssh && cp "$1" /root/.ssh/authorized_keys && shift &&
        exec "$@"' sh "$K/authorized_keys" "${dbin[@]}" -F -E -s -p "$h:$P_DB"
        -r "$K/dropbear_host" -P "$T/dropbear.pid") ;;
    ftp) SRV_PORT=$P_FTP; SRV_CMD=(/usr/sbin/vsftpd "$T/vsftpd.conf") ;;
    iperf3) SRV_PORT=$P_IPERF; SRV_CMD=("${pre[@]}" iperf3 -s -1 -B "$h" -p "$P_IPERF") ;;
    *) return 1 ;;
  esac
}

start_server() {  # start_server TOOL SECTION
  local site=lo extra=() nspid=$$ c
  case $2 in
    slow) extra=(--cpus "$SLOW_CPU" --cgroup "$CG_SLOW/cgroup.procs") ;;
    vr|off) site=vr; nspid=$VR_HOLD; extra=(--cpus "$SLOW_CPU")
        for c in "${CG_VR[@]}"; do extra+=(--cgroup "$c/cgroup.procs"); done ;;
  esac
  server_cmd "$1" "$site" "$2" || return 1
  SRV_RU=$T/srv-rusage.json; rm -f "$SRV_RU"
  $PY "$LIB" serve "$SRV_RU" "${extra[@]}" -- "${SRV_CMD[@]}" >>"$OUTDIR/server-$1.log" 2>&1 &
  SRV_PID=$!
  $PY "$LIB" waitport "$nspid" "$SRV_PORT" 15 2>>"$OUTDIR/server-$1.log" && return 0
  log "server $1 did not start (see $OUTDIR/server-$1.log)"; stop_server; return 1
}

stop_server() {
  [ -n "$SRV_PID" ] || return 0
  kill -TERM "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; SRV_PID=""
}

# ---------------------------------------------------------------- clients
# client_cmd TOOL WL SITE -> CMD (argv), empty when the tool has no such mode. WL is a base
# workload (W1push ... W4push, W3pull, TXpush); $SRCF names the W1/W3 file, $S/w3/$SRCF its
# new version; RESUME_ROW=1 adds rsync's --partial (the resume section).
client_cmd() {
  local tool=$1 wl=$2 h=127.0.0.1 sd=srv/$1 cd=$D/cli/$1 f=$SRCF u e=() o=() z=()
  [ "$3" = vr ] && h=10.199.0.2
  case $tool in *-z) z=(-z) ;; esac
  CMD=()
  case $tool in
    ferry-*)
      u=ferry://$h:$P_FERRY/bench
      o=(-q --identity "$K/ferry_id" --known-hosts "$K/ferry_known_hosts" --accept-new "${z[@]}")
      case $tool in
        ferry-enc|ferry-enc-z) o+=(--protection encrypt) ;;
        ferry-chacha) o+=(--protection encrypt --cipher chachapoly) ;;
        ferry-int) o+=(--protection integrity) ;;
        ferry-none) o+=(--protection none) ;;
        ferry-raw) o+=(--protection none --no-verify) ;;
      esac
      case $wl in
        W1push) CMD=("$FERRY" push "${o[@]}" "$S/$f" "$u/$sd/") ;;
        W1pull) CMD=("$FERRY" pull "${o[@]}" "$u/src/$f" "$cd/") ;;
        W2push|W4push) CMD=("$FERRY" push "${o[@]}" "$S/w2/" "$u/$sd/w2/") ;;
        W2pull) CMD=("$FERRY" pull "${o[@]}" "$u/src/w2/" "$cd/w2/") ;;
        W3push) CMD=("$FERRY" push "${o[@]}" "$S/w3/$f" "$u/$sd/") ;;
        W3pull) CMD=("$FERRY" pull "${o[@]}" "$u/src/w3/$f" "$cd/") ;;
        TXpush) CMD=("$FERRY" push "${o[@]}" "$S/text/" "$u/$sd/text/") ;;
      esac ;;
    rsyncd|rsyncd-z|rsync-ssh|rsync-ssh-aesgcm|rsync-dropbear)
      local rs=root@$h:$S rd=root@$h:$D/$sd
      case $tool in
        rsyncd*) rs=rsync://$h:$P_RSYNC/bench/src; rd=rsync://$h:$P_RSYNC/bench/$sd ;;
        rsync-ssh) e=(-e "ssh ${SSHO[*]} -p $P_SSH -o HostKeyAlias=bench-sshd") ;;
        rsync-ssh-aesgcm) e=(-e "ssh ${SSHO[*]} -p $P_SSH -o HostKeyAlias=bench-sshd -c aes128-gcm@openssh.com") ;;
        rsync-dropbear) e=(-e "ssh ${SSHO[*]} -p $P_DB -o HostKeyAlias=bench-dropbear") ;;
      esac
      e+=("${z[@]}"); [ "${RESUME_ROW:-0}" = 1 ] && e+=(--partial)
      case $wl in
        W1push) CMD=(rsync -a "${e[@]}" "$S/$f" "$rd/") ;;
        W1pull) CMD=(rsync -a "${e[@]}" "$rs/$f" "$cd/") ;;
        W2push|W4push) CMD=(rsync -a "${e[@]}" "$S/w2/" "$rd/w2/") ;;
        W2pull) CMD=(rsync -a "${e[@]}" "$rs/w2/" "$cd/w2/") ;;
        W3push) CMD=(rsync -a "${e[@]}" "$S/w3/$f" "$rd/") ;;
        W3pull) CMD=(rsync -a "${e[@]}" "$rs/w3/$f" "$cd/") ;;
        TXpush) CMD=(rsync -a "${e[@]}" "$S/text/" "$rd/text/") ;;
      esac ;;
    scp)
      e=(scp -q "${SSHO[@]}" -P "$P_SSH" -o HostKeyAlias=bench-sshd)
      case $wl in
        W1push) CMD=("${e[@]}" "$S/$f" "root@$h:$D/$sd/") ;;
        W1pull) CMD=("${e[@]}" "root@$h:$S/$f" "$cd/") ;;
        W2push) CMD=("${e[@]}" -r "$S/w2" "root@$h:$D/$sd/") ;;
        W2pull) CMD=("${e[@]}" -r "root@$h:$S/w2" "$cd/") ;;
      esac ;;
    ftp)
      local lf="set cmd:fail-exit yes; set net:max-retries 1; set net:timeout 30; open -p $P_FTP -u anonymous,x $h"
      case $wl in
        W1push) CMD=(curl -sS -T "$S/$f" "ftp://$h:$P_FTP/$sd/") ;;
        W1pull) CMD=(curl -sS -o "$cd/$f" "ftp://$h:$P_FTP/src/$f") ;;
        W2push|W4push) CMD=(lftp -c "$lf; mirror -R --no-perms --parallel=1 $S/w2 /$sd/w2") ;;
        W2pull) CMD=(lftp -c "$lf; mirror --no-perms --parallel=1 /src/w2 $cd/w2") ;;
      esac ;;
    iperf3) [ "$wl" = NET ] && CMD=(sh -c "iperf3 -c $h -p $P_IPERF -t $IPERF_SECS -J > $T/iperf.json") ;;
  esac
  return 0
}

prepare() {  # destinations for TOOL WL (not timed)
  local sd=$D/srv/$1 cd=$D/cli/$1
  case $2 in
    W1push|W2push|TXpush) rm -rf "$sd"; mkdir -p "$sd"; [ "$1" = ftp ] && chown ftp "$sd" ;;
    W1pull) rm -rf "$cd"; mkdir -p "$cd" ;;
    W2pull) rm -rf "$cd"; mkdir -p "$cd/w2" ;;
    W3push) mkdir -p "$sd"; find "$sd" -maxdepth 1 -type f -name '.*' -delete   # (sd/w2 is W4's)
            cp -p "$S/$SRCF" "$sd/$SRCF" ;;                    # basis = the old version
    W3pull) rm -rf "$cd"; mkdir -p "$cd"; cp -p "$S/$SRCF" "$cd/$SRCF" ;;
  esac
  return 0
}

verify() {  # verify TOOL WL SECTION: prints ok or FAIL, then removes what later runs do not need
  local sd=$D/srv/$1 cd=$D/cli/$1 v=FAIL
  case $1:$2 in
    iperf3:NET) [ -s "$T/iperf.json" ] && v=ok ;;
    *:W1push) cmp -s "$S/$SRCF" "$sd/$SRCF" && v=ok; rm -f "$sd/$SRCF" ;;
    *:W1pull) cmp -s "$S/$SRCF" "$cd/$SRCF" && v=ok; rm -rf "$cd" ;;
    *:W2push) diff -rq "$S/w2" "$sd/w2" >/dev/null && v=ok   # kept for W4 (loopback)
              [ "$3" = lo ] || rm -rf "$sd" ;;
    *:W2pull) diff -rq "$S/w2" "$cd/w2" >/dev/null && v=ok; rm -rf "$cd" ;;
    *:W3push) cmp -s "$S/w3/$SRCF" "$sd/$SRCF" && v=ok; rm -f "$sd/$SRCF" ;;
    *:W3pull) cmp -s "$S/w3/$SRCF" "$cd/$SRCF" && v=ok; rm -rf "$cd" ;;
    *:W4push) diff -rq "$S/w2" "$sd/w2" >/dev/null && v=ok; rm -rf "$sd" ;;
    *:TXpush) diff -r --no-dereference "$S/text" "$sd/text" >/dev/null && v=ok; rm -rf "$sd" ;;
  esac
  echo $v
}

echo "round,section,tool,wl,bytes,files,rc,wall_s,cli_cpu_s,cli_maxrss_kb,srv_cpu_s,srv_cpu_total_s,srv_maxrss_kb,srv_pss_kb,wire_bytes,busy_s,other_s,verify,kill_at_bytes,kill_wire_bytes" > "$CSV"
: > "$EXPECT"

pticks() { [ -n "${1:-}" ] && sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $12 + $13}' || echo 0; }

# interrupt TOOL SECTION: a resume row's first attempt (not measured). The client runs in its
# own session and is killed with SIGKILL (its process group) as soon as either end has
# RESUME_AT of the file: the receiver's largest hidden file in the destination (ferry's
# .ferry-XXXXXXCCCC.NAME or .ferry-part.*, rsync's .NAME.XXXXXX), or what the client has read
# (its rchar: a delta's sender runs ahead of the receiver rebuilding from its basis). The
# server is stopped once its session has ended. Sets KILL_AT: the larger of the two at the
# kill (bytes); "done" when the client finished first; "late" when the destination already
# held the whole new version (the server finished on its own: nothing left to resume).
interrupt() {
  local tool=$1 sec=$2 lim pids pw qw recv sent new=$S/$SRCF
  [ "$base" = W3push ] && new=$S/w3/$SRCF
  lim=$(awk -v s="$(stat -c %s "$new")" -v f="$RESUME_AT" 'BEGIN {printf "%d", s * f}')
  start_server "$tool" "$sec" || return 1
  read -r _ pids _ pw < <($PY "$LIB" pre "$SRV_PID")
  echo "=== r$round $sec $tool $wl, killed at $lim B: ${CMD[*]}" >> "$CLOG"
  read -r recv sent < <($PY "$LIB" killat "$D/srv/$tool" "$lim" "$CLIENT_TIMEOUT" -- "${CMD[@]}" 2>>"$CLOG")
  read -r _ _ qw < <($PY "$LIB" post "$SRV_PID" "$pids" 30)
  stop_server
  KILL_WIRE=$((qw - pw))
  KILL_AT=$recv; [ -n "${sent:-}" ] && [ "$sent" -gt "$recv" ] && KILL_AT=$sent
  cmp -s "$new" "$D/srv/$tool/$SRCF" && KILL_AT=late
  log "r$round $sec $wl $tool: client killed, receiver held $recv B, client had read ${sent:--} B" \
      "(mark $lim), $KILL_WIRE B on the wire; left: $(find "$D/srv/$tool" -mindepth 1 -maxdepth 1 ! -name w2 -printf '%f ')"
}

# run_one ROUND SECTION TOOL WL. Besides the base workloads: W3dpush/W3dpull (W3 on the
# all-zero basis), R1push/R3push (resume: W1/W3 push killed at RESUME_AT, then the same
# command again, which is what is measured).
run_one() {
  local round=$1 sec=$2 tool=$3 wl=$4 base=$4 site=lo bytes files rc=0 t0 t1
  KILL_AT="" KILL_WIRE="" RESUME_ROW=0
  case $sec in slow) SRCF=w1s.bin ;; vr) SRCF=w5.bin; site=vr ;; off) site=vr ;; *) SRCF=w1.bin ;; esac
  case $wl in
    W3dpush|W3dpull) SRCF=z.bin; base=W3${wl#W3d} ;;
    R1push) SRCF=$RF; base=W1push; RESUME_ROW=1 ;;
    R3push) SRCF=$RF; base=W3push; RESUME_ROW=1 ;;
  esac
  client_cmd "$tool" "$base" "$site"
  [ ${#CMD[@]} -gt 0 ] || return 0
  case $wl in W2*|W4*) bytes=$W2_BYTES files=$W2_FILES ;; TX*) bytes=$TEXT_BYTES files=$TEXT_FILES ;;
              NET) bytes=0 files=0 ;; *) bytes=$(stat -c %s "$S/$SRCF") files=1 ;; esac
  case $tool in ferry-*-z) if [ "$Z_OK" != 1 ]; then
    echo "$round,$sec,$tool,$wl,$bytes,$files,na,,,,,,,,,,,n/a (no -z),," >> "$CSV"
    log "r$round $sec $wl $tool: n/a (this ferry has no -z)"; return 0
  fi ;; esac
  prepare "$tool" "$base"
  if [ "$RESUME_ROW" = 1 ] && ! interrupt "$tool" "$sec"; then
    echo "$sec $wl $tool" >> "$EXPECT"
    echo "$round,$sec,$tool,$wl,$bytes,$files,srvfail,,,,,,,,,,,FAIL,," >> "$CSV"; return 0
  fi
  if ! start_server "$tool" "$sec"; then
    echo "$sec $wl $tool" >> "$EXPECT"
    echo "$round,$sec,$tool,$wl,$bytes,$files,srvfail,,,,,,,,,,,FAIL,," >> "$CSV"; return 0
  fi
  local pt pids pbusy pwire qt qbusy qwire pss=0 scpu=0 dl0 dl1
  read -r pt pids pbusy pwire < <($PY "$LIB" pre "$SRV_PID")
  $PY "$LIB" sample "$SRV_PID" "$T/sample.out" & SAMP_PID=$!
  echo "=== r$round $sec $tool $wl: ${CMD[*]}" >> "$CLOG"
  dl0=$(pticks "$DL_PID")
  t0=$EPOCHREALTIME
  local tmo=$CLIENT_TIMEOUT; case $wl in W3d*) tmo=$DEG_TIMEOUT ;; esac
  /usr/bin/time -f '%U %S %M' -o "$T/cli.time" timeout "$tmo" "${CMD[@]}" \
    </dev/null >/dev/null 2>"$T/cli.err" || rc=$?
  t1=$EPOCHREALTIME
  read -r qt qbusy qwire < <($PY "$LIB" post "$SRV_PID" "$pids" 30)
  dl1=$(pticks "$DL_PID")
  kill -TERM "$SAMP_PID"; wait "$SAMP_PID"; SAMP_PID=""
  read -r pss scpu < "$T/sample.out"
  scpu=$(awk -v a="$scpu" -v d=$((dl1 - dl0)) -v hz="$HZ" 'BEGIN {printf "%.3f", a + d / hz}')  # + the delay line
  stop_server
  cat "$T/cli.err" >> "$CLOG"
  local stot="" srss=""
  [ -s "$SRV_RU" ] && read -r stot srss < <($PY -c 'import json,sys; j=json.load(open(sys.argv[1])); print("%.3f %d" % (j["cpu_s"], j["maxrss_kb"]))' "$SRV_RU")
  [ "$tool" = iperf3 ] && [ -s "$T/iperf.json" ] && bytes=$($PY "$LIB" iperfbytes "$T/iperf.json")
  local cu cs cm; read -r cu cs cm < <(tail -1 "$T/cli.time")
  local v left=""; v=$(verify "$tool" "$base" "$sec")
  if [ "$RESUME_ROW" = 1 ]; then                     # a resumed transfer leaves no partial behind
    left=$(find "$D/srv/$tool" -maxdepth 1 -name '.*' -type f -printf '%f ' 2>/dev/null)
    [ -n "$left" ] && { v=FAIL; log "r$round $sec $wl $tool: left behind: $left"; }
    rm -rf "$D/srv/$tool"
  fi
  case $tool in ferry-*-z) [ "$rc" != 0 ] &&     # a ferry whose -z the probe missed
    grep -qiE 'not (supported|implemented)|unknown option' "$T/cli.err" && v="n/a (no -z)" ;; esac
  [ "$v" = "n/a (no -z)" ] || echo "$sec $wl $tool" >> "$EXPECT"
  local row wall cli srv busy other
  row=$(awk -v t0="$t0" -v t1="$t1" -v cu="$cu" -v cs="$cs" -v pt="$pt" -v qt="$qt" -v hz="$HZ" \
            -v pb="$pbusy" -v qb="$qbusy" -v sc="$scpu" 'BEGIN {
          wall = t1 - t0; cli = cu + cs; srv = (qt - pt) / hz; busy = (qb - pb) / hz
          printf "%.4f,%.2f,%.3f,%.2f,%.2f", wall, cli, srv, busy, busy - cli - srv - sc }')
  IFS=, read -r wall cli srv busy other <<< "$row"
  echo "$round,$sec,$tool,$wl,$bytes,$files,$rc,$wall,$cli,$cm,$srv,$stot,$srss,$pss,$((qwire - pwire)),$busy,$other,$v,$KILL_AT,$KILL_WIRE" >> "$CSV"
  log "r$round $sec $wl $tool: ${wall}s cli ${cli}s srv ${srv}s rss ${srss:-?}kB wire $((qwire - pwire)) B rc=$rc $v"
}

rotate() {  # rotate N WORDS...: the list started at position N (interleaving A B, B A, ...)
  local n=$1; shift; local a=("$@") i
  for ((i = 0; i < ${#a[@]}; i++)); do echo -n "${a[$(((i + n) % ${#a[@]}))]} "; done
}

# cpu (and memory) cgroup with a CFS quota: cgroup v2 cpu.max if the cpu controller is
# there, else v1 /sys/fs/cgroup/cpu (this VM's hybrid layout). Prints the group dirs.
make_cgroup() {  # make_cgroup NAME QUOTA_US PERIOD_US [MEM_MB]
  local g
  if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    g=/sys/fs/cgroup/$1; mkdir "$g" || return 1; CG_DIRS+=("$g")
    echo "$2 $3" > "$g/cpu.max" || return 1
    [ -n "${4:-}" ] && { echo $(($4 * 1048576)) > "$g/memory.max" || return 1; }
    CG_OUT=("$g")
  else
    g=/sys/fs/cgroup/cpu/$1; mkdir "$g" || return 1; CG_DIRS+=("$g")
    echo "$3" > "$g/cpu.cfs_period_us" && echo "$2" > "$g/cpu.cfs_quota_us" || return 1
    CG_OUT=("$g")
    if [ -n "${4:-}" ]; then
      g=/sys/fs/cgroup/memory/$1; mkdir "$g" || return 1; CG_DIRS+=("$g")
      echo $(($4 * 1048576)) > "$g/memory.limit_in_bytes" || return 1
      CG_OUT+=("$g")
    fi
  fi
}

START=$SECONDS
SKIPPED=""
# ---------------------------------------------------------------- W1-W4 on loopback
for ((r = 1; r <= ROUNDS && LO; r++)); do
  log "---- round $r/$ROUNDS"
  run_one "$r" lo iperf3 NET
  for wl in W1push W1pull W2push W2pull W3push W4push; do
    for tool in $(rotate "$r" $TOOLS); do run_one "$r" lo "$tool" "$wl"; done
  done
done

# ---------------------------------------------------------------- issue 11 on loopback
I11=0; sec_on i11 && I11=1
for ((r = 1; r <= ROUNDS && I11; r++)); do
  log "---- issue 11 (delta, -z) round $r/$ROUNDS"
  for wl in W3push W3pull; do
    for tool in $(rotate "$r" $I11_TOOLS); do run_one "$r" i11 "$tool" "$wl"; done
  done
  for wl in W3dpush W3dpull; do
    for tool in $(rotate "$r" $DEG_TOOLS); do run_one "$r" i11 "$tool" "$wl"; done
  done
  for tool in $(rotate "$r" $Z_TOOLS); do run_one "$r" i11 "$tool" W1push; done
done

# ---------------------------------------------------------------- resume (loopback)
RESUME=0; sec_on resume && RESUME=1
for ((r = 1; r <= ROUNDS && RESUME; r++)); do
  log "---- resume round $r/$ROUNDS (kill -9 at $RESUME_AT, then the same command again)"
  for wl in R1push R3push; do
    for tool in $(rotate "$r" $RESUME_TOOLS); do run_one "$r" resume "$tool" "$wl"; done
  done
done

# ---------------------------------------------------------------- slow CPU
if [ "$SLOW" = 1 ]; then
  if make_cgroup "ferrybench_slow_$$" "$SLOW_QUOTA_US" "$SLOW_PERIOD_US"; then
    CG_SLOW=${CG_OUT[0]}
    echo "slow: $CG_SLOW quota $SLOW_QUOTA_US/$SLOW_PERIOD_US us, server on CPU $SLOW_CPU" >> "$OUTDIR/env.txt"
    for ((r = 1; r <= ROUNDS; r++)); do
      log "---- slow CPU round $r/$ROUNDS"
      for tool in $(rotate "$r" $SLOW_TOOLS); do run_one "$r" slow "$tool" W1push; done
    done
  else
    log "slow CPU section skipped: cannot make a cpu cgroup"; echo "slow: no cgroup, skipped" >> "$OUTDIR/env.txt"
    SKIPPED+=" slow-CPU(no-cpu-cgroup)"
  fi
fi

# site_rounds LABEL SITE ROUNDS DIRS TOOLS: the rounds of a shaped site (W5, W7): the TCP
# ceiling, then every workload with the tools in rotated order.
site_rounds() {
  local label=$1 site=$2 n=$3 dirs=$4 tools=$5 r wl tool
  for ((r = 1; r <= n; r++)); do
    log "---- $label round $r/$n"
    run_one "$r" "$site" iperf3 NET
    for wl in $dirs; do
      for tool in $(rotate "$r" $tools); do run_one "$r" "$site" "$tool" "$wl"; done
    done
  done
}
# ---------------------------------------------------------------- W5 virtual router
# vr_hold: the router netns = a holder process's netns (vanishes with it; nothing in
# /run/netns); sets VR_HOLD and NSX
vr_hold() {
  unshare --net sleep 100000 & VR_HOLD=$!
  for _ in $(seq 50); do
    [ "$(readlink /proc/$VR_HOLD/ns/net)" != "$(readlink /proc/$$/ns/net)" ] && break; sleep 0.02
  done
  NSX=(nsenter --net=/proc/$VR_HOLD/ns/net --)
}
vr_drop() {
  [ -n "$DL_PID" ] && { kill -TERM "$DL_PID" 2>/dev/null; wait "$DL_PID" 2>/dev/null; DL_PID=""; }
  kill -KILL "$VR_HOLD" 2>/dev/null; wait "$VR_HOLD" 2>/dev/null; VR_HOLD=""
}
vr_ports() { "${NSX[@]}" sh -c "ip link set lo up &&
  echo $P_SSH,$P_DB,$P_IPERF,$P_RSYNC,$P_FERRY > /proc/sys/net/ipv4/ip_local_reserved_ports"; }

if [ "$W5" = 1 ]; then
  vr_hold
  tbf=(tbf rate "$W5_RATE" burst 64kb latency 20ms)
  if ip link add fbr0 type veth peer name fbr1 && ip link set fbr1 netns "$VR_HOLD" &&
     ip addr add 10.199.0.1/24 dev fbr0 && ip link set fbr0 up &&
     tc qdisc add dev fbr0 root "${tbf[@]}" && vr_ports &&
     "${NSX[@]}" sh -c "ip addr add 10.199.0.2/24 dev fbr1 && ip link set fbr1 up &&
        tc qdisc add dev fbr1 root ${tbf[*]}" &&
     make_cgroup "ferrybench_vr_$$" "$W5_QUOTA_US" "$W5_PERIOD_US" $((W5_MEM_MB + W5_MB)); then
    CG_VR=("${CG_OUT[@]}")
    echo "W5: veth + tbf $W5_RATE both ways; server netns, CPU $SLOW_CPU, quota $W5_QUOTA_US/$W5_PERIOD_US us," \
         "memory $W5_MEM_MB MiB + $W5_MB MiB (tmpfs pages the server writes count): ${CG_VR[*]}" >> "$OUTDIR/env.txt"
    site_rounds "W5 router" vr "$ROUNDS" "$W5_DIRS" "$W5_TOOLS"
  else
    log "W5 section skipped: netns/veth/tbf/cgroup setup failed"; echo "W5: setup failed, skipped" >> "$OUTDIR/env.txt"
    SKIPPED+=" W5(netns/veth/tbf/cgroup-setup-failed)"
  fi
  vr_drop
fi

# ---------------------------------------------------------------- W7 off-site
# The server's netns again (10.199.0.2), reached over a pair of tun devices: tbf W7_RATE on
# each one's egress, and a delay line (benchlib.py delayline) that holds every packet
# W7_DELAY_MS ms each way (this kernel has neither netem nor fq). Its CPU is not the
# client's or the server's; run_one counts it with the sampler's, out of "other".
if [ "$W7" = 1 ]; then
  vr_hold
  rm -f "$T/dl.ready"
  $PY "$LIB" delayline "$VR_HOLD" "$W7_DELAY_MS" "$T/dl.ready" 2>>"$OUTDIR/delayline.log" & DL_PID=$!
  for _ in $(seq 250); do [ -e "$T/dl.ready" ] && break; sleep 0.02; done
  tbf=(tbf rate "$W7_RATE" burst 32kb latency 50ms)
  w7mem=$((W5_MEM_MB + 16 + (TEXT_MB > W2_BYTES / 1048576 ? TEXT_MB : W2_BYTES / 1048576) * 3 / 2))
  if [ -e "$T/dl.ready" ] && ip addr add 10.199.0.1 peer 10.199.0.2 dev fbt0 && ip link set fbt0 up &&
     tc qdisc add dev fbt0 root "${tbf[@]}" && vr_ports &&
     "${NSX[@]}" sh -c "ip addr add 10.199.0.2 peer 10.199.0.1 dev fbt1 && ip link set fbt1 up &&
        tc qdisc add dev fbt1 root ${tbf[*]}" &&
     make_cgroup "ferrybench_off_$$" "$W7_QUOTA_US" "$W7_PERIOD_US" "$w7mem"; then
    CG_VR=("${CG_OUT[@]}")
    rtt=$($PY "$LIB" rtt 10.199.0.2 "$P_IPERF")
    echo "W7: tun pair + tbf $W7_RATE both ways + delay line ${W7_DELAY_MS} ms each way (TCP connect" \
         "RTT measured: $rtt ms); server netns, CPU $SLOW_CPU, quota $W7_QUOTA_US/$W7_PERIOD_US us," \
         "memory $w7mem MiB: ${CG_VR[*]}" >> "$OUTDIR/env.txt"
    log "W7 link up: $W7_RATE, RTT $rtt ms"
    site_rounds "W7 off-site" off "$W7_ROUNDS" "$W7_DIRS" "$W7_TOOLS"
  else
    log "W7 section skipped: netns/tun/tbf/cgroup setup failed"; echo "W7: setup failed, skipped" >> "$OUTDIR/env.txt"
    SKIPPED+=" W7(netns/tun/tbf/cgroup-setup-failed)"
  fi
  vr_drop
fi

# ---------------------------------------------------------------- W6 (issue 12)
W6_FAILED=0
if sec_on w6 && [ "$NO_FERRY" != 1 ]; then
  if [ "$SMOKE" = 1 ]; then   # tiny, but every step and both tools
    export W6_FILES=${W6_FILES:-2000} W6_DIRS=${W6_DIRS:-20} W6_BIG=${W6_BIG:-500} W6_DEL=${W6_DEL:-20}
  fi
  log "W6 (bench/w6.sh)"
  if "$BENCH/w6.sh" > "$OUTDIR/w6.md" 2> "$OUTDIR/w6.log"; then
    log "W6 done"
  else
    log "W6 failed (see $OUTDIR/w6.log)"; W6_FAILED=1
  fi
fi
# ---------------------------------------------------------------- W8 (issue 13)
W8_FAILED=0
if sec_on w8 && [ "$NO_FERRY" != 1 ]; then
  if [ "$SMOKE" = 1 ]; then   # tiny, and without borg and restic (not in make deps)
    export W8_FILES=${W8_FILES:-300} W8_MB=${W8_MB:-3} W8_DAYS=${W8_DAYS:-3} W8_NOOP=${W8_NOOP:-2} W8_RESTORES=${W8_RESTORES:-1}
    export W8_TOOLS=${W8_TOOLS:-"ferry rsync-ld"}
  fi
  log "W8 (bench/w8.sh)"
  if FERRY=$FERRY "$BENCH/w8.sh" > "$OUTDIR/w8.md" 2> "$OUTDIR/w8.log"; then
    log "W8 done"
  else
    log "W8 failed (see $OUTDIR/w8.log)"; W8_FAILED=1
  fi
fi
# ---------------------------------------------------------------- load (issue 15)
LOAD_FAILED=0
if sec_on load && [ "$NO_FERRY" != 1 ]; then
  if [ "$SMOKE" = 1 ]; then
    export LOAD_CLIENTS=${LOAD_CLIENTS:-16} LOAD_SEQ=${LOAD_SEQ:-100} LOAD_STALL=${LOAD_STALL:-20}
  fi
  log "load (bench/load.sh)"
  if FERRY=$FERRY "$BENCH/load.sh" > "$OUTDIR/load.md" 2> "$OUTDIR/load.log"; then
    log "load done"
  else
    log "load failed (see $OUTDIR/load.log and load.md)"; LOAD_FAILED=1
  fi
fi

for c in "${CG_DIRS[@]}"; do
  [ -f "$c/cpu.stat" ] && { echo "$c cpu.stat:"; sed 's/^/  /' "$c/cpu.stat"; } >> "$OUTDIR/env.txt"
  [ -f "$c/memory.max_usage_in_bytes" ] && echo "$c memory.max_usage_in_bytes: $(cat "$c/memory.max_usage_in_bytes")" >> "$OUTDIR/env.txt"
done
echo "elapsed_s: $((SECONDS - START)); loadavg_end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUTDIR/env.txt"
cp "$T/rsyncd.log" "$OUTDIR/" 2>/dev/null

$PY "$LIB" summarize "$CSV" --expect "$EXPECT" > "$OUTDIR/summary.md"; status=$?
if [ -n "${FB_INSNS:-}" ] && [ -s "$FB_INSNS" ]; then
  { echo; echo "Virtual router, server-side guest instructions per byte (qemu-mipsel, bench/insns.sh;"
    echo "targets: encrypt <= 28, integrity <= 8, none <= 2; the rsync daemon receiving: 6.65;"
    echo "w3push/w3pull: per byte of the part of the file that did not change, no target):"
    echo; grep '^|' "$FB_INSNS"; } >> "$OUTDIR/summary.md"
  cp "$FB_INSNS" "$OUTDIR/insns.txt"
fi
if [ -s "$OUTDIR/w6.md" ]; then { echo; cat "$OUTDIR/w6.md"; } >> "$OUTDIR/summary.md"; fi
[ "$W6_FAILED" = 1 ] && status=1
if [ -s "$OUTDIR/w8.md" ]; then { echo; cat "$OUTDIR/w8.md"; } >> "$OUTDIR/summary.md"; fi
[ "$W8_FAILED" = 1 ] && status=1
if [ -s "$OUTDIR/load.md" ]; then { echo; cat "$OUTDIR/load.md"; } >> "$OUTDIR/summary.md"; fi
[ "$LOAD_FAILED" = 1 ] && status=1
cat "$OUTDIR/summary.md"
log "done in $((SECONDS - START)) s -> $OUTDIR"
[ -n "$SKIPPED" ] && log "SKIPPED sections:$SKIPPED"
if [ "$SMOKE" = 1 ]; then
  log "smoke sizes: the ratios are dominated by connection setup and 10 ms CPU ticks; not results"
  grep -q '^| W1 push |' "$OUTDIR/summary.md" || { log "smoke: table missing"; status=1; }
  [ -n "$SKIPPED" ] && [ "${SMOKE_ALLOW_SKIP:-0}" != 1 ] && { log "smoke: sections skipped (SMOKE_ALLOW_SKIP=1 accepts that)"; status=1; }
  [ $status = 0 ] && log "smoke: OK (every tool ran, every copy verified)" || log "smoke: FAILED"
fi
exit $status
