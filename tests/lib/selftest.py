#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""The test library's own checks (`make testlib-test`, root, bpffs).

KernelSnapshot looks only at its own test's objects: a program pinned
under another run's pin root is none of its business (CI beside a
developer's run), one pinned under its own root is a leak, reported with
exact numbers; one still held by an fd of a process that should have
ended is a leak too, one held by anybody else is not.  Programs come from
build/gen/copy.bpf.o (bpftool prog loadall), so the build must have
run.  A server started on a free port is ours: when another process
takes the port first, it starts again on another."""

import ctypes
import errno
import json
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sdstest  # noqa: E402
from sdstest import BUILD, Fail, check, eq  # noqa: E402

OBJ = os.path.join(BUILD, "gen", "copy.bpf.o")
SUITE = sdstest.Suite(timeout=60)


class Ctx:
    """Each test cleans up what it made itself (its roots, its servers)."""

    def __init__(self, name):
        self.name = name

    def cleanup(self):
        pass


def load_pinned(root):
    """Every program of OBJ, pinned under @root/p; how many."""
    os.makedirs(root, exist_ok=True)
    r = subprocess.run(["bpftool", "prog", "loadall", OBJ, root + "/p"],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "bpftool prog loadall %s: %s"
          % (OBJ, r.stderr.strip()))
    return len(os.listdir(root + "/p"))


def bpf_obj_get(path):
    """An fd of the pinned object @path (bpf(2), BPF_OBJ_GET)."""
    libc = ctypes.CDLL(None, use_errno=True)
    cpath = ctypes.create_string_buffer(path.encode())
    attr = (ctypes.c_uint8 * 128)()
    ctypes.c_uint64.from_buffer(attr, 0).value = ctypes.addressof(cpath)
    fd = libc.syscall(321, 7, attr, 128)      # __NR_bpf, BPF_OBJ_GET
    check(fd >= 0, "BPF_OBJ_GET %s: %s"
          % (path, os.strerror(ctypes.get_errno())))
    return fd


def prog_id(path):
    r = subprocess.run(["bpftool", "--json", "prog", "show", "pinned", path],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "bpftool prog show pinned %s: %s"
          % (path, r.stderr.strip()))
    return json.loads(r.stdout)["id"]


@SUITE.test
def snapshot_holders(ctx):
    """A program loaded after the snapshot and held only by an fd (its pin
    gone): a leak when the holder is among the dead pids, not otherwise
    (another run's process); freed, the check passes again."""
    mine = sdstest.TestDir("mine", "sds-testlib-")
    fd = -1
    try:
        snap = sdstest.KernelSnapshot()
        load_pinned(mine.pin_root)
        pin = os.path.join(mine.pin_root, "p",
                           sorted(os.listdir(mine.pin_root + "/p"))[0])
        pid = prog_id(pin)
        fd = bpf_obj_get(pin)
        sdstest.remove_pin_root(mine.pin_root)
        snap.assert_nothing_new({os.getpid() + 1}, "held by another",
                                timeout=1)
        try:
            snap.assert_nothing_new({os.getpid()}, "held", timeout=1)
        except Fail as e:
            msg = str(e)
        else:
            raise Fail("a program held by a dead pid: not reported")
        want = ("held: left behind in the kernel: 1 programs {%d: 'held by "
                "pids [%d]'} (id: what keeps it), 0 pins under ['%s']: []"
                % (pid, os.getpid(), mine.pin_root))
        eq(msg, want, "the report")
        os.close(fd)
        fd = -1
        snap.assert_nothing_new({os.getpid()}, "closed")
    finally:
        if fd >= 0:
            os.close(fd)
        mine.remove()


@SUITE.test
def snapshot_isolation(ctx):
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


# A server of ours: binds 127.0.0.1:PORT as sds-admin does (SO_REUSEADDR),
# listens, lives until killed; exits 3 at once when argv[2] says so.
SERVER = """import socket, sys, time
if sys.argv[2] == "fail":
    sys.exit(3)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
time.sleep(60)
"""


@SUITE.test
def ports(ctx):
    """serve_on_free_port: a port another process took before our server
    bound it is given up for another, and the server found up is ours; a
    server that fails for another reason is a Fail.  dead_port: refused,
    and nobody can bind it."""
    procs, taken = [], []

    def start(port, how="ok"):
        if len(procs) == 0 and how == "ok":
            # Another run's server takes the port first.
            o = socket.socket()
            o.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            o.bind(("127.0.0.1", port))
            o.listen()
            taken.append((o, port))
        p = sdstest.spawn([sys.executable, "-c", SERVER, str(port), how],
                          stderr=subprocess.DEVNULL)
        procs.append(p)
        return p

    try:
        port, p = sdstest.serve_on_free_port(start, "the server")
        eq(len(procs), 2, "servers started")
        eq(procs[0].wait(10), 1, "the first one's exit (EADDRINUSE)")
        check(port != taken[0][1], "the taken port %d again" % port)
        check(sdstest.listens(p, port), "the server does not listen")
        check(not sdstest.listens(procs[0], taken[0][1]),
              "the other's socket taken for the first server's")
        try:
            sdstest.serve_on_free_port(lambda n: start(n, "fail"), "bad")
        except Fail as e:
            msg = str(e)
        else:
            raise Fail("a server that exits 3: no Fail")
        check(msg.startswith("bad exited with 3 before it listened on port "),
              "the message: %r" % msg)
        eq(len(procs), 3, "servers started after one exits 3")
        sock, dead = sdstest.dead_port()
        try:
            c = socket.socket()
            eq(c.connect_ex(("127.0.0.1", dead)), errno.ECONNREFUSED,
               "connect to the dead port")
            c.close()
            b = socket.socket()
            b.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            eq(_bind_errno(b, dead), errno.EADDRINUSE,
               "bind of the dead port")
            b.close()
        finally:
            sock.close()
    finally:
        for p in procs:
            sdstest.reap(p)
        for o, _ in taken:
            o.close()


def _bind_errno(s, port):
    try:
        s.bind(("127.0.0.1", port))
    except OSError as e:
        return e.errno
    return 0


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(__file__, SUITE, Ctx, needs=(OBJ,)))
