#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""The test library's own checks (`make testlib-test`, root, bpffs).

KernelSnapshot looks only at its own test's objects: a program pinned
under another run's pin root is none of its business (CI beside a
developer's run), one pinned under its own root is a leak, reported with
exact numbers.  Programs come from build/gen/copy.bpf.o (bpftool prog
loadall), so the build must have run."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sdstest  # noqa: E402
from sdstest import BUILD, Fail, check, eq  # noqa: E402

OBJ = os.path.join(BUILD, "gen", "copy.bpf.o")


def load_pinned(root):
    """Every program of OBJ, pinned under @root/p; how many."""
    os.makedirs(root, exist_ok=True)
    r = subprocess.run(["bpftool", "prog", "loadall", OBJ, root + "/p"],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "bpftool prog loadall %s: %s"
          % (OBJ, r.stderr.strip()))
    return len(os.listdir(root + "/p"))


def snapshot_isolation():
    mine = sdstest.TestDir("mine", "sds-testlib-")
    other = sdstest.TestDir("other", "sds-testlib-")
    try:
        # Another run's: a TestDir of another process, not registered here.
        sdstest._OWN_PIN_ROOTS.discard(other.pin_root)
        snap = sdstest.KernelSnapshot()
        eq(snap.roots, [mine.pin_root], "the snapshot's roots")
        load_pinned(other.pin_root)
        snap.assert_nothing_new(set(), "another run's pins", timeout=1)
        n = load_pinned(mine.pin_root)
        check(n > 0, "%s holds no program" % OBJ)
        try:
            snap.assert_nothing_new(set(), "own pins", timeout=1)
        except Fail as e:
            msg = str(e)
        else:
            raise Fail("a program pinned under the own root: not reported")
        want = "own pins: left behind in the kernel: %d programs " % n
        check(msg.startswith(want), "want %r, got %r" % (want, msg))
        want = "%d pins under ['%s']" % (n + 2, mine.pin_root)
        check(want in msg, "want %r in %r" % (want, msg))
        # Taken away, nothing is left: the check passes again.
        sdstest.remove_pin_root(mine.pin_root)
        snap.assert_nothing_new(set(), "own pins removed")
    finally:
        sdstest.remove_pin_root(other.pin_root)
        mine.remove()
        other.remove()
    eq(sdstest._OWN_PIN_ROOTS & {mine.pin_root, other.pin_root}, set(),
       "the roots after remove()")


def main():
    check(os.path.exists(OBJ), "%s missing: run make first" % OBJ)
    snapshot_isolation()
    print("testlib: 1 passed")


if __name__ == "__main__":
    try:
        main()
    except Fail as e:
        print("FAIL: %s" % e)
        sys.exit(1)
