# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
A clean Debian 12 root of tests/cleanroot: unpacked from a cached tar
(tests/cleanroot/mkroot.sh), its bind mounts, commands in it by chroot,
and the snapshot of its files that install + purge must leave equal.

Root is a tests/lib/chroot.py Tree: its close() undoes every mount
under it, then removes the tree only if /proc/self/mountinfo shows
nothing left under it: an rm -rf through a bind of /dev would empty the
host's.
"""

import os
import shutil
import tempfile

import sdstest
from chroot import ENV, Tree, mounts_under, run
from sdstest import BUILD

CACHE = os.path.join(BUILD, "cleanroot")
ARCHIVES = os.path.join(CACHE, "archives")
MINBASE = os.path.join(CACHE, "bookworm-minbase.tar")
WITH_SYSTEMD = os.path.join(CACHE, "bookworm-systemd.tar")

# What apt itself changes by installing and purging anything, left out of
# the before/after comparison: its download cache (and its lock and
# partial/), its package indexes (lists/, auxfiles/ for local .debs),
# extended_states (which packages were installed as dependencies: purge
# leaves the file, emptied), and its logs.  dpkg's own database is NOT
# left out: its status and info/ must come back the same.
APT_OWN = ("/var/cache/apt/", "/var/lib/apt/", "/var/log/apt/")


class Root(Tree):
    """@tar unpacked into a fresh dir under build/cleanroot (the same
    file system as the cache: 0.3 GB does not go to a tmpfs /tmp)."""

    def __init__(self, tar):
        super().__init__(tempfile.mkdtemp(prefix="root-", dir=CACHE))
        os.mkdir(self.dir)
        try:
            run(["tar", "--numeric-owner", "-xpf", tar, "-C", self.dir])
        except BaseException:
            # No Root for the caller to clean up: the half-unpacked
            # tree (hundreds of MB in the cache dir) goes here.
            shutil.rmtree(self.top, ignore_errors=True)
            raise

    def chroot_mounts(self):
        """What apt and maintainer scripts need in a chroot, and the
        shared download cache."""
        self.bind("/proc", "/proc")
        self.bind("/dev", "/dev")
        self.bind(ARCHIVES, "/var/cache/apt/archives")

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


def have_roots():
    for t in (MINBASE, WITH_SYSTEMD):
        if not os.path.isfile(t):
            return ("%s is missing: the clean root could not be built "
                    "(make cleanroot-tests runs tests/cleanroot/mkroot.sh; "
                    "it needs root, debootstrap and the Debian mirror)" % t)
    return None


__all__ = ["ENV", "Root", "run", "have_roots", "mounts_under", "sdstest"]
