# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
What a point counts and where its probe goes: error predicates and
return widths, the nop5 and endbr64 probe sites, and --fork-safe.
"""

from integration_lib import (E, MS, N, T, WORK, _mismatches, assert_counts,
                             assert_point_meta, elf_symbol_vaddr,
                             symbol_file_offset, test)
from sdstest import check, get_point


# ---------------------------------------------------------------------------
# Error predicates and return widths

@test
def err_modes_and_ret_width(ctx):
    path = ctx.copy("target_pie")
    t = ctx.start(path)
    # work(): 30 of 100 return -5, the others 0.  big(): 20 of 50 return
    # 0x100000000 (int 0, long non-zero), the others 1.  neg32(): eax = -1,
    # rax = 0xffffffff.  recurse(): returns the depth left, never 0.
    l = ctx.attach([path, "wz=work:err=zero", "bz=big:err=zero",
                    "n32=neg32:err=neg", "rnz=recurse:err=nonzero"],
                   "target_pie")
    for c in ("work 100 30 0 0", "big 50 20", "neg32 40", "recurse 5"):
        t.cmd(c)
    st = ctx.stats("target_pie")
    want = {"wz": (100, 70), "bz": (50, 20), "n32": (40, 40), "rnz": (5, 5)}
    bad = []
    for name, (v, e) in want.items():
        bad += ["%s: %s" % (name, m)
                for m in _mismatches(get_point(st, name), v, e, 0, True)]
    check(not bad, "ret=32: " + "; ".join(bad))
    check(l.stop() == 0, "attach did not exit 0 on SIGINT")

    l = ctx.attach([path, "wnz=work:err=nonzero", "bz64=big:err=zero:ret=64",
                    "n64=neg32:err=neg:ret=64", "rnone=recurse",
                    "wneg=nap:err=none"], "target_pie")
    for c in ("work 100 30 0 0", "big 50 20", "neg32 40", "recurse 5",
              "sleep 1"):
        t.cmd(c)
    st = ctx.stats("target_pie")
    want = {"wnz": (100, 30), "bz64": (50, 0), "n64": (40, 0),
            "rnone": (5, 0), "wneg": (1, 0)}
    bad = []
    for name, (v, e) in want.items():
        bad += ["%s: %s" % (name, m)
                for m in _mismatches(get_point(st, name), v, e, 0, True)]
    check(not bad, "ret=64 / none: " + "; ".join(bad))


# ---------------------------------------------------------------------------
# Probe sites

@test
def site_nop5_and_endbr64(ctx):
    nop5 = ctx.copy("target_nop5")
    endbr = ctx.copy("target_endbr")
    va = elf_symbol_vaddr(nop5, "work")
    want_nop5 = "nop5" if (va % 4096) <= 4096 - 5 else "emulated"
    tn = ctx.start(nop5)
    te = ctx.start(endbr)
    # :site=nop5: by default the probe goes past the NOP where the fork
    # self-test finds the kernel killing forked children (tests/harm).
    ln = ctx.attach([nop5, WORK + (":site=nop5" if want_nop5 == "nop5"
                                   else "")], "target_nop5")
    le = ctx.attach([endbr, WORK], "target_endbr")
    tn.cmd("work %d %d %d %d" % (N, E, T, MS))
    te.cmd("work %d %d %d %d" % (N, E, T, MS))
    st, p = assert_counts(ctx, "target_nop5", "work", N, E, T)
    assert_point_meta(st, p, ln, "target_nop5", "default", "work", "work",
                      offsets=[symbol_file_offset(nop5, "work")],
                      site=want_nop5)
    st, p = assert_counts(ctx, "target_endbr", "work", N, E, T)
    off = symbol_file_offset(endbr, "work")
    # endbr64 skipped: the probe sits on `push %rbp` (emulated).  The
    # offset shown may be the symbol's or the probe's (+4).
    assert_point_meta(st, p, le, "target_endbr", "default", "work", "work",
                      offsets=[off, off + 4], site="emulated")


@test
def fork_safe_keeps_children(ctx):
    """--fork-safe keeps the probe off the 5-byte NOP: a child forked after
    the probe fired runs normally and its calls are counted."""
    nop5 = ctx.copy("target_nop5")
    t = ctx.start(nop5)
    ctx.attach(["--fork-safe", nop5, "work=work"], "target_nop5")
    out = t.cmd("forkwork 25")
    check(out == ["child exit 0"], "the forked child: %r" % out)
    st, p = assert_counts(ctx, "target_nop5", "work", 26, 0, 0)
    check(p["site"] != "nop5", "site with --fork-safe: %r" % p["site"])
    off = symbol_file_offset(nop5, "work")
    check(p["offset"] == off + 5, "probe at %r, want %d (past the NOP)" % (p["offset"], off + 5))
