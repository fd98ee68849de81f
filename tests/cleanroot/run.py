#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The Debian packages on a clean Debian 12 and the units under a real
systemd (issue 17; docs/INSTALL.md, docs/TESTING.md), after `make deb`
and tests/cleanroot/mkroot.sh (which `make cleanroot-tests` runs first):

  * apt_install_purge: in a chroot of debootstrap --variant=minbase
    bookworm, `apt-get install ./sds-bpf_*.deb ./libsds0_*.deb` resolves
    their Depends from the archive; the installed sds-bpf --version;
    /run/sds and /var/lib/sds as docs/TRUST.md sets them; `apt-get purge
    --autoremove` then leaves the package list and every path (type,
    mode, owner, group, link target) exactly as before, but apt's own
    cache, indexes and logs (croot.APT_OWN);
  * units_under_systemd: the same root with systemd, booted by
    systemd-nspawn; apt-get install inside; sds-admin.service answers;
    `systemctl enable --now sds-bpf@shop` with /etc/sds/apps/shop.conf
    counts a function of a 0700 binary of nobody's exactly, heartbeats
    to the admin, and is restarted by Restart=on-failure after
    `systemctl kill -s KILL` without losing a call; then each capability
    of the unit's set is dropped in turn (a drop-in) and what it takes
    is checked: exactly CAP_DAC_READ_SEARCH and CAP_CHOWN (not CAP_SYS_ADMIN on the session path)
    are needed here;
  * mkroot_unreachable_mirror_fails: tests/cleanroot/mkroot.sh without a
    mirror: one line, exit 1, nothing left.

No network beyond the Debian mirror; no silent skip: a root that could
not be built fails every test, saying why.  The packages are build/deb's
(make deb), the ones tests/deb checks: this runner never calls make (nor
does mkroot.sh).  The container shares the host's network: sds-admin's
port is given up for another if some other process took it first.  Run
as root:

    python3 tests/cleanroot/run.py [-v] [NAME-SUBSTRING...]

The last line is "N passed, M failed, K skipped".  Python 3 standard library only.
"""

import json
import os
import shutil
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
sys.path.insert(0, HERE)
import sdstest  # noqa: E402
from sdstest import BUILD, ROOT, Fail, check, eq, get_point  # noqa: E402
import croot  # noqa: E402
from croot import Root, run  # noqa: E402
from container import Container  # noqa: E402

SUITE = sdstest.Suite(timeout=600)
test = SUITE.test
LEAKS = []
# dpkg without an fsync per file: a root thrown away after the test need
# not survive a power cut, and the unpacking is then 2-3 times faster.
UNSAFE_IO = "-o=Dpkg::Options::=--force-unsafe-io"
APT_INSTALL = ["apt-get", "install", "-y", "-q", UNSAFE_IO]
# The unit's CapabilityBoundingSet= (packaging/systemd/sds-bpf@.service.in).
UNIT_CAPS = ["CAP_SYS_ADMIN", "CAP_BPF", "CAP_PERFMON", "CAP_SYS_PTRACE",
             "CAP_DAC_READ_SEARCH", "CAP_CHOWN"]
# What this test's app needs of them: a function point of a 0700 binary
# of nobody's, a control socket of group nogroup.  CAP_SYS_PTRACE is for
# guards (libsds) of another uid: tests/install measures that.
# CAP_SYS_ADMIN is not needed on the session path (uprobes attached by
# BPF_LINK_CREATE under CAP_BPF + CAP_PERFMON); the pair path needs it.
NEEDED = {"CAP_DAC_READ_SEARCH": "Permission denied",
          "CAP_CHOWN": "Operation not permitted"}


def debs():
    v = run(["sh", os.path.join(ROOT, "tools", "version.sh")]).stdout.strip()
    v = v.replace("-", "+") + "-1"
    out = [os.path.join(BUILD, "deb", "%s_%s_amd64.deb" % (p, v))
           for p in ("sds-bpf", "libsds0")]
    for d in out:
        check(os.path.isfile(d), "%s missing (make deb)" % d)
    return out


class Ctx:
    """A test's roots and container, undone whatever happens; a mount or
    cgroup that stays is a LEAK that fails the run."""

    def __init__(self, name):
        self.name = name
        self.roots = []
        self.container = None

    def root(self, tar):
        r = Root(tar)
        self.roots.append(r)
        return r

    def cleanup(self):
        errs = []
        if self.container:
            errs.append(self.container.stop())
        for r in self.roots:
            errs.append(r.close())
        for e in errs:
            if e:
                print("LEAK %s: %s" % (self.name, e))
                LEAKS.append(e)


# ---------------------------------------------------------------------------
# apt install ./*.deb, apt purge, in a chroot

def stage_debs(root, deb_files):
    os.makedirs(root.path("/root/debs"))
    for d in deb_files:
        shutil.copy(d, root.path("/root/debs"))
    return ["/root/debs/" + os.path.basename(d) for d in deb_files]


def check_dirs(sh):
    """/run/sds and /var/lib/sds: root's 0755 directories (TRUST.md)."""
    out = sh(["stat", "-c", "%n %F %U:%G %a", "/run/sds", "/var/lib/sds"]).stdout
    eq(out.splitlines(), ["/run/sds directory root:root 755",
                          "/var/lib/sds directory root:root 755"],
       "the run and state dirs after install")


