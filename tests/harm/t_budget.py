# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The probe-cost budget (issue 9): `attach --max-overhead PCT` (default 5%
of one CPU per app).  The target, budget_loop, calls budget_fn, whose
first instruction is single-stepped under a uprobe (~20 us a call), in a
tight loop, and prints its calls/s every 200 ms; commands on its stdin
slow it down, pause it, or make an exact number of calls.

- attach refuses the stepped point when its first second shows it hot
  beyond the budget (one line naming the point, its rate and cost, and
  :site=any), and leaves nothing attached (no program, link or pin of
  its own in the kernel);
- a point that turns hot later (or with :site=any from the start) is
  suspended within 2 s: stats shows the suspension and the estimate, the
  kernel holds no uprobe link of the loader's on the point (its
  /proc/PID/fdinfo, which names each uprobe link's file and offset) and
  none is pinned, no call is counted while the probes are away; slowed
  to 200 calls/s (0.41%) the point resumes (events: suspended, resumed),
  its link is back, and it counts exactly the 1000 calls of a burst.
  The probes' state is checked, not the loop's speed (which on a shared
  2-core VM varied 1.44x with no probe at all);
- --max-overhead 0: no limit, the estimate still shown;
- --max-overhead out of range or not a number: one line, exit 1;
- with --admin, a real sds-admin's statistics show the point suspended
  (with its estimate) from a heartbeat of the hot loop, and not
  suspended once the loop pauses and the point has resumed.
"""

import os
import re
import subprocess
import time

import harm_lib
import sdsadmin
import sdstest
from harm_lib import test
from sdstest import SDS, Fail, check, eq

COST_STEPPED = 20500	# ns a call on a stepped site (loader/target/site.c)
RATE_SAMPLE_S = 0.2	# budget_loop prints its rate this often


class Loop(sdstest.LineReader):
    """budget_loop, driven through its stdin."""

    def __init__(self, ctx):
        self.name = "budget_loop"
        self.buf = b""
        self.path = ctx.program("budget_loop")
        self.p = subprocess.Popen([self.path], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, env=ctx.env,
                                  cwd=ctx.tmp, start_new_session=True)
        ctx.others.append(self.p)

    def rates(self, seconds):
        """Its calls/s lines for @seconds: [(monotonic time, rate)]."""
        out = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            line = self.readline(5)
            m = re.match(r"rate (\d+) total \d+$", line)
            if m:
                out.append((time.monotonic(), int(m.group(1))))
        return out

    def cmd(self, c):
        """Send @c; its calls so far once @c is in force."""
        self.p.stdin.write((c + "\n").encode())
        self.p.stdin.flush()
        while True:
            line = self.readline(5)
            m = re.match(r"ok (.*) total (\d+)$", line)
            if m and m.group(1) == c:
                return int(m.group(2))
            check(not line.startswith("bad"), "budget_loop: %s" % line)


def stats(ctx, app="budget_loop"):
    r = subprocess.run([SDS, "stats", "--json", "--app", app], env=ctx.env,
                       capture_output=True, text=True, timeout=10)
    check(r.returncode == 0, "stats: %r" % r)
    import json
    return json.loads(r.stdout)


def overhead(ctx):
    return sdstest.get_point(stats(ctx), "hot")["overhead"]


def check_estimate(ov, what):
    """The estimate is the rate times the stepped site's cost."""
    eq(ov["cost_ns"], COST_STEPPED, "%s: cost_ns" % what)
    want = ov["rate"] * COST_STEPPED / 1e7
    # rate is rounded down to a call/s, the percentage to 1/1000.
    check(abs(ov["estimated_pct"] - want) <= 0.0005 + COST_STEPPED / 1e7,
          "%s: estimated_pct %r, rate %d x %d ns is %.4f%%"
          % (what, ov["estimated_pct"], ov["rate"], COST_STEPPED, want))


