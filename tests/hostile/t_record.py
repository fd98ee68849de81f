# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
`sds-bpf record --out FILE` (root) writes captured requests, which may
hold passwords, into a file only root can read: a FILE someone else made
first (0666, held open by them) is refused and left as it was, so
nothing root records reaches them (loader/cli/record.c).
"""

import os
import stat
import subprocess
import time

from hostile_lib import AS_NOBODY, NOBODY, test
from sdstest import BUILD, SDS, check, eq

COPYTARGET = os.path.join(BUILD, "test", "targets", "copytarget")
APP = "copytarget"

# As nobody: make @path 0666, hold it open, and at "read" on stdin say
# how many bytes the held descriptor reads.
HOLDER = r"""
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
os.fchmod(fd, 0o666)
print("ready", flush=True)
sys.stdin.readline()
n = 0
while True:
    b = os.read(fd, 65536)
    if not b:
        break
    n += len(b)
print("read %d" % n, flush=True)
"""


def go(t, n, size):
    t.stdin.write(b"go %d %d\n" % (n, size))
    t.stdin.flush()
    line = t.stdout.readline().split()
    check(line[:2] == [b"done", b"%d" % n], "copytarget said %r" % line)


def record(ctx, path, for_s):
    out = os.path.join(ctx.tmp, "rec-%d.out" % len(ctx.others))
    err = out[:-4] + ".err"
    with open(out, "wb") as o, open(err, "wb") as e:
        p = subprocess.Popen([SDS, "record", "--app", APP, "req", "--out", path,
                              "--for", str(for_s)], stdout=o, stderr=e,
                             env=ctx.env, cwd=ctx.tmp, start_new_session=True)
    ctx.others.append(p)
    return p, out, err


@test
def test_record_out_precreated(ctx):
    """nobody makes FILE (0666) in a directory it can write and holds it
    open; root's `record --out FILE` while 100 requests are captured says
    one line and exits 1, FILE keeps owner nobody, mode 0666 and 0 bytes,
    and nobody's descriptor reads 0 bytes.  A new name gets all 100
    records, in a file of root's, mode 0600."""
    ctx.attach(["--app", APP, COPYTARGET, "req=handle_request:copy=1,2"], APP)
    t = subprocess.Popen([COPYTARGET], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         cwd=ctx.tmp, start_new_session=True)
    ctx.others.append(t)
    shared = os.path.join(ctx.tmp, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o777)
    path = os.path.join(shared, "peak.rec")
    h = ctx.spawn(["python3", "-c", HOLDER, path], nobody=True,
                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    eq(h.stdout.readline(), b"ready\n", "the holder's first line")

    p, out, err = record(ctx, path, 2)
    time.sleep(0.5)
    go(t, 100, 50)
    eq(p.wait(10), 1, "record's exit status")
    eq(open(err).read(), "sds-bpf: record: %s exists: name a new file (a "
       "file already there is never written into)\n" % path, "record's stderr")
    eq(open(out).read(), "", "record's stdout")
    st = os.lstat(path)
    eq((st.st_uid, stat.S_IMODE(st.st_mode), st.st_size), (NOBODY, 0o666, 0),
       "the pre-created file's owner, mode and size")
    h.stdin.write(b"read\n")
    h.stdin.flush()
    eq(h.stdout.readline(), b"read 0\n", "what nobody's descriptor reads")

    fresh = os.path.join(shared, "new.rec")
    p, out, err = record(ctx, fresh, 3)
    deadline = time.monotonic() + 10
    while not os.path.exists(fresh):
        check(p.poll() is None, "record exited %r: %r"
              % (p.returncode, open(err).read()))
        check(time.monotonic() < deadline, "no %s after 10 s" % fresh)
        time.sleep(0.05)
    go(t, 100, 50)
    eq(p.wait(10), 0, "record's exit status (stderr %r)" % open(err).read())
    st = os.lstat(fresh)
    eq((st.st_uid, stat.S_IMODE(st.st_mode)), (0, 0o600),
       "the new recording's owner and mode")
    eq(open(out).read().split(" (")[0], "recorded 100 records",
       "record's summary")
