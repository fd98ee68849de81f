# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The PostgreSQL password never sits where another local user reads it
(issue 30): --db-password-file (checked as token files are) instead of
the URL; a password still given in the URL works, with one line of
warning, and is masked in /proc/PID/cmdline once sds-admin has read it.
On a real PostgreSQL (tests/lib/pgtest.py); the reader is a process of
nobody's.  Imported by run.py (its Env).
"""

import os
import subprocess

import pgtest
import sdsadmin
import sdstest
from sdstest import check, eq
from admin_lib import ADMIN, test

AS_NOBODY = ["setpriv", "--reuid=%d" % sdstest.NOBODY,
             "--regid=%d" % sdstest.NOBODY, "--clear-groups"]


def cmdline_as_nobody(pid):
    r = subprocess.run(AS_NOBODY + ["cat", "/proc/%d/cmdline" % pid],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
    eq(r.returncode, 0, "nobody's cat of /proc/%d/cmdline (%r)" % (pid, r.stderr))
    return r.stdout.decode(errors="replace").replace("\0", " ")


def start(env, argv):
    """sds-admin @argv (after --listen) on a free port, without a
    PostgreSQL password of the environment's; up once /healthz answers."""
    env.admin = sdsadmin.Admin(
        env, token_file=env.token_file,
        argv_for=lambda port: [ADMIN, "--listen", "127.0.0.1:%d" % port] + argv,
        env=dict(os.environ, PGPASSWORD="", PGPASSFILE="/nonexistent"))
    env.admin.start(timeout=20)
    env.port = env.admin.port
    return env.admin


def stop(admin):
    """SIGTERM, exit 0: what it said on stderr."""
    return admin.stop(quiet=False)


@test
def test_db_password_file(env):
    """--db-password-file: a 0600 file of root's connects, the password
    is in no argv; a 0644 one, or a URL with a password beside it, is one
    line and exit 1; a password in the URL connects, warns in one line,
    and nobody's read of /proc/PID/cmdline does not show it."""
    why = pgtest.available()
    check(why is None, "no PostgreSQL: %s" % why)
    with pgtest.PgCluster() as pg:
        pg.create_db("pw")
        url = "postgresql://%s@127.0.0.1:%d/pw" % (pgtest.USER, pg.port)
        pwf = sdstest.write_token(os.path.join(env.tmp, "pgpw"), pg.password)
        base = ["--token-file", env.token_file]

        p = start(env, base + ["--db", url, "--db-password-file", pwf])
        env.ok("POST", "/groups", {"name": "demo"}, want=201)
        check(pg.password not in cmdline_as_nobody(p.pid), "password in argv")
        eq(stop(p), "", "stderr with --db-password-file")

        loose = sdstest.write_token(os.path.join(env.tmp, "loose"), pg.password,
                                    mode=0o644)
        for argv, want in [
                (["--db", url, "--db-password-file", loose],
                 "sds-admin: --db-password-file %s: mode 0644 is too open: "
                 "must be 0600 or 0400\n" % loose),
                (["--db", pg.url("pw"), "--db-password-file", pwf],
                 "sds-admin: --db-password-file: the --db URL holds a password "
                 "too: take it out\n"),
                (["--db", os.path.join(env.tmp, "x.db"), "--db-password-file", pwf],
                 "sds-admin: --db-password-file: goes with a postgresql:// --db\n")]:
            r = subprocess.run([ADMIN, "--listen", "127.0.0.1:1"] + base + argv,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, timeout=30)
            eq((r.returncode, r.stderr, r.stdout), (1, want, ""), " ".join(argv))

        p = start(env, base + ["--db", pg.url("pw")])
        eq(env.ok("GET", "/groups")[0]["name"], "demo", "the group, through the URL's password")
        seen = cmdline_as_nobody(p.pid)
        check(pg.password not in seen, "password in /proc/%d/cmdline: %r" % (p.pid, seen))
        check("sds:%s@" % ("*" * len(pg.password)) in seen, "no mask in %r" % seen)
        eq(stop(p), "sds-admin: --db: warning: the password in the URL is visible to "
           "every local user while sds-admin starts; use --db-password-file or "
           "PGPASSFILE\n", "stderr with a password in the URL")
