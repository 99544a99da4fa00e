#!/usr/bin/env python3
"""Helpers for bench/run.sh (standard library only; run with the system python3).

  serve OUT [--cpus 1] [--cgroup PROCS_FILE]... -- CMD...
        Subreaper runner: starts CMD in its own session, optionally pinned to CPUs and moved
        into cgroups; on SIGTERM stops it, reaps the whole tree (orphans included), kills
        stragglers by PID and writes the tree's CPU and the peak RSS of its largest single
        process (from wait4) as JSON to OUT.
  pre ROOT            print: tree CPU ticks, tree PIDs, busy ticks, wire bytes  (before a run)
  post ROOT PIDS T    wait (<= T s) until the tree is back to PIDS, then print the same
  sample ROOT OUT     sample the tree's summed PSS every 100 ms until SIGTERM; write the peak
  waitport PID PORT T wait until PORT listens in PID's network namespace
  genw2 DIR FILES DIRS SEED   make the W2 tree (sizes 1-16 KiB, random bytes); print bytes
  iperfbytes JSON     bytes received according to iperf3 -J output
  killat DIR LIMIT TIMEOUT -- CMD...  run CMD in its own session, poll every 2 ms; when
        DIR's largest hidden file (a receiver's in-progress temporary: .ferry-*, rsync's
        .NAME.XXXXXX) or CMD's rchar (what the sending client has read) reaches LIMIT
        bytes, SIGKILL CMD's process group; print both, or "done" if CMD finished first
  rtt HOST PORT       median of 5 TCP connects to a closed PORT (SYN out, RST back), in ms
  delayline HOLDPID DELAY_MS READY  a point-to-point link between this network namespace
        (tun fbt0) and HOLDPID's (tun fbt1) that holds every packet DELAY_MS ms each way
        (the kernel here has no netem); writes READY once both devices exist, runs until
        SIGTERM
  summarize CSV [--expect FILE]  print the markdown table and target checks; exit 1 if a
        run failed or an expected (section, workload, tool) is missing
"""
import csv
import ctypes
import json
import os
import random
import resource
import signal
import statistics
import sys
import time

def shown_path(path):
    """A path as reports show it: relative to the repository when inside it
    (a report must not name one machine's directories)."""
    import os
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    full = os.path.abspath(path)
    return os.path.relpath(full, repo) if full.startswith(repo + os.sep) else path

HZ = os.sysconf('SC_CLK_TCK')


# ------------------------------------------------------------------ process tree CPU
def read_stat(pid):
    try:
        with open('/proc/%d/stat' % pid, 'rb') as f:
            s = f.read()
    except OSError:
        return None
    f = s[s.rfind(b')') + 2:].split()
    # ppid, own utime+stime (all threads), reaped children's cutime+cstime, state
    return int(f[1]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14]), f[0].decode()


def all_procs():
    procs = {}
    for d in os.listdir('/proc'):
        if d.isdigit():
            st = read_stat(int(d))
            if st:
                procs[int(d)] = st
    return procs


def descendants(root, procs):
    kids = {}
    for pid, st in procs.items():
        kids.setdefault(st[0], []).append(pid)
    out, stack = [], list(kids.get(root, []))
    while stack:
        p = stack.pop()
        out.append(p)
        stack.extend(kids.get(p, []))
    return out


def tree_ticks(root, procs):
    """CPU of everything below the runner: live descendants + everything reaped so far
    (the runner's cutime/cstime). The runner's own CPU is not counted."""
    if root not in procs:
        return 0, []
    d = descendants(root, procs)
    return procs[root][2] + sum(procs[p][1] + procs[p][2] for p in d), d


def counters():
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    busy = v[0] + v[1] + v[2] + v[5] + v[6]          # user nice system irq softirq
    wire = 0
    with open('/proc/net/dev') as f:    # bytes on every interface of our netns: lo rx only
        for line in f.readlines()[2:]:  # (= tx), others rx + tx
            name, v = line.split(':', 1)
            v = v.split()
            wire += int(v[0]) + (0 if name.strip() == 'lo' else int(v[8]))
    return busy, wire


