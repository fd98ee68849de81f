# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
A throwaway PostgreSQL server for the admin's tests and benchmark: initdb
into a temp dir under /tmp owned by an unprivileged user (Debian's
`postgres`, else `nobody`), `postgres` on 127.0.0.1 and a free port with
its socket in that dir, password (SCRAM) authentication for user `sds`.
stop() kills it and removes the dir; use it as a context manager so that
happens on failure too.  Python 3 standard library only.

    with PgCluster() as pg:
        url = pg.create_db("t1")        # postgresql://sds:PW@127.0.0.1:PORT/t1
        pg.sql("t1", "SELECT 1")        # psql's unaligned output
"""

import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time

PG_BIN = os.environ.get("SDS_PG_BIN", "/usr/lib/postgresql/15/bin")
USER = "sds"


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _owner():
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            pass
    raise RuntimeError("no unprivileged user (postgres, nobody) to run PostgreSQL")


def available():
    """None, or why no server can be started here."""
    if not os.access(os.path.join(PG_BIN, "initdb"), os.X_OK):
        return "%s/initdb missing: install postgresql-15 (tools/install-deps.sh)" % PG_BIN
    return None


class PgCluster:
    def __init__(self, settings=()):
        """@settings: extra "name=value" server settings."""
        self.settings = list(settings)
        self.dir = None
        self.proc = None
        self.port = None
        self.password = "pw-" + secrets.token_hex(8)

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def _as_owner(self, argv):
        """@argv run as the owner.  Where /dev/null is not writable by
        others (some containers make it 0700), initdb and postgres cannot
        run: they get a private mount namespace with a null device of the
        cluster's own bound over it, and the machine is left as it is."""
        if os.geteuid() != 0:
            return argv
        argv = ["runuser", "-u", self.owner.pw_name, "--"] + argv
        if os.stat("/dev/null").st_mode & 0o002:
            return argv
        null = os.path.join(self.dir, "null")
        if not os.path.exists(null):
            os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            os.chmod(null, 0o666)
        return ["unshare", "-m", "sh", "-c",
                'mount --bind "$0" /dev/null && exec "$@"', null] + argv

    def start(self):
        self.owner = _owner()
        self.dir = tempfile.mkdtemp(prefix="sds-pg.", dir="/tmp")
        if os.geteuid() == 0:
            os.chown(self.dir, self.owner.pw_uid, self.owner.pw_gid)
        os.chmod(self.dir, 0o700)
        data = os.path.join(self.dir, "data")
        pwfile = os.path.join(self.dir, "pw")
        with open(pwfile, "w") as f:
            f.write(self.password + "\n")
        if os.geteuid() == 0:
            os.chown(pwfile, self.owner.pw_uid, self.owner.pw_gid)
        subprocess.run(self._as_owner([os.path.join(PG_BIN, "initdb"), "-D", data,
                                       "-U", USER, "--pwfile", pwfile,
                                       "--auth=scram-sha-256", "--locale=C",
                                       "-E", "UTF8", "--no-sync"]),
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.unlink(pwfile)
        for attempt in range(5):
            self.port = _free_port()
            argv = [os.path.join(PG_BIN, "postgres"), "-D", data, "-p", str(self.port),
                    "-k", self.dir, "-c", "listen_addresses=127.0.0.1",
                    "-c", "logging_collector=off", "-c", "max_connections=60"]
            for s in self.settings:
                argv += ["-c", s]
            self.log = open(os.path.join(self.dir, "log"), "w")
            self.proc = subprocess.Popen(self._as_owner(argv), stdout=self.log,
                                         stderr=subprocess.STDOUT,
                                         start_new_session=True)
            deadline = time.time() + 30
            while time.time() < deadline and self.proc.poll() is None:
                r = subprocess.run([os.path.join(PG_BIN, "pg_isready"), "-q", "-h",
                                    "127.0.0.1", "-p", str(self.port)])
                if r.returncode == 0:
                    return
                time.sleep(0.1)
            self._kill()
        raise RuntimeError("PostgreSQL did not start: %s" % self.read_log())

    def read_log(self):
        try:
            with open(os.path.join(self.dir, "log")) as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def pid(self):
        """The postmaster's pid (the child of runuser when run as root)."""
        with open(os.path.join(self.dir, "data", "postmaster.pid")) as f:
            return int(f.readline())

    def _kill(self):
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGQUIT)   # immediate shutdown
                self.proc.wait(15)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(5)
        self.proc = None

    def stop(self):
        self._kill()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def url(self, db, password=None):
        return "postgresql://%s:%s@127.0.0.1:%d/%s" % (
            USER, self.password if password is None else password, self.port, db)

    def env(self):
        e = dict(os.environ, PGPASSWORD=self.password)
        return e

    def sql(self, db, statement):
        """psql -At's output of @statement in database @db."""
        r = subprocess.run(["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
                            "-p", str(self.port), "-U", USER, "-d", db, "-c", statement],
                           env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        if r.returncode:
            raise RuntimeError("psql %r: %s" % (statement, r.stderr.strip()))
        return r.stdout

    def create_db(self, db):
        """A new empty database; its URL."""
        self.sql("postgres", 'CREATE DATABASE "%s"' % db)
        return self.url(db)

    def drop_db(self, db):
        self.sql("postgres", 'DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % db)
