# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Hosts (issue 16): a host named by its machine id, the loader's token
file and its modes, and several admins on one PostgreSQL with one of
them killed (t_cluster.py).
"""

import os
import shutil
import signal
import time

import e2e_lib
from e2e_lib import (APP, Admin, GROUP, PERIOD, TARGET, TOKEN, admin_stats,
                     host_loader, test)
import sdstest
from sdstest import check, eq, log, wait_until


# ---------------------------------------------------------------------------
# Host identity and the loader's token (issue 16)

def host_id(machine_id):
    """The ID loader/report/hostid.c derives from @machine_id (32 hex digits)."""
    h = 0xcbf29ce484222325
    for b in b"sds-bpf host id v1:" + machine_id.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return "%012x" % (h >> 16)


@test
def hosts_by_machine_id(ctx):
    """Two hosts both named localhost, with different machine ids, one
    after the other on one app, each holding only a heartbeat token: the
    admin keeps two hosts, named "localhost_ID", each with its periods."""
    hbt = sdstest.write_token(os.path.join(ctx.tmp, "hb.token"), "hb-" + TOKEN)
    admin = Admin(ctx)
    admin.extra = ["--heartbeat-token-file", hbt]
    admin.start()
    ids = ["0123456789abcdef0123456789abcdef", "FEDCBA9876543210FEDCBA9876543210"]
    names = ["localhost_" + host_id(m.lower()) for m in ids]
    check(names[0] != names[1], "the two ids are one: %r" % names)
    hosts_path = "/api/v1/groups/%s/apps/h_local/hosts" % GROUP

    def hosts():
        st, doc = admin.req("GET", hosts_path)
        return sorted(h["host"] for h in doc) if st == 200 else []
    for i, mid in enumerate(ids):
        f = os.path.join(ctx.tmp, "machine-id-%d" % i)
        with open(f, "w") as o:
            o.write(mid + "\n")
        p, app = host_loader(ctx, "localhost", [admin.url], "least_active",
                             app="h_local", machine_id=f, token_file=hbt,
                             tag="m%d" % i)
        eq(admin_stats(ctx, app)["host"], names[i], "the loader's host")
        # One period, the offset (< 9 s), a margin.
        wait_until(lambda: names[i] in hosts(), time.time() + PERIOD + 9 + 5,
                   lambda _: "host %s not at the admin: %r" % (names[i], hosts()))
        os.kill(p.pid, signal.SIGINT)
        eq(p.wait(15), 0, "attach %d's exit status" % i)
    eq(hosts(), sorted(names), "the admin's hosts")
    # The heartbeat token never wrote: the app's audit log holds its
    # registration only.
    eq([a["action"] for a in admin.ok("GET", "/groups/%s/apps/h_local/audit" % GROUP)],
       ["app.register"], "the app's audit log")
    admin.stop()


@test
def loader_token_file_modes(ctx):
    """attach refuses a token file others may read, or another user's, in
    one line naming the file and its mode; nothing is attached."""
    admin = ctx.admin()
    path = os.path.join(ctx.tmp, APP)
    shutil.copy2(TARGET, path)
    cases = [(0o644, "mode 0644"), (0o640, "mode 0640"), (0o604, "mode 0604"),
             (0o600, "owned by uid %d" % sdstest.NOBODY)]
    for mode, word in cases:
        f = sdstest.write_token(os.path.join(ctx.tmp, "loose"), TOKEN, mode=mode)
        if mode == 0o600:
            os.chown(f, sdstest.NOBODY, sdstest.NOBODY)
        r = ctx.sds(["attach", "--admin", admin.url, "--token-file", f, path,
                     "w=work"])
        check(r.rc not in (0, None), "attach with %s: exit %r" % (word, r.rc))
        lines = r.err.strip().split("\n")
        eq(len(lines), 1, "attach with %s: stderr %r" % (word, r.err))
        check(f in lines[0] and word in lines[0] and "--token-file" in lines[0],
              "attach with %s: %r does not name the file and why" % (word, lines[0]))
        check(not os.path.exists(os.path.join(ctx.run_dir, "%s.%s.sock" % (GROUP, APP))),
              "a socket after a refused token file")
        os.unlink(f)
    admin.stop()


# ---------------------------------------------------------------------------
# Several admins on one PostgreSQL (issue 16; tests/e2e/t_cluster.py)

CLUSTER_TIMEOUT = 150           # seconds: PostgreSQL, 8 periods, checks


@test
def cluster_admin_killed(ctx):
    import t_cluster
    signal.alarm(CLUSTER_TIMEOUT)   # longer than TEST_TIMEOUT: 8 periods
    t_cluster.run(e2e_lib, ctx, log)