def netdev_log(label):
    """NETDEV_LOG=FILE: append /proc/net/dev (bytes and packets per interface)
    before and after every run, to tell payload from per-packet overhead."""
    path = os.environ.get('NETDEV_LOG')
    if path:
        with open(path, 'a') as o, open('/proc/net/dev') as f:
            o.write(label + '\n' + f.read())


def cmd_pre(root):
    root = int(root)
    ticks, d = tree_ticks(root, all_procs()) if root else (0, [])
    busy, wire = counters()
    netdev_log('PRE')
    print(ticks, ','.join(map(str, d)) or '-', busy, wire)


def cmd_post(root, base, timeout):
    root = int(root)
    base = set() if base == '-' else set(map(int, base.split(',')))
    t0 = time.time()
    ticks = 0
    while root:
        procs = all_procs()
        ticks, d = tree_ticks(root, procs)
        # a zombie has ended: its CPU is final and counted here (a daemon
        # that reaps it late, as rsyncd does on its next tick, adds nothing)
        live = {p for p in d if procs[p][3] != 'Z'}
        if live <= base or time.time() - t0 > float(timeout):
            break
        time.sleep(0.01)
    busy, wire = counters()
    netdev_log('POST')
    print(ticks, busy, wire)


def cmd_sample(root, out):
    root = int(root)
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    peak = 0
    while not stop:
        pss = 0
        for p in descendants(root, all_procs()):
            try:
                with open('/proc/%d/smaps_rollup' % p) as f:
                    for line in f:
                        if line.startswith('Pss:'):
                            pss += int(line.split()[1])
                            break
            except OSError:
                pass
        peak = max(peak, pss)
        time.sleep(0.1)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    with open(out, 'w') as f:
        f.write('%d %.3f\n' % (peak, ru.ru_utime + ru.ru_stime))


# ------------------------------------------------------------------ server runner
def cmd_serve(out, *args):
    args = list(args)
    cpus, cgroups = None, []
    while args and args[0] != '--':
        if args[0] == '--cpus':
            cpus = {int(c) for c in args[1].split(',')}
            args = args[2:]
        elif args[0] == '--cgroup':
            cgroups.append(args[1])
            args = args[2:]
        else:
            raise SystemExit('serve: bad argument ' + args[0])
    cmd = args[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)                       # PR_SET_CHILD_SUBREAPER
    sigs = {signal.SIGTERM, signal.SIGINT, signal.SIGCHLD}
    signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    # The forked child is a copy of this python process, and the kernel keeps a process's
    # peak RSS across exec: reaping it would report python's ~10 MiB as the server's.
    # So the child execs `setsid -f`, which forks the real server (fresh peak RSS, own
    # session) and exits; the server is re-parented to us and reaped with wait4, and the
    # first child's rusage is ignored.
    first = os.fork()
    if first == 0:
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, set())
            if cpus:
                os.sched_setaffinity(0, cpus)
            for cg in cgroups:
                with open(cg, 'w') as f:
                    f.write(str(os.getpid()))
            os.execvp('setsid', ['setsid', '-f'] + cmd)
        finally:
            os._exit(127)
    maxrss, cpu, statuses = 0, 0.0, []

    def reap():
        nonlocal maxrss, cpu
        while True:
            try:
                p, st, ru = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if p == 0:
                return True
            if p != first:
                maxrss = max(maxrss, ru.ru_maxrss)
                cpu += ru.ru_utime + ru.ru_stime
                statuses.append(st)

    while True:
        si = signal.sigtimedwait(sigs, 1.0)
        reap()
        if si and si.si_signo in (signal.SIGTERM, signal.SIGINT):
            break
    me = os.getpid()
    for p, st in all_procs().items():                 # the daemon(s): our direct children
        if st[0] == me:
            try:
                os.kill(p, signal.SIGTERM)
            except ProcessLookupError:
                pass
    t0 = time.time()
    while reap() and time.time() - t0 < 5:
        time.sleep(0.02)
    killed = []
    for p in descendants(me, all_procs()):
        try:
            os.kill(p, signal.SIGKILL)
            killed.append(p)
        except ProcessLookupError:
            pass
    t0 = time.time()
    while reap() and time.time() - t0 < 5:
        time.sleep(0.02)
    with open(out, 'w') as f:
        json.dump({'cpu_s': cpu, 'maxrss_kb': maxrss, 'status': statuses, 'killed': killed}, f)


