#!/usr/bin/env python3
"""treecmp.py A B [--no-owner] [--no-link-owner] [--no-xattrs] [--root] [--links] [--fake A|B]

Compares two trees entry by entry with everything rsync -aAX -oD keeps:
type, permission bits, owner and group, mtime (ns; not for the root unless
asked), size and contents, symlink targets, device numbers, and every
xattr the kernel shows (POSIX ACLs included, as system.posix_acl_*).
--fake SIDE: that tree is a fake-super copy: its user.rsync.%stat gives the
type, mode, device and owner, and its user.rsync.X xattrs are X.
--links: the hard-link groups (paths sharing an inode) must be the same.
Prints one line per difference; exit 1 if any, 0 if none.
"""
import hashlib
import os
import stat
import sys


def fake_view(path, st):
    """(mode, rdev major, minor, uid, gid) from user.rsync.%stat, or None."""
    try:
        v = os.getxattr(path, "user.rsync.%stat", follow_symlinks=False).decode()
    except OSError:
        return None
    mode, dev, ids = v.split(" ")
    ma, mi = dev.split(",")
    uid, gid = ids.split(":")
    return int(mode, 8), int(ma), int(mi), int(uid), int(gid)


def xattrs(path, fake):
    out = {}
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return out
    for n in names:
        shown = n
        if fake:
            if n.startswith("user.rsync.%"):
                continue
            if n.startswith("user.rsync."):
                shown = n[len("user.rsync."):]
            elif n.startswith(("trusted.", "security.")):
                continue
        out[shown] = os.getxattr(path, n, follow_symlinks=False)
    return out


def describe(root, rel, opts, fake):
    p = os.path.join(root, rel) if rel else root
    st = os.lstat(p)
    mode, uid, gid = st.st_mode, st.st_uid, st.st_gid
    rdev = (os.major(st.st_rdev), os.minor(st.st_rdev)) if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else None
    size = st.st_size
    if fake:
        fv = fake_view(p, st)
        if fv:
            mode, ma, mi, uid, gid = fv
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                rdev = (ma, mi)
            if not stat.S_ISREG(mode):
                size = 0
    d = {"type": stat.S_IFMT(mode), "perm": oct(stat.S_IMODE(mode))}
    if "owner" in opts and not (stat.S_ISLNK(mode) and "no-link-owner" in opts):
        d["uid"], d["gid"] = uid, gid
    if rel or "root" in opts:
        if not stat.S_ISLNK(mode):
            d["mtime"] = st.st_mtime_ns
    if rdev:
        d["rdev"] = rdev
    if stat.S_ISLNK(mode):
        # a fake-super link is a file holding its target, as rsync keeps it
        if stat.S_ISLNK(st.st_mode):
            d["target"] = os.readlink(p)
        else:
            with open(p, "rb") as f:
                d["target"] = f.read().decode()
    elif stat.S_ISREG(mode):
        d["size"] = size
        with open(p, "rb") as f:
            d["sha"] = hashlib.sha256(f.read()).hexdigest()
    if "xattrs" in opts and not stat.S_ISLNK(mode):
        d["xattrs"] = xattrs(p, fake)
    return d


def link_groups(root):
    """The hard-link groups of the tree: sets of paths sharing an inode."""
    by_ino = {}
    for rel in walk(root):
        st = os.lstat(os.path.join(root, rel) if rel else root)
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            by_ino.setdefault((st.st_dev, st.st_ino), set()).add(rel)
    return sorted(sorted(g) for g in by_ino.values() if len(g) > 1)


def walk(root):
    out = [""]
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for n in sorted(dirnames + filenames):
            out.append(n if rel == "." else os.path.join(rel, n))
    return sorted(out)


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    opts = {"owner", "xattrs"}
    fake = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--no-owner":
            opts.discard("owner")
        elif a == "--no-xattrs":
            opts.discard("xattrs")
        elif a == "--no-link-owner":
            opts.add("no-link-owner")
        elif a == "--links":
            opts.add("links")
        elif a == "--root":
            opts.add("root")
        elif a == "--fake":
            fake = argv[i + 1]
            args.remove(fake)
            i += 1
        i += 1
    a, b = args
    diffs = 0
    wa, wb = walk(a), walk(b)
    for rel in sorted(set(wa) ^ set(wb)):
        print(f"{rel or '.'}: only in {'A' if rel in wa else 'B'}")
        diffs += 1
    for rel in sorted(set(wa) & set(wb)):
        da = describe(a, rel, opts, fake == "A")
        db = describe(b, rel, opts, fake == "B")
        for k in sorted(set(da) | set(db)):
            if da.get(k) != db.get(k):
                print(f"{rel or '.'}: {k}: {da.get(k)!r} != {db.get(k)!r}")
                diffs += 1
    if "links" in opts:
        la, lb = link_groups(a), link_groups(b)
        if la != lb:
            print(f"hard links: {la} != {lb}")
            diffs += 1
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
