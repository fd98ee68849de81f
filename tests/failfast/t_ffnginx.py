# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The nginx demo as a test (tools/demo/ff_demo.py --check, docs/FAILFAST.md
"The nginx demo"): Debian's nginx, a reverse proxy to an upstream that
never answers, with failfast=connect on ngx_event_connect_peer.  The
script asserts its own counts exactly; this runs it in its own process
group (killed whole on a timeout: nginx, its workers and the loader are
in it) and checks its verdict and that nothing of it is left.
"""

import os
import time

import sdstest
from ff_lib import HERE, cg_lever, cg_ours, check, eq, lsm_loads, skip, test

ROOT = os.path.dirname(os.path.dirname(HERE))
DEMO = os.path.join(ROOT, "tools", "demo", "ff_demo.py")
NGINX = "/usr/sbin/nginx"


def nginx_procs():
    """Processes running Debian's nginx (none of this host's otherwise)."""
    out = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and os.readlink("/proc/%s/exe" % pid) == NGINX:
                out.append(int(pid))
        except OSError:
            pass
    return out


def nginx_demo(ctx):
    """make demo-failfast-check: kill switch on, 200 requests all 502
    with p99 < 50 ms and none reaching the upstream; off, 20 reach it
    (counted exactly); the loader's programs gone after it."""
    before = set(nginx_procs())
    r = sdstest.run_group(["python3", DEMO, "--check"], ctx.env, ctx.tmp,
                          ctx.others, timeout=180)
    print("\n".join("  " + x for x in r.out.splitlines()
                    if x.startswith(("check:", "   "))))
    eq((r.rc, r.out.splitlines()[-1:]), (0, ["ff-demo: all checks passed"]),
       "ff_demo.py --check: stderr %r" % r.err)
    for want in ("check: all 200 answered 502: ok",
                 "check: the upstream accepted none: ok",
                 "check: the upstream accepted exactly 20: ok"):
        check(want in r.out.splitlines(), "the demo did not say %r" % want)
    try:
        sdstest.wait_until(lambda: not set(nginx_procs()) - before,
                           time.time() + 10, lambda _: "nginx processes left: "
                           "%s" % sorted(set(nginx_procs()) - before))
    except sdstest.Fail:
        # Its leader gone, cleanup's reap() would leave them: the group
        # (the demo's own, from run_group) goes now.
        sdstest.kill_group(r)
        raise
    eq(cg_ours(), [], "our programs on the cgroup2 root")


if not os.access(NGINX, os.X_OK):
    skip("nginx_demo", "%s missing: apt-get install nginx-light (make deps)"
         % NGINX)
elif not (lsm_loads()[0] or cg_lever()[0]):
    skip("nginx_demo", "neither BPF LSM nor cgroup sock_addr programs load "
         "here: %s" % cg_lever()[1])
else:
    test(nginx_demo)
