#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The Debian packages and the one version (issue 17; packaging/deb.mk,
packaging/version.mk, docs/INSTALL.md), after `make all deb` (which
`make deb-tests` runs first):

  * sds-bpf, sds-admin and sds-copy --version and sds.pc say the version
    of tools/version.sh; the script's cases: no git, git without tags, a
    tag, a commit after it, a dirty tree, an enclosing repository, a bad
    VERSION;
  * the five .deb files (sds-bpf, libsds0, libsds-dev and the -dbgsym
    of the first two) are named with that version, lintian finds no
    error and no warning in them, nor a hardening-no-* tag;
  * their fields: computed Depends, conffiles, md5sums that hold, files
    owned by root; each -dbgsym holds one debug file per ELF file of its
    package, at its build-id path, and says so in Build-Ids;
  * dpkg -i of the five in a chroot of the test's own (an overlay of
    this host's / on a tmpfs, in a private mount namespace: the host's
    /usr, /etc, /run and dpkg database are never written): the installed
    programs' --version, /run/sds and /var/lib/sds root's 0755, a guarded
    program built with the installed pkg-config file and run against the
    installed library, the installed sds-bpf counting a function exactly,
    and a static function of the stripped libsds.so.0 through
    libsds0-dbgsym's build-id file (4 runs of hello, 4 calls),
    systemd-analyze verify of the installed units; dpkg -r leaves only
    the conffiles; dpkg -P leaves nothing (every path the packages ship
    or their scripts make exists after exactly when it existed before).

The chroot starts as a copy of this host: the install test fails, saying
why, if a package of these names is installed here, or if the host has
files where the packages would put theirs (a `make install` without
DESTDIR).  Its mounts go with the test (and with this process's mount
namespace whatever happens); one that stays is a LEAK line that fails
the run.  The runner never calls make: it reads build/deb (make deb) and
build/bin, build/lib (make all).

Run as root (make deb-tests):

    python3 tests/deb/run.py [-v] [NAME-SUBSTRING...]

