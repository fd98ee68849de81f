# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
A bearer token of fewer than 16 bytes is refused by every program that
reads one (common/tokfile.c: sds-admin, `sds-bpf attach --admin`,
sds-copy): the admin's audit log shows 32 bits of a hash of each refused
token, and a short one is found from that, or guessed, at once.
"""

import os

from hostile_lib import test
from sdstest import BUILD, SDS, admin_path, check, eq, run_group, write_token

COPYTARGET = os.path.join(BUILD, "test", "targets", "copytarget")
SDS_COPY = os.path.join(BUILD, "bin", "sds-copy")


@test
def test_short_tokens_refused(ctx):
    """15 bytes: one line naming the file, exit 1, from each of the three;
    16 bytes are taken (sds-admin then stops at its bad --listen port)."""
    short = write_token(os.path.join(ctx.tmp, "short"), "fifteen-byte-tk")
    why = ("--token-file %s: a token of 15 bytes: at least 16 are needed "
           "(e.g. head -c 24 /dev/urandom | base64)\n" % short)
    db = os.path.join(ctx.tmp, "x.db")
    for argv, prefix in [
            ([admin_path(), "--listen", "127.0.0.1:1", "--db", db,
              "--token-file", short], "sds-admin: "),
            ([SDS_COPY, "serve", "--listen", "127.0.0.1:0", "--admin",
              "http://127.0.0.1:1", "--token-file", short], "sds-copy: serve: "),
            ([SDS, "attach", "--app", "short", "--admin", "http://127.0.0.1:1",
              "--token-file", short, COPYTARGET, "p=handle_request"], "sds-bpf: ")]:
        r = run_group(argv, ctx.env, ctx.tmp, ctx.others)
        eq((r.rc, r.err, r.out), (1, prefix + why, ""), os.path.basename(argv[0]))
    # 16 bytes: sds-admin takes the token and fails only at its port.
    ok = write_token(os.path.join(ctx.tmp, "ok"), "sixteen-byte-t0k")
    r = run_group([admin_path(), "--listen", "127.0.0.1:99999", "--db", db,
                   "--token-file", ok], ctx.env, ctx.tmp, ctx.others)
    check(r.rc == 1 and "--token-file" not in r.err and "--listen" in r.err,
          "a 16-byte token: %r" % r.err)