def point_links(pid, path, offset):
    """The uprobe links process @pid holds on @path at @offset, as the
    kernel reports them in /proc/PID/fdinfo: [(link id, type)].  A
    session point is one uprobe_multi link (its path, then a table of
    cookie, offset, ref_ctr_offset); the pair path two perf links (name:
    the path, offset:)."""
    out = []
    d = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(d):
        try:
            with open(os.path.join(d, fd)) as f:
                info = f.read()
        except OSError:
            continue
        kv = dict(ln.split(":\t", 1) for ln in info.splitlines()
                  if ":\t" in ln)
        kind = kv.get("link_type")
        if kind == "uprobe_multi" and kv.get("path") == path:
            offs = [int(ln.split()[1], 16) for ln in info.splitlines()
                    if re.match(r"\d+\s+0x[0-9a-f]+\s+0x[0-9a-f]+$", ln)]
        elif kind == "perf" and kv.get("name") == path:
            offs = [int(kv.get("offset", "-1"), 16)]
        else:
            continue
        if offset in offs:
            out.append((int(kv["link_id"]), kind))
    return sorted(out)


def pinned_probe_links(ctx):
    """The links pinned under the test's pin root other than the loader's
    sched_process_exit one: a point's links, pinned (probes_pin.c) so
    that a kill -9 leaves them counting."""
    return sorted(p for ln in sdstest._bpftool_pinned("link")
                  if ln.get("type") != "raw_tracepoint"
                  for p in ln.get("pinned", ())
                  if p.startswith(ctx.pin_root.rstrip("/") + "/"))


def probes_on(ctx, loader, path, want):
    """The point's probes in the kernel, as @want says: attached (a uprobe
    link of @loader on budget_fn, pinned too) or away (none at all)."""
    off = sdstest.get_point(stats(ctx), "hot")["offset"]
    links = point_links(loader.pid, path, off)
    pins = pinned_probe_links(ctx)
    sdstest.log("point hot at %s+%#x: links %r, pinned %r"
                % (path, off, links, pins))
    if want:
        check(links and pins, "point hot not attached: the loader's "
              "uprobe links on it %r, pinned %r" % (links, pins))
    else:
        eq((links, pins), ([], []), "point hot suspended: the loader's "
           "uprobe links on %s+%#x, links pinned under %s"
           % (path, off, ctx.pin_root))


def wait_suspended(ctx, loop, t0):
    """Poll stats until the point is suspended; within 2 s of @t0."""
    while True:
        ov = overhead(ctx)
        if ov["suspended"]:
            break
        check(time.monotonic() - t0 < 2.0,
              "not suspended 2 s after the point turned hot: %r" % ov)
        loop.rates(0.1)
    dt = time.monotonic() - t0
    sdstest.log("suspended %.2f s after it turned hot: %r" % (dt, ov))
    return ov


