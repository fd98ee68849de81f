# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
What the bindings tests share (tests/bindings/run.py): the suite, the
per-test context, the toolchains (Debian's, with their caches inside the
build dir), and the examples' common protocol and exact counts.

Every example (bindings/cpp/example.cc, bindings/rust/examples/example.rs,
bindings/go/example) is run as `example GROUP APP`, guards the point
"dep", says "ready", and answers each "KIND N" line of stdin with
"passed P downgraded D failed F" and "done": P calls ran the dependency,
D ran the fallback, F of the P failed (threw, returned an error,
panicked).  The loader must then count visits P+D, exceptions F,
downgrades D, P latencies, and nothing in flight.
"""

import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import BUILD, ROOT, SDS, Fail, check, get_point, log  # noqa: E402

BIN = os.path.join(BUILD, "test", "bindings")
LIBSDS_A = os.path.join(BUILD, "lib", "libsds.a")
CACHE = os.path.join(BUILD, "bindings")      # toolchain caches and outputs
GROUP = "default"
POINT = "dep"
SUITE = sdstest.Suite(timeout=300)
test = SUITE.test

# Debian's toolchains (tools/install-deps.sh), never a rustup in PATH.
CARGO, RUSTC, RUSTDOC = "/usr/bin/cargo", "/usr/bin/rustc", "/usr/bin/rustdoc"
GO = "/usr/bin/go"


def need_tool(path, package):
    check(os.access(path, os.X_OK),
          "%s not found: install Debian's %s (make deps)" % (path, package))


def run_tool(argv, env, cwd, timeout=600):
    """@argv to its end (niced: the cores are shared): a Result; its
    output is logged with -v."""
    log("(cd %s && %s)" % (cwd, " ".join(argv)))
    r = subprocess.run(["nice"] + argv, env=env, cwd=cwd, timeout=timeout,
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True)
    log("exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    return sdstest.Result(r.returncode, r.stdout, r.stderr, None)


def unit_run_dir():
    """An empty SDS_RUN_DIR for unit tests: no loader serves them."""
    d = os.path.join(CACHE, "unit-run")
    os.makedirs(d, exist_ok=True)
    return d


def cargo(args, extra_env=None, timeout=600):
    """/usr/bin/cargo ARGS --offline in bindings/rust, with Debian's
    rustc and rustdoc, CARGO_HOME and the target dir under the build."""
    for path, pkg in ((CARGO, "cargo"), (RUSTC, "rustc"),
                      (RUSTDOC, "rustc")):
        need_tool(path, pkg)
    env = dict(os.environ, RUSTC=RUSTC, RUSTDOC=RUSTDOC,
               CARGO_HOME=os.path.join(CACHE, "cargo-home"),
               CARGO_TARGET_DIR=os.path.join(CACHE, "cargo"),
               SDS_LIB_DIR=os.path.join(BUILD, "lib"),
               SDS_RUN_DIR=unit_run_dir())
    env.update(extra_env or {})
    return run_tool([CARGO] + args + ["--offline"], env,
                    os.path.join(ROOT, "bindings", "rust"), timeout)


def go(args, timeout=600):
    """go ARGS in bindings/go, offline, GOCACHE and GOPATH under the
    build, sds.pc of the build (cgo: `#cgo pkg-config: sds`).  GOCACHE
    is build/gocache, the one tests/harm/harm.mk builds with: the
    standard library and cgo are compiled once for both suites."""
    need_tool(GO, "golang-go")
    env = dict(os.environ, GOCACHE=os.path.join(BUILD, "gocache"),
               GOPATH=os.path.join(CACHE, "gopath"), GOPROXY="off",
               GOFLAGS="-buildvcs=false", CGO_ENABLED="1",
               PKG_CONFIG_PATH=os.path.join(BUILD, "lib", "pkgconfig"),
               SDS_RUN_DIR=unit_run_dir())
    return run_tool([GO] + args, env, os.path.join(ROOT, "bindings", "go"),
                    timeout)


def rust_example():
    """Build the Rust example (release): its path."""
    r = cargo(["build", "--release", "--example", "example"])
    check(r.rc == 0, "cargo build --example example: %r" % r)
    return os.path.join(CACHE, "cargo", "release", "examples", "example")


def go_example():
    """Build the Go example: its path."""
    out = os.path.join(CACHE, "go_example")
    r = go(["build", "-o", out, "./example"])
    check(r.rc == 0, "go build ./example: %r" % r)
    return out


class Ctx(sdstest.ProcDir):
    """One test's dirs and processes (see sdstest.ProcDir)."""

    def __init__(self, name):
        super().__init__(name, "sds-bind-")

    def program(self, src, name=None):
        """A copy of @src in the test's dir: its own inode, so no other
        test's loader serves it."""
        check(os.path.exists(src), "%s missing: run make bindings-bins"
              % src)
        dst = os.path.join(self.tmp, name or os.path.basename(src))
        shutil.copy2(src, dst)
        os.chmod(dst, 0o755)
        return dst

    def strategies(self, doc, name="strategies.json"):
        """Write @doc to a new file renamed into place: its path."""
        path = os.path.join(self.tmp, name)
        with open(path + ".new", "w") as f:
            json.dump(doc, f)
        os.rename(path + ".new", path)
        return path

    def attach(self, target, app, strategies):
        return sdstest.AttachProcess(
            self, ["--app", app, "--strategies", strategies, target], app)

    def sds(self, args, timeout=30):
        return sdstest.run_group([SDS] + list(args), self.env, self.tmp,
                                 self.others, timeout=timeout)

    def stats(self, app):
        args = ["stats", "--group", GROUP, "--app", app, "--json"]
        return sdstest.json_out(self.sds(args), "sds-bpf " + " ".join(args))

    def wait_version(self, app, version, timeout=3.0):
        deadline = time.monotonic() + timeout
        while True:
            st = self.stats(app)
            if st.get("strategies_version") == version:
                return
            check(time.monotonic() < deadline,
                  "strategies_version %r, want %d within %.0f s"
                  % (st.get("strategies_version"), version, timeout))
            time.sleep(0.05)