@test
def apt_install_purge(ctx):
    deb_files = debs()
    r = ctx.root(croot.MINBASE)
    r.chroot_mounts()
    inside = stage_debs(r, deb_files)
    r.chroot(["apt-get", "update", "-q"])
    files0, pkgs0 = r.snapshot(), r.packages()
    inst = r.chroot(APT_INSTALL + inside)
    for dep in ("libbpf1", "libcurl4", "libmicrohttpd12", "libcapstone4"):
        check("Unpacking %s" % dep in inst.stdout,
              "apt did not fetch %s from the archive: %s" % (dep, inst.stdout[-800:]))
    v = run(["sh", os.path.join(ROOT, "tools", "version.sh")]).stdout.strip()
    eq(r.chroot(["sds-bpf", "--version"]).stdout, "sds-bpf %s\n" % v,
       "the installed sds-bpf --version")
    eq(r.chroot(["sds-admin", "--version"]).stdout, "sds-admin %s\n" % v,
       "the installed sds-admin --version")
    check_dirs(r.chroot)
    # Without RecommendsImportant=false, autoremove keeps ca-certificates
    # (and its openssl, libssl3): libcurl4 recommends it and pulled it in,
    # but Debian's apt recommends it too, so apt holds on to it as apt's.
    r.chroot(["apt-get", "purge", "-y", "-q", "--autoremove", UNSAFE_IO,
              "-o", "APT::AutoRemove::RecommendsImportant=false",
              "sds-bpf", "libsds0"])
    eq(r.packages(), pkgs0, "the package list after purge")
    files1 = r.snapshot()
    s0, s1 = set(files0), set(files1)
    eq((sorted(s1 - s0), sorted(s0 - s1)), ([], []),
       "paths added, removed by install + purge (of %d)" % len(files0))


# ---------------------------------------------------------------------------
# The units under systemd (systemd-nspawn --boot)

SHOP_CONF = """TARGET=/usr/local/bin/prog
POINTS=w=secret_work
GROUP=shop
STRATEGIES=
ADMIN=http://127.0.0.1:%d
TOKEN_FILE=/etc/sds/admin.token
OPTIONS=--socket-group nogroup
"""
# In /etc: the container's /run is a tmpfs the host does not see.
DROPIN = "/etc/systemd/system/sds-bpf@shop.service.d/50-caps.conf"


def unit_state(c, unit):
    out = c.sh(["systemctl", "show", "-p", "ActiveState,SubState,MainPID,"
                "NRestarts,Result", unit]).stdout
    return dict(l.split("=", 1) for l in out.splitlines())


def visits(c):
    r = c.sh(["sds-bpf", "stats", "--app", "shop", "--group", "shop",
              "--json"], ok=False, timeout=30)
    if r.returncode:
        return None
    return get_point(json.loads(r.stdout), "w")["total"]["visits"]


def call(c, n):
    """prog, as nobody, calls secret_work @n times."""
    r = c.sh(["setpriv", "--reuid=nobody", "--regid=nogroup",
              "--clear-groups", "/usr/local/bin/prog"],
             input="call %d\n" % n, timeout=30)
    eq(r.stdout, "ready\ndone\n", "prog's output")


def wait_loader(c, what, timeout=60):
    """The loader's stats once it serves; None if the unit failed."""
    def ready():
        st = unit_state(c, "sds-bpf@shop.service")
        if st["ActiveState"] == "failed":
            return "failed"
        v = visits(c)
        return None if v is None else ("up", v)
    r = sdstest.wait_until(ready, time.time() + timeout,
                           "%s: the loader neither serves nor fails" % what)
    return None if r == "failed" else r[1]


def http(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path),
                                timeout=5) as f:
        return f.read().decode()


def tcp_listeners(port):
    """The socket inodes ("socket:[N]") listening on 127.0.0.1:@port: the
    container shares the host's network, so the host's /proc/net/tcp."""
    out = set()
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            w = line.split()
            if w[1] == "0100007F:%04X" % port and w[3] == "0A":
                out.add("socket:[%s]" % w[9])
    return out


