#!/usr/bin/env python3
"""A tree that lives through a week of backups (issue 13's tests).

  snapweek.py init DIR SEED [FILES]   a tree of FILES files (default 300)
  snapweek.py day DIR SEED DAY        one day's changes: files rewritten,
                                      added, deleted, chmod-ed, touched;
                                      symlinks; whole directories gone;
                                      a file that becomes a directory and
                                      a directory that becomes a file
Deterministic for a seed; every mtime is set explicitly, at whole seconds
plus some nanoseconds, so that a restore can be compared exactly."""
import os
import random
import shutil
import sys


def entries(root):
    files, dirs, links = [], [], []
    for d, ds, fs in os.walk(root):
        for n in ds:
            p = os.path.join(d, n)
            (links if os.path.islink(p) else dirs).append(p)
        for n in fs:
            p = os.path.join(d, n)
            (links if os.path.islink(p) else files).append(p)
    return sorted(files), sorted(dirs), sorted(links)


def stamp(rng, p):
    t = 1_700_000_000 + rng.randrange(10_000_000)
    os.utime(p, ns=(t * 10**9, t * 10**9 + rng.randrange(10**9)), follow_symlinks=False)


def write(rng, p):
    size = rng.choice([0, 1, 100, 4096, 70_000, rng.randrange(200_000)])
    with open(p, "wb") as f:
        f.write(rng.randbytes(size))
    os.chmod(p, rng.choice([0o644, 0o600, 0o755, 0o640]))
    stamp(rng, p)


def init(root, rng, count):
    os.makedirs(root, exist_ok=True)
    dirs = [root]
    for i in range(count // 10):
        d = os.path.join(rng.choice(dirs), f"d{i:03}")
        os.makedirs(d, exist_ok=True)
        dirs.append(d)
    for i in range(count):
        write(rng, os.path.join(rng.choice(dirs), f"f{i:04}"))
    for i in range(count // 20):
        os.symlink(f"../target{i}", os.path.join(rng.choice(dirs), f"l{i:03}"))
    for d in reversed(dirs):
        stamp(rng, d)


def day(root, rng, n):
    files, dirs, links = entries(root)
    touched = set()
    for p in rng.sample(files, max(1, len(files) // 50)):      # rewritten
        write(rng, p)
        touched.add(os.path.dirname(p))
    for p in rng.sample(files, max(1, len(files) // 100)):     # mode only
        if os.path.exists(p):
            os.chmod(p, 0o600 if os.stat(p).st_mode & 0o077 else 0o644)
    for p in rng.sample(files, max(1, len(files) // 100)):     # mtime only
        if os.path.exists(p):
            stamp(rng, p)
    for i in range(max(1, len(files) // 100)):                 # added
        d = rng.choice(dirs + [root])
        write(rng, os.path.join(d, f"new{n}_{i}"))
        touched.add(d)
    for p in rng.sample(files, max(1, len(files) // 100)):     # deleted
        if os.path.exists(p) and not os.path.islink(p):
            os.unlink(p)
            touched.add(os.path.dirname(p))
    if links:                                                  # a link retargeted
        p = rng.choice(links)
        os.unlink(p)
        os.symlink(f"elsewhere{n}", p)
        touched.add(os.path.dirname(p))
    leaves = [d for d in dirs if not any(x.startswith(d + "/") for x in dirs)]
    if leaves:                                                 # a directory gone
        d = rng.choice(leaves)
        shutil.rmtree(d)
        touched.add(os.path.dirname(d))
        dirs = [x for x in dirs if x != d]
    files = [p for p in entries(root)[0]]
    if files:                                                  # a file becomes a directory
        p = rng.choice(files)
        os.unlink(p)
        os.mkdir(p)
        write(rng, os.path.join(p, "inside"))
        stamp(rng, p)
        touched.add(os.path.dirname(p))
    leaves = [d for d in entries(root)[1] if not os.listdir(d) or
              all(os.path.isfile(os.path.join(d, x)) for x in os.listdir(d))]
    if leaves:                                                 # a directory becomes a file
        d = rng.choice(leaves)
        shutil.rmtree(d)
        write(rng, d)
        touched.add(os.path.dirname(d))
    for d in sorted(touched, key=len, reverse=True):
        if os.path.isdir(d) and d != root:
            stamp(rng, d)


def main():
    cmd, root, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if cmd == "init":
        init(root, random.Random(seed), int(sys.argv[4]) if len(sys.argv) > 4 else 300)
    elif cmd == "day":
        n = int(sys.argv[4])
        day(root, random.Random(seed * 1000 + n), n)
    else:
        sys.exit(f"snapweek.py: unknown command {cmd}")


if __name__ == "__main__":
    main()
