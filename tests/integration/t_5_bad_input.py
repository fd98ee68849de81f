# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Bad input: one line "sds-bpf: ...", a non-zero exit, nothing left
behind; a second attach of a live app, a stale socket taken over, and
stats with nothing attached.
"""

import os
import shutil
import subprocess

from integration_lib import _kill_group, _mismatches, assert_counts, test
from sdstest import (Fail, KernelSnapshot, NOBODY, SDS, check, get_point,
                     inode_of, is_socket)


# ---------------------------------------------------------------------------
# Bad input: one line "sds-bpf: ...", non-zero exit, nothing left behind

def attach_fails(ctx, args, substrs, prefix=None, env=None, any_of=None):
    snap = KernelSnapshot()
    socks = set(ctx.run_dir_sockets())
    r = ctx.sds(["attach"] + args, prefix=prefix, env=env)
    what = "attach %s" % " ".join(args)
    check(r.rc not in (0, None), "%s: want a non-zero exit: %r" % (what, r))
    lines = [x for x in r.err.splitlines() if x.strip()]
    check(len(lines) == 1, "%s: want exactly one line on stderr: %r"
          % (what, r.err))
    check(lines[0].startswith("sds-bpf: "),
          "%s: stderr does not start with 'sds-bpf: ': %r" % (what, lines[0]))
    for s in substrs:
        check(s in lines[0], "%s: stderr lacks %r: %r" % (what, s, lines[0]))
    if any_of:
        check(any(s in lines[0] for s in any_of),
              "%s: stderr has none of %r: %r" % (what, any_of, lines[0]))
    new = set(ctx.run_dir_sockets()) - socks
    check(not new, "%s: left sockets %r" % (what, sorted(new)))
    snap.assert_nothing_new({r.pid}, what)
    return r


@test
def bad_missing_target(ctx):
    p = os.path.join(ctx.tmp, "no", "such-binary")
    attach_fails(ctx, [p, "work=work"], [p, "No such file or directory"])


@test
def bad_no_target(ctx):
    attach_fails(ctx, [], ["missing TARGET"])


@test
def bad_not_elf(ctx):
    p = os.path.join(ctx.tmp, "notes.txt")
    with open(p, "w") as f:
        f.write("this is not an ELF file\n" * 10)
    attach_fails(ctx, [p, "work=work"], ["not an ELF file"])


@test
def bad_unknown_symbol(ctx):
    path = ctx.copy("target_pie")
    attach_fails(ctx, [path, "work=work", "nosuch=nosuch"],
                 ["symbol 'nosuch' not found in"])


@test
def bad_stripped_binary(ctx):
    path = ctx.copy("target_stripped")
    attach_fails(ctx, [path, "work=work"], ["stripped"])


@test
def bad_malformed_point(ctx):
    path = ctx.copy("target_pie")
    for spec in ("x", "x=", "=sym", "bad name!=sym", "a" * 65 + "=work",
                 "w=work:ret=16", "w=work:foo=1"):
        attach_fails(ctx, [path, spec], ["bad point '"])


@test
def bad_err_value(ctx):
    path = ctx.copy("target_pie")
    attach_fails(ctx, [path, "work=work:err=foo"], ["unknown err= value 'foo'"])


@test
def bad_timeout_ms(ctx):
    path = ctx.copy("target_pie")
    for v in ("abc", "0", "-5"):
        attach_fails(ctx, [path, "work=work:timeout_ms=" + v], ["timeout_ms"])


@test
def bad_point_twice(ctx):
    path = ctx.copy("target_pie")
    attach_fails(ctx, [path, "work=work", "work=recurse"],
                 ["point 'work' given twice"])


@test
def bad_no_privilege(ctx):
    path = ctx.copy("target_pie")
    sds = os.path.join(ctx.tmp, "sds-bpf")
    shutil.copy2(SDS, sds)
    os.chmod(ctx.run_dir, 0o777)
    os.chmod(ctx.state_dir, 0o777)
    prefix = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
              "--clear-groups", sds]
    # A copy of sds-bpf in the test's 0755 temp dir, so that nobody can
    # run it whatever the permissions of the build tree.
    snap = KernelSnapshot()
    p = subprocess.Popen(prefix + ["attach", path, "work=work"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, env=ctx.env, cwd=ctx.tmp,
                         start_new_session=True)
    ctx.others.append(p)
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        _kill_group(p)
        out, err = p.communicate()
        raise Fail("attach as nobody did not exit within 30 s: %r %r"
                   % (out, err))
    err = err.decode(errors="replace")
    lines = [x for x in err.splitlines() if x.strip()]
    check(p.returncode != 0, "attach as nobody exited 0: %r" % err)
    check(len(lines) == 1 and lines[0].startswith("sds-bpf: "),
          "attach as nobody: want one 'sds-bpf: ' line, got %r" % err)
    check("Operation not permitted" in lines[0] or "permission" in lines[0],
          "attach as nobody: no 'Operation not permitted'/'permission': %r"
          % lines[0])
    check(not ctx.run_dir_sockets(), "attach as nobody left sockets %r"
          % ctx.run_dir_sockets())
    snap.assert_nothing_new({p.pid}, "attach as nobody")


@test
def bad_second_attach_live(ctx):
    path = ctx.copy("target_pie")
    t = ctx.start(path)
    l = ctx.attach([path, "work=work"], "target_pie")
    ino = inode_of(l.sock)
    attach_fails(ctx, [path, "work=work"], ["already served by a live loader"])
    check(l.p.poll() is None, "the first loader died")
    check(inode_of(l.sock) == ino, "the first loader's socket was replaced")
    t.cmd("work 25 5 0 0")
    st = ctx.stats("target_pie")
    check(st.get("pid") == l.pid, "stats answered by pid %r, want %d"
          % (st.get("pid"), l.pid))
    bad = _mismatches(get_point(st, "work"), 25, 0, 0, True)
    check(not bad, "first loader after the refused attach: " + "; ".join(bad))


@test
def stale_socket_taken_over(ctx):
    path = ctx.copy("target_pie")
    t = ctx.start(path)
    l1 = ctx.attach([path, "work=work"], "target_pie")
    t.cmd("work 10 0 0 0")
    _kill_group(l1.p)
    l1.p.wait(5)
    check(is_socket(l1.sock), "precondition: the killed loader's socket "
          "%s should remain" % l1.sock)
    stale = inode_of(l1.sock)
    l2 = ctx.attach([path, "work=work:err=neg"], "target_pie",
                    stale_inode=stale)
    t.cmd("work 100 10 0 0")
    # The killed loader's pins are adopted (crash-only, issue 11): its 10
    # calls stay counted; err=neg judges the new calls only.
    check("adopted the pins" in l2.stderr(), "no adoption: %r" % l2.stderr())
    st, p = assert_counts(ctx, "target_pie", "work", 110, 10, 0)
    check(st.get("pid") == l2.pid, "stats answered by pid %r, want %d"
          % (st.get("pid"), l2.pid))
    rc = l2.stop()
    check(rc == 0, "attach exited %d on SIGINT: %r" % (rc, l2.stderr()))
    check(not ctx.run_dir_sockets(), "sockets left: %r" % ctx.run_dir_sockets())


@test
def bad_stats_not_attached(ctx):
    r = ctx.sds(["stats", "--app", "nosuch", "--json"])
    check(r.rc != 0, "stats for an app not attached exited 0: %r" % r)
    lines = [x for x in r.err.splitlines() if x.strip()]
    check(len(lines) == 1 and lines[0].startswith("sds-bpf: ")
          and "is not attached" in lines[0],
          "stats for an app not attached: %r" % r)
    # Also when another app is attached.
    path = ctx.copy("target_pie")
    ctx.attach([path, "work=work"], "target_pie")
    r = ctx.sds(["stats", "--app", "nosuch", "--json"])
    check(r.rc != 0 and "is not attached" in r.err,
          "stats --app nosuch with target_pie attached: %r" % r)
