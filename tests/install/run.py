#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Install tests (issue 17; docs/INSTALL.md): `make install` and `make
uninstall` into a DESTDIR, and the installed products at work.

  * the exact list of files, their modes, the soname links, the .pc and
    the units written for the PREFIX, the man pages and the completion;
  * programs (C, C++, static) built with the installed pkg-config file and
    run against the installed library;
  * the installed sds-admin serves the installed dashboard;
  * `systemd-analyze verify` on every unit, silent;
  * sds-admin.service's command line, run as systemd would (its conf,
    its own user without capabilities, umask 0077);
  * sds-bpf@.service's command line, run as systemd would (its sh -c, an
    app conf, the unit's CapabilityBoundingSet and NoNewPrivileges through
    setpriv): a function point and a guard of another user's program,
    built with the installed pkg-config file, counted exactly; a restart
    adopts the pins (--keep); a conf without TARGET is one line;
  * uninstall removes every file install wrote, but a conffile the
    operator changed, which install does not overwrite either;
  * a relative PREFIX: one line, non-zero, nothing written.

systemd is not PID 1 on the test machines, so the unit's run dir, state
dir and pin root are the test's own (SDS_RUN_DIR, SDS_STATE_DIR,
SDS_PIN_ROOT), not RuntimeDirectory= and StateDirectory=.

make install and make uninstall themselves run in the build (make
install-stage, tests/install/install.mk: into build/install-stage), not
here: this runner never calls make.  It checks what they wrote, and runs
the installed products from a copy of the staged tree in each test's own
temp dir.

Run as root from anywhere (after `make all test-targets install-stage`,
which `make install-tests` does):

    python3 tests/install/run.py [-v] [NAME-SUBSTRING...]

Everything a test creates is in its own temp dir, removed whatever
happens.  The last line is "N passed, M failed, K skipped".  Python 3 standard
library only.
"""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import guarded  # noqa: E402
import sdstest  # noqa: E402
import target  # noqa: E402
import sdsadmin  # noqa: E402
from sdstest import BUILD, ROOT, Fail, check, eq, log  # noqa: E402

SUITE = sdstest.Suite(timeout=180)
test = SUITE.test
TARGETS = os.path.join(BUILD, "test", "targets")
# What make install-stage wrote (tests/install/install.mk): every run of
# make install and make uninstall this suite checks, done in the build.
STAGE = os.path.join(BUILD, "install-stage")
# The bad PREFIXes, in install-stage's order (bad/GOAL-N.*).
BAD_PREFIXES = (("usr", "an absolute path, not 'usr'"),
                ("", "one absolute path, not ''"),
                ("/usr /opt", "one absolute path, not '/usr /opt'"))
GROUP = "installtest"
VERSION = "0.1.0"               # libsds/libsds.mk LIBSDS_VERSION
UNITS = ("sds-admin.service", "sds-bpf@.service")
WEB = sorted(os.listdir(os.path.join(ROOT, "admin", "web")))
ETC = ("admin.conf", "apps/example.conf", "strategies/example.json")

# What `make install PREFIX=/usr` writes under DESTDIR: path -> mode, or
# -> "-> TARGET" for a symlink.
EXPECTED = {
    "usr/sbin/sds-bpf": 0o755,
    "usr/sbin/sds-admin": 0o755,
    "usr/sbin/sds-copy": 0o755,
    "usr/lib/libsds.so.%s" % VERSION: 0o644,
    "usr/lib/libsds.so.0": "-> libsds.so.%s" % VERSION,
    "usr/lib/libsds.so": "-> libsds.so.0",
    "usr/lib/libsds.a": 0o644,
    "usr/lib/pkgconfig/sds.pc": 0o644,
    "usr/include/sds.h": 0o644,
    "usr/include/sds.hpp": 0o644,
    "usr/include/sds_ext.h": 0o644,
    "usr/lib/systemd/system/sds-admin.service": 0o644,
    "usr/lib/systemd/system/sds-bpf@.service": 0o644,
    "etc/sds/admin.conf": 0o640,
    "etc/sds/apps/example.conf": 0o644,
    "etc/sds/strategies/example.json": 0o644,
}
EXPECTED.update({"usr/share/sds-admin/web/" + f: 0o644 for f in WEB})
# The man pages (man/man.mk) and the bash completion.
MAN_PAGES = ("man8/sds-bpf.8", "man8/sds-admin.8", "man8/sds-copy.8",
             "man3/libsds.3", "man5/sds-strategies.5")
EXPECTED.update({"usr/share/man/" + m: 0o644 for m in MAN_PAGES})
EXPECTED["usr/share/bash-completion/completions/sds-bpf"] = 0o644

PC = """prefix=/usr
includedir=${prefix}/include
libdir=${prefix}/lib

Name: sds
Description: libsds, the guard of sds-bpf (service downgrade with eBPF)
Version: %s
Cflags: -I${includedir}
Libs: -L${libdir} -lsds
Libs.private: -lpthread
""" % VERSION


def staged(*rel):
    """A path under install-stage's output (tests/install/install.mk)."""
    return os.path.join(STAGE, *rel)


def read(path):
    with open(path) as f:
        return f.read()


def tree(root):
    """{relative path: mode or "-> target"} of every file and symlink."""
    out = {}
    for d, dirs, files in os.walk(root):
        for name in files + [x for x in dirs
                             if os.path.islink(os.path.join(d, x))]:
            p = os.path.join(d, name)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = "-> " + os.readlink(p)
            else:
                out[rel] = os.stat(p).st_mode & 0o7777
    return out


def run(argv, ok=True, **kw):
    log(" ".join(argv))
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                       **kw)
    if ok and p.returncode:
        raise Fail("%s: exit %d: %s%s" % (" ".join(argv), p.returncode,
                                          p.stdout[-1000:], p.stderr[-2000:]))
    return p


class Ctx(sdstest.ProcDir):
    def __init__(self, name):
        super().__init__(name, "sds-install-")
        self.dest = os.path.join(self.tmp, "dest")
        self.app = "inst%d" % os.getpid()

    def install(self):
        """The tree make install DESTDIR=... PREFIX=/usr wrote, copied
        (modes and symlinks as they are) into the test's own DESTDIR,
        which the test may change."""
        shutil.copytree(staged("usr"), self.dest, symlinks=True)

    def path(self, rel):
        return os.path.join(self.dest, rel)

    def pkg_config(self, *args):
        """The installed sds.pc as a user of a staged tree reads it."""
        env = dict(os.environ,
                   PKG_CONFIG_PATH=self.path("usr/lib/pkgconfig"),
                   PKG_CONFIG_LIBDIR=self.path("usr/lib/pkgconfig"),
                   PKG_CONFIG_SYSROOT_DIR=self.dest)
        return run(["pkg-config"] + list(args) + ["sds"], env=env).stdout.split()


# ---------------------------------------------------------------------------
# The files

@test
def install_files_modes_links(ctx):
    # What make install wrote itself, not a copy (read only).
    ctx.dest = staged("usr")
    eq(tree(ctx.dest), EXPECTED, "files under DESTDIR")
    so = run(["readelf", "-d", ctx.path("usr/lib/libsds.so.%s" % VERSION)])
    check("Library soname: [libsds.so.0]" in so.stdout,
          "soname of the installed library: %s" % so.stdout)
    with open(ctx.path("usr/lib/pkgconfig/sds.pc")) as f:
        eq(f.read(), PC, "installed sds.pc")
    copies = {"usr/sbin/sds-bpf": "bin/sds-bpf",
              "usr/sbin/sds-admin": "bin/sds-admin",
              "usr/sbin/sds-copy": "bin/sds-copy",
              "usr/lib/libsds.a": "lib/libsds.a",
              "usr/include/sds.h": "include/sds.h",
              "usr/include/sds.hpp": "include/sds.hpp",
              "usr/include/sds_ext.h": "include/sds_ext.h"}
    copies.update({"usr/share/man/" + m: "man/" + os.path.basename(m)
                   for m in MAN_PAGES})
    for rel, src in sorted(copies.items()):
        with open(ctx.path(rel), "rb") as a, \
                open(os.path.join(BUILD, src), "rb") as b:
            check(a.read() == b.read(), "%s is not %s" % (rel, src))
    with open(ctx.path("usr/share/bash-completion/completions/sds-bpf"),
              "rb") as a, open(os.path.join(ROOT, "packaging", "bash-completion",
                                            "sds-bpf"), "rb") as b:
        check(a.read() == b.read(), "the installed completion is not "
              "packaging/bash-completion/sds-bpf")
    # The units and conffiles name the installed paths, nothing left over.
    for rel in ["usr/lib/systemd/system/" + u for u in UNITS] + \
               ["etc/sds/" + e for e in ETC]:
        with open(ctx.path(rel)) as f:
            text = f.read()
        check("@" + "SBINDIR@" not in text and "@" + "SYSCONFDIR@" not in text,
              "%s: a template name is left" % rel)
    with open(ctx.path("usr/lib/systemd/system/sds-bpf@.service")) as f:
        unit = f.read()
    check("exec /usr/sbin/sds-bpf attach --keep" in unit
          and "EnvironmentFile=/etc/sds/apps/%i.conf" in unit,
          "sds-bpf@.service names /usr/sbin and /etc: %s" % unit)
    with open(ctx.path("usr/lib/systemd/system/sds-admin.service")) as f:
        unit = f.read()
    check("ExecStart=/bin/sh -c " in unit and "exec /usr/sbin/sds-admin " in unit
          and "LoadCredential=token:/etc/sds/admin.token" in unit
          and "LoadCredential=heartbeat-token:/etc/sds/admin-heartbeat.token" in unit,
          "sds-admin.service names /usr/sbin and /etc: %s" % unit)
    # Every conf line is what an EnvironmentFile= reads.
    for e in ("admin.conf", "apps/example.conf"):
        env_file(ctx.path("etc/sds/" + e))


@test
def installed_pc_builds_programs(ctx):
    ctx.install()
    cflags = ctx.pkg_config("--cflags")
    libs = ctx.pkg_config("--libs")
    eq(cflags, ["-I" + ctx.path("usr/include")], "pkg-config --cflags")
    eq(libs, ["-L" + ctx.path("usr/lib"), "-lsds"], "pkg-config --libs")
    lib = ctx.path("usr/lib")
    env = dict(os.environ, LD_LIBRARY_PATH=lib)
    exe = os.path.join(ctx.tmp, "hello")
    run(["gcc", "-o", exe, os.path.join(HERE, "hello.c")] + cflags + libs)
    eq(run([exe], env=env).stdout, "pass 3\n", "hello (shared)")
    # It runs the installed libsds.so.0 (through the soname link).
    ldd = run(["ldd", exe], env=env).stdout
    check(re.search(r"libsds\.so\.0 => %s/libsds\.so\.0 " % re.escape(lib), ldd),
          "hello does not load the installed libsds.so.0: %s" % ldd)
    exe_cc = os.path.join(ctx.tmp, "hellocpp")
    run(["g++", "-std=c++17", "-o", exe_cc, os.path.join(HERE, "hello.cpp")]
        + cflags + libs)
    eq(run([exe_cc], env=env).stdout, "pass 2\n", "hellocpp")
    # Static: the installed libsds.a and --static's Libs.private.
    exe_st = os.path.join(ctx.tmp, "hello-static")
    st_libs = ctx.pkg_config("--static", "--libs")
    eq(st_libs, ["-L" + lib, "-lsds", "-lpthread"], "pkg-config --static --libs")
    run(["gcc", "-o", exe_st, os.path.join(HERE, "hello.c")] + cflags
        + [os.path.join(lib, "libsds.a"), "-lpthread"])
    needed = run(["readelf", "-d", exe_st]).stdout
    check("libsds" not in needed, "hello-static needs a libsds.so: %s" % needed)
    eq(run([exe_st]).stdout, "pass 3\n", "hello (static)")


@test
def installed_admin_serves_dashboard(ctx):
    ctx.install()
    web = ctx.path("usr/share/sds-admin/web")
    # A mark only the installed copy has: the page comes from there, not
    # from the build tree's admin/web.
    mark = "<!-- installed copy %d -->\n" % os.getpid()
    with open(os.path.join(web, "index.html"), "a") as f:
        f.write(mark)
    with open(os.path.join(web, "index.html")) as f:
        page = f.read()
    token = sdstest.write_token(os.path.join(ctx.tmp, "token"), "t0ken_for.install-tests")
    adm = start_admin(ctx, lambda port: sdstest.admin_argv(
        ctx.path("usr/sbin/sds-admin"), port, os.path.join(ctx.tmp, "sds.db"),
        token))
    port = adm.port
    status, body = sdstest.http_request(port, "GET", "/")
    eq(status, 200, "GET /")
    check(body == page, "GET / is not the installed index.html (%d bytes, "
          "the installed copy's mark %s)"
          % (len(body), "in it" if mark in body else "not in it"))
    status, body = sdstest.http_request(port, "GET", "/style.css")
    eq(status, 200, "GET /style.css")
    adm.stop(quiet=False)


@test
def units_verify(ctx):
    # Units whose ExecStart= programs exist on this host: installed
    # without DESTDIR into a prefix of install-stage's own (prefix/,
    # etc/; systemd-analyze checks the commands), with LDCONFIG=: (the
    # host's cache stays).  The template through an instance's name: a
    # link in the test's dir (the staged tree is only read).
    prefix = staged("prefix")
    etc = staged("etc")
    unitdir = os.path.join(prefix, "lib", "systemd", "system")
    units = os.path.join(ctx.tmp, "units")
    os.mkdir(units)
    inst = os.path.join(units, "sds-bpf@shop.service")
    os.symlink(os.path.join(unitdir, "sds-bpf@.service"), inst)
    for u in (os.path.join(unitdir, "sds-admin.service"), inst):
        p = run(["systemd-analyze", "verify", u], ok=False)
        eq((p.returncode, p.stdout + p.stderr), (0, ""),
           "systemd-analyze verify %s" % os.path.basename(u))
    # The PREFIX=/usr units are the same but for the paths.
    for u in UNITS:
        mine = read(os.path.join(unitdir, u)).replace(
            prefix + "/sbin", "/usr/sbin").replace(etc, "/etc")
        eq(read(staged("usr", "usr/lib/systemd/system", u)), mine,
           "%s for /usr and for the test's prefix" % u)
    # make uninstall of the same PREFIX and SYSCONFDIR after its install
    # (gone/): nothing left of it.
    eq(tree(staged("gone", "prefix")), {}, "files left by uninstall of the prefix")
    eq(tree(staged("gone", "etc")), {}, "files left by uninstall of SYSCONFDIR")


@test
def admin_unit_command_line(ctx):
    """sds-admin.service's ExecStart= as systemd would run it: the
    Environment= and the conf's LISTEN and OPTIONS expanded, %S and %d
    the test's state and credentials dirs, as a user of its own (nobody
    here) with no capabilities, NoNewPrivileges= and UMask=0077.  The
    credentials as systemd makes them when admin-heartbeat.token exists
    and admin-read.token does not (its SetCredential= default, a blank
    line): the heartbeat token is passed, the reader's is not."""
    ctx.install()
    unit = ctx.path("usr/lib/systemd/system/sds-admin.service")
    eq(unit_settings(unit, "CapabilityBoundingSet"), [""],
       "CapabilityBoundingSet=")
    eq(unit_settings(unit, "NoNewPrivileges"), ["yes"], "NoNewPrivileges=")
    eq(unit_settings(unit, "UMask"), ["0077"], "UMask=")
    eq(unit_settings(unit, "LoadCredential"),
       ["token:/etc/sds/admin.token", "heartbeat-token:/etc/sds/admin-heartbeat.token",
        "read-token:/etc/sds/admin-read.token"], "LoadCredential=")
    eq(unit_settings(unit, "SetCredential"), ["heartbeat-token:\\n", "read-token:\\n"],
       "SetCredential= (the role tokens' defaults)")
    env = {}
    for e in unit_settings(unit, "Environment"):
        k, v = e.split("=", 1)
        env[k] = v
    eq(env, {"LISTEN": "127.0.0.1:8887"}, "Environment=")
    # The installed admin.conf, then the test's options (and port, in
    # argv_for below).
    env.update(env_file(ctx.path("etc/sds/admin.conf")))
    env.update(OPTIONS="--threads 3 --retention-days 7")
    state = os.path.join(ctx.tmp, "lib")
    creds = os.path.join(ctx.tmp, "creds")
    for d in (state, os.path.join(state, "sds-admin"), creds):
        os.mkdir(d, 0o755 if d == state else 0o700)
    os.chown(os.path.join(state, "sds-admin"), sdstest.NOBODY, sdstest.NOBODY)
    for name, text in (("token", "t0ken_for.install-tests\n"), ("heartbeat-token", "hb-t0ken_for.install-tests\n"),
                       ("read-token", "\n")):
        with open(os.path.join(creds, name), "w") as f:
            f.write(text)
        os.chmod(os.path.join(creds, name), 0o400)
        os.chown(os.path.join(creds, name), sdstest.NOBODY, sdstest.NOBODY)
    os.chown(creds, sdstest.NOBODY, sdstest.NOBODY)
    (cmd,) = unit_settings(unit, "ExecStart")

    def argv_for(port):
        env["LISTEN"] = "127.0.0.1:%d" % port
        argv = []
        for w in shlex.split(cmd.replace("%S", state).replace("%d", creds)):
            if re.fullmatch(r"\$[A-Za-z_]+", w):
                argv += env.get(w[1:], "").split()
            else:
                argv.append(re.sub(r"\$\{([A-Za-z_]+)\}",
                                   lambda m: env.get(m.group(1), ""), w))
        eq(argv[:2], ["/bin/sh", "-c"],
           "ExecStart= runs the role tokens' shell line")
        argv = [w.replace("/usr/sbin/", ctx.path("usr/sbin/")) for w in argv]
        return ["setpriv", "--reuid=%d" % sdstest.NOBODY,
                "--regid=%d" % sdstest.NOBODY, "--clear-groups",
                "--inh-caps=-all", "--bounding-set=-all",
                "--no-new-privs", "--", "sh", "-c",
                'umask 0077 && exec "$@"', "sh"] + argv
    adm = start_admin(ctx, argv_for)
    port = adm.port
    # The shells exec'd: the pid is sds-admin's, its arguments are these.
    with open("/proc/%d/cmdline" % adm.pid) as f:
        eq(f.read().split("\0")[:-1],
           [ctx.path("usr/sbin/sds-admin"), "--listen", "127.0.0.1:%d" % port, "--db",
            state + "/sds-admin/sds.db", "--token-file", creds + "/token",
            "--threads", "3", "--retention-days", "7",
            "--heartbeat-token-file", creds + "/heartbeat-token"],
           "sds-admin's arguments")
    status, body = sdstest.http_request(port, "GET", "/")
    eq(status, 200, "GET /")
    with open(ctx.path("usr/share/sds-admin/web/index.html")) as f:
        check(body == f.read(), "GET / is not the installed index.html")
    status, _ = sdstest.http_request(port, "POST", "/api/v1/groups",
                                     body={"name": "g"},
                                     headers={"Authorization": "Bearer t0ken_for.install-tests"})
    eq(status, 201, "POST /api/v1/groups with the credential's token")
    status, _ = sdstest.http_request(port, "POST", "/api/v1/groups",
                                     body={"name": "h"},
                                     headers={"Authorization": "Bearer hb-t0ken_for.install-tests"})
    eq(status, 403, "POST /api/v1/groups with the heartbeat token")
    db = os.stat(os.path.join(state, "sds-admin", "sds.db"))
    eq((db.st_uid, db.st_mode & 0o777), (sdstest.NOBODY, 0o600),
       "the database's owner and mode")
    adm.stop(quiet=False)


def start_admin(ctx, argv_for):
    """sds-admin started by @argv_for(port) on a free port, from /,
    answering /healthz from its own socket (tests/lib/sdsadmin.py)."""
    return sdsadmin.Admin(ctx, argv_for=argv_for, cwd="/").start()


# ---------------------------------------------------------------------------
# sds-bpf@.service's command line

def env_file(path):
    """KEY=VALUE of a systemd EnvironmentFile= (the subset the confs use:
    comments, blank lines, optional quotes)."""
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", line)
            check(m, "%s:%d: not KEY=VALUE: %r" % (path, n, line))
            v = m.group(2).strip()
            if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
                v = v[1:-1]
            out[m.group(1)] = v
    return out


def unit_settings(path, key):
    """Every value of @key in the unit, continuation lines joined (as
    systemd does: backslash-newline becomes a space)."""
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    return [l.split("=", 1)[1] for l in text.splitlines()
            if l.startswith(key + "=")]


def unit_argv(path, instance, key="ExecStart", mainpid=None):
    """sds-bpf@INSTANCE's ExecStart= (or @key) as systemd runs it: its
    specifiers, $MAINPID and $$ resolved, split into words."""
    (cmd,) = unit_settings(path, key)
    cmd = cmd.replace("%i", instance).replace("%%", "%")
    if mainpid is not None:
        cmd = re.sub(r"(?<!\$)\$MAINPID", str(mainpid), cmd)
    cmd = cmd.replace("$$", "$")
    check("%" not in cmd, "a specifier left in ExecStart: %r" % cmd)
    return shlex.split(cmd)


def unit_caps(path, drop=None):
    """setpriv's options for the unit's CapabilityBoundingSet= (but
    @drop) and NoNewPrivileges=."""
    (caps,) = unit_settings(path, "CapabilityBoundingSet")
    names = [c.lower()[4:] for c in caps.split()]
    check(names and all(c.startswith("cap_") for c in caps.lower().split()),
          "CapabilityBoundingSet=%s" % caps)
    if drop:
        check(drop in names, "%s is not in CapabilityBoundingSet=%s"
              % (drop, caps))
        names.remove(drop)
    pre = ["setpriv", "--inh-caps=-all",
           "--bounding-set=-all," + ",".join("+" + c for c in names)]
    eq(unit_settings(path, "NoNewPrivileges"), ["yes"], "NoNewPrivileges=")
    return pre + ["--no-new-privs", "--"], names


class UnitLoader:
    """The unit's ExecStart= for app @app with the conf @conf, under its
    capabilities; ready once its socket is in the run dir."""

    def __init__(self, ctx, conf, app, group, wait=True, drop=None):
        unit = ctx.path("usr/lib/systemd/system/sds-bpf@.service")
        pre, self.caps = unit_caps(unit, drop)
        # As installed under DESTDIR: the unit's /usr/sbin is DESTDIR's.
        self.argv = pre + [a.replace("/usr/sbin/", ctx.path("usr/sbin/"))
                           for a in unit_argv(unit, app)]
        env = dict(ctx.env, **env_file(conf))
        n = len(ctx.loaders)
        self.errpath = os.path.join(ctx.tmp, "unit-%d.err" % n)
        self.sock = sdstest.sock_path(ctx.run_dir, group, app)
        log(" ".join(self.argv))
        with open(self.errpath, "wb") as e:
            self.p = sdstest.spawn(self.argv, env=env, cwd="/",
                                   stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=e)
        ctx.loaders.append(self)
        if wait:
            sdstest.wait_until(
                lambda: sdstest.is_socket(self.sock) or self.p.poll() is not None,
                time.time() + 15, "no socket %s" % self.sock)
            check(self.p.poll() is None, "the unit's loader exited %s: %s"
                  % (self.p.poll(), self.stderr()))

    def stderr(self):
        with open(self.errpath, errors="replace") as f:
            return f.read()

    def stop(self):
        """What systemctl stop does: SIGTERM, then wait."""
        self.p.send_signal(signal.SIGTERM)
        return self.p.wait(15)

    def cleanup(self):
        if self.p.poll() is None:
            try:
                self.p.send_signal(signal.SIGINT)
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                pass
        if self.p.poll() is None:
            sdstest.kill_group(self.p)
            self.p.wait(5)


def write_conf(ctx, **kv):
    """A conf of its own (app-N.conf) with @kv."""
    ctx.confs = getattr(ctx, "confs", 0) + 1
    path = os.path.join(ctx.tmp, "app-%d.conf" % ctx.confs)
    with open(path, "w") as f:
        f.write("# written by tests/install\n")
        for k, v in kv.items():
            f.write("%s=%s\n" % (k, v))
    return path


def visits(ctx, sds, app, point):
    p = run([sds, "stats", "--json", "--group", GROUP, "--app", app],
            env=ctx.env)
    st = json.loads(p.stdout)
    pt = sdstest.get_point(st, point, required=False)
    return pt["total"]["visits"] if pt else 0


def wait_visits(ctx, sds, app, point, want):
    last = []

    def got():
        last[:] = [visits(ctx, sds, app, point)]
        return last[0] == want
    try:
        sdstest.wait_until(got, time.time() + 5, "")
    except Fail:
        raise Fail("point %s: %s visits, want %d" % (point, last, want))


@test
def unit_function_point_keep_restart(ctx):
    ctx.install()
    sds = ctx.path("usr/sbin/sds-bpf")
    tgt = sdstest.stage(os.path.join(TARGETS, "target_pie"), ctx.tmp, "svc")
    # Two points (POINTS split on blanks), the installed example
    # strategies (valid), empty keys (no option).
    conf = write_conf(ctx, TARGET=tgt, POINTS="w=work:err=neg  n=nap",
                      GROUP=GROUP,
                      STRATEGIES=ctx.path("etc/sds/strategies/example.json"),
                      ADMIN="", TOKEN_FILE="", OPTIONS="")
    l = UnitLoader(ctx, conf, ctx.app, GROUP)
    st = json.loads(run([sds, "stats", "--json", "--group", GROUP, "--app",
                         ctx.app], env=ctx.env).stdout)
    eq(sorted(p["name"] for p in st["points"]), ["n", "order", "w"],
       "points (w and n of POINTS, order of the strategies)")
    t = target.Target(ctx, tgt)
    t.work(5)
    wait_visits(ctx, sds, ctx.app, "w", 5)
    # systemctl reload: ExecReload= sends SIGHUP to $MAINPID (shown on a
    # stand-in that says so), which the loader takes as "read the
    # strategies again" and serves on.
    unit = ctx.path("usr/lib/systemd/system/sds-bpf@.service")
    hup = sdstest.spawn(["sh", "-c", 'trap "echo HUP; exit 0" HUP; echo ready; '
                         'while :; do sleep 0.05; done'],
                        stdout=subprocess.PIPE, text=True)
    ctx.others.append(hup)
    eq(hup.stdout.readline(), "ready\n", "the stand-in")
    run(unit_argv(unit, ctx.app, "ExecReload", mainpid=hup.pid))
    eq(hup.stdout.readline(), "HUP\n", "the stand-in after ExecReload=")
    run(unit_argv(unit, ctx.app, "ExecReload", mainpid=l.p.pid))
    time.sleep(0.5)
    check(l.p.poll() is None, "the loader exited at reload: %r" % l.stderr())
    st = json.loads(run([sds, "stats", "--json", "--group", GROUP, "--app",
                         ctx.app], env=ctx.env).stdout)
    eq(st["strategies_version"], 1, "strategies version after reload")
    # systemctl restart: SIGTERM, then the same command again.  --keep
    # left the probes counting; the new loader adopts them.
    eq(l.stop(), 0, "the loader's exit status at SIGTERM")
    t.work(3)
    l2 = UnitLoader(ctx, conf, ctx.app, GROUP)
    check("adopted the pins" in l2.stderr(),
          "the restarted loader did not adopt the pins: %r" % l2.stderr())
    t.work(4)
    wait_visits(ctx, sds, ctx.app, "w", 12)
    eq(l2.stop(), 0, "the second loader's exit status at SIGTERM")
    # systemctl stop leaves the pins: detach removes them.
    check(os.path.isdir(os.path.join(ctx.pin_root, "%s:%s" % (GROUP, ctx.app))),
          "no pins kept after a stop")
    run([sds, "detach", "--group", GROUP, "--app", ctx.app], env=ctx.env)
    check(not os.path.exists(os.path.join(ctx.pin_root, "%s:%s" % (GROUP, ctx.app))),
          "detach left the pins")


def build_guarded(ctx):
    """tests/targets/guarded.c built with the installed pkg-config file
    (rpath: the installed library), 0700 and nobody's."""
    lib = ctx.path("usr/lib")
    appdir = os.path.join(ctx.tmp, "app")
    os.makedirs(appdir, 0o755, exist_ok=True)
    exe = os.path.join(appdir, "guarded")
    if os.path.exists(exe):
        return exe
    src = [os.path.join(ROOT, "tests", "targets", f)
           for f in ("guarded.c", "guarded_harm.c", "guarded_copy.c")]
    run(["gcc", "-O2", "-std=gnu11", "-D_GNU_SOURCE", "-o", exe] + src
        + ctx.pkg_config("--cflags") + ["-Wl,-rpath," + lib]
        + ctx.pkg_config("--libs") + ["-lpthread"])
    os.chown(exe, sdstest.NOBODY, sdstest.NOBODY)
    os.chmod(exe, 0o700)
    return exe


AS_NOBODY = ["setpriv", "--reuid=%d" % sdstest.NOBODY,
             "--regid=%d" % sdstest.NOBODY, "--clear-groups"]


def guard_conf(ctx, exe):
    return write_conf(ctx, TARGET=exe, POINTS="", GROUP=GROUP,
                      OPTIONS="--socket-mode 0660 --socket-group nogroup")


@test
def unit_guard_of_another_user(ctx):
    """A program built with the installed pkg-config file, its binary
    0700 and of nobody's, run as nobody, guarded through the unit's
    loader under the unit's capabilities (CAP_DAC_READ_SEARCH reads it,
    CAP_SYS_PTRACE its /proc), on a socket of group nogroup
    (CAP_CHOWN)."""
    ctx.install()
    sds = ctx.path("usr/sbin/sds-bpf")
    exe = build_guarded(ctx)
    l = UnitLoader(ctx, guard_conf(ctx, exe), ctx.app, GROUP)
    st = os.stat(l.sock)
    eq((st.st_gid, st.st_mode & 0o777), (sdstest.NOBODY, 0o660),
       "the socket's group and mode")
    t = guarded.Target(ctx, exe, prefix=AS_NOBODY)
    t.open(ctx.app, GROUP)
    r = t.call("p", 7)
    eq((r["passed"], r["downgraded"]), (7, 0), "guarded calls")
    wait_visits(ctx, sds, ctx.app, "p", 7)


@test
def unit_capabilities_each_needed(ctx):
    """The measurement of docs/INSTALL.md, kept: without each capability
    of the unit's set but CAP_BPF and CAP_PERFMON (which CAP_SYS_ADMIN
    implies), what needs it fails."""
    ctx.install()
    sds = ctx.path("usr/sbin/sds-bpf")
    exe = build_guarded(ctx)
    tgt = sdstest.stage(os.path.join(TARGETS, "target_pie"), ctx.tmp, "svc")
    fn_conf = write_conf(ctx, TARGET=tgt, POINTS="w=work", GROUP=GROUP)
    fails = {
        # No CAP_SYS_ADMIN case: on the session path (this kernel) uprobes
        # are attached with BPF_LINK_CREATE, which CAP_BPF + CAP_PERFMON
        # allow; the pair path's perf_event_open of the uprobe PMU needs it.
        # reading TARGET, 0700 of nobody's
        "dac_read_search": (guard_conf(ctx, exe), "%s: Permission denied" % exe),
        # the control socket's group
        "chown": (guard_conf(ctx, exe), "Operation not permitted"),
    }
    for n, (cap, (conf, why)) in enumerate(sorted(fails.items())):
        l = UnitLoader(ctx, conf, "%s%d" % (ctx.app, n), GROUP, wait=False,
                       drop=cap)
        try:
            rc = l.p.wait(20)
        except subprocess.TimeoutExpired:
            raise Fail("without CAP_%s: still running after 20 s; stderr %r"
                       % (cap.upper(), l.stderr()))
        check(rc != 0 and why in l.stderr(),
              "without CAP_%s: exit %d, stderr %r (want %r)"
              % (cap.upper(), rc, l.stderr(), why))
    # Registration of nobody's guarded process: refused without
    # CAP_SYS_PTRACE, calls uncounted.  CAP_KILL is not in the set at all:
    # signal 0's EPERM is a live process (unit_guard_of_another_user
    # counts such a process's calls under the unit's own set).
    unit_path = ctx.path("usr/lib/systemd/system/sds-bpf@.service")
    check("CAP_KILL" not in unit_settings(unit_path, "CapabilityBoundingSet")[0],
          "the unit still asks for CAP_KILL")
    app = "%sr0" % ctx.app
    UnitLoader(ctx, guard_conf(ctx, exe), app, GROUP, drop="sys_ptrace")
    t = guarded.Target(ctx, exe, prefix=AS_NOBODY)
    t.open(app, GROUP)
    r = t.call("p", 7)
    eq((r["passed"], r["downgraded"]), (7, 0), "guarded calls")
    time.sleep(1.0)
    eq(visits(ctx, sds, app, "p"), 0, "visits counted without CAP_SYS_PTRACE")


@test
def unit_conf_without_target(ctx):
    ctx.install()
    conf = write_conf(ctx, POINTS="w=work", GROUP=GROUP)
    l = UnitLoader(ctx, conf, ctx.app, GROUP, wait=False)
    eq(l.p.wait(15), 2, "exit status without TARGET")
    eq(l.stderr(), "sds-bpf@%s: TARGET is not set in /etc/sds/apps/%s.conf\n"
       % (ctx.app, ctx.app), "the line")


# ---------------------------------------------------------------------------
# Uninstall, conffiles, bad input

@test
def uninstall_leaves_nothing(ctx):
    # make install, then make uninstall, of DESTDIR uninstalled/.
    dest = staged("uninstalled")
    eq(tree(dest), {}, "files left by uninstall")
    eq(sorted(read(staged("uninstalled.out")).splitlines()),
       sorted("removed %s" % os.path.join(dest, "etc/sds", e) for e in ETC),
       "uninstall's lines")
    check(not os.path.exists(os.path.join(dest, "etc/sds")),
          "uninstall left etc/sds")
    check(not os.path.exists(os.path.join(dest, "usr/share/sds-admin")),
          "uninstall left share/sds-admin")


@test
def conffiles_changed_are_kept(ctx):
    # install-stage's conffiles/: make install; the operator adds a line
    # to apps/example.conf (conffiles.changed: the file then) and writes
    # an apps/shop.conf of their own; make install again; make uninstall.
    dest = staged("conffiles")
    changed = os.path.join(dest, "etc/sds/apps/example.conf")
    text = read(staged("conffiles.changed"))
    eq(text, subst_etc("apps/example.conf") + "# changed by the operator\n",
       "the conffile as the operator left it")
    # install again: the changed conffile stays as the operator left it.
    out = read(staged("conffiles.install.out"))
    check("kept %s: changed since it was installed" % changed in out,
          "install's lines: %r" % out)
    out = read(staged("conffiles.uninstall.out"))
    check("kept %s: changed since it was installed" % changed in out,
          "uninstall's lines: %r" % out)
    eq(read(changed), text, "the changed conffile after install and uninstall")
    eq(tree(dest), {"etc/sds/apps/example.conf": 0o644,
                    "etc/sds/apps/shop.conf": 0o644},
       "files left by uninstall: the changed conffile and the operator's")


def subst_etc(rel):
    """packaging/etc/@rel as install writes it for PREFIX=/usr."""
    return read(os.path.join(ROOT, "packaging", "etc", rel)).replace(
        "@" + "SBINDIR@", "/usr/sbin").replace("@" + "SYSCONFDIR@", "/etc")


@test
def bad_prefix(ctx):
    # make GOAL DESTDIR=bad/dest PREFIX=..., a make of its own each.
    for n, (prefix, why) in enumerate(BAD_PREFIXES):
        for goal in ("install", "uninstall"):
            f = staged("bad", "%s-%d" % (goal, n))
            rc = int(read(f + ".rc"))
            check(rc != 0, "%s PREFIX=%r succeeded" % (goal, prefix))
            lines = read(f + ".err").splitlines()
            check(len(lines) == 1 and lines[0].endswith(
                "*** PREFIX must be %s.  Stop." % why),
                "%s PREFIX=%r: %r" % (goal, prefix, lines))
            eq(read(f + ".out"), "", "%s PREFIX=%r's output" % (goal, prefix))
    check(not os.path.exists(staged("bad", "dest")),
          "a bad PREFIX wrote DESTDIR")


def preflight():
    # A stage older than the programs would test an old install.
    if os.stat(staged("usr.out")).st_mtime < os.stat(
            os.path.join(BUILD, "bin", "sds-bpf")).st_mtime:
        return "%s is older than %s/bin/sds-bpf (make install-stage)" % (
            STAGE, BUILD)
    return None


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(
        __file__, SUITE, Ctx, extra=preflight,
        tools=("systemd-analyze", "setpriv", "pkg-config", "readelf", "g++"),
        needs=[os.path.join(BUILD, f) for f in (
            "bin/sds-bpf", "bin/sds-admin", "bin/sds-copy",
            "test/targets/target_pie")] + [staged(f) for f in (
                "usr", "prefix", "gone", "uninstalled", "conffiles",
                "bad/install-0.rc", "bad/uninstall-2.rc")]))
