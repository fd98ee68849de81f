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

One server for a whole run: start_shared() starts one (fsync,
synchronous_commit and full_page_writes off: its data is thrown away) and
returns the environment that describes it to child processes
(SDS_TEST_PG_SERVER, a small JSON: host, port, socket_dir, user,
password) and the function that stops it.  The tests' suites call
cluster(): with SDS_TEST_PG_SERVER set it attaches to that server (each
test still creates and drops databases of its own, named uniquely, and
stop() drops them and leaves the server running), else it starts a
server of its own as PgCluster does.  An SDS_TEST_PG_SERVER that names no
reachable server fails start() (never a fallback, never a skip).

    env, stop = pgtest.start_shared()   # the lane runner, once
    ...                                 # children run with env
    stop()

    python3 tests/lib/pgtest.py --self-test        # checks both ways, ~3 s
    python3 tests/lib/pgtest.py --with-server CMD  # CMD with one server
"""

import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

PG_BIN = os.environ.get("SDS_PG_BIN", "/usr/lib/postgresql/15/bin")
USER = "sds"
HOST = "127.0.0.1"
# The variable that describes a server shared by a whole run.
SHARED_ENV = "SDS_TEST_PG_SERVER"
# A test server's data is thrown away: no durability to pay for.
FAST = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")


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
    """None, or why no server can be started (or attached to) here."""
    if os.environ.get(SHARED_ENV):
        return None     # attached at start(), which fails if it cannot
    if not os.access(os.path.join(PG_BIN, "initdb"), os.X_OK):
        return "%s/initdb missing: install postgresql-15 (tools/install-deps.sh)" % PG_BIN
    return None


class _Client:
    """What a test does with a server: URLs, psql, databases.  Needs
    self.host, self.port, self.password."""

    def url(self, db, password=None):
        return "postgresql://%s:%s@%s:%d/%s" % (
            USER, self.password if password is None else password, self.host,
            self.port, db)

    def env(self):
        e = dict(os.environ, PGPASSWORD=self.password)
        return e

    def sql(self, db, statement):
        """psql -At's output of @statement in database @db."""
        r = subprocess.run(["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-h", self.host,
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


class PgCluster(_Client):
    host = HOST

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

    def describe(self):
        """The JSON that SDS_TEST_PG_SERVER holds for this server."""
        return json.dumps({"host": self.host, "port": self.port, "socket_dir": self.dir,
                           "user": USER, "password": self.password}, sort_keys=True)


class SharedPg(_Client):
    """The server SDS_TEST_PG_SERVER describes, attached to: the same calls
    as PgCluster's; stop() drops the databases created through it and
    leaves the server running."""

    def __init__(self, desc):
        try:
            d = json.loads(desc)
            self.host, self.port = d["host"], int(d["port"])
            self.socket_dir, self.password = d.get("socket_dir"), d["password"]
            if d.get("user", USER) != USER:
                raise ValueError("user %r, want %r" % (d["user"], USER))
        except (ValueError, KeyError, TypeError) as e:
            raise RuntimeError("%s: not a server's description (%s): %r"
                               % (SHARED_ENV, e, desc))
        self.dir = None     # the server's files are not ours
        self.dbs = []

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        """Check that the server answers (a one-line error if not)."""
        try:
            self.sql("postgres", "SELECT 1")
        except RuntimeError as e:
            raise RuntimeError("%s names %s:%d, which does not answer: %s"
                               % (SHARED_ENV, self.host, self.port, e))

    def create_db(self, db):
        url = super().create_db(db)
        self.dbs.append(db)
        return url

    def drop_db(self, db):
        super().drop_db(db)
        if db in self.dbs:
            self.dbs.remove(db)

    def stop(self):
        for db in list(self.dbs):
            try:
                self.drop_db(db)
            except RuntimeError:
                pass        # the server went away: nothing left to drop
        self.dbs = []


def cluster():
    """The server a test suite uses, not yet started: the shared one
    (SharedPg) when SDS_TEST_PG_SERVER is set, else one of its own
    (PgCluster, with FAST's settings)."""
    desc = os.environ.get(SHARED_ENV)
    if desc:
        return SharedPg(desc)
    return PgCluster(FAST)


def unique_name(stem):
    """A database name no other run on the shared server uses."""
    return "%s_%d_%s" % (stem, os.getpid(), secrets.token_hex(3))


def start_shared(settings=()):
    """Start one server for a whole run: (the environment describing it
    to child processes, {SHARED_ENV: JSON}; a function that stops it and
    removes its dir).  Room for every suite's admins at once."""
    pg = PgCluster(FAST + ("max_connections=300",) + tuple(settings))
    try:
        pg.start()
    except BaseException:
        pg.stop()
        raise
    return {SHARED_ENV: pg.describe()}, pg.stop


def _self_test():
    """Start a shared server, attach to it from a child process, use a
    database there, check the settings and that stop() leaves the server
    up and the database gone, then stop the server."""
    env, stop = start_shared()
    try:
        code = ("import sys; sys.path.insert(0, %r); import pgtest\n"
                "pg = pgtest.cluster(); assert isinstance(pg, pgtest.SharedPg)\n"
                "with pg:\n"
                "    db = pgtest.unique_name('selftest'); pg.create_db(db)\n"
                "    pg.sql(db, 'CREATE TABLE t (x int); INSERT INTO t VALUES (7)')\n"
                "    print(pg.sql(db, 'SELECT x FROM t').strip(), db)\n"
                "    print(pg.sql(db, 'SHOW fsync').strip(),"
                " pg.sql(db, 'SHOW synchronous_commit').strip(),"
                " pg.sql(db, 'SHOW full_page_writes').strip())\n"
                % os.path.dirname(os.path.abspath(__file__)))
        r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, **env),
                           stdout=subprocess.PIPE, universal_newlines=True, timeout=60)
        assert r.returncode == 0, "child exited %d" % r.returncode
        (x, db), flags = [line.split() for line in r.stdout.splitlines()]
        assert x == "7", "read back %r, want 7" % x
        assert flags == ["off", "off", "off"], "fsync, synchronous_commit, " \
            "full_page_writes: %r, want off" % flags
        pg = SharedPg(env[SHARED_ENV])
        pg.start()
        left = pg.sql("postgres", "SELECT count(*) FROM pg_database WHERE datname = '%s'" % db)
        assert left.strip() == "0", "database %s left after stop(): %r" % (db, left)
        d = json.loads(env[SHARED_ENV])
        assert sorted(d) == ["host", "password", "port", "socket_dir", "user"], d
        print("pgtest: a child attached to %s:%d, its database %s created, used and dropped;"
              " fsync, synchronous_commit, full_page_writes off" % (d["host"], d["port"], db))
    finally:
        stop()
    try:
        SharedPg(env[SHARED_ENV]).start()
    except RuntimeError as e:
        print("pgtest: after stop: %s" % str(e).splitlines()[0])
    else:
        raise AssertionError("the shared server still answers after stop()")
    bad = dict(os.environ, **{SHARED_ENV: env[SHARED_ENV]})
    r = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); import pgtest;"
                        " pgtest.cluster().start()" % os.path.dirname(os.path.abspath(__file__))],
                       env=bad, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=60)
    assert r.returncode != 0 and "does not answer" in r.stderr, \
        "attaching to a stopped server: exit %d, %r" % (r.returncode, r.stderr[-300:])
    print("pgtest self-test: ok")
    return 0


def main(argv):
    if argv == ["--self-test"]:
        return _self_test()
    if len(argv) >= 2 and argv[0] == "--with-server":
        env, stop = start_shared()
        try:
            return subprocess.run(argv[1:], env=dict(os.environ, **env)).returncode
        finally:
            stop()
    print("usage: pgtest.py --self-test | --with-server CMD [ARG...]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
