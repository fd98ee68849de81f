# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""tools/demo/demo_lib.py: what the demo scripts (lb_demo.py, ff_demo.py,
copy_demo.py) share: the build's paths (tests/lib/sdstest.py's), the
one-line error that ends a demo, a run's own environment (run dir, state
dir and pin root: a demo never meets another run's kernel objects, nor
a developer's), staged copies of the binaries it probes, the pins a run
left (a leak fails the run), whether a process listens on a port, and
Run: the temp dir and processes of one run, all ended by stop() whatever
happened, and sds-bpf commands run in it.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import sdstest  # noqa: E402
from sdstest import BUILD, SDS  # noqa: E402,F401


def die(name, msg):
    """@name's one-line error on stderr; exit 1 (Run.stop() still runs
    in the caller's finally)."""
    print("%s: %s" % (name, msg), file=sys.stderr)
    sys.exit(1)


def own_env(t):
    """The environment of a run in temp dir @t: its own run and state dirs
    (made here) and pin root, /sys/fs/bpf/sds-demo-NAME (bpffs mounted
    first if nothing is), never the default /sys/fs/bpf/sds."""
    for d in ("run", "state"):
        os.makedirs(os.path.join(t, d), exist_ok=True)
    err = sdstest.mount_bpffs()
    if err:
        raise SystemExit("demo: %s" % err)
    pin = "/sys/fs/bpf/sds-demo-%s" % os.path.basename(
        t.rstrip("/")).replace(".", "_")
    return dict(os.environ, SDS_RUN_DIR=os.path.join(t, "run"),
                SDS_STATE_DIR=os.path.join(t, "state"), SDS_PIN_ROOT=pin)


def stage(src, t):
    """A copy of @src in temp dir @t, the one the demo runs and probes:
    uprobes on it touch no other process on the host (sdstest.stage)."""
    return sdstest.stage(src, t)


def pins_left(env):
    """Every pin under the run's pin root once its processes are gone (a
    leak: the loaders exit without --keep), then the root removed."""
    root = env["SDS_PIN_ROOT"]
    left = sorted(sdstest.pins_under([root]) - {root})
    sdstest.remove_pin_root(root)
    return left


def say_leaks(name, env, left):
    """The LEAK line of pins a run left; True when there were none."""
    if left:
        print("%s: LEAK: pins left under %s: %s"
              % (name, env["SDS_PIN_ROOT"], ", ".join(left)), file=sys.stderr)
    return not left


def listening(pid, port):
    """True when process @pid holds the socket listening on 127.0.0.1:@port."""
    return sdstest.pid_listens(pid, port)


class Run:
    """The temp dir of one run (run/ and state/ for sds-bpf, and @dirs),
    its own pin root (own_env) and the processes started in it; stop()
    ends them all, removes the dir and says which pins were left."""

    def __init__(self, name, dirs=()):
        self.name = name        # "lb-demo": prefixes errors and the temp dir
        self.t = tempfile.mkdtemp(prefix="sds-%s." % name.replace("-", ""))
        self.env = own_env(self.t)
        for d in dirs:
            os.mkdir(os.path.join(self.t, d))
        self.procs = []         # Popen, in start order

    def die(self, msg):
        die(self.name, msg)

    def start(self, args, out, own_session=True):
        """@args started with its output to @out.  Not @own_session: in
        our process group, so that a caller killing the group on a
        timeout takes it (and whatever it forks) with us."""
        p = subprocess.Popen(args, env=self.env, stdin=subprocess.DEVNULL,
                             stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=own_session)
        self.procs.append(p)
        return p

    def stop(self):
        """SIGTERM to each process still running, last started first;
        SIGKILL after 10 s.  Then the temp dir goes, and the pin root:
        True when nothing was left in it (else a LEAK line)."""
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []
        shutil.rmtree(self.t, ignore_errors=True)
        return say_leaks(self.name, self.env, pins_left(self.env))

    def sds(self, *args):
        """sds-bpf @args run to completion (30 s at most): its output; a
        non-zero exit ends the demo."""
        r = subprocess.run([SDS] + list(args), env=self.env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=30)
        if r.returncode:
            self.die("sds-bpf %s: %s" % (" ".join(args), r.stdout.strip()))
        return r.stdout
