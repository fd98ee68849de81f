# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The loader under AddressSanitizer, LeakSanitizer and UBSan
(build/test/sds-bpf-asan, built by hostile.mk): what clients make it do
must leave nothing behind in it.  A guarded app's session requests 20
points (`point NAME` each), calls them, two `stats` and a `hist` are
served, the session ends; then SIGINT: the loader exits 0 and the
sanitizers print nothing (issue 11: a json_t leaked per `point` request
showed as 20 leaks here).
"""

import json
import os

from hostile_lib import test
import sdstest
from sdstest import BUILD, SDS, check, eq
from guarded import Target

ASAN = os.path.join(BUILD, "test", "sds-bpf-asan")
TT = os.path.join(BUILD, "test", "targets")
POINTS = 20


@test
def loader_asan_points_leave_nothing(ctx):
    check(os.path.exists(ASAN), "%s missing: run make hostile-bins" % ASAN)
    path = ctx.stage(os.path.join(TT, "guarded_static"))
    l = sdstest.AttachProcess(ctx, ["--app", "app", path], "app",
                              binary=ASAN)
    t = Target(ctx, path)
    t.open("app")
    for i in range(POINTS):
        r = t.call("p%d" % i, 1)
        eq(r["passed"], 1, "point p%d: its call passed" % i)
    for args in (["stats", "--json"], ["stats"], ["hist", "p0"]):
        r = sdstest.run_group([SDS] + args[:1] + ["--app", "app"] + args[1:],
                              ctx.env, ctx.tmp, ctx.others, 60)
        eq(r.rc, 0, "sds-bpf %s: %r" % (" ".join(args), r))
    st = sdstest.run_group([SDS, "stats", "--json", "--app", "app"],
                           ctx.env, ctx.tmp, ctx.others, 60)
    names = sorted(p["name"] for p in json.loads(st.out)["points"])
    eq(names, sorted("p%d" % i for i in range(POINTS)), "the points")
    t.cleanup()
    l.end()
    err = l.stderr()
    eq(l.p.returncode, 0, "the ASan loader's exit status (stderr: %s)"
       % err[-4000:])
    check("Sanitizer" not in err and "runtime error" not in err,
          "the sanitizers reported: %s" % err[-4000:])