def cmd_waitport(nspid, port, timeout):
    want = ':%04X' % int(port)
    t0 = time.time()
    while time.time() - t0 < float(timeout):
        for fn in ('tcp', 'tcp6'):
            try:
                with open('/proc/%s/net/%s' % (nspid, fn)) as f:
                    for line in f.readlines()[1:]:
                        x = line.split()
                        if x[1].endswith(want) and x[3] == '0A':
                            return
            except OSError:
                pass
        time.sleep(0.02)
    raise SystemExit('port %s not listening after %s s' % (port, timeout))


def cmd_genw2(top, nfiles, ndirs, seed):
    rnd = random.Random(int(seed))
    ndirs, total = int(ndirs), 0
    for d in range(ndirs):
        os.makedirs(os.path.join(top, 'd%03d' % d), exist_ok=True)
    for i in range(int(nfiles)):
        size = rnd.randint(1024, 16384)
        total += size
        with open(os.path.join(top, 'd%03d' % (i % ndirs), 'f%05d.bin' % i), 'wb') as f:
            f.write(rnd.randbytes(size))
    print(total)


def cmd_iperfbytes(path):
    print(json.load(open(path))['end']['sum_received']['bytes'])


# ------------------------------------------------------------------ resume: kill at a point
def hidden_bytes(d):
    """Bytes held by the largest hidden regular file in d: min(size, allocated), so a
    temporary stretched to its final size (ftruncate) counts only what was written."""
    best = 0
    try:
        with os.scandir(d) as it:
            for e in it:
                if e.name.startswith('.') and e.is_file(follow_symlinks=False):
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    best = max(best, min(st.st_size, st.st_blocks * 512))
    except OSError:
        pass
    return best


def rchar(pid):
    try:
        with open('/proc/%d/io' % pid) as f:
            for line in f:
                if line.startswith('rchar:'):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def cmd_killat(d, limit, timeout, *cmd):
    """Runs CMD (after '--') in its own session, stdin and stdout /dev/null, stderr ours,
    and SIGKILLs its process group as soon as either end has got LIMIT bytes into the file:
    the receiver (d's largest hidden file: its in-progress temporary) or the sender (the
    client's rchar: what it has read, its file mostly). A delta's sender runs ahead of its
    receiver, which rebuilds from its basis; killed by the receiver's progress alone, it
    would have sent everything already. Prints "RECEIVER_BYTES SENDER_BYTES", or "done"
    if CMD finished first."""
    import subprocess
    cmd = list(cmd[1:] if cmd and cmd[0] == '--' else cmd)
    limit, t0 = int(limit), time.time()
    p = subprocess.Popen(cmd, start_new_session=True, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL)
    res = 'timeout'
    while time.time() - t0 < float(timeout):
        b, c = hidden_bytes(d), rchar(p.pid)
        if b >= limit or c >= limit:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            res = '%d %d' % (b, c)
            break
        if p.poll() is not None:
            res = 'done'
            break
        time.sleep(0.002)
    if res == 'timeout':
        os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    print(res)


# ------------------------------------------------------------------ W7: a delay line
def cmd_rtt(host, port):
    import socket
    ts = []
    for _ in range(5):
        t0 = time.monotonic()
        try:
            socket.create_connection((host, int(port)), timeout=5).close()
        except OSError:
            pass
        ts.append((time.monotonic() - t0) * 1000)
    print('%.1f' % statistics.median(ts))


