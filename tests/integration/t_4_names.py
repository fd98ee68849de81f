# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Names, groups, the target's path, the run dir and list; a clean exit
on SIGINT and SIGTERM.
"""

import json
import os
import shutil
import signal

from integration_lib import assert_counts, assert_point_meta, test
from sdstest import Fail, KernelSnapshot, check, sds_progs_of


# ---------------------------------------------------------------------------
# Names, groups, list, run dir

@test
def app_name_sanitized_and_group(ctx):
    path = ctx.copy("target_pie", "my.target+1")
    t = ctx.start(path)
    l = ctx.attach(["--group", "g-1", path, "work=work"], "my_target_1",
                   group="g-1")
    t.cmd("work 10 0 0 0")
    st, p = assert_counts(ctx, "my_target_1", "work", 10, 0, 0, group="g-1")
    assert_point_meta(st, p, l, "my_target_1", "g-1", "work", "work")
    w64 = "w" * 64          # the longest valid point name
    l2 = ctx.attach(["--app", "named", path, w64 + "=work"], "named")
    t.cmd("work 7 0 0 0")
    assert_counts(ctx, "named", w64, 7, 0, 0)
    assert_counts(ctx, "my_target_1", "work", 17, 0, 0, group="g-1")
    check(l2.pid != l.pid, "two loaders")


@test
def relative_target_path(ctx):
    """TARGET as ./name and as a bare name in the working directory: the
    probe goes on that file, not on a file of the same name found in PATH
    (libbpf searches PATH for a binary path without a slash)."""
    path = ctx.copy("target_pie")
    bindir = os.path.join(ctx.tmp, "bin")
    os.mkdir(bindir)
    other = os.path.join(bindir, "target_pie")
    shutil.copy2(path, other)
    ctx.env["PATH"] = bindir + ":" + ctx.env.get("PATH", "/usr/bin:/bin")
    t = ctx.start(path)
    o = ctx.start(other)
    for arg in ("./target_pie", "target_pie"):
        l = ctx.attach([arg, "work=work:err=neg"], "target_pie")
        t.cmd("work 20 3 0 0")
        o.cmd("work 7 0 0 0")      # another file: not ours
        try:
            assert_counts(ctx, "target_pie", "work", 20, 3, 0)
        except Fail as e:
            raise Fail("attach %s (cwd %s, PATH starting with %s, which "
                       "holds another file named target_pie): %s"
                       % (arg, ctx.tmp, bindir, e))
        rc = l.stop()
        check(rc == 0, "attach %s: exit %d on SIGINT; stderr %r"
              % (arg, rc, l.stderr()))


@test
def run_dir_created_if_missing(ctx):
    ctx.run_dir = os.path.join(ctx.tmp, "nested", "run")
    ctx.env["SDS_RUN_DIR"] = ctx.run_dir
    path = ctx.copy("target_pie")
    t = ctx.start(path)
    ctx.attach([path, "work=work"], "target_pie")
    t.cmd("work 3 0 0 0")
    assert_counts(ctx, "target_pie", "work", 3, 0, 0)


@test
def list_apps(ctx):
    a = ctx.copy("target_pie")
    b = ctx.copy("target_nopie")
    la = ctx.attach([a, "work=work", "rec=recurse"], "target_pie")
    lb = ctx.attach(["--group", "g2", b, "work=work"], "target_nopie",
                    group="g2")
    r = ctx.sds(["list"])
    check(r.rc == 0, "list: %r" % r)
    for l, grp, app in ((la, "default", "target_pie"), (lb, "g2", "target_nopie")):
        check(any(grp in x and app in x and str(l.pid) in x
                  for x in r.out.splitlines()),
              "list has no line with %s %s %d: %r" % (grp, app, l.pid, r.out))
    r = ctx.sds(["list", "--json"])
    check(r.rc == 0, "list --json: %r" % r)
    arr = json.loads(r.out)
    check(isinstance(arr, list) and len(arr) == 2,
          "list --json: want 2 apps, got %r" % arr)
    for l, grp, app, pts in ((la, "default", "target_pie", ["work", "rec"]),
                             (lb, "g2", "target_nopie", ["work"])):
        e = [x for x in arr if x.get("app") == app]
        check(len(e) == 1, "list --json: no entry for %s: %r" % (app, arr))
        e = e[0]
        check(e.get("group") == grp and e.get("pid") == l.pid
              and e.get("socket") == l.sock,
              "list --json entry %r, want group %s pid %d socket %s"
              % (e, grp, l.pid, l.sock))
        got = e.get("points")
        if isinstance(got, list):
            names = sorted(x.get("name") if isinstance(x, dict) else x
                           for x in got)
            check(names == sorted(pts), "list --json points %r, want %r"
                  % (got, pts))
        else:
            check(got == len(pts), "list --json points %r, want %d"
                  % (got, len(pts)))


# ---------------------------------------------------------------------------
# Clean exit

def _clean_exit(ctx, sig):
    snap = KernelSnapshot()
    path = ctx.copy("target_pie")
    t = ctx.start(path)
    l = ctx.attach([path, "work=work", "rec=recurse"], "target_pie")
    names = sds_progs_of(l.pid)
    check("sds_enter" in names and "sds_leave" in names,
          "the loader (pid %d) holds no sds_enter/sds_leave programs: %r"
          % (l.pid, names))
    t.cmd("work 5 0 0 0")
    rc = l.stop(sig)
    check(rc == 0, "attach exited %d on %s; stderr %r"
          % (rc, signal.Signals(sig).name, l.stderr()))
    check(not os.path.exists(l.sock), "socket %s left after exit" % l.sock)
    check(not ctx.run_dir_sockets(), "sockets left in the run dir: %r"
          % ctx.run_dir_sockets())
    snap.assert_nothing_new({l.pid}, "after attach exited")
    # The probes are gone: the target still runs fine.
    t.cmd("work 5 0 0 0")
    r = ctx.sds(["stats", "--app", "target_pie", "--json"])
    check(r.rc != 0, "stats after the loader exited: %r" % r)


@test
def clean_exit_on_sigint(ctx):
    _clean_exit(ctx, signal.SIGINT)


@test
def clean_exit_on_sigterm(ctx):
    _clean_exit(ctx, signal.SIGTERM)
