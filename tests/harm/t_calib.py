# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Probe costs measured once per boot (loader/kernel/calib.h, issue 9): attach
times sds-bpf's own BPF programs on a site of each kind in a forked
helper, caches the figures in <run dir>/.calib for this boot_id, says
which costs it uses in one line above the point table, and uses them
for the table's COST, the budget and `stats`' overhead estimate.

- measured now, then cached: the line, the cache's text, the COST
  column and stats' cost_ns agree exactly; no helper is left;
- a damaged, foreign or other boot's cache, or a symlink in its place:
  measured again, the cache rewritten (the symlink's target untouched);
- SDS_PROBE_COSTS=design (the harness's default): docs/DESIGN.md §3's
  figures, no line, no cache.
"""

import os
import re

import sdstest
from harm_lib import test
from sdstest import Fail, check, eq

CACHE = ".calib"
LINE = (r"probe costs: measured this boot \((now, cached|cached) in %s/\.calib\): "
        r"a pair ~(\d+) ns on a nop5, ~(\d+) emulated, ~(\d+) stepped; "
        r"the return half ~(\d+)$")
CACHE_RE = (r"sds-bpf calib 1\nboot_id %s\nnop5 (\d+)\nemulated (\d+)\n"
            r"stepped (\d+)\nuret (\d+)\n\Z")


def boot_id():
    with open("/proc/sys/kernel/random/boot_id") as f:
        return f.read().strip()


def measured_env(ctx):
    """The test's environment without SDS_PROBE_COSTS: costs measured."""
    env = dict(ctx.env)
    env.pop("SDS_PROBE_COSTS", None)
    ctx.env = env


def read_cache(ctx):
    """The cache's figures: {nop5, emulated, stepped, uret} in ns."""
    with open(os.path.join(ctx.run_dir, CACHE)) as f:
        text = f.read()
    m = re.match(CACHE_RE % re.escape(boot_id()), text)
    check(m, "the cache's text: %r" % text)
    c = dict(zip(("nop5", "emulated", "stepped", "uret"),
                 map(int, m.groups())))
    # Plausible on any machine: a step costs more than a nop5.
    check(0 < c["nop5"] < c["stepped"] and c["uret"] > 0,
          "implausible costs %r" % c)
    return c


def attach_checked(ctx, how):
    """attach on budget_loop's stepped budget_fn (no process runs it):
    its costs line (@how: "now, cached" or "cached"), its row and
    stats' cost_ns, all of them the cache's figures."""
    path = ctx.program("budget_loop") if not hasattr(ctx, "loop") else ctx.loop
    ctx.loop = path
    l = ctx.attach(["--max-overhead", "0", path, "hot=budget_fn"],
                   "budget_loop")
    c = read_cache(ctx)
    lines = [x for x in l.stdout().splitlines()
             if not x.startswith("symbols: ")]
    m = re.match(LINE % re.escape(ctx.run_dir), lines[0] if lines else "")
    check(m, "attach's first line: %r" % lines[:1])
    eq(m.group(1), how, "measured or cached")
    eq([int(x) for x in m.groups()[1:]],
       [c["nop5"] + c["uret"], c["emulated"] + c["uret"],
        c["stepped"] + c["uret"], c["uret"]], "the line's figures")
    f = next((x.split() for x in lines if x.startswith("hot ")), None)
    check(f, "no row of hot in %r" % lines)
    eq(f[3:6], ["stepped", "~%d" % (c["stepped"] + c["uret"]), "ns"],
       "hot's SITE and COST")
    st = ctx.stats("budget_loop")
    eq(sdstest.get_point(st, "hot")["overhead"]["cost_ns"],
       c["stepped"] + c["uret"], "stats: cost_ns")
    eq(l.stderr(), "", "attach's stderr")
    # The helper is gone: the loader has no child.
    kids = []
    for tid in os.listdir("/proc/%d/task" % l.pid):
        with open("/proc/%d/task/%s/children" % (l.pid, tid)) as fh:
            kids += fh.read().split()
    eq(kids, [], "the loader's children (the helper left?)")
    l.end()
    return c


@test
def calib_measured_then_cached(ctx):
    measured_env(ctx)
    c1 = attach_checked(ctx, "now, cached")
    st = os.lstat(os.path.join(ctx.run_dir, CACHE))
    eq((oct(st.st_mode & 0o7777), st.st_uid), ("0o644", 0), "the cache's mode, owner")
    c2 = attach_checked(ctx, "cached")
    eq(c2, c1, "the cached figures")


@test
def calib_bad_cache_measured_again(ctx):
    measured_env(ctx)
    cache = os.path.join(ctx.run_dir, CACHE)
    boot = boot_id()
    other = "00000000-0000-4000-8000-000000000000"
    bad = {
        "another boot's": "sds-bpf calib 1\nboot_id %s\nnop5 1\nemulated 2\n"
                          "stepped 3\nuret 4\n" % other,
        "cut short": "sds-bpf calib 1\nboot_id %s\nnop5 1\nemul" % boot,
        "a bad figure": "sds-bpf calib 1\nboot_id %s\nnop5 1\nemulated x\n"
                        "stepped 3\nuret 4\n" % boot,
        "foreign": "sds-bpf forkcheck 1\nboot_id %s\nresult fine\n" % boot,
    }
    for what, text in bad.items():
        with open(cache, "w") as f:
            f.write(text)
        sdstest.log("cache: %s" % what)
        attach_checked(ctx, "now, cached")
    # A symlink in its place is not followed: replaced, its target kept.
    target = os.path.join(ctx.tmp, "elsewhere")
    with open(target, "w") as f:
        f.write("not a cache\n")
    os.unlink(cache)
    os.symlink(target, cache)
    attach_checked(ctx, "now, cached")
    check(not os.path.islink(cache), "the cache is still a symlink")
    with open(target) as f:
        eq(f.read(), "not a cache\n", "the symlink's target")


@test
def calib_design_figures(ctx):
    """SDS_PROBE_COSTS=design: §3's figures, said by nothing, cached
    nowhere (the harness's default, for tests that assert figures)."""
    eq(ctx.env.get("SDS_PROBE_COSTS"), "design", "the harness's default")
    path = ctx.program("budget_loop")
    l = ctx.attach(["--max-overhead", "0", path, "hot=budget_fn"],
                   "budget_loop")
    lines = [x for x in l.stdout().splitlines()
             if not x.startswith("symbols: ")]
    check(lines and lines[0].startswith("POINT "), "first line %r" % lines[:1])
    f = next((x.split() for x in lines if x.startswith("hot ")), None)
    eq(f[3:6], ["stepped", "~20500", "ns"], "hot's SITE and COST")
    eq(sdstest.get_point(ctx.stats("budget_loop"), "hot")["overhead"]["cost_ns"],
       20500, "stats: cost_ns")
    check(not os.path.lexists(os.path.join(ctx.run_dir, CACHE)),
          "a cache was written")
