#!/usr/bin/env python3
"""sparse_cmp.py A B: exit 0 when the two files have the same size and the same
bytes, 1 (naming the first differing offset) when not: cmp(1)'s answer.

cmp reads every byte, and reading the holes of three 5 GiB sparse files took
most of test_sparse's 40 s. A hole reads as zeros, so a range that is a hole
in both files is equal without being read: only the union of the two files'
data segments (SEEK_DATA / SEEK_HOLE) is read, from both files.
"""
import errno
import os
import sys

CHUNK = 1 << 20


def data_segments(fd, size):
    """The [start, end) ranges of fd that hold data (the rest are holes)."""
    segs, off = [], 0
    while off < size:
        try:
            start = os.lseek(fd, off, os.SEEK_DATA)
        except OSError as e:
            if e.errno == errno.ENXIO:   # no data after off
                break
            raise
        end = os.lseek(fd, start, os.SEEK_HOLE)
        segs.append((start, end))
        off = end
    return segs


def union(a, b):
    out = []
    for s, e in sorted(a + b):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def first_difference(fa, fb, segs):
    for start, end in segs:
        off = start
        while off < end:
            n = min(CHUNK, end - off)
            x, y = os.pread(fa, n, off), os.pread(fb, n, off)
            if x != y:
                for i in range(min(len(x), len(y))):
                    if x[i] != y[i]:
                        return off + i
                return off + min(len(x), len(y))
            off += n
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: sparse_cmp.py A B")
    a, b = sys.argv[1:]
    fa, fb = os.open(a, os.O_RDONLY), os.open(b, os.O_RDONLY)
    sa, sb = os.fstat(fa).st_size, os.fstat(fb).st_size
    if sa != sb:
        print(f"{a} {b} differ: size {sa} vs {sb}")
        sys.exit(1)
    diff = first_difference(fa, fb, union(data_segments(fa, sa), data_segments(fb, sb)))
    if diff is not None:
        print(f"{a} {b} differ: byte {diff + 1}")
        sys.exit(1)


main()