def admin_listens(c, port):
    """True when sds-admin.service's own process holds the listener on
    @port (not some other process of the host that took the port)."""
    pid = unit_state(c, "sds-admin.service")["MainPID"]
    if pid == "0":
        return False
    r = c.sh(["sh", "-c", "readlink /proc/%s/fd/*" % pid], ok=False)
    return bool(set(r.stdout.split()) & tcp_listeners(port))


def start_admin(c, tries=5):
    """sds-admin.service on a free port (LISTEN= in admin.conf), answering
    from its own socket: the port.  A port another process of the host
    took before the admin's bind ("Address already in use": suites run
    side by side) is given up for another, @tries times."""
    conf = c.root.path("/etc/sds/admin.conf")
    with open(conf) as f:
        base = f.read()
    for _ in range(tries):
        port = sdstest.free_port()
        with open(conf, "w") as f:
            f.write(base + "LISTEN=127.0.0.1:%d\n" % port)
        since = c.sh(["date", "+%s"]).stdout.strip()
        c.sh(["systemctl", "restart", "sds-admin.service"])

        def up():
            # Its own listener first: a port's other holder is not asked.
            if admin_listens(c, port) and _try(http, port, "/healthz") == "ok\n":
                return "up"
            j = c.sh(["journalctl", "-q", "-o", "cat", "--since", "@" + since,
                      "-u", "sds-admin"], ok=False).stdout
            return "taken" if "Address already in use" in j else None
        if sdstest.wait_until(up, time.time() + 30,
                              "sds-admin does not answer on its port") == "up":
            return port
        c.sh(["systemctl", "stop", "sds-admin.service"])
        sdstest.log("port %d taken: another" % port)
    raise Fail("sds-admin: every port of %d tries was taken" % tries)


def admin_and_shop(c):
    token = os.urandom(16).hex()
    with open(c.root.path("/etc/sds/admin.token"), "w") as f:
        f.write(token + "\n")
    os.chmod(c.root.path("/etc/sds/admin.token"), 0o600)
    port = start_admin(c)
    eq(c.sh(["systemctl", "is-active", "sds-admin"], ok=False).stdout,
       "active\n", "sds-admin.service is-active")
    eq(http(port, "/healthz"), "ok\n", "sds-admin's /healthz")
    eq(json.loads(http(port, "/api/v1/apps")), [], "apps before the loader")
    with open(c.root.path("/etc/sds/apps/shop.conf"), "w") as f:
        f.write(SHOP_CONF % port)
    # The target: nobody's, 0700 (root reads it with CAP_DAC_READ_SEARCH).
    os.chown(c.root.path("/usr/local/bin/prog"), 65534, 65534)
    os.chmod(c.root.path("/usr/local/bin/prog"), 0o700)
    return port


def _try(fn, *a):
    try:
        return fn(*a)
    except OSError:
        return None


def caps_needed(c):
    """Each capability of the unit's set dropped in turn: {cap: the
    loader's last line} for those it cannot run without."""
    os.makedirs(os.path.dirname(c.root.path(DROPIN)), exist_ok=True)
    needed = {}
    for cap in UNIT_CAPS:
        rest = " ".join(x for x in UNIT_CAPS if x != cap)
        with open(c.root.path(DROPIN), "w") as f:
            f.write("[Service]\nCapabilityBoundingSet=\n"
                    "CapabilityBoundingSet=%s\nRestart=no\n" % rest)
        c.sh(["systemctl", "daemon-reload"])
        got = c.sh(["systemctl", "show", "-p", "CapabilityBoundingSet",
                    "sds-bpf@shop"]).stdout.split("=", 1)[1].split()
        eq(sorted(x.upper() for x in got), sorted(rest.split()),
           "the set without %s" % cap)
        c.sh(["systemctl", "stop", "sds-bpf@shop"])
        # After a loader that failed there is nothing to detach.
        c.sh(["sds-bpf", "detach", "--app", "shop", "--group", "shop"], ok=False)
        c.sh(["systemctl", "reset-failed", "sds-bpf@shop"], ok=False)
        since = c.sh(["date", "+%s"]).stdout.strip()
        c.sh(["systemctl", "start", "sds-bpf@shop"])
        v0 = wait_loader(c, "without " + cap)
        if v0 is None:
            j = c.sh(["journalctl", "-q", "-o", "cat", "--since", "@" + since,
                      "-u", "sds-bpf@shop"]).stdout.splitlines()
            errs = [l for l in j if l.startswith("sds-bpf: ")]
            needed[cap] = errs[-1] if errs else "(no error line)"
            continue
        call(c, 7)
        eq(visits(c) - v0, 7, "visits without %s" % cap)
    os.unlink(c.root.path(DROPIN))
    c.sh(["systemctl", "daemon-reload"])
    return needed


