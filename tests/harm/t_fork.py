# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Fork safety (issue 9; docs/DESIGN.md §3): on Linux 6.18 a uprobe on a 5-byte
NOP becomes a call into a trampoline page that fork() does not copy, so
a child forked (without exec) after the probe fired dies at its next
call of the function.  `attach` finds out by a self-test once per boot
(loader/kernel/forkcheck.c, cached in the run dir) and, where the kernel has
the bug, probes function points past the NOP unless they say
:site=nop5.

These tests document that kernel's behaviour: where the self-test finds
the kernel fine, the ones that need the bug FAIL saying so (they never
pass vacuously).  Programs: build/test/harm/fork_nop5 (fork_nop5.c),
build/test/harm/fork_clones_nop5 (fork_clones_nop5.cc: two clones on NOPs),
build/test/targets/{target_endbr,target_pie,guarded_static}.
"""

import os
import subprocess
import time

import sdstest
from sdstest import Fail, check, eq, get_point
from harm_lib import (TARGETS_BIN, Driven, test, symbol_file_offset)

CACHE = ".forkcheck"
N, M = 10, 25      # the parent's calls of work() before fork, the child's

KILLS = ("fork check: this kernel kills children forked (without exec) "
         "after a nop5 probe fired (self-test %s, cached in %s/.forkcheck: "
         "the child was killed by SIGSEGV)")
FINE = ("fork check: this kernel keeps children forked after a nop5 probe "
        "fired (self-test %s, cached in %s/.forkcheck: %s)")
RUN_NOW, CACHED = "run now", "of this boot"
FINE_DETAIL = "the child exited 0 (probe optimized into a call)"
WARN = ("sds-bpf: warning: point 'w' has :site=nop5: this kernel kills a "
        "child forked (without exec) after the probe fired, at its next "
        "call of work\n")
NOTE_CHECK = ("note: fork-safe: probed past the 5-byte NOP, ~1000 ns a call "
              "instead of ~700 (the fork check; :site=nop5 takes the NOP at "
              "that risk)")
NOTE_OPTION = ("note: fork-safe: probed past the 5-byte NOP, ~1000 ns a call "
               "instead of ~700 (--fork-safe)")


def boot_id():
    with open("/proc/sys/kernel/random/boot_id") as f:
        return f.read().strip()


def cache_path(ctx):
    return os.path.join(ctx.run_dir, CACHE)


def write_cache(ctx, text):
    """Put @text in the run dir's cache, as root (the loader's owner)."""
    tmp = cache_path(ctx) + ".test"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, cache_path(ctx))


def fine_cache(boot):
    return ("sds-bpf forkcheck 1\nboot_id %s\nresult fine\ndetail %s\n"
            % (boot, FINE_DETAIL))


def out_lines(l):
    """attach's output lines but its "symbols: " line (where TARGET's
    symbols came from), which every attach prints before its table."""
    return [x for x in l.stdout().splitlines() if not x.startswith("symbols: ")]


def require_kills(ctx, l, how):
    """The loader's first line: this kernel has the bug, found @how."""
    first = (out_lines(l) or ["(no output)"])[0]
    if first.startswith("fork check: this kernel keeps"):
        raise Fail("the fork self-test finds that this kernel keeps children "
                   "forked after a nop5 probe fired (%r): this test documents "
                   "Linux 6.18's bug and means nothing here; update it for "
                   "this kernel" % first)
    eq(first, KILLS % (how, ctx.run_dir), "attach's fork check line")


def row(l, point):
    """The point table's row of @point: its fields, and the lines after."""
    lines = out_lines(l)
    for i, line in enumerate(lines):
        f = line.split()
        if f and f[0] == point and len(f) >= 6:
            return f, lines[i + 1:]
    raise Fail("no row %r in attach's output %r" % (point, lines))


def counts(ctx, app, point, visits):
    """Exact totals of @point: @visits calls, no exception, all timed."""
    p = get_point(ctx.stats(app), point)
    tot = p.get("total", {})
    got = (tot.get("visits"), tot.get("exceptions"),
           p.get("latency_ns", {}).get("count"))
    if got != (visits, 0, visits):
        time.sleep(1.5)
        later = get_point(ctx.stats(app), point)
        raise Fail("point %s: (visits, exceptions, timed) = %r, want %r; "
                   "1.5 s later %r" % (point, got, (visits, 0, visits),
                                       later.get("total")))
    return p


