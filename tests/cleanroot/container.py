# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
A booted Debian 12 container of tests/cleanroot: systemd-nspawn --boot
of a croot.Root, commands in it by nsenter, and a stop that leaves no
process and no cgroup behind.

It works where systemd is not PID 1 (the development machines) and no
D-Bus runs: --register=no (no systemd-machined) and --keep-unit (no
scope to ask systemd for).  nspawn then makes its cgroups under its own,
so the container is started in a cgroup of its own,
sds-cleanroot-PID, in every hierarchy the host mounts, removed at stop.

What nspawn takes away that the loader needs (measured with Debian 12's
systemd 252 on Linux 6.18; docs/INSTALL.md, "Under a real systemd"):
  * its seccomp filter answers both bpf() and perf_event_open() with
    EPERM, whatever the capabilities: --system-call-filter= adds them;
  * CAP_BPF and CAP_PERFMON are not in its capability set (CAP_SYS_ADMIN
    is, and is enough on this kernel): --capability= gives them, so the
    unit's bounding set holds what it names and each can be dropped;
  * it mounts no bpffs: the test mounts a new one on /sys/fs/bpf inside
    (a new instance: its pins are the container's, gone with it).
"""

import os
import signal
import subprocess
import time

from croot import ENV, run
from sdstest import Fail, log

NSPAWN_BPF = ["--capability=CAP_BPF,CAP_PERFMON",
              "--system-call-filter=bpf perf_event_open"]


def cgroup_roots():
    """The cgroup hierarchies a process must be moved in: the unified
    one alone, or (hybrid, legacy) the unified and systemd's named one."""
    if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        return ["/sys/fs/cgroup"]
    return [d for d in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup/systemd")
            if os.path.isdir(d)]


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        if int(st.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(d))
    return out


class Container:
    def __init__(self, root, machine, binds=(), extra=NSPAWN_BPF):
        self.root = root
        self.cg = "sds-cleanroot-%d" % os.getpid()
        self.cgdirs = [os.path.join(r, self.cg) for r in cgroup_roots()]
        self.leader = None
        self.logpath = os.path.join(root.top, "nspawn.log")
        argv = (["systemd-nspawn", "--boot", "-D", root.dir,
                 "--register=no", "--keep-unit", "--machine=" + machine,
                 "--console=passive"] + list(extra)
                + ["--bind=%s:%s" % b for b in binds])
        log(" ".join(argv))
        for d in self.cgdirs:
            os.makedirs(d, exist_ok=True)
        with open(self.logpath, "w") as lf:
            self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                      stdout=lf, stderr=subprocess.STDOUT,
                                      start_new_session=True,
                                      preexec_fn=self._enter_cgroup)
        deadline = time.time() + 30
        while self.leader is None:
            kids = [c for c in children(self.p.pid) if self._comm(c) == "systemd"]
            if kids:
                self.leader = kids[0]
            elif self.p.poll() is not None or time.time() > deadline:
                raise Fail("systemd-nspawn --boot did not start systemd "
                           "(exit %r): %s" % (self.p.returncode, self.tail()))
            else:
                time.sleep(0.1)

    def _enter_cgroup(self):
        for d in self.cgdirs:
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write("%d\n" % os.getpid())

    @staticmethod
    def _comm(pid):
        try:
            with open("/proc/%d/comm" % pid) as f:
                return f.read().strip()
        except OSError:
            return None

    def tail(self, n=1500):
        try:
            with open(self.logpath, errors="replace") as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def sh(self, argv, ok=True, timeout=300, **kw):
        """@argv in every namespace of the container, as its root."""
        return run(["nsenter", "-t", str(self.leader), "-a"] + argv, ok=ok,
                   timeout=timeout, env=ENV, **kw)

    def wait_running(self):
        # Until systemd has its /run and private socket, systemctl says
        # nothing (or "offline"): ask again.
        deadline = time.time() + 120
        while True:
            r = self.sh(["systemctl", "is-system-running", "--wait"],
                        ok=False, timeout=120)
            if r.stdout.strip() not in ("", "offline") or time.time() > deadline:
                break
            time.sleep(0.3)
        if r.stdout.strip() != "running":
            failed = self.sh(["systemctl", "--failed", "--no-legend"],
                             ok=False).stdout
            raise Fail("the container's systemd is %r, not running; failed "
                       "units: %s" % (r.stdout.strip(), failed))

    def stop(self):
        """Power the container off (nspawn turns SIGTERM into SIGRTMIN+3
        for its systemd), kill what is left, remove the cgroups.  An
        error string if a cgroup stayed."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait(10)
        if self.leader and self._comm(self.leader) == "systemd":
            try:
                os.kill(self.leader, signal.SIGKILL)
            except OSError:
                pass
        left = []
        for top in self.cgdirs:
            deadline = time.time() + 10
            while os.path.isdir(top):
                for dp, dns, _ in sorted(os.walk(top, topdown=False),
                                         key=lambda x: -len(x[0])):
                    try:
                        os.rmdir(dp)
                    except OSError:
                        pass
                if time.time() > deadline:
                    left.append(top)
                    break
                time.sleep(0.2)
        return "cgroups left: %s" % ", ".join(left) if left else None