def suspend_and_resume(ctx, loop, loader, t_hot):
    """The point turned hot at @t_hot under the default budget: the
    suspension, the probes gone and back, the resumption and the exact
    counts."""
    ov = wait_suspended(ctx, loop, t_hot)
    eq(ov["reason"], "overhead", "reason")
    eq(ov["suspensions"], 1, "suspensions")
    eq(ov["exempt"], False, "exempt")
    check(ov["estimated_pct"] > 5, "suspended at %r%%, not over 5%%"
          % ov["estimated_pct"])
    check_estimate(ov, "at the suspension")
    st = stats(ctx)
    eq(st["budget"]["max_pct"], 5.0, "budget.max_pct")
    eq(st["budget"]["estimated_pct"], 0.0, "budget.estimated_pct (nothing attached)")
    v0 = sdstest.get_point(st, "hot")["total"]["visits"]
    # The probes are away in the kernel, not just said to be: the first
    # try is 2 s after the suspension, so this looks well before it.
    probes_on(ctx, loader, loop.path, False)
    loop.rates(1.2)
    v1 = sdstest.get_point(stats(ctx), "hot")["total"]["visits"]
    eq(v1, v0, "visits counted while the probes were away")
    r = subprocess.run([SDS, "stats", "--app", "budget_loop"], env=ctx.env,
                       capture_output=True, text=True, timeout=10)
    check(re.search(r"^hot +stepped .* [\d.]+% +- +suspended: overhead$", r.stdout,
                    re.M), "stats (text) shows no suspension: %r" % r.stdout)

    # Slower, within budget: a try measures it and the point resumes.
    loop.cmd("slow 200")
    deadline = time.monotonic() + 15
    while overhead(ctx)["suspended"]:
        check(time.monotonic() < deadline, "not resumed 15 s after the "
              "loop slowed to 200 calls/s: %r" % overhead(ctx))
        loop.rates(0.2)
    loop.rates(0.4)
    ov = overhead(ctx)
    eq(ov["suspended"], False, "suspended after the resumption")
    eq(ov["reason"], None, "reason after the resumption")
    check(150 <= ov["rate"] <= 250, "rate %d, not ~200 calls/s" % ov["rate"])
    check_estimate(ov, "resumed")
    probes_on(ctx, loader, loop.path, True)
    ev = subprocess.run([SDS, "events", "--json", "--app", "budget_loop",
                         "--count", "2"], env=ctx.env, capture_output=True,
                        text=True, timeout=10)
    check(ev.returncode == 0, "events: %r" % ev)
    got = [(e["point"], e["event"], e["reason"])
           for e in map(__import__("json").loads, ev.stdout.split("\n")[:2])]
    eq(got, [("hot", "suspended", "overhead"), ("hot", "resumed", "overhead")],
       "events")

    # Counting again, exactly: 1000 calls while the probes are on.
    loop.cmd("pause")
    time.sleep(0.1)
    v0 = sdstest.get_point(stats(ctx), "hot")["total"]["visits"]
    loop.cmd("burst 1000")
    v1 = sdstest.get_point(stats(ctx), "hot")["total"]["visits"]
    eq(v1 - v0, 1000, "visits of a 1000-call burst after the resumption")
    eq(overhead(ctx)["suspended"], False, "suspended after the burst")


@test
def test_budget_refuses_hot_stepped(ctx):
    loop = Loop(ctx)
    loop.rates(0.4)		# running
    before = sdstest.KernelSnapshot()
    a = sdstest.AttachProcess(ctx, [loop.path, "hot=budget_fn"],
                              "budget_loop", wait=False)
    t0 = time.monotonic()
    while a.p.poll() is None:
        check(time.monotonic() - t0 < 30, "attach still running after 30 s "
              "on a hot stepped site; stderr %r" % a.stderr())
        loop.rates(0.2)
    eq(a.p.returncode, 1, "attach's exit status")
    err = a.stderr()
    m = re.match(r"sds-bpf: point 'hot' \(budget_fn\): a stepped site "
                 r"\(~20500 ns a call\) called (\d+) times/s in its first "
                 r"second takes ([\d.]+)% of a CPU, over --max-overhead 5%: "
                 r"refused; add :site=any to probe it anyway \(suspended "
                 r"while over budget\)\n\Z", err)
    check(m, "attach's message: %r" % err)
    rate, pct = int(m.group(1)), float(m.group(2))
    check(abs(pct - rate * COST_STEPPED / 1e7) <= 0.0005 + COST_STEPPED / 1e7,
          "%d calls/s x 20500 ns is not %r%%" % (rate, pct))
    check(pct > 5, "refused at %r%%" % pct)
    eq(a.stdout(), "", "attach's stdout")
    check(not sdstest.is_socket(a.sock), "the socket %s is left" % a.sock)
    # Nothing stays attached: no program held, no link or pin left.
    before.assert_nothing_new([a.pid], "the refused attach")


@test
def test_budget_suspends_when_hot(ctx):
    # Not hot in its first second (paused), so attach takes it; then hot.
    loop = Loop(ctx)
    loop.cmd("pause")
    a = sdstest.AttachProcess(ctx, [loop.path, "hot=budget_fn"], "budget_loop")
    time.sleep(0.5)
    ov = overhead(ctx)
    eq((ov["suspended"], ov["rate"]), (False, 0), "paused: suspended, rate")
    probes_on(ctx, a, loop.path, True)
    loop.cmd("fast")
    suspend_and_resume(ctx, loop, a, time.monotonic())


