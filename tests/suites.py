# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Every suite `make test` runs, and the lane it runs in: the one table
tests/lanes.py reads (docs/TESTING.md "Lanes").

A suite is a name, a lane, the commands that run it (argv lists, run
from the repository's root one after another; "{build}" is the build
directory), how its output is counted, and a budget in seconds.  The
lanes run side by side after one build (`make test-bins`); the suites of
a lane run one after another, each to its end whatever the others did.

Lanes:
  quiet   timing-sensitive suites: exact trips, windows, holds, probe
          budgets, hostile loops.  Nothing CPU-heavy runs at their
          priority, so their deadlines see an idle machine's scheduler.
  wait1,  suites that mostly wait: heartbeat periods, drills' lives,
  wait2   crash-only restarts.  Cheap on the CPU, long in the wall.
  heavy   CPU-heavy suites that time nothing: compilers, cargo and go,
          the fuzzer, ASan units, lintian, browsers, apt in a chroot.
          Run at `nice 19` (and idle I/O class), so they fill what the
          other lanes leave of the two cores and never delay a tick; then,
          at the normal priority, a shard of e2e and failfast, which
          would have had to wait behind the others.

How output is counted ("count"):
  suite   the runner's last line, "N passed, M failed, K skipped"
          (sdstest.Suite's report, the one of every Python suite);
  cmocka  cmocka's "[  PASSED  ] N test(s)." / "[  FAILED  ] N" /
          "[  SKIPPED ] N" lines, summed over the binaries;
  exit    one check: passed when every command exited 0 (a demo's
          --check, the fuzzer).

The budget is what the suite takes here with room to spare: past 1.25
times it the table says so (growth, not a failure); past twice it the
suite is killed and failed (a hang, not slowness).

Python 3 standard library only.
"""

import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LANES = ("quiet", "wait1", "wait2", "heavy")
# The lane whose suites run at the lowest CPU and I/O priority, unless a
# suite says otherwise.
NICE_LANES = ("heavy",)


class Suite:
    def __init__(self, name, lane, cmds, count="suite", budget=300, env=None,
                 listing=None, nice=None):
        self.name = name
        self.lane = lane
        # At the lowest CPU and I/O priority: the heavy lane's suites, but
        # those that come after its heavy work (they time things).
        self.nice = lane in NICE_LANES if nice is None else nice
        self.cmds = cmds
        self.count = count
        self.budget = budget
        self.env = env or {}
        # How `make test-inventory` lists its tests: "suite" (the runner's
        # --list), "cmocka" (the binaries' sources' cmocka_unit_test
        # entries), or a number.
        self.listing = listing if listing is not None else count

    def argv(self, build):
        return [[a.replace("{build}", build) for a in c] for c in self.cmds]


def _py(path, *args):
    return ["python3", path] + list(args)


def cmocka_sources(src_dir):
    """@src_dir's test_*.c, in it and in its folders (tests/unit/decide/,
    tests/libsds/guard/...), by name."""
    srcs = sorted(glob.glob(os.path.join(ROOT, src_dir, "**", "test_*.c"),
                            recursive=True), key=os.path.basename)
    names = [os.path.basename(p) for p in srcs]
    dup = sorted(set(n for n in names if names.count(n) > 1))
    if dup:
        # Their binaries would be one file (the .mk files name a binary
        # after its source, whatever its folder).
        raise SystemExit("%s: two sources named %s" % (src_dir, ", ".join(dup)))
    return srcs


def cmocka_bins(src_dir, out_dir):
    """The test binaries of @src_dir's test_*.c, as the .mk files name
    them (one per source, in @out_dir, whatever the source's folder): from
    the sources, so a binary the build failed to make is a failed command,
    not a suite that shrank."""
    return ["{build}/%s/%s" % (out_dir, os.path.basename(p)[:-2])
            for p in cmocka_sources(src_dir)]


UNIT = cmocka_bins("tests/unit", "test/unit")
LIBSDS = cmocka_bins("tests/libsds", "test/libsds")
ADMIN_UNIT = cmocka_bins("tests/admin", "test/admin")
ADMIN_ASAN = {"SDS_ADMIN": "{build}/test/admin/sds-admin-asan"}

SUITES = [
    # quiet: timing-sensitive, in the order that leaves the longest last.
    Suite("integration", "quiet", [_py("tests/integration/run.py")], budget=240),
    Suite("balance", "quiet", [_py("tests/balance/run.py")], budget=90),
    Suite("hostile", "quiet", [_py("tests/hostile/run.py")], budget=240),
    Suite("guard", "quiet", [_py("tests/guard/run.py")], budget=300),
    Suite("exact", "quiet", [_py("tests/exact/run.py")], budget=240),
    Suite("exact-fn", "quiet", [_py("tests/exact/fn_run.py")], budget=150),
    # Stuck calls (docs/LIMITS.md): a trip within timeout + 2 ticks.
    Suite("stuck", "quiet", [_py("tests/stuck/run.py")], budget=90),
    # nm and git over the tree: seconds, and nothing timed.
    Suite("tree", "quiet", [_py("tests/tree/run.py")], budget=30),

    # wait1 / wait2: heartbeats and lives; e2e split in two shards.
    Suite("e2e-1", "wait1", [_py("tests/e2e/run.py")], budget=300,
          env={"SDS_TEST_SHARD": "1/3"}),
    Suite("backlog", "wait1", [_py("tests/backlog/run.py")], budget=200),
    Suite("drill", "wait1", [_py("tests/drill/run.py")], budget=240),
    # Drills' blast radius and automatic abort (docs/DRILL.md): four hosts,
    # a drill stopped by its condition within 3 s; mostly heartbeats.
    Suite("drillfleet", "wait1", [_py("tests/drillfleet/run.py")], budget=260),
    # Game days (docs/GAMEDAY.md): a five-step run on two hosts, an abort
    # on PostgreSQL, 10-s schedules (two admins on one PostgreSQL); mostly
    # waiting for the periods.
    Suite("gameday", "wait1", [_py("tests/gameday/run.py")], budget=300),
    Suite("metrics", "wait1", [_py("tests/metrics/run.py")], budget=120),
    # Adaptive limits settling under load: 3 x 20 s, light on the CPU.
    Suite("adaptive", "wait1", [_py("tests/adaptive/run.py")], budget=150),
    Suite("demo-lb", "wait1", [_py("tools/demo/lb_demo.py", "--check")],
          count="exit", budget=90),
    Suite("demo-copy", "wait1", [_py("tools/demo/copy_admin_demo.py", "--check")],
          count="exit", budget=120),
    # Last in its lane: by then the heavy lane's compilers are done, and
    # the probe budget measures the probes' cost on a quieter machine.
    Suite("probepath", "wait1", [_py("tests/probepath/run.py")], budget=120),
    Suite("harm", "wait1", [_py("tests/harm/run.py")], budget=300),

    Suite("e2e-2", "wait2", [_py("tests/e2e/run.py")], budget=300,
          env={"SDS_TEST_SHARD": "2/3"}),
    Suite("crash", "wait2", [_py("tests/crash/run.py")], budget=300),
    Suite("capture", "wait2", [_py("tests/capture/run.py")], budget=360),
    Suite("deploy", "wait2", [_py("tests/deploy/run.py")], budget=240,
          env={"SDS_DEPLOY_LOADER": "{build}/test/sds-bpf-asan"}),
    Suite("debuginfo", "wait2", [_py("tests/debuginfo/run.py")], budget=90),
    # Where calls' time went (docs/SPLIT.md): ~40 s, light on the CPU.
    Suite("split", "wait2", [_py("tests/split/run.py")], budget=90),
    # Delay drills at function points (docs/DELAY.md): a veth pair into a
    # namespace of its own; mostly waits on drills' lives.
    Suite("delaydrill", "wait2", [_py("tests/delaydrill/run.py")], budget=300),
    Suite("deps", "wait2", [_py("tests/deps/run.py")], budget=240),
    Suite("testlib", "wait2", [_py("tests/lib/selftest.py")], budget=60),
    Suite("copy", "wait2", [_py("tests/copy/run.py")], budget=240),
    # Hot keys (docs/KEYS.md): ~55,000 keyed calls/s for 2 s, three times,
    # and 300,000 more, a fail-fast attach (~25 s), key limits at the
    # tick (6 runs of keyrate, ~10 s each); counts, never times; a tenant
    # capped through sds-admin and its dashboard (~80 s, mostly waiting
    # for a heartbeat).
    Suite("keys", "wait2", [_py("tests/keys/run.py")], budget=300),
    # The fleet (docs/PUSH.md, docs/CLUSTER.md): 20 changes at random
    # phases of the heartbeat period, cluster limits; mostly waiting.
    Suite("fleet", "wait2", [_py("tests/fleet/run.py")], budget=360),

    # heavy: compilers, fuzzer, ASan, packaging.
    Suite("unit", "heavy", [[b] for b in UNIT], count="cmocka", budget=120),
    # nocost: the built library's decisions at -O2 on real sites (its
    # speed is make bench's); a wrong decision is its non-zero exit.
    Suite("libsds", "heavy", [[b] for b in LIBSDS]
          + [["{build}/test/libsds/nocost", "100000"]], count="cmocka", budget=120),
    Suite("admin-unit", "heavy", [[b] for b in ADMIN_UNIT], count="cmocka",
          budget=90),
    Suite("admin-unit-pg", "heavy", [_py("tests/admin/with_pg.py", *ADMIN_UNIT)],
          count="cmocka", budget=120, listing="cmocka"),
    Suite("admin", "heavy", [_py("tests/admin/run.py")], budget=300,
          env=ADMIN_ASAN),
    Suite("admin-pg", "heavy", [_py("tests/admin/run.py")], budget=300,
          env=dict(ADMIN_ASAN, SDS_TEST_STORE="pg")),
    Suite("bindings", "heavy", [_py("tests/bindings/run.py")], budget=300),
    Suite("fuzz-smoke", "heavy",
          [["sh", "-c", "mkdir -p {build}/fuzz/corpus {build}/fuzz/artifacts && "
            "exec {build}/fuzz/fuzz_parsers -max_total_time=60 -max_len=8192 "
            "-timeout=10 -rss_limit_mb=1024 -artifact_prefix={build}/fuzz/artifacts/ "
            "-print_final_stats=1 {build}/fuzz/corpus tests/admin/fuzz/corpus"]],
          count="exit", budget=120),
    Suite("man", "heavy", [_py("tests/man/run.py")], budget=90),
    Suite("install", "heavy", [_py("tests/install/run.py")], budget=240),
    Suite("deb", "heavy", [_py("tests/deb/run.py")], budget=240),
    Suite("cleanroot", "heavy",
          [["sh", "tests/cleanroot/mkroot.sh", "{build}/cleanroot"],
           _py("tests/cleanroot/run.py")], budget=600),
    # After the heavy work, at the normal priority.
    Suite("e2e-3", "heavy", [_py("tests/e2e/run.py")], budget=300,
          env={"SDS_TEST_SHARD": "3/3"}, nice=False),
    Suite("failfast", "heavy", [_py("tests/failfast/run.py")], budget=360,
          nice=False),
    # Host pressure (docs/PRESSURE.md): its CPU hog (at nice 19) needs the
    # host's cpu pressure low before and after it, so it comes last, once
    # the heavy lane's compilers are done.
    Suite("pressure", "heavy", [_py("tests/pressure/run.py")], budget=90,
          nice=False),
]

# The cmocka suites' sources, for their listing.
CMOCKA_SOURCES = {
    "unit": cmocka_sources("tests/unit"),
    "libsds": cmocka_sources("tests/libsds"),
    "admin-unit": cmocka_sources("tests/admin"),
    "admin-unit-pg": cmocka_sources("tests/admin"),
}


def by_name():
    return {s.name: s for s in SUITES}