The last line is "N passed, M failed, K skipped".  Python 3 standard library only.
"""

import ctypes
import glob
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import chroot  # noqa: E402
import sdstest  # noqa: E402
from chroot import run  # noqa: E402
from sdstest import BUILD, ROOT, Fail, check, eq, get_point, log  # noqa: E402

SUITE = sdstest.Suite(timeout=300)
test = SUITE.test
PKGS = ("sds-bpf", "libsds0", "libsds-dev", "sds-bpf-dbgsym", "libsds0-dbgsym")
# A static (non-exported) function of libsds: only its debug file names it.
LIBSDS_STATIC = "atfork_register"
MA = "x86_64-linux-gnu"
CONFFILES = ["/etc/sds/admin.conf", "/etc/sds/apps/example.conf",
             "/etc/sds/strategies/example.json"]
# What the maintainer scripts (and sds-admin.service) make, not shipped.
MADE = ["/run/sds", "/var/lib/sds", "/var/lib/private/sds-admin",
        "/var/lib/sds-admin"]
LEAKS = []


def version():
    return run(["sh", os.path.join(ROOT, "tools", "version.sh")]).stdout.strip()


def deb_version():
    return version().replace("-", "+") + "-1"


def debs():
    v = deb_version()
    out = [os.path.join(BUILD, "deb", "%s_%s_amd64.deb" % (p, v)) for p in PKGS]
    for d in out:
        check(os.path.isfile(d), "%s missing (make deb)" % d)
    eq(sorted(glob.glob(os.path.join(BUILD, "deb", "*.deb"))), sorted(out),
       "the .deb files of build/deb")
    return out


class Ctx(sdstest.ProcDir):
    def __init__(self, name):
        super().__init__(name, "sds-deb-")
        self.chroot = None

    def cleanup(self):
        # The processes first (they run in the chroot), then its mounts.
        for l in self.loaders:
            l.cleanup()
        for p in self.others:
            sdstest.reap(p)
        err = self.chroot.close() if self.chroot else None
        if err:
            print("LEAK %s: %s" % (self.name, err))
            LEAKS.append(err)
        super().cleanup()


# ---------------------------------------------------------------------------
# The version

@test
def version_same_everywhere(ctx):
    v = version()
    for prog in ("sds-bpf", "sds-admin", "sds-copy"):
        eq(run([os.path.join(BUILD, "bin", prog), "--version"]).stdout,
           "%s %s\n" % (prog, v), "%s --version" % prog)
    with open(os.path.join(BUILD, "lib", "pkgconfig", "sds.pc")) as f:
        check("\nVersion: %s\n" % v in f.read(), "sds.pc's Version is not %s" % v)


@test
def version_script_cases(ctx):
    src = os.path.join(ctx.tmp, "src")
    os.makedirs(os.path.join(src, "tools"))
    shutil.copy(os.path.join(ROOT, "tools", "version.sh"),
                os.path.join(src, "tools"))
    with open(os.path.join(src, "VERSION"), "w") as f:
        f.write("2.5.0\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")

    def ver(ok=True):
        return run(["sh", "tools/version.sh"], ok=ok, cwd=src)

    def git(*a):
        return run(["git", "-c", "init.defaultBranch=main"] + list(a),
                   cwd=src, env=env).stdout.strip()

    eq(ver().stdout, "2.5.0\n", "no git: VERSION")
    # A tree inside a tagged repository of another project: its VERSION.
    outer = ctx.tmp
    run(["git", "-c", "init.defaultBranch=main", "init", "-q", outer])
    run(["git", "-C", outer, "commit", "-q", "--allow-empty", "-m", "o"], env=env)
    run(["git", "-C", outer, "tag", "v9.9.9"])
    eq(ver().stdout, "2.5.0\n", "inside another repository: VERSION")
    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "one")
    eq(ver().stdout, "2.5.0\n", "git, no tag: VERSION")
    git("tag", "v3.0.1")
    eq(ver().stdout, "3.0.1\n", "at tag v3.0.1")
    git("commit", "-q", "--allow-empty", "-m", "two")
    h = git("rev-parse", "--short", "HEAD")
    eq(ver().stdout, "3.0.1-1-g%s\n" % h, "a commit after the tag")
    with open(os.path.join(src, "VERSION"), "a") as f:
        f.write("x\n")
    eq(ver().stdout, "3.0.1-1-g%s-dirty\n" % h, "a dirty tree")
    shutil.rmtree(os.path.join(src, ".git"))
    with open(os.path.join(src, "VERSION"), "w") as f:
        f.write("2.5 beta\n")
    r = ver(ok=False)
    eq((r.returncode, r.stdout), (1, ""), "a bad VERSION: exit, output")
    eq(r.stderr, "tools/version.sh: bad version '2.5 beta' (VERSION must "
       "start with a digit; [0-9A-Za-z.+~-] only)\n", "a bad VERSION: message")


# ---------------------------------------------------------------------------
# The packages

@test
def lintian_clean(ctx):
    # One run: -I adds the informational tags (the hardening checks: make
    # deb builds with dpkg-buildflags' hardening=+all, packaging/deb.mk)
    # to the errors and warnings --fail-on judges; every tag is shown.
    r = run(["lintian", "-I", "--fail-on", "error,warning",
             "--tag-display-limit", "0"] + debs(), ok=False)
    lines = r.stdout.splitlines()
    bad = [l for l in lines if re.match(r"[EW]: ", l)]
    eq((r.returncode, bad), (0, []), "lintian's exit and E:/W: lines")
    eq([l for l in lines if "hardening-no-" in l], [],
       "lintian's hardening-no-* tags")


def field(deb, name):
    return run(["dpkg-deb", "-f", deb, name]).stdout.strip()


@test
def fields_conffiles_md5sums(ctx):
    d_bpf, d_lib, d_dev, d_bdbg, d_ldbg = debs()
    v = deb_version()
    for d, p in zip(debs(), PKGS):
        eq((field(d, "Package"), field(d, "Version"), field(d, "Architecture")),
           (p, v, "amd64"), "%s's name, version, architecture" % p)
    dep = field(d_bpf, "Depends")
    for lib in ("libbpf1", "libelf1", "libjansson4", "libcurl4",
                "libmicrohttpd12", "libsqlite3-0", "libcapstone4", "libc6"):
        check(re.search(r"(^|, )%s \(>= [^)]+\)" % lib, dep),
              "sds-bpf's Depends has no versioned %s: %s" % (lib, dep))
    check(re.fullmatch(r"libc6 \(>= [0-9.]+\)", field(d_lib, "Depends")),
          "libsds0's Depends: %s" % field(d_lib, "Depends"))
    eq(field(d_dev, "Depends"), "libsds0 (= %s)" % v, "libsds-dev's Depends")
    for d, p in zip(debs(), PKGS):
        x = os.path.join(ctx.tmp, p)
        run(["dpkg-deb", "-R", d, x])
        with open(os.path.join(x, "DEBIAN", "md5sums")) as f:
            listed = sorted(l.split(None, 1)[1].strip() for l in f)
        files = sorted(os.path.relpath(os.path.join(dp, n), x)
                       for dp, _, ns in os.walk(x) for n in ns
                       if not os.path.islink(os.path.join(dp, n))
                       and not os.path.relpath(dp, x).split("/")[0] in ("DEBIAN", "etc"))
        eq(listed, files, "%s's md5sums: every file but the conffiles" % p)
        run(["md5sum", "--quiet", "-c", "DEBIAN/md5sums"], cwd=x)
        owners = {tuple(l.split()[1].split("/"))
                  for l in run(["dpkg-deb", "-c", d]).stdout.splitlines()}
        eq(owners, {("root", "root")}, "%s's owners" % p)
    with open(os.path.join(ctx.tmp, "sds-bpf", "DEBIAN", "conffiles")) as f:
        eq(f.read().split(), CONFFILES, "sds-bpf's conffiles")
    eq(sorted(os.listdir(os.path.join(ctx.tmp, "libsds0", "DEBIAN"))),
       ["control", "md5sums", "shlibs", "triggers"], "libsds0's control files")
    check_dbgsym(ctx.tmp, v, (d_bdbg, d_ldbg))


def build_id(path):
    out = run(["readelf", "-n", path]).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    check(m, "%s has no build-id" % path)
    return m.group(1)


def check_dbgsym(tmp, v, deb_files):
    """PKG-dbgsym: debhelper's fields, and exactly one debug file for each
    ELF file of PKG, at its build-id path, whose build-id it has."""
    for d, pkg in zip(deb_files, ("sds-bpf", "libsds0")):
        eq((field(d, "Section"), field(d, "Depends"),
            field(d, "Auto-Built-Package")),
           ("debug", "%s (= %s)" % (pkg, v), "debug-symbols"),
           "%s-dbgsym's Section, Depends, Auto-Built-Package" % pkg)
        x = os.path.join(tmp, pkg)
        elfs = sorted(os.path.join(dp, n) for dp, _, ns in os.walk(x)
                      for n in ns if not os.path.islink(os.path.join(dp, n))
                      and open(os.path.join(dp, n), "rb").read(4) == b"\x7fELF")
        ids = sorted(build_id(f) for f in elfs)
        eq(len(elfs), {"sds-bpf": 3, "libsds0": 1}[pkg], "%s's ELF files" % pkg)
        eq(field(d, "Build-Ids").split(), ids, "%s-dbgsym's Build-Ids" % pkg)
        y = os.path.join(tmp, pkg + "-dbgsym")
        got = sorted(os.path.relpath(os.path.join(dp, n), y)
                     for dp, _, ns in os.walk(os.path.join(y, "usr/lib/debug"))
                     for n in ns)
        eq(got, ["usr/lib/debug/.build-id/%s/%s.debug" % (i[:2], i[2:])
                 for i in ids], "%s-dbgsym's debug files" % pkg)
        for i in ids:
            f = os.path.join(y, "usr/lib/debug/.build-id/%s/%s.debug"
                             % (i[:2], i[2:]))
            eq(build_id(f), i, "the build-id of %s's debug file" % i)
            # Not an empty shell (the note alone): the symbols and DWARF
            # a stripped file's debugger and attach look for.
            secs = re.findall(r"\] (\.\S+)", run(["readelf", "-SW", f]).stdout)
            eq([x for x in (".symtab", ".debug_info", ".debug_line")
                if x not in secs], [], "sections missing from %s" % f)


# ---------------------------------------------------------------------------
# dpkg -i, -r, -P in a chroot of the test's own

# unshare(2)'s flag for a mount namespace of one's own.
CLONE_NEWNS = 0x00020000
_PRIVATE = []


def private_mounts():
    """This process (and all it starts) in a mount namespace of its own,
    nothing propagated to the host's: whatever the test mounts goes when
    the last of them exits, even after a SIGKILL.  Once per process."""
    if _PRIVATE:
        return
    err = sdstest.mount_bpffs()     # the host's, before the namespace
    check(err is None, err)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0:
        raise Fail("unshare(CLONE_NEWNS): %s" % os.strerror(ctypes.get_errno()))
    run(["mount", "--make-rprivate", "/"])
    _PRIVATE.append(1)


class Chroot(chroot.Tree):
    """A copy of this host's / that dpkg may change: an overlay whose
    lower layer is / (read only) and whose upper layer is a tmpfs of its
    own, in this process's private mount namespace; a fresh tmpfs /run
    (nothing of the host's: no /run/sds, no systemd to talk to), the
    host's /proc, /sys (its bpffs: the test's pin root) and /dev, and the
    test's temp dir at its own path.  The host's /usr, /etc, /var/lib/dpkg
    and ld.so.cache are never written."""

    def __init__(self, ctx):
        private_mounts()
        super().__init__(tempfile.mkdtemp(prefix="sds-deb-root-"))
        run(["mount", "-t", "tmpfs", "-o", "mode=0755,size=4g", "sds-deb",
             self.top])
        for d in ("upper", "work", "root"):
            os.mkdir(os.path.join(self.top, d))
        run(["mount", "-t", "overlay", "sds-deb", "-o",
             "lowerdir=/,upperdir=%s/upper,workdir=%s/work"
             % (self.top, self.top), self.dir])
        run(["mount", "-t", "proc", "proc", self.path("/proc")])
        run(["mount", "--rbind", "/sys", self.path("/sys")])
        run(["mount", "--rbind", "/dev", self.path("/dev")])
        run(["mount", "-t", "tmpfs", "-o", "mode=0755", "sds-deb-run",
             self.path("/run")])
        run(["mount", "--bind", ctx.tmp, self.path(ctx.tmp)])
        # sds-bpf run in the chroot, for AttachProcess and stats.
        self.sds = os.path.join(ctx.tmp, "sds-bpf-in-chroot")
        with open(self.sds, "w") as f:
            f.write('#!/bin/sh\nexec chroot %s /usr/sbin/sds-bpf "$@"\n'
                    % self.dir)
        os.chmod(self.sds, 0o755)

    run = chroot.Tree.chroot

    def close(self):
        """Everything unmounted and the top dir removed (rmdir, never rm
        -r: nothing is deleted through a mount); an error string if a
        mount stayed."""
        return super().close(remove=os.rmdir)


def status(root, pkg):
    r = root.run(["dpkg-query", "-W", "-f=${Status}", pkg], ok=False)
    return r.stdout.strip() if r.returncode == 0 else ""


def shipped(deb_files):
    """Every path the packages hold (directories too), absolute."""
    out = set()
    for d in deb_files:
        for l in run(["dpkg-deb", "-c", d]).stdout.splitlines():
            p = l.split(None, 5)[5].split(" -> ")[0]
            p = "/" + p.lstrip("./").rstrip("/")
            if p != "/":
                out.add(p)
    return out


def exists(root, paths):
    return {p: os.path.lexists(root.path(p)) for p in paths}


def refuse_if_taken(root, paths):
    """The chroot starts as a copy of this host: packages of these names,
    or files where they put theirs (a make install without DESTDIR),
    would make the before/after comparison meaningless."""
    for p in PKGS:
        st = status(root, p)
        if st and "not-installed" not in st:
            raise Fail("package %s is installed on this host (%s), so in "
                       "the test's copy of it too: dpkg -P %s first"
                       % (p, st, p))
    # Files, and the directories only the packages make.
    ours = ("/etc/sds", "/var/lib/sds", "/usr/share/sds-admin",
            "/var/lib/private/sds-admin", "/var/lib/sds-admin")
    own = sorted(p for p in paths if os.path.lexists(root.path(p)) and
                 (not os.path.isdir(root.path(p)) or p in ours))
    if own:
        raise Fail("files where the packages would put theirs (a make "
                   "install without DESTDIR on this host?): %s"
                   % ", ".join(own[:5]))


def check_installed(ctx, root):
    v = version()
    for prog in ("sds-bpf", "sds-admin", "sds-copy"):
        eq(root.run(["/usr/sbin/" + prog, "--version"]).stdout,
           "%s %s\n" % (prog, v), "installed %s --version" % prog)
    for d in ("/run/sds", "/var/lib/sds"):
        st = os.lstat(root.path(d))
        eq((stat.S_ISDIR(st.st_mode), st.st_uid, st.st_gid,
            st.st_mode & 0o7777), (True, 0, 0, 0o755), "%s: dir, root's, 0755" % d)
    # A guarded program, built with the system's pkg-config and the
    # installed sds.pc, against the installed library.
    eq(root.run(["pkg-config", "--modversion", "sds"]).stdout.strip(), v,
       "pkg-config --modversion sds")
    flags = root.run(["pkg-config", "--cflags", "--libs", "sds"]).stdout.split()
    eq(flags, ["-lsds"], "pkg-config --cflags --libs sds (system dirs)")
    exe = os.path.join(ctx.tmp, "hello")
    src = os.path.join(ctx.tmp, "hello.c")
    shutil.copy(os.path.join(ROOT, "tests", "install", "hello.c"), src)
    root.run(["gcc", "-o", exe, src] + flags)
    eq(root.run([exe]).stdout, "pass 3\n", "hello against the installed libsds")
    ldd = root.run(["ldd", exe]).stdout
    check(re.search(r"libsds\.so\.0 => (/usr)?/lib/%s/libsds\.so\.0 " % MA, ldd),
          "hello does not load the installed libsds.so.0: %s" % ldd)
    # The installed sds-bpf counts a function of a program exactly.
    prog = os.path.join(ctx.tmp, "prog")
    src = os.path.join(ctx.tmp, "prog.c")
    shutil.copy(os.path.join(ROOT, "tests", "debuginfo", "prog.c"), src)
    root.run(["gcc", "-g", "-O2", "-o", prog, src])
    ld = sdstest.AttachProcess(ctx, ["-a", "debtest", prog, "w=secret_work"],
                               "debtest", binary=root.sds)
    p = subprocess.Popen(["chroot", root.dir, prog], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, cwd=ctx.tmp,
                         env=chroot.ENV, start_new_session=True)
    ctx.others.append(p)
    eq(p.stdout.readline().strip(), "ready", "prog")
    p.stdin.write("call 321\n")
    p.stdin.flush()
    eq(p.stdout.readline().strip(), "done", "prog after 321 calls")
    r = sdstest.run_group([root.sds, "stats", "--app", "debtest", "--json"],
                          ctx.env, ctx.tmp, ctx.others, 30)
    check(r.rc == 0, "stats: %r" % r)
    eq(get_point(json.loads(r.out), "w")["total"]["visits"], 321,
       "visits counted by the installed sds-bpf")
    ld.end()
    # The stripped libsds0's static function, found through
    # libsds0-dbgsym's build-id file (docs/INSTALL.md, "Separate debug
    # info"): called once by each process that opens a client, so once
    # by each run of hello.
    lib = "/usr/lib/%s/libsds.so.0" % MA
    check(".symtab" not in run(["readelf", "-S", root.path(lib)]).stdout,
          "the installed libsds.so.0 is not stripped")
    ld = sdstest.AttachProcess(ctx, ["-a", "debdbg", lib, "r=" + LIBSDS_STATIC],
                               "debdbg", binary=root.sds)
    bid = build_id(root.path(lib))
    sym = [l for l in ld.stdout().splitlines() if l.startswith("symbols: ")]
    eq(len(sym), 1, "symbols: lines of attach %s" % lib)
    check("/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:]) in sym[0],
          "attach took libsds's symbols elsewhere: %r" % sym[0])
    for _ in range(4):
        eq(root.run([exe]).stdout, "pass 3\n", "hello under the attached libsds")
    r = sdstest.run_group([root.sds, "stats", "--app", "debdbg", "--json"],
                          ctx.env, ctx.tmp, ctx.others, 30)
    check(r.rc == 0, "stats: %r" % r)
    eq(get_point(json.loads(r.out), "r")["total"]["visits"], 4,
       "%s of the stripped libsds counted (4 runs of hello)" % LIBSDS_STATIC)
    ld.end()
    # The installed units (a template through an instance's name).
    units = os.path.join(ctx.tmp, "units")
    os.mkdir(units)
    inst = os.path.join(units, "sds-bpf@shop.service")
    os.symlink("/usr/lib/systemd/system/sds-bpf@.service", inst)
    for u in ("/usr/lib/systemd/system/sds-admin.service", inst):
        r = root.run(["systemd-analyze", "verify", u], ok=False)
        eq((r.returncode, r.stdout + r.stderr), (0, ""),
           "systemd-analyze verify %s" % os.path.basename(u))


@test
def dpkg_install_remove_purge(ctx):
    deb_files = debs()
    root = ctx.chroot = Chroot(ctx)
    inside = os.path.join(ctx.tmp, "debs")
    os.mkdir(inside)
    for d in deb_files:
        shutil.copy(d, inside)
    inside = [os.path.join(inside, os.path.basename(d)) for d in deb_files]
    paths = shipped(deb_files) | set(MADE)
    refuse_if_taken(root, paths)
    before = exists(root, paths)
    root.run(["dpkg", "-i"] + inside)
    for p in PKGS:
        eq(status(root, p), "install ok installed", "dpkg status of %s" % p)
    missing = sorted(p for p in shipped(deb_files)
                     if not os.path.lexists(root.path(p)))
    eq(missing, [], "shipped paths missing after dpkg -i")
    check_installed(ctx, root)

    root.run(["dpkg", "-r"] + list(PKGS))
    eq(status(root, "sds-bpf"), "deinstall ok config-files", "sds-bpf after -r")
    keep = set(CONFFILES) | {"/etc", "/etc/sds", "/etc/sds/apps",
                             "/etc/sds/strategies", "/var/lib/sds",
                             "/run/sds", "/var/lib"}
    now = exists(root, paths)
    left = sorted(p for p in paths if now[p] and not before[p] and p not in keep)
    eq(left, [], "paths left by dpkg -r but the conffiles and state")
    gone = sorted(p for p in CONFFILES if not now[p])
    eq(gone, [], "conffiles dpkg -r removed")

    root.run(["dpkg", "-P"] + list(PKGS))
    for p in PKGS:
        check(status(root, p) in ("", "unknown ok not-installed"),
              "%s after -P: %r" % (p, status(root, p)))
    now = exists(root, paths)
    diff = sorted(p for p in paths if now[p] != before[p])
    eq(diff, [], "paths whose existence dpkg -i + -P changed")
    # What ran in the chroot ended, nothing keeps its mounts busy.
    for l in ctx.loaders:
        l.cleanup()
    for p in ctx.others:
        sdstest.reap(p)
    eq(root.close(), None, "the chroot's mounts after the test")


if __name__ == "__main__":
    rc = sdstest.run_suite(
        __file__, SUITE, Ctx,
        tools=("dpkg-deb", "lintian", "pkg-config", "gcc", "git",
               "systemd-analyze", "md5sum", "mount", "umount", "chroot"))
    sys.exit(1 if LEAKS else rc)