def tun_open(name):
    import fcntl
    import struct
    fd = os.open('/dev/net/tun', os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, 0x400454ca, struct.pack('16sH22x', name.encode(), 0x0001 | 0x1000))
    return fd                                   # TUNSETIFF, IFF_TUN | IFF_NO_PI


def cmd_delayline(holdpid, delay_ms, ready):
    """Packets read from one tun are written to the other DELAY_MS later (one FIFO per
    direction; the rate is shaped by tbf on the tun devices themselves)."""
    import collections
    import select
    libc = ctypes.CDLL(None, use_errno=True)
    a = tun_open('fbt0')
    ns = os.open('/proc/%d/ns/net' % int(holdpid), os.O_RDONLY)
    if libc.setns(ns, 0x40000000) != 0:                  # CLONE_NEWNET
        raise SystemExit('setns: %s' % os.strerror(ctypes.get_errno()))
    b = tun_open('fbt1')
    delay = float(delay_ms) / 1000.0
    stop = []
    signal.signal(signal.SIGTERM, lambda *x: stop.append(1))
    open(ready, 'w').close()
    q = {a: collections.deque(), b: collections.deque()}   # packets due for writing to fd
    peer = {a: b, b: a}
    while not stop:
        now = time.monotonic()
        due = [q[fd][0][0] for fd in q if q[fd]]
        wait = max(0.0, min(due) - now) if due else 0.5
        try:
            r, _, _ = select.select([a, b], [], [], wait)
        except InterruptedError:
            continue
        now = time.monotonic()
        for fd in r:
            for _ in range(256):
                try:
                    pkt = os.read(fd, 65536)
                except BlockingIOError:
                    break
                except OSError:
                    break
                q[peer[fd]].append((now + delay, pkt))
        now = time.monotonic()
        for fd, dq in q.items():
            while dq and dq[0][0] <= now:
                try:
                    os.write(fd, dq.popleft()[1])
                except OSError:
                    pass


# ------------------------------------------------------------------ summary
FERRY = ['ferry-enc', 'ferry-enc-z', 'ferry-chacha', 'ferry-int', 'ferry-none', 'ferry-raw']
PEERS = ['rsyncd', 'rsyncd-z', 'rsync-ssh', 'rsync-ssh-aesgcm', 'scp', 'rsync-dropbear', 'ftp']
WL_ORDER = ['NET', 'W1push', 'W1pull', 'W2push', 'W2pull', 'W3push', 'W3pull', 'W3dpush',
            'W3dpull', 'W4push', 'R1push', 'R3push', 'TXpush']
SECTION_ORDER = ['lo', 'i11', 'resume', 'slow', 'vr', 'off']
WL_LABEL = {'NET': 'TCP', 'W3dpush': 'W3 degenerate push', 'W3dpull': 'W3 degenerate pull',
            'R1push': 'resume W1 push', 'R3push': 'resume W3 push', 'TXpush': 'text tree push'}


def wl_label(wl):
    return WL_LABEL.get(wl, wl[:2] + ' ' + wl[2:])


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def num(r, k):
    try:
        return float(r[k])
    except (ValueError, KeyError, TypeError):
        return None


def fmt(x, p=2):
    return '-' if x is None else '%.*f' % (p, x)


