# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
A root tree a test runs commands in by chroot, shared by tests/deb (an
overlay of this host's /) and tests/cleanroot (a clean Debian 12
unpacked from a tar): the commands it runs (run()), the mounts under a
path (mounts_under()), and Tree, whose close() unmounts everything
under its top dir, innermost first, and removes the dir only when
/proc/self/mountinfo shows nothing left there: an rm -r through a bind
of /dev would empty the host's.
"""

import os
import shutil
import subprocess

from sdstest import Fail, log

# What runs in the chroot: no PKG_CONFIG_* or PATH of the caller, the
# system's tools first (as a root shell on the host has them).
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
       "HOME": "/root", "DEBIAN_FRONTEND": "noninteractive"}


def run(argv, ok=True, timeout=300, **kw):
    """@argv run to its end, its output captured; with @ok, a non-zero
    exit fails the test with the tails of both streams."""
    log(" ".join(argv))
    p = subprocess.run(argv, capture_output=True, text=True,
                       timeout=timeout, **kw)
    if ok and p.returncode:
        raise Fail("%s: exit %d: %s%s" % (" ".join(argv), p.returncode,
                                          p.stdout[-1500:], p.stderr[-1500:]))
    return p


def mounts_under(path):
    """Mount points at or under @path, innermost (last mounted) first."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4].replace("\\040", " ")
            if mp == path or mp.startswith(path + "/"):
                out.append(mp)
    return out[::-1]


class Tree:
    """The root @top/root of a tree at @top (made by the caller)."""

    def __init__(self, top):
        self.top = top
        self.dir = os.path.join(top, "root")
        self.closed = False

    def path(self, p):
        return os.path.join(self.dir, p.lstrip("/"))

    def bind(self, src, dst, *opts):
        run(["mount"] + list(opts) + ["--bind", src, self.path(dst)])

    def chroot(self, argv, ok=True, timeout=300, **kw):
        kw.setdefault("env", ENV)
        return run(["chroot", self.dir] + argv, ok=ok, timeout=timeout, **kw)

    def close(self, remove=shutil.rmtree):
        """Every mount under top undone (lazily if it is busy), then
        @remove(top); an error string, and top left alone, if a mount
        stayed."""
        if self.closed:
            return None
        self.closed = True
        for mp in mounts_under(self.top):
            if run(["umount", mp], ok=False).returncode:
                run(["umount", "-l", mp], ok=False)
        left = mounts_under(self.top)
        if left:
            return "still mounted under %s: %s; not removing it" % (
                self.top, ", ".join(left))
        remove(self.top)
        return None