@test
def test_budget_site_any(ctx):
    # Needs :site= (the fork helper's pointspec.c): fails until merged.
    loop = Loop(ctx)
    loop.rates(0.4)		# running: hot from the first second
    a = sdstest.AttachProcess(ctx, [loop.path, "hot=budget_fn:site=any"],
                              "budget_loop")
    suspend_and_resume(ctx, loop, a, time.monotonic())


@test
def test_budget_off(ctx):
    loop = Loop(ctx)
    loop.rates(0.4)		# running
    sdstest.AttachProcess(ctx, ["--max-overhead", "0", loop.path,
                                "hot=budget_fn"], "budget_loop")
    loop.rates(1.5)
    st = stats(ctx)
    ov = sdstest.get_point(st, "hot")["overhead"]
    eq((ov["suspended"], ov["reason"], ov["suspensions"]), (False, None, 0),
       "--max-overhead 0: suspended, reason, suspensions")
    check(ov["estimated_pct"] > 5, "estimate %r%%: not hot?" % ov["estimated_pct"])
    check_estimate(ov, "--max-overhead 0")
    eq(st["budget"]["max_pct"], 0.0, "budget.max_pct")
    eq(st["budget"]["estimated_pct"], ov["estimated_pct"], "budget.estimated_pct")


@test
def test_budget_bad_max_overhead(ctx):
    path = ctx.program("budget_loop")
    for bad in ["101", "100.001", "-1", "abc", "5%", "1e1", "", "2.5555",
                "0x5", ".5", "inf"]:
        r = sdstest.run_group([SDS, "attach", "--max-overhead", bad, path,
                               "hot=budget_fn"], ctx.env, ctx.tmp, ctx.others)
        eq((r.rc, r.err, r.out),
           (1, "sds-bpf: bad --max-overhead '%s': expected a percentage of "
            "one CPU, 0..100 (up to 3 decimals; 0: no limit)\n" % bad, ""),
           "--max-overhead %r" % bad)


ADMIN_TOKEN = "harm-t0ken_for.tests"


def start_admin(ctx):
    """A real sds-admin on a free loopback port, killed at cleanup, with
    app budget_loop: its port and token file."""
    adm = sdsadmin.Admin(ctx, token=ADMIN_TOKEN).start()
    adm.ok("POST", "/groups/default/apps", {"name": "budget_loop"}, want=201)
    return adm.port, adm.token_file


def admin_point_state(port, since):
    """The admin's newest state of point hot in budget_loop's stats."""
    st, doc = sdstest.http_request(
        port, "GET", "/api/v1/groups/default/apps/budget_loop/stats?"
        "from=%d&to=%d&step=10&point=hot" % (since, time.time() + 60),
        headers={"Authorization": "Bearer " + ADMIN_TOKEN})
    check(st == 200, "admin stats: status %d: %r" % (st, doc))
    return doc["points"]["hot"]


@test
def test_budget_suspension_reaches_admin(ctx):
    port, tok = start_admin(ctx)
    since = int(time.time()) // 10 * 10 - 10
    loop = Loop(ctx)
    loop.cmd("pause")
    sdstest.AttachProcess(ctx, ["--admin", "http://127.0.0.1:%d" % port,
                                "--token-file", tok, "--state-dir",
                                ctx.state_dir, loop.path,
                                "hot=budget_fn:site=any"], "budget_loop")
    loop.cmd("fast")
    # A heartbeat leaves 2-9 s after its 10-s period ends.
    pt = sdstest.wait_until(
        lambda: (lambda p: p if p["suspended"] else None)(
            admin_point_state(port, since)),
        time.time() + 45, "the admin never showed point hot suspended")
    check(pt["overhead_pct"] > 5, "admin: suspended at %r%%, not over 5%%"
          % pt["overhead_pct"])
    seen = pt["as_of"]
    loop.cmd("pause")
    pt = sdstest.wait_until(
        lambda: (lambda p: p if p["as_of"] > seen and not p["suspended"]
                 else None)(admin_point_state(port, since)),
        time.time() + 45, "the admin never showed point hot resumed")
    eq((pt["suspended"], pt["overhead_pct"]), (False, 0),
       "admin after the loop paused: suspended, overhead_pct")