class Agg:
    """Medians over the rounds of one (section, workload, tool) that passed verification."""
    def __init__(self, rows):
        gib = [num(r, 'bytes') / 2**30 for r in rows]
        self.n = len(rows)
        self.bytes = num(rows[0], 'bytes')
        self.files = num(rows[0], 'files')
        self.wall = med([num(r, 'wall_s') for r in rows])
        self.mbs = self.bytes / self.wall / 1e6 if self.wall else None
        self.cli = med([num(r, 'cli_cpu_s') / g for r, g in zip(rows, gib)
                        if num(r, 'cli_cpu_s') is not None])
        self.srv = med([num(r, 'srv_cpu_s') / g for r, g in zip(rows, gib)
                        if num(r, 'srv_cpu_s') is not None])
        rss = med([num(r, 'srv_maxrss_kb') for r in rows])
        self.rss = rss / 1024 if rss else None
        pss = med([num(r, 'srv_pss_kb') for r in rows])
        self.pss = pss / 1024 if pss else None
        wire = med([num(r, 'wire_bytes') for r in rows])
        self.wire = wire / 1e6 if wire is not None else None
        self.clean = sum(1 for r in rows if num(r, 'other_s') is not None and
                         num(r, 'other_s') < max(0.3, 0.1 * num(r, 'wall_s')))
        # resume rows: where the first attempt was killed (fraction of the file)
        self.kill = med([num(r, 'kill_at_bytes') / num(r, 'bytes') for r in rows
                         if num(r, 'kill_at_bytes') is not None and num(r, 'bytes')])
        self.killed = sum(1 for r in rows if num(r, 'kill_at_bytes') is not None)
        self.kill_late = sum(1 for r in rows if r.get('kill_at_bytes') in ('late', 'done'))


def ratio(a, b):
    return a / b if (a is not None and b) else None


def section_label(sec, meta):
    if sec in ('lo', 'resume'):
        return ''
    if sec == 'i11':
        return 'issue 11: '
    if sec == 'off':
        return 'W7 off-site %s %s ms ' % (meta.get('W7_RATE', '?'), meta.get('W7_RTT_MS', '?'))
    if sec == 'slow':
        return 'slow CPU %s MiB ' % meta.get('SLOW_MB', '?')
    emu = meta.get('W5_EMULATED')
    return 'W5 router %s MiB %s' % (meta.get('W5_MB', '?'), '[%s] ' % emu if emu else '')


def cmd_summarize(path, *opts):
    expect = None
    if opts and opts[0] == '--expect':
        expect = [tuple(l.split()) for l in open(opts[1]) if l.strip()]
    rows = list(csv.DictReader(open(path)))
    meta = {}
    mpath = os.path.join(os.path.dirname(path), 'meta.txt')
    if os.path.exists(mpath):
        for line in open(mpath):
            if '=' in line:
                k, v = line.rstrip('\n').split('=', 1)
                meta[k] = v
    good, bad, na = {}, [], {}
    for r in rows:
        if r['rc'] == '0' and r['verify'] == 'ok':
            good.setdefault((r['section'], r['wl'], r['tool']), []).append(r)
        elif r['verify'].startswith('n/a'):
            na[(r['section'], r['wl'], r['tool'])] = r['verify']
        else:
            bad.append(r)
    agg = {k: Agg(v) for k, v in good.items()}
    peers = [p for p in PEERS if any(k[2] == p for k in agg)]
    peer_cols = [p for p in peers]

    def sort_key(k):
        sec, wl, tool = k
        order = FERRY + PEERS + ['iperf3']
        return (SECTION_ORDER.index(sec) if sec in SECTION_ORDER else 9,
                WL_ORDER.index(wl) if wl in WL_ORDER else 9,
                order.index(tool) if tool in order else 99)

    print('| workload | tool | n | wall s | MB/s | client CPU s/GiB | server CPU s/GiB '
          '| server max RSS MiB | server PSS MiB | wire MB |' +
          ''.join(' vs %s |' % p for p in peer_cols))
    print('|' + '---|' * (10 + len(peer_cols)))
    for k in sorted(set(agg) | set(na), key=sort_key):
        sec, wl, tool = k
        wlname = section_label(sec, meta) + wl_label(wl)
        if tool == 'iperf3':
            wlname = {'lo': '', 'slow': 'slow CPU ', 'vr': 'W5 router ',
                      'off': section_label(sec, meta)}.get(sec, '') + 'TCP'
        if k not in agg:
            print('| %s | %s | %s |%s' % (wlname, tool, na[k], ' - |' * (7 + len(peer_cols))))
            continue
        a = agg[k]
        cells = []
        for p in peer_cols:
            b = agg.get((sec, wl, p))
            if tool in FERRY and b:
                cells.append(' / '.join(fmt(x) for x in (
                    ratio(a.wall, b.wall), ratio(a.cli, b.cli), ratio(a.srv, b.srv),
                    ratio(a.rss, b.rss))))
            else:
                cells.append('')
        n = '%d' % a.n + ('' if a.clean == a.n else ' (%d clean)' % a.clean)
        print('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%s' % (
            wlname, tool, n, fmt(a.wall, 3), fmt(a.mbs, 0), fmt(a.cli), fmt(a.srv),
            fmt(a.rss, 1), fmt(a.pss, 1), fmt(a.wire, 1), ''.join(' %s |' % c for c in cells)))
    print()
    print('Medians over n rounds that passed verification ("clean" = rounds in which other '
          'processes used < max(0.3 s, 10%% of wall) CPU). MB = 10^6 B, GiB = 2^30 B. '
          '"vs PEER" cells (ferry rows only) = ferry / peer for wall / client CPU per GiB / '
          'server CPU per GiB / server max RSS, same workload and run; below 1 = ferry better. '
          'Resume rows: the rerun after the first attempt was killed. '
          'Data: %s' % shown_path(path))
    print()
    targets(agg)
    targets11(agg, na, bad, meta)
    fails = 0
    if bad:
        print('\nFAILED runs (excluded from the table):')
        for r in bad:
            print('- round %s %s %s %s: rc=%s verify=%s' % (
                r['round'], r['section'], r['wl'], r['tool'], r['rc'], r['verify']))
        fails += len(bad)
    if expect is not None:
        missing = [e for i, e in enumerate(expect) if tuple(e) not in good and e not in expect[:i]]
        if missing:
            print('\nMISSING (no verified run): ' + ', '.join('/'.join(m) for m in missing))
            fails += len(missing)
    sys.exit(1 if fails else 0)