@test
def units_under_systemd(ctx):
    deb_files = debs()
    r = ctx.root(croot.WITH_SYSTEMD)
    inside = stage_debs(r, deb_files)
    run(["gcc", "-g", "-O2", "-o", r.path("/usr/local/bin/prog"),
         os.path.join(ROOT, "tests", "debuginfo", "prog.c")])
    c = ctx.container = Container(r, "sds-cleanroot",
                                  binds=[(croot.ARCHIVES, "/var/cache/apt/archives")])
    c.wait_running()
    c.sh(["apt-get", "update", "-q"])
    c.sh(APT_INSTALL + inside)
    check_dirs(c.sh)
    for u in ("sds-admin.service", "sds-bpf@shop.service"):
        v = c.sh(["systemd-analyze", "verify", u], ok=False)
        eq((v.returncode, v.stdout + v.stderr), (0, ""),
           "systemd-analyze verify %s under the container's systemd" % u)
    c.sh(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"])
    port = admin_and_shop(c)

    c.sh(["systemctl", "enable", "--now", "sds-bpf@shop"])
    eq(c.sh(["systemctl", "is-enabled", "sds-bpf@shop"]).stdout, "enabled\n",
       "sds-bpf@shop is-enabled")
    eq(wait_loader(c, "sds-bpf@shop"), 0, "visits before any call")
    eq(c.sh(["systemctl", "is-active", "sds-bpf@shop"]).stdout, "active\n",
       "sds-bpf@shop is-active")
    call(c, 321)
    eq(visits(c), 321, "visits counted by sds-bpf@shop")
    apps = sdstest.wait_until(
        lambda: [a["name"] for a in json.loads(http(port, "/api/v1/apps"))],
        time.time() + 60, "the loader's heartbeat never reached sds-admin")
    eq(apps, ["shop"], "the apps sds-admin knows")

    st = unit_state(c, "sds-bpf@shop.service")
    eq(st["NRestarts"], "0", "restarts before the kill")
    c.sh(["systemctl", "kill", "-s", "KILL", "sds-bpf@shop"])
    st2 = sdstest.wait_until(
        lambda: (lambda s: s if s["NRestarts"] == "1" and s["SubState"] == "running"
                 and s["MainPID"] not in ("0", st["MainPID"]) else None)(
            unit_state(c, "sds-bpf@shop.service")),
        time.time() + 30, "sds-bpf@shop was not restarted after SIGKILL")
    check(st2["ActiveState"] == "active", "after the restart: %r" % st2)
    eq(wait_loader(c, "after SIGKILL"), 321, "visits kept across the kill")
    call(c, 5)
    eq(visits(c), 326, "visits after the restart")

    needed = caps_needed(c)
    sdstest.log("needed: %r" % needed)
    eq(sorted(needed), sorted(NEEDED), "the capabilities the loader needs "
       "here (%r)" % needed)
    for cap, line in NEEDED.items():
        check(line in needed[cap], "without %s: %r lacks %r"
              % (cap, needed[cap], line))
    c.sh(["systemctl", "restart", "sds-bpf@shop"])
    v0 = wait_loader(c, "with every capability again")
    call(c, 9)
    eq(visits(c) - v0, 9, "visits with the unit's set again")


@test
def mkroot_unreachable_mirror_fails(ctx):
    """No mirror: mkroot.sh says so in one line, exit 1, and leaves no
    tar, no work dir and no mount (the suite's roots are not touched)."""
    d = tempfile.mkdtemp(prefix="sds-mkroot-")
    try:
        r = run(["sh", os.path.join(HERE, "mkroot.sh"), os.path.join(d, "c")],
                ok=False, env=dict(os.environ,
                                   DEBIAN_MIRROR="http://127.0.0.1:1/debian"))
        eq(r.returncode, 1, "mkroot.sh's exit without a mirror")
        eq(len(r.stderr.splitlines()), 1, "its error lines: %r" % r.stderr)
        check(r.stderr.startswith("tests/cleanroot/mkroot.sh: debootstrap failed "
                                  "(is http://127.0.0.1:1/debian reachable?)"),
              "its error: %r" % r.stderr)
        eq(sorted(os.listdir(os.path.join(d, "c"))), ["archives"],
           "what it left in its dir")
        eq(croot.mounts_under(d), [], "mounts left under it")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sdstest.log_stamps()
    rc = sdstest.run_suite(
        __file__, SUITE, Ctx, extra=croot.have_roots,
        tools=("tar", "chroot", "mount", "nsenter", "systemd-nspawn", "gcc"))
    sys.exit(1 if LEAKS else rc)
