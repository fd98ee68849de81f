# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
A clean Debian 12 root of tests/cleanroot: unpacked from a cached tar
(tests/cleanroot/mkroot.sh), its bind mounts, commands in it by chroot,
and the snapshot of its files that install + purge must leave equal.

Every mount is recorded when made and undone by Root.cleanup(), which
then removes the tree only if /proc/self/mountinfo shows nothing left
under it: an rm -rf through a bind of /dev would empty the host's.
"""

import os
import shutil
import subprocess
import tempfile

import sdstest
from sdstest import BUILD, Fail, log

CACHE = os.path.join(BUILD, "cleanroot")
ARCHIVES = os.path.join(CACHE, "archives")
MINBASE = os.path.join(CACHE, "bookworm-minbase.tar")
WITH_SYSTEMD = os.path.join(CACHE, "bookworm-systemd.tar")
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
       "DEBIAN_FRONTEND": "noninteractive", "HOME": "/root"}

# What apt itself changes by installing and purging anything, left out of
# the before/after comparison: its download cache (and its lock and
# partial/), its package indexes (lists/, auxfiles/ for local .debs),
# extended_states (which packages were installed as dependencies: purge
# leaves the file, emptied), and its logs.  dpkg's own database is NOT
# left out: its status and info/ must come back the same.
APT_OWN = ("/var/cache/apt/", "/var/lib/apt/", "/var/log/apt/")


def run(argv, ok=True, timeout=300, **kw):
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


class Root:
    """@tar unpacked into a fresh dir under build/cleanroot (the same
    file system as the cache: 0.3 GB does not go to a tmpfs /tmp)."""

    def __init__(self, tar):
        self.top = tempfile.mkdtemp(prefix="root-", dir=CACHE)
        self.dir = os.path.join(self.top, "root")
        os.mkdir(self.dir)
        self.mounted = []
        try:
            run(["tar", "--numeric-owner", "-xpf", tar, "-C", self.dir])
        except BaseException:
            # No Root for the caller to clean up: the half-unpacked
            # tree (hundreds of MB in the cache dir) goes here.
            shutil.rmtree(self.top, ignore_errors=True)
            raise

    def path(self, p):
        return os.path.join(self.dir, p.lstrip("/"))

    def bind(self, src, dst):
        run(["mount", "--bind", src, self.path(dst)])
        self.mounted.append(self.path(dst))

    def chroot_mounts(self):
        """What apt and maintainer scripts need in a chroot, and the
        shared download cache."""
        self.bind("/proc", "/proc")
        self.bind("/dev", "/dev")
        self.bind(ARCHIVES, "/var/cache/apt/archives")

    def chroot(self, argv, ok=True, timeout=300, **kw):
        return run(["chroot", self.dir] + argv, ok=ok, timeout=timeout,
                   env=ENV, **kw)

    def snapshot(self):
        """Every path of the root but apt's own (APT_OWN) with its type,
        mode, owner, group and link target, as a sorted list of lines.
        find -xdev stays off /proc and /dev (other file systems)."""
        out = self.chroot(["find", "/", "-xdev", "-printf",
                           "%y %m %u:%g %p -> %l\\n"]).stdout
        return sorted(l for l in out.splitlines()
                      if not l.split(" ", 3)[3].startswith(APT_OWN))

    def packages(self):
        return sorted(self.chroot(["dpkg-query", "-W", "-f",
                                   "${Package} ${Version} ${Status}\\n"])
                      .stdout.splitlines())

    def cleanup(self):
        """Undo the mounts, remove the tree; an error string if a mount
        stayed (the tree is then left alone)."""
        for mp in self.mounted[::-1]:
            if run(["umount", mp], ok=False).returncode:
                run(["umount", "-l", mp], ok=False)
        left = mounts_under(self.top)
        if left:
            return "still mounted under %s: %s; not removing it" % (
                self.top, ", ".join(left))
        shutil.rmtree(self.top, ignore_errors=True)
        return None


def have_roots():
    for t in (MINBASE, WITH_SYSTEMD):
        if not os.path.isfile(t):
            return ("%s is missing: the clean root could not be built "
                    "(make cleanroot-tests runs tests/cleanroot/mkroot.sh; "
                    "it needs root, debootstrap and the Debian mirror)" % t)
    return None


__all__ = ["Root", "run", "have_roots", "mounts_under", "sdstest"]