def targets(agg):
    """The issue's acceptance targets, each as a same-run ratio."""
    out = []

    def check(desc, sec, wl, tool, peer, what, limit, higher_is_better=False):
        a, b = agg.get((sec, wl, tool)), agg.get((sec, wl, peer))
        if not a or not b:
            return
        if what == 'wall':
            v = ratio(a.wall, b.wall)
        elif what == 'speed':
            v = ratio(b.wall, a.wall)
        else:
            v = ratio(a.srv, b.srv)
        if v is None:
            return
        ok = v >= limit if higher_is_better else v <= limit
        out.append('- %s %s: %.2f (target %s %.2f)' % (
            'PASS' if ok else 'FAIL', desc, v, '>=' if higher_is_better else '<=', limit))

    for wl in ('W1push', 'W1pull'):
        check('%s encrypt wall / rsyncd' % wl, 'lo', wl, 'ferry-enc', 'rsyncd', 'wall', 0.8)
        check('%s encrypt wall / scp' % wl, 'lo', wl, 'ferry-enc', 'scp', 'wall', 0.25)
        check('%s encrypt server CPU / scp' % wl, 'lo', wl, 'ferry-enc', 'scp', 'srv', 0.4)
        check('%s none wall / ftp' % wl, 'lo', wl, 'ferry-none', 'ftp', 'wall', 1.0)
        check('%s none server CPU / ftp' % wl, 'lo', wl, 'ferry-none', 'ftp', 'srv', 1.0)
        check('%s none --no-verify wall / ftp' % wl, 'lo', wl, 'ferry-raw', 'ftp', 'wall', 1.0)
        check('%s none --no-verify server CPU / ftp' % wl, 'lo', wl, 'ferry-raw', 'ftp', 'srv',
              1.0)
    for wl in ('W2push', 'W2pull'):
        check('%s encrypt wall / rsyncd' % wl, 'lo', wl, 'ferry-enc', 'rsyncd', 'wall', 0.8)
    check('slow CPU push encrypt (AES-GCM) MB/s / rsyncd', 'slow', 'W1push', 'ferry-enc',
          'rsyncd', 'speed', 1.2, True)
    check('slow CPU push encrypt chachapoly MB/s / rsyncd', 'slow', 'W1push', 'ferry-chacha',
          'rsyncd', 'speed', 0.8, True)
    for wl in ('W1push', 'W1pull'):
        check('W5 router %s encrypt MB/s / scp' % wl[2:], 'vr', wl, 'ferry-enc', 'scp',
              'speed', 1.5, True)
        check('W5 router %s encrypt MB/s / rsyncd' % wl[2:], 'vr', wl, 'ferry-enc', 'rsyncd',
              'speed', 1.0, True)
    rss = [(a.rss, wl, tool) for (sec, wl, tool), a in agg.items()
           if sec == 'lo' and tool in FERRY and wl[:2] in ('W1', 'W2') and a.rss]
    if rss:
        worst = max(rss)
        out.append('- %s ferry server max RSS in W1/W2, largest: %.1f MiB (%s %s; target <= 8)' % (
            'PASS' if worst[0] <= 8 else 'FAIL', worst[0], worst[1], worst[2]))
    if out:
        print('Targets (same-run ratios):')
        print('\n'.join(out))


