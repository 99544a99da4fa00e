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
    # ppid, own utime+stime (all threads), reaped children's cutime+cstime
    return int(f[1]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14])


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
        ticks, d = tree_ticks(root, all_procs())
        if set(d) <= base or time.time() - t0 > float(timeout):
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


# ------------------------------------------------------------------ summary
FERRY = ['ferry-enc', 'ferry-chacha', 'ferry-int', 'ferry-none', 'ferry-raw']
PEERS = ['rsyncd', 'rsync-ssh', 'rsync-ssh-aesgcm', 'scp', 'rsync-dropbear', 'ftp']
WL_ORDER = ['NET', 'W1push', 'W1pull', 'W2push', 'W2pull', 'W3push', 'W4push']
SECTION_ORDER = ['lo', 'slow', 'vr']


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


def ratio(a, b):
    return a / b if (a is not None and b) else None


def section_label(sec, meta):
    if sec == 'lo':
        return ''
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
    good, bad = {}, []
    for r in rows:
        if r['rc'] == '0' and r['verify'] == 'ok':
            good.setdefault((r['section'], r['wl'], r['tool']), []).append(r)
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
    for k in sorted(agg, key=sort_key):
        a = agg[k]
        sec, wl, tool = k
        wlname = section_label(sec, meta) + (wl[:2] + ' ' + wl[2:] if wl != 'NET' else 'TCP')
        if tool == 'iperf3':
            wlname = {'lo': '', 'slow': 'slow CPU ', 'vr': 'W5 router '}.get(sec, '') + 'TCP'
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
          'Data: %s' % shown_path(path))
    print()
    targets(agg)
    fails = 0
    if bad:
        print('\nFAILED runs (excluded from the table):')
        for r in bad:
            print('- round %s %s %s %s: rc=%s verify=%s' % (
                r['round'], r['section'], r['wl'], r['tool'], r['rc'], r['verify']))
        fails += len(bad)
    if expect is not None:
        missing = [e for e in expect if tuple(e) not in good]
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


if __name__ == '__main__':
    globals()['cmd_' + sys.argv[1].replace('-', '')](*sys.argv[2:])