def forkers(ctx):
    """Processes still running the self-test's helper."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"__forkcheck" in argv:
            found.append(int(pid))
    return found


# ---------------------------------------------------------------------------
# The default: fork-safe where the kernel kills children

@test
def fork_default_child_survives_counted(ctx):
    """Default options on a nop5 work(): the self-test finds the bug, the
    probe goes past the NOP (attach says so and what it costs), the child
    forked after work() ran survives, and both processes' calls are
    counted exactly (N + M)."""
    path = ctx.program("fork_nop5")
    off = symbol_file_offset(path, "work")
    l = ctx.attach([path, "w=work"], "fork_nop5")
    require_kills(ctx, l, RUN_NOW)
    f, after = row(l, "w")
    eq(f[:6], ["w", "work", hex(off + 5), "emulated", "~1000", "ns"],
       "w's row")
    eq(" ".join(f[6:]), "nopl; push %rbp", "w's instruction")
    eq(after[0].strip(), NOTE_CHECK, "the line after w's row")
    eq(l.stderr(), "", "attach's stderr")
    t = Driven(ctx, path)
    eq(t.cmd("run %d %d" % (N, M)), ["parent %d child exit 0" % N],
       "fork_nop5's report")
    p = counts(ctx, "fork_nop5", "w", N + M)
    eq((p.get("site"), p.get("offset")), ("emulated", off + 5),
       "stats' site and offset of w")
    # A second round: the parent's site is as good after the fork.
    eq(t.cmd("run %d %d" % (N, M)), ["parent %d child exit 0" % N],
       "fork_nop5's second report")
    counts(ctx, "fork_nop5", "w", 2 * (N + M))
    eq(forkers(ctx), [], "self-test helpers left running")


@test
def fork_site_nop5_warns_child_dies(ctx):
    """:site=nop5 on this kernel: attach warns in one line, the probe is on
    the NOP, and the child forked after work() ran dies with SIGSEGV at
    its first call (the kernel's behaviour, documented); the parent is
    unharmed and counted exactly."""
    path = ctx.program("fork_nop5")
    off = symbol_file_offset(path, "work")
    l = ctx.attach([path, "w=work:site=nop5"], "fork_nop5")
    require_kills(ctx, l, RUN_NOW)
    eq(l.stderr(), WARN, "attach's stderr")
    f, after = row(l, "w")
    eq(f[:6], ["w", "work", hex(off), "nop5", "~700", "ns"], "w's row")
    check(not after or not after[0].startswith(" "),
          "no note or hint under a nop5 row: %r" % after[:1])
    t = Driven(ctx, path)
    eq(t.cmd("run %d %d" % (N, M)), ["parent %d child signal 11" % N],
       "fork_nop5's report (the child must die: Linux 6.18's bug)")
    counts(ctx, "fork_nop5", "w", N)
    # A child that does not call work() lives; the parent goes on.
    eq(t.cmd("run %d 0" % N), ["parent %d child exit 0" % N],
       "fork_nop5's second report")
    counts(ctx, "fork_nop5", "w", 2 * N)


@test
def fork_safe_option_and_fine_kernel(ctx):
    """Where the self-test found the kernel fine (this boot's cache says
    so): the default keeps the nop5 without warning or note; --fork-safe
    still moves the probe past it and says it was the option."""
    path = ctx.program("fork_nop5")
    off = symbol_file_offset(path, "work")
    write_cache(ctx, fine_cache(boot_id()))
    l = ctx.attach([path, "w=work"], "fork_nop5")
    eq(out_lines(l)[0], FINE % (CACHED, ctx.run_dir, FINE_DETAIL),
       "attach's fork check line")
    f, after = row(l, "w")
    eq(f[:4], ["w", "work", hex(off), "nop5"], "w's row")
    eq(l.stderr(), "", "attach's stderr")
    l.end()
    l = ctx.attach(["--fork-safe", path, "w=work"], "fork_nop5")
    check(not out_lines(l)[0].startswith("fork check"),
          "--fork-safe alone needs no self-test: %r" % out_lines(l)[0])
    f, after = row(l, "w")
    eq(f[:4], ["w", "work", hex(off + 5), "emulated"], "w's row")
    eq(after[0].strip(), NOTE_OPTION, "the line after w's row")
    l.end()
    # :site=nop5 wins over --fork-safe, and warns only where it harms.
    l = ctx.attach(["--fork-safe", path, "w=work:site=nop5"], "fork_nop5")
    f, _ = row(l, "w")
    eq(f[:4], ["w", "work", hex(off), "nop5"], "w's row")
    eq(l.stderr(), "", "attach's stderr on a kernel found fine")
    t = Driven(ctx, path)
    eq(t.cmd("run %d 0" % N), ["parent %d child exit 0" % N],
       "fork_nop5's report")
    counts(ctx, "fork_nop5", "w", N)


# ---------------------------------------------------------------------------
# The self-test's cache

def _cache_state(ctx):
    st = os.lstat(cache_path(ctx))
    return (st.st_ino, st.st_mtime_ns, st.st_uid, oct(st.st_mode))


@test
def fork_check_cached_per_boot(ctx):
    """The first attach runs the self-test and caches its answer for this
    boot (root's 0644 file, atomically); the next attach reuses it (the
    file untouched); a cache of another boot, unparsable, too big or a
    symlink is ignored and the test run again; no helper and no BPF
    program of the test outlives the loader."""
    path = ctx.program("fork_nop5")
    boot = boot_id()
    snap = sdstest.KernelSnapshot()
    l = ctx.attach([path, "w=work"], "fork_nop5")
    require_kills(ctx, l, RUN_NOW)
    with open(cache_path(ctx)) as f:
        eq(f.read(), "sds-bpf forkcheck 1\nboot_id %s\nresult problem\n"
           "detail the child was killed by SIGSEGV\n" % boot, "the cache")
    first = _cache_state(ctx)
    eq(first[2:], (0, "0o100644"), "the cache's owner and mode")
    eq(sorted(os.listdir(ctx.run_dir)),
       [CACHE, "default.fork_nop5.lock", "default.fork_nop5.sock"],
       "the run dir (no temp file left)")
    l.end()
    l = ctx.attach([path, "w=work"], "fork_nop5")
    require_kills(ctx, l, CACHED)
    eq(_cache_state(ctx), first, "the cache after a second attach")
    l.end()
    bad = {
        "another boot": fine_cache("00000000-0000-0000-0000-000000000000"),
        "unparsable": "sds-bpf forkcheck 1\nboot_id %s\nresult maybe\n" % boot,
        "no magic": "boot_id %s\nresult fine\n" % boot,
        "too big": fine_cache(boot) + "#" * 600 + "\n",
    }
    for what, text in bad.items():
        write_cache(ctx, text)
        l = ctx.attach([path, "w=work"], "fork_nop5")
        try:
            require_kills(ctx, l, RUN_NOW)
        except Fail as e:
            raise Fail("a cache (%s): %s" % (what, e))
        with open(cache_path(ctx)) as f:
            check("boot_id %s\nresult problem\n" % boot in f.read(),
                  "a cache (%s) not replaced by this boot's answer" % what)
        l.end()
    # A symlink to a "fine" answer is not followed, nor written through.
    decoy = os.path.join(ctx.tmp, "decoy")
    with open(decoy, "w") as f:
        f.write(fine_cache(boot))
    os.unlink(cache_path(ctx))
    os.symlink(decoy, cache_path(ctx))
    l = ctx.attach([path, "w=work"], "fork_nop5")
    require_kills(ctx, l, RUN_NOW)
    check(not os.path.islink(cache_path(ctx)), "the cache is still a symlink")
    with open(decoy) as f:
        eq(f.read(), fine_cache(boot), "the symlink's target")
    pid = l.pid
    l.end()
    eq(forkers(ctx), [], "self-test helpers left running")
    snap.assert_nothing_new([pid], "attach with the fork self-test")


@test
def fork_check_only_for_nop5_points(ctx):
    """No function point on a nop5: no self-test, no line, no cache."""
    path = ctx.program("target_endbr", TARGETS_BIN)
    l = ctx.attach([path, "w=work"], "target_endbr")
    lines = out_lines(l)
    check(lines and lines[0].startswith("POINT "),
          "attach's first line: %r" % lines[:1])
    check(not os.path.exists(cache_path(ctx)), "a cache was written")


# ---------------------------------------------------------------------------
# Bad input: one line, exit 1, nothing loaded or left

def _refused(ctx, args, want):
    snap = sdstest.KernelSnapshot()
    r = ctx.sds(["attach"] + args)
    eq((r.rc, r.err, r.out), (1, want + "\n", ""),
       "sds-bpf attach %s" % " ".join(args))
    eq([f for f in os.listdir(ctx.run_dir) if not f.endswith(".lock")], [],
       "the run dir after a refusal")
    snap.assert_nothing_new([r.pid], "a refused attach")


@test
def fork_bad_site_value(ctx):
    path = ctx.program("fork_nop5")
    _refused(ctx, [path, "w=work:site=foo"],
             "sds-bpf: bad point 'w=work:site=foo': unknown site= value "
             "'foo' (nop5, any, entry, +0xN)")
    _refused(ctx, [path, "w=work:site="],
             "sds-bpf: bad point 'w=work:site=': unknown site= value '' "
             "(nop5, any, entry, +0xN)")
    _refused(ctx, [path, "w=work:site"],
             "sds-bpf: bad point 'w=work:site': option 'site' needs a value "
             "(site=nop5|any|entry|+0xN)")


@test
def fork_site_nop5_not_a_nop5(ctx):
    """:site=nop5 on a function that starts otherwise: refused, saying
    what it starts with."""
    path = ctx.program("target_endbr", TARGETS_BIN)
    _refused(ctx, [path, "w=work:site=nop5"],
             "sds-bpf: bad point 'w=work:site=nop5': work does not start "
             "with a 5-byte NOP (0f 1f 44 00 00): it starts with endbr64; "
             "push %rbp")


# ---------------------------------------------------------------------------
# libsds: its own sites are nop5s too, and it repairs them in the child

@test
def fork_libsds_child_survives(ctx):
    """On the kernel the self-test finds killing children (asked here with
    a nop5 function point of fork_nop5 in the same run dir), a libsds
    program's child forked after the parent hit every guard site keeps
    its guard points (repair.c) and both processes are counted exactly:
    10 + 100 visits of 'order'.  tests/guard's fork_child_guarded_static
    and fork_child_guarded_shared test the repair in depth."""
    from guarded import Target as Guarded
    l = ctx.attach([ctx.program("fork_nop5"), "w=work"], "fork_nop5")
    require_kills(ctx, l, RUN_NOW)
    path = ctx.program("guarded_static", TARGETS_BIN)
    ctx.attach(["--app", "app", path], "app")
    t = Guarded(ctx, path)
    t.open("app")
    r = t.call("order", 10)
    eq((r["passed"], r["downgraded"]), (10, 0), "the parent's calls")
    # The parent's enter site is the optimized call: what kills children.
    first = t.sites()["enter"]
    check(first.startswith("e8"),
          "the parent's enter site is %s, not the kernel's call (e8 ...)"
          % first)
    r = t.fork_call("order", 100, wait_ms=300)
    eq((r["passed"], r["downgraded"]), (100, 0), "the child's calls")
    check(t.alive(), "the parent died")
    p = get_point(ctx.stats("app"), "order")
    eq(p.get("total", {}).get("visits"), 110, "visits of order")


CHARGE = "_ZL6chargeil"


@test
def fork_safe_moves_every_clone(ctx):
    """A point on both clones g++ left of charge(int, long), each starting
    with a 5-byte NOP: --fork-safe moves every clone's probe past its NOP,
    not the first clone's alone, and the point counts both clones' calls
    exactly (2 x 500 visits, 2 x 125 errors)."""
    path = ctx.program("fork_clones_nop5")
    out = subprocess.run(["nm", path], capture_output=True, text=True,
                         check=True).stdout
    syms = sorted(ln.split()[-1] for ln in out.splitlines()
                  if ln.split()[-1].startswith(CHARGE + "."))
    eq(len(syms), 2, "fork_clones_nop5's clones of charge: %r" % syms)
    offs = [symbol_file_offset(path, s) for s in syms]
    l = ctx.attach(["--fork-safe", "--max-overhead", "0", path,
                    "c=charge(int, long):err=neg"], "fork_clones_nop5")
    row = [ln for ln in out_lines(l) if ln.startswith("c ")]
    eq(len(row), 1, "attach's row of c: %r" % out_lines(l))
    eq([t for t in row[0].split() if t.startswith("0x")][:1],
       ["0x%x" % (offs[0] + 5)], "c's offset (past the NOP)")
    also = [ln.strip() for ln in out_lines(l) if "also: " in ln]
    eq(len(also), 1, "attach's other clone of c: %r" % out_lines(l))
    check(also[0].startswith("also: %s at 0x%x, " % (syms[1], offs[1] + 5))
          and ", nop5," not in also[0],
          "the second clone not probed past its NOP: %r" % also[0])
    r = subprocess.run([path, "500"], env=ctx.env, cwd=ctx.tmp,
                       capture_output=True, text=True, timeout=60)
    eq((r.returncode, r.stdout), (0, "calls 500 500 errors 250\n"),
       "fork_clones_nop5 under attach")
    p = sdstest.wait_until(
        lambda: (lambda q: q if q["total"]["visits"] >= 1000 else None)(
            get_point(ctx.stats("fork_clones_nop5"), "c")),
        time.time() + 10, "c: visits never reached 1000")
    eq(p["total"]["visits"], 1000, "c visits")
    eq(p["total"]["exceptions"], 250, "c errors (err=neg)")