def targets11(agg, na, bad=(), meta=None):
    """Issue 11's targets (delta, resume, compression): PASS/MISS with the figures."""
    out, meta = [], meta or {}
    if not any(k[0] in ('i11', 'resume', 'off') or (k[0] == 'vr' and k[1][:2] == 'W3')
               for k in list(agg) + list(na)):
        return

    def get(sec, wl, tool):
        return agg.get((sec, wl, tool))

    def missing(*keys):
        for k in keys:
            if k not in agg and k in na:
                return na[k]
        return 'n/a (not run)'

    def add(ok, desc, figure):
        out.append('- %s %s: %s' % ('PASS' if ok else 'MISS', desc, figure))

    def wall_vs(desc, a_key, b_key, limit, what='wall'):
        a, b = agg.get(a_key), agg.get(b_key)
        if not a or not b:
            out.append('- %s %s' % (missing(a_key, b_key), desc))
            return
        if what == 'wall':
            v, fig = ratio(a.wall, b.wall), '%s %.3f s, %s %.3f s' % (a_key[2], a.wall, b_key[2],
                                                                       b.wall)
        elif what == 'speed':
            v, fig = ratio(b.wall, a.wall), '%s %.1f MB/s, %s %.1f MB/s' % (
                a_key[2], a.mbs, b_key[2], b.mbs)
        elif what == 'srv':
            v, fig = ratio(a.srv, b.srv), '%s %s, %s %s CPU-s/GiB' % (
                a_key[2], fmt(a.srv, 3), b_key[2], fmt(b.srv, 3))
        else:
            v, fig = ratio(a.cli, b.cli), '%s %s, %s %s CPU-s/GiB' % (
                a_key[2], fmt(a.cli, 3), b_key[2], fmt(b.cli, 3))
        if v is None:
            out.append('- n/a %s (%s: a zero figure)' % (desc, fig))
            return
        higher = what == 'speed'
        add(v >= limit if higher else v <= limit, desc,
            '%.2f (%s; target %s %.2f)' % (v, fig, '>=' if higher else '<=', limit))

    F, R = 'ferry-enc', 'rsyncd'
    wall_vs('W3 push loopback, wall / rsyncd', ('i11', 'W3push', F), ('i11', 'W3push', R), 0.6)
    a = get('i11', 'W3push', F)
    if a and a.wire is not None:
        add(a.wire <= 1.15, 'W3 push loopback, wire bytes', '%.3f MB (target <= 1.15 MB)' % a.wire)
    else:
        out.append('- %s W3 push loopback, wire bytes' % missing(('i11', 'W3push', F)))
    a, b = get('i11', 'W3pull', F), get('i11', 'W3pull', R)
    if a and a.wire is not None:
        out.append('- (no target) W3 pull loopback, wire bytes: %s %.3f MB, %s %s MB' % (
            F, a.wire, R, '%.3f' % b.wire if b and b.wire is not None else '-'))
    for wl in ('W3push', 'W3pull'):
        wall_vs('W3 %s through W5 (shaped link, 4 %% of a core), wall / rsyncd' % wl[2:],
                ('vr', wl, F), ('vr', wl, R), 0.6)
    wall_vs("W3 pull loopback, the box's CPU per GiB / rsyncd's sender", ('i11', 'W3pull', F),
            ('i11', 'W3pull', R), 0.5, 'srv')
    for d in ('push', 'pull'):
        desc = 'degenerate W3 %s (all-zero basis), wall / normal W3 %s' % (d, d)
        tmo = [r for r in bad if (r['section'], r['wl'], r['tool'], r['rc']) ==
               ('i11', 'W3d' + d, F, '124')]
        b = get('i11', 'W3' + d, F)
        if tmo and ('i11', 'W3d' + d, F) not in agg:
            add(False, desc, 'timed out after %s s (%d round(s); normal W3 %s: %s s)' % (
                meta.get('DEG_TIMEOUT', '?'), len(tmo), d,
                fmt(b.wall, 3) if b else '-'))
            continue
        wall_vs(desc, ('i11', 'W3d' + d, F), ('i11', 'W3' + d, F), 1.1)
    for wl, what, limit in (('R1push', 'W1', None), ('R3push', 'W3', 2.0)):
        a = get('resume', wl, F)
        ref = get('resume', wl, R)
        refs = ''
        if ref and ref.wire is not None:
            refs = '; rsyncd --partial: %.3f MB' % ref.wire
        if not a or a.wire is None:
            out.append('- %s resume %s push killed at 50 %%, rerun' % (missing(('resume', wl, F)),
                                                                      what))
            continue
        kill = 'killed at %s of the file%s' % (
            '%.2f' % a.kill if a.kill is not None else '-',
            '' if not a.kill_late else '; in %d of %d rounds the kill came too late (the '
            'transfer had finished: nothing to resume, not a valid figure)' % (a.kill_late, a.n))
        if limit is None:
            frac = a.wire * 1e6 / a.bytes
            add(frac <= 0.52, 'resume W1 push killed at 50 %, rerun sends',
                '%.3f GiB = %.2f of the file (%s; target <= 0.52 x the file, 0.52 GiB at 1 GiB%s)'
                % (a.wire * 1e6 / 2**30, frac, kill, refs))
        else:
            add(a.wire <= limit, 'resume W3 push killed at 50 %, rerun sends',
                '%.3f MB (%s; target <= 2 MB%s)' % (a.wire, kill, refs))
    wall_vs('W7 text tree push, ferry -z MB/s / rsync -z', ('off', 'TXpush', 'ferry-enc-z'),
            ('off', 'TXpush', 'rsyncd-z'), 1.5, 'speed')
    wall_vs('W1 push (random) loopback, client CPU with -z / without',
            ('i11', 'W1push', 'ferry-enc-z'), ('i11', 'W1push', F), 1.05, 'cli')
    rss = [(a.rss, wl, tool) for (sec, wl, tool), a in agg.items()
           if sec == 'i11' and tool in FERRY and wl in ('W3push', 'W3pull') and a.rss]
    if rss:
        worst = max(rss)
        add(worst[0] <= 8, 'server peak RSS in W3 push and pull',
            '%.1f MiB (largest: %s %s; target <= 8 MiB)' % worst)
    else:
        out.append('- n/a (not run) server peak RSS in W3 push and pull')
    print('\nTargets, issue 11 (same-run figures):')
    print('\n'.join(out))


if __name__ == '__main__':
    globals()['cmd_' + sys.argv[1].replace('-', '')](*sys.argv[2:])