class Example(sdstest.LineReader):
    """An example driven on stdin (the protocol above); ended by the
    test's cleanup."""

    def __init__(self, ctx, path, app):
        self.name = os.path.basename(path)
        self.p = sdstest.spawn([path, GROUP, app], env=ctx.env, cwd=ctx.tmp,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        ctx.others.append(self.p)
        self.buf = b""
        line = self.readline(10)
        check(line == "ready", "%s did not say ready: %r" % (self.name, line))

    def run(self, kind, n, timeout=120):
        """@n calls of @kind: {"passed": P, "downgraded": D, "failed": F}."""
        self.p.stdin.write(("%s %d\n" % (kind, n)).encode())
        self.p.stdin.flush()
        line = self.readline(timeout)
        f = line.split()
        check(len(f) == 6 and f[0::2] == ["passed", "downgraded", "failed"],
              "%s %s %d: %r" % (self.name, kind, n, line))
        done = self.readline(10)
        check(done == "done", "%s: %r, want done" % (self.name, done))
        r = dict(zip(f[0::2], map(int, f[1::2])))
        log("%s %s %d -> %r" % (self.name, kind, n, r))
        return r

    def quit(self):
        """Ask it to end: its exit status."""
        self.p.stdin.write(b"quit\n")
        self.p.stdin.flush()
        return self.p.wait(10)


class Counts:
    """What the loader must count for the point, from the replies."""

    def __init__(self):
        self.visits = self.exceptions = self.downgrades = self.done = 0

    def add(self, r):
        self.visits += r["passed"] + r["downgraded"]
        self.exceptions += r["failed"]
        self.downgrades += r["downgraded"]
        self.done += r["passed"]

    def check(self, ctx, app, what):
        """The point's totals, latency count and in-flight calls are
        exactly these (stats may lag a tick: one retry after 1.5 s)."""
        for attempt in (0, 1):
            p = get_point(ctx.stats(app), POINT)
            tot = p.get("total", {})
            got = {"visits": tot.get("visits"),
                   "exceptions": tot.get("exceptions"),
                   "downgrades": tot.get("downgrades"),
                   "latencies": p.get("latency_ns", {}).get("count"),
                   "in_flight": p.get("concurrency")}
            want = {"visits": self.visits, "exceptions": self.exceptions,
                    "downgrades": self.downgrades, "latencies": self.done,
                    "in_flight": 0}
            if got == want:
                return p
            if attempt == 0:
                time.sleep(1.5)
        raise Fail("%s: point %s counts %r, want %r; point %s"
                   % (what, POINT, got, want, json.dumps(p)))


def expect(r, passed, downgraded, failed, what):
    want = {"passed": passed, "downgraded": downgraded, "failed": failed}
    check(r == want, "%s: the example reported %r, want %r" % (what, r, want))


KILL_SWITCH = {POINT: {"visit_threshold": 0}}


def example_keyed(ctx, path, app):
    """The keyed calls of an example ("key-ok N": N calls of keys
    user0..user9 in turn): each passes with no limit in force, and each
    runs the fallback under a kill switch, which holds every key.  What
    the kernel counts of each key is the keyed counting's to test."""
    prog = ctx.program(path, app)
    spath = ctx.strategies({"version": 1, "points": {}})
    ctx.attach(prog, app, spath)
    ex = Example(ctx, prog, app)
    expect(ex.run("key-ok", 100), 100, 0, 0, "key-ok 100")
    ctx.strategies({"version": 2, "points": KILL_SWITCH})
    ctx.wait_version(app, 2)
    expect(ex.run("key-ok", 50), 0, 50, 0, "key-ok 50 under the kill switch")
    check(ex.quit() == 0, "%s did not exit 0" % ex.name)


def example_counts(ctx, path, app, fails):
    """The loader-backed test of an example: @fails are its kinds that
    fail ((kind, guard kind) pairs, e.g. ("err", "guard-err")).  Each
    kind passes and fails exactly as asked and is counted exactly; then
    under a kill switch every kind runs its fallback, signs nothing and
    leaves nothing in flight."""
    prog = ctx.program(path, app)
    spath = ctx.strategies({"version": 1, "points": {}})
    ctx.attach(prog, app, spath)
    ex = Example(ctx, prog, app)
    c = Counts()
    # One failing guarded scope: exactly one exception, nothing leaked.
    r = ex.run(fails[0][1], 1)
    expect(r, 1, 0, 1, fails[0][1] + " 1")
    c.add(r)
    c.check(ctx, app, "one failing guarded scope")
    # One passing scope: a visit, no exception.
    r = ex.run("guard-ok", 1)
    expect(r, 1, 0, 0, "guard-ok 1")
    c.add(r)
    c.check(ctx, app, "one passing guarded scope")
    plan = [("ok", 300), ("guard-ok", 200)]
    plan += [(k, 100) for pair in fails for k in pair]
    for kind, n in plan:
        r = ex.run(kind, n)
        expect(r, n, 0, 0 if kind.endswith("ok") else n, "%s %d" % (kind, n))
        c.add(r)
    c.check(ctx, app, "after %s" % plan)
    ctx.strategies({"version": 2, "points": KILL_SWITCH})
    ctx.wait_version(app, 2)
    for kind, n in [("ok", 50), ("guard-ok", 50)] + \
            [(k, 50) for pair in fails for k in pair]:
        r = ex.run(kind, n)
        expect(r, 0, n, 0, "%s %d under the kill switch (the fallback)"
               % (kind, n))
        c.add(r)
    c.check(ctx, app, "under the kill switch")
    check(ex.quit() == 0, "%s did not exit 0" % ex.name)
    return c
