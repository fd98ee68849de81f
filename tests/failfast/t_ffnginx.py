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
from ff_lib import HERE, cg_left, cg_lever, check, eq, lsm_loads, skip, test

ROOT = os.path.dirname(os.path.dirname(HERE))
DEMO = os.path.join(ROOT, "tools", "demo", "ff_demo.py")
NGINX = "/usr/sbin/nginx"


def group_procs(pgid):
    """{pid: its command name} of the processes in process group @pgid:
    the demo's own (run_group gives it a session; nginx, its workers and
    the loader stay in it), none of another run's."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                st = f.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold blanks.
        comm, rest = st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 2:]
        if int(rest.split()[2]) == pgid:
            out[int(pid)] = comm
    return out


def nginx_demo(ctx):
    """make demo-failfast-check: kill switch on, 200 requests all 502
    with p99 < 50 ms and none reaching the upstream; off, 20 reach it
    (counted exactly); the loader's programs gone after it, and nothing
    of the demo's process group (nginx, its workers, the loader) left."""
    check(os.access(NGINX, os.X_OK), "%s missing: apt-get install "
          "nginx-light (make deps)" % NGINX)
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
        sdstest.wait_until(lambda: not group_procs(r.pid),
                           time.time() + 10, lambda _: "processes of the "
                           "demo's group left: %s" % group_procs(r.pid))
    except sdstest.Fail:
        # Its leader gone, cleanup's reap() would leave them: the group
        # (the demo's own, from run_group) goes now.
        sdstest.kill_group(r)
        raise
    # What the demo's loader attached and no process holds any more.
    eq(cg_left(), [], "programs left on the cgroup2 root since the test began")


# nginx missing is a failure (make deps installs nginx-light), not a skip;
# a kernel that loads neither lever is the one reason this test cannot run.
if lsm_loads()[0] or cg_lever()[0]:
    test(nginx_demo)
else:
    skip("nginx_demo", "neither BPF LSM nor cgroup sock_addr programs load "
         "here: %s" % cg_lever()[1])
