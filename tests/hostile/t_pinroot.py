# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
A bpffs mounted without mode= is 1777 (the kernel's default; this host's
/sys/fs/bpf is): any user can make the pin root before the loader does.
The loader refuses such a root in one line that says how to mount bpffs
(-o mode=0700), and never uses what another user made (loader/kernel/pins.c).
"""

import os
import stat
import subprocess

from hostile_lib import AS_NOBODY, NOBODY, test
from sdstest import BUILD, SDS, check, eq, run_group

COPYTARGET = os.path.join(BUILD, "test", "targets", "copytarget")
HINT = "mount -t bpf -o mode=0700 bpf /sys/fs/bpf"


@test
def test_foreign_pin_root_refused(ctx):
    """nobody makes the pin root (its parent on bpffs is 1777): attach is
    one line naming the owner and the mount option, exit 1, and the
    directory is left as nobody made it; root's but mode 0777: the same."""
    parent = os.path.dirname(ctx.pin_root)
    st = os.stat(parent)
    check(st.st_mode & 0o002, "%s is mode %04o: nobody cannot make the pin "
          "root there, the test shows nothing" % (parent, stat.S_IMODE(st.st_mode)))
    r = subprocess.run(AS_NOBODY + ["mkdir", ctx.pin_root])
    eq(r.returncode, 0, "nobody's mkdir %s" % ctx.pin_root)
    argv = [SDS, "attach", "--app", "pinroot", COPYTARGET, "p=handle_request"]
    r = run_group(argv, ctx.env, ctx.tmp, ctx.others)
    eq((r.rc, r.err, r.out), (1, "sds-bpf: pin root %s: made by uid %d, not root "
       "(bpffs mounted without -o mode=0700 lets anyone): remove it and %s, or "
       "set SDS_PIN_ROOT\n" % (ctx.pin_root, NOBODY, HINT), ""), "a root of nobody's")
    st = os.lstat(ctx.pin_root)
    eq((st.st_uid, os.listdir(ctx.pin_root)), (NOBODY, []), "nobody's root after")
    os.rmdir(ctx.pin_root)
    os.mkdir(ctx.pin_root)
    os.chmod(ctx.pin_root, 0o777)
    r = run_group(argv, ctx.env, ctx.tmp, ctx.others)
    eq((r.rc, r.err, r.out), (1, "sds-bpf: pin root %s: writable by group or "
       "others (mode 0777): remove it and %s, or set SDS_PIN_ROOT\n"
       % (ctx.pin_root, HINT), ""), "a root of mode 0777")
