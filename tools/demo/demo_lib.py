# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""tools/demo/demo_lib.py: what the demo scripts (lb_demo.py, ff_demo.py)
share: the build's paths (tests/lib/sdstest.py's), the one-line error
that ends a demo, and Run: the temp dir and processes of one run, all
ended by stop() whatever happened, and sds-bpf commands run in it.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from sdstest import BUILD, SDS  # noqa: E402,F401


def die(name, msg):
    """@name's one-line error on stderr; exit 1 (Run.stop() still runs
    in the caller's finally)."""
    print("%s: %s" % (name, msg), file=sys.stderr)
    sys.exit(1)


class Run:
    """The temp dir of one run (run/ and state/ for sds-bpf, and @dirs)
    and the processes started in it; stop() ends them all and removes
    the dir."""

    def __init__(self, name, dirs=()):
        self.name = name        # "lb-demo": prefixes errors and the temp dir
        self.t = tempfile.mkdtemp(prefix="sds-%s." % name.replace("-", ""))
        self.env = dict(os.environ, SDS_RUN_DIR=os.path.join(self.t, "run"),
                        SDS_STATE_DIR=os.path.join(self.t, "state"))
        for d in ("run", "state") + tuple(dirs):
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
        SIGKILL after 10 s.  Then the temp dir goes."""
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

    def sds(self, *args):
        """sds-bpf @args run to completion (30 s at most): its output; a
        non-zero exit ends the demo."""
        r = subprocess.run([SDS] + list(args), env=self.env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=30)
        if r.returncode:
            self.die("sds-bpf %s: %s" % (" ".join(args), r.stdout.strip()))
        return r.stdout
