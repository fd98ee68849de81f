#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Run each store unit test binary against PostgreSQL: a server is started in
a temp dir (tests/lib/pgtest.py), SDS_TEST_PG_URL names a database on it,
and the server is stopped and removed after, pass or fail.

    python3 tests/admin/with_pg.py BIN...

The exit status is non-zero when any binary failed (or no server started).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "lib"))
import pgtest  # noqa: E402


def main(bins):
    why = pgtest.available()
    if why:
        print(why)
        return 1
    failed = 0
    with pgtest.PgCluster() as pg:
        env = dict(os.environ, SDS_TEST_PG_URL=pg.create_db("sdsunit"))
        for b in bins:
            print("== %s (PostgreSQL)" % b, flush=True)
            if subprocess.run([b], env=env).returncode:
                failed += 1
    print("%d binaries, %d failed" % (len(bins), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
