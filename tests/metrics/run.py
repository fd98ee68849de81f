#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Prometheus metrics (issue 16; docs/METRICS.md): `sds-bpf attach
--metrics` and sds-admin's /metrics.

  * promtool check metrics finds no problem in either output;
  * the loader's counters equal `stats --json` exactly, for a function
    point (1,234 calls, 17 failing) and a guard point (800 calls, 300 of
    them downgraded by a kill switch, 5 failing);
  * the histogram's buckets are cumulative, its le bounds the log2
    bounds, +Inf == _count == visits - downgrades (== latency_ns.count);
  * only GET /metrics is served (404, 405, 400), judged on the request
    line alone; a request of METRICS_REQ_MAX bytes is served, one that
    has not ended by then is a 431;
  * hostile clients (100 idle connections, a slowloris, a 1 MiB request)
    neither delay the tick nor keep a scraper waiting; nor do 16 clients
    of nobody's that never read a several-MB answer;
  * bad --metrics values: one line, exit non-zero, nothing attached;
  * sds-admin's fleet sums of the last complete period (t_admin.py).

Run as root:  python3 tests/metrics/run.py [-v] [NAME-SUBSTRING...]
Python 3 standard library only (and promtool, from Debian's prometheus).
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
import sdsadmin  # noqa: E402
import target  # noqa: E402
import guarded  # noqa: E402
from sdstest import BUILD, SDS, check, eq, get_point, log  # noqa: E402

TARGET = os.path.join(BUILD, "test", "targets", "target_pie")
GUARDED = os.path.join(BUILD, "test", "targets", "guarded_static")
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"
LE_MIN, LE_MAX = 8, 36          # loader/report/metrics.h: le = 2^k ns
REQ_MAX = 4096                  # loader/report/metrics_http.c: METRICS_REQ_MAX

SERIES = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


class Ctx(sdstest.ProcDir):
    def __init__(self, name):
        super().__init__(name, "sds-metrics-")

    def stats(self, app):
        r = sdstest.run_group([SDS, "stats", "--app", app, "--json"],
                              self.env, self.tmp, self.others, 10)
        check(r.rc == 0, "stats --json: %r" % r)
        return json.loads(r.out)


def parse(text):
    """{(name, ((label, value), ...)): value} of an exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SERIES.match(line)
        check(m, "not a series line: %r" % line)
        labels = tuple(sorted(LABEL.findall(m.group(2) or "")))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def series(parsed, name, **labels):
    """Every (labels dict, value) of @name whose labels include @labels."""
    got = []
    for (n, lab), v in parsed.items():
        d = dict(lab)
        if n == name and all(d.get(k) == w for k, w in labels.items()):
            got.append((d, v))
    return got


def one(parsed, name, **labels):
    s = series(parsed, name, **labels)
    check(len(s) == 1, "%d series %s%r, want 1" % (len(s), name, labels))
    return s[0][1]


def promtool(text, what):
    """promtool check metrics on @text: exit 0 and not one line said."""
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=text.encode(),
                       capture_output=True, timeout=60)
    said = (r.stdout + r.stderr).decode(errors="replace").strip()
    check(r.returncode == 0 and not said,
          "promtool check metrics on %s: exit %d: %s"
          % (what, r.returncode, said))


def http_get(port, path="/metrics", method="GET", timeout=10):
    """(status, body text) of one request on a fresh connection."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(("%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                   "User-Agent: sds-test\r\nAccept: text/plain\r\n\r\n"
                   % (method, path, port)).encode())
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
    finally:
        s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.") else 0
    ctype = re.search(rb"(?im)^content-type: *(.*?)\r?$", head)
    check(status != 200 or (ctype and ctype.group(1).startswith(
        b"text/plain; version=0.0.4")), "200 without the 0.0.4 type: %r"
        % head[:300])
    return status, body.decode(errors="replace")


def scrape(port):
    st, body = http_get(port)
    check(st == 200, "GET /metrics: %d %r" % (st, body[:200]))
    return body


def attach(ctx, app, target, specs=(), extra=()):
    """A loader serving /metrics on a port of its own: the port."""
    return sdstest.serve_on_free_port(lambda port: sdstest.AttachProcess(
        ctx, ["--app", app, "--metrics", "127.0.0.1:%d" % port] +
        list(extra) + [target] + list(specs), app), "sds-bpf --metrics")[0]


def check_point(parsed, st, app, point, kind, visits, exc, downs):
    """The point's series against `stats --json` and the calls made."""
    p = get_point(st, point)
    lab = dict(app=app, point=point, kind=kind, group="default")
    tot = p["total"]
    want = {"visits": visits, "exceptions": exc, "downgrades": downs,
            "timeouts": 0}
    for k, v in want.items():
        eq(tot[k], v, "stats total.%s" % k)
        eq(one(parsed, "sds_point_%s_total" % k, **lab), tot[k],
           "sds_point_%s_total" % k)
    eq(one(parsed, "sds_point_concurrency", **lab), p["concurrency"],
       "sds_point_concurrency")
    eq(one(parsed, "sds_point_downgraded", **lab),
       1 if p["state"]["downgraded"] else 0, "sds_point_downgraded")
    # The histogram: the log2 bounds, cumulative, +Inf == _count.
    b = series(parsed, "sds_point_latency_seconds_bucket", **lab)
    les = sorted((float(d["le"]), v) for d, v in b if d["le"] != "+Inf")
    eq([le for le, _ in les], [2 ** k / 1e9 for k in range(LE_MIN, LE_MAX + 1)],
       "le bounds")
    eq(sorted(d["le"] for d, _ in b if d["le"] != "+Inf")[:2],
       ["0.000000256", "0.000000512"], "le text")
    vals = [v for _, v in les]
    check(all(a <= c for a, c in zip(vals, vals[1:])),
          "buckets not cumulative: %r" % vals)
    inf = one(parsed, "sds_point_latency_seconds_bucket", le="+Inf", **lab)
    count = one(parsed, "sds_point_latency_seconds_count", **lab)
    check(vals[-1] <= inf, "the last bucket %d over +Inf %d" % (vals[-1], inf))
    eq(count, inf, "_count vs +Inf bucket")
    eq(count, visits - downs, "_count vs visits - downgrades")
    eq(count, p["latency_ns"]["count"], "_count vs stats latency_ns.count")
    s = one(parsed, "sds_point_latency_seconds_sum", **lab)
    check(0 < s < count * 0.1, "_sum %r for %d calls of microseconds"
          % (s, count))


def folded(ctx, app):
    """Until the loader has folded the second now running (and so every
    call made before) into its totals: stats' folded_through, 1-2 s on
    (a tick folds its second - 2)."""
    sec = int(time.time())
    return sdstest.wait_until(
        lambda: (lambda st: st if (st.get("folded_through") or 0) >= sec
                 else None)(ctx.stats(app)), time.time() + 10,
        "the loader did not fold second %d within 10 s" % sec, 0.05)


SUITE = sdstest.Suite(timeout=180)
test = SUITE.test


@test
def test_function_point_equals_stats(ctx):
    """1,234 calls of work(), the first 17 failing."""
    t = target.Target(ctx, TARGET)
    port = attach(ctx, "mfunc", TARGET, ["work=work:err=neg"])
    t.work(1234, 17)
    folded(ctx, "mfunc")    # the second of the calls folded into the totals
    text = scrape(port)
    promtool(text, "the loader's /metrics")
    check_point(parse(text), ctx.stats("mfunc"), "mfunc", "work", "function",
                1234, 17, 0)


@test
def test_guard_point_equals_stats(ctx):
    """500 calls (5 failing), then a kill switch, then 300 downgraded."""
    strat = os.path.join(ctx.tmp, "strategies.json")
    with open(strat, "w") as f:
        json.dump({"version": 1, "points": {}}, f)
    t = guarded.Target(ctx, GUARDED)
    port = attach(ctx, "mguard", GUARDED, extra=["--strategies", strat])
    t.open("mguard")
    r = t.call("pay", 500, err=5)
    eq((r["passed"], r["downgraded"]), (500, 0), "calls before the switch")
    with open(strat + ".new", "w") as f:
        json.dump({"version": 2, "points": {"pay": {"visit_threshold": 0}}}, f)
    os.rename(strat + ".new", strat)
    # Every call the program made, with its verdict: the wait's too, so the
    # expected visits are this test's count, not the loader's.
    made = {"passed": 500, "downgraded": 0}

    def one_call():
        r = t.call("pay", 1)
        eq(r["passed"] + r["downgraded"], 1, "one call's verdicts: %r" % r)
        made["passed"] += r["passed"]
        made["downgraded"] += r["downgraded"]
        return r["downgraded"] == 1
    sdstest.wait_until(one_call, time.time() + 10, "the kill switch never took")
    r = t.call("pay", 299)
    eq(r["downgraded"], 299, "downgraded after the switch")
    made["downgraded"] += 299
    folded(ctx, "mguard")
    text = scrape(port)
    promtool(text, "the loader's /metrics (guard)")
    parsed = parse(text)
    st = ctx.stats("mguard")
    visits = made["passed"] + made["downgraded"]
    sdstest.log("calls made: %r" % made)
    eq(made["downgraded"], 300, "downgraded calls (the wait's last and 299)")
    check_point(parsed, st, "mguard", "pay", "guard", visits, 5, 300)
    eq(one(parsed, "sds_point_downgraded", point="pay"), 1, "downgraded gauge")


@test
def test_histogram_buckets_and_concurrency(ctx):
    """90 fast calls and 10 of 20 ms: each side of 2^24 ns (16.8 ms, wide
    margins on a loaded VM); 4 naps in flight."""
    t = target.Target(ctx, TARGET)
    port = attach(ctx, "mhist", TARGET, ["work=work", "nap=nap"])
    _, took_max = t.work(100, 0, 10, 20)
    check(took_max < 2 ** 30, "the slowest call took %d ns" % took_max)
    folded(ctx, "mhist")
    parsed = parse(scrape(port))
    lab = dict(app="mhist", point="work")
    bucket = {d["le"]: v for d, v in series(
        parsed, "sds_point_latency_seconds_bucket", **lab)}
    # A 20-ms call is over 2^24 ns; a call that does nothing is far under.
    eq(bucket["1.073741824"], 100, "calls under 2^30 ns")
    eq(bucket["0.016777216"], 90, "calls under 2^24 ns")
    eq(bucket["+Inf"], 100, "+Inf")
    s = one(parsed, "sds_point_latency_seconds_sum", **lab)
    check(0.2 <= s < 10 * 1.073741824 + 90 * 0.016777216,
          "_sum %.9f for 10 calls of 20 ms and 90 fast ones" % s)
    # Four threads inside nap() for 3 s: the gauge, as stats says.
    t.p.stdin.write(b"tnap 4 3000\n")
    t.p.stdin.flush()
    # The threads' time to enter nap(), seen in stats (the kernel's gauge);
    # a scrape is served from a tick after it is asked.
    sdstest.wait_until(
        lambda: get_point(ctx.stats("mhist"), "nap")["concurrency"] == 4,
        time.time() + 2.5, lambda _: "stats concurrency of nap %r, want 4 "
        "within 2.5 s of tnap 4" % get_point(ctx.stats("mhist"),
                                             "nap")["concurrency"], 0.05)
    parsed = parse(scrape(port))
    eq(one(parsed, "sds_point_concurrency", app="mhist", point="nap"), 4,
       "sds_point_concurrency of nap")
    eq(t.readline(30), "done", "tnap")
    folded(ctx, "mhist")
    parsed = parse(scrape(port))
    eq(one(parsed, "sds_point_concurrency", app="mhist", point="nap"), 0,
       "sds_point_concurrency after the naps")
    eq(one(parsed, "sds_point_latency_seconds_count", app="mhist",
           point="nap"), 4, "naps completed")
    eq(one(parsed, "sds_point_latency_seconds_bucket", app="mhist",
           point="nap", le="2.147483648"), 0, "naps under 2^31 ns")
    eq(one(parsed, "sds_point_latency_seconds_bucket", app="mhist",
           point="nap", le="4.294967296"), 4, "naps under 2^32 ns")


@test
def test_only_get_metrics(ctx):
    port = attach(ctx, "mpaths", TARGET, ["work=work"])
    eq(http_get(port, "/")[0], 404, "GET /")
    eq(http_get(port, "/metricsx")[0], 404, "GET /metricsx")
    eq(http_get(port, "/metrics", "POST")[0], 405, "POST /metrics")
    eq(http_get(port, "/metrics", "HEAD")[0], 405, "HEAD /metrics")
    eq(http_get(port, "/metrics?x=1")[0], 200, "GET /metrics?x=1")
    eq(raw_status(port, b"\x16\x03\x01 not http at all\r\n\r\n"), b"400",
       "garbage")
    # The path and version of a line that has neither are not a header's.
    eq(raw_status(port, b"GET /metrics\r\nX-A: HTTP/1.1\r\n\r\n"), b"400",
       "a request line without a version")
    # The limit, exactly: the whole request in REQ_MAX bytes is served...
    line = b"GET /metrics HTTP/1.1\r\nX-Pad: "
    pad = b"a" * (REQ_MAX - len(line) - 4)
    eq(raw_status(port, line + pad + b"\r\n\r\n"), b"200",
       "a request of %d bytes" % REQ_MAX)
    # ...and REQ_MAX bytes without the end of the headers is a 431.
    eq(raw_status(port, line + pad + b"xxxx"), b"431",
       "%d bytes without the end of the headers" % REQ_MAX)


def raw_status(port, req):
    """The status code of the answer to the bytes @req, as bytes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(req)
        data = b""
        while len(data) < 12:
            b = s.recv(100)
            if not b:
                break
            data += b
    finally:
        s.close()
    return data[9:12] if data.startswith(b"HTTP/1.1 ") else data[:40]


def tick_late(ctx, app):
    return ctx.stats(app)["tick_late_ms"]


@test
def test_hostile_clients(ctx):
    """100 idle connections, a slowloris, a 1 MiB request: the tick stays
    on time and a scraper is answered at once, again and again."""
    port = attach(ctx, "mhostile", TARGET, ["work=work"],
                  extra=["--tick-ms", "10"])
    time.sleep(1)
    idle = []
    for _ in range(100):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        idle.append(s)
    loris = socket.create_connection(("127.0.0.1", port), timeout=10)
    loris.sendall(b"GET /metrics HTTP/1.1\r\n")
    big = socket.create_connection(("127.0.0.1", port), timeout=10)
    big.setblocking(False)
    sent = 0
    try:
        while sent < 1 << 20:
            sent += big.send(b"X-Junk: " + b"a" * 65536 + b"\r\n")
    except (BlockingIOError, ConnectionResetError, BrokenPipeError):
        pass
    log("big request: %d bytes sent before the socket was full" % sent)
    # Cut off at METRICS_REQ_MAX: a 431, or a reset (unread bytes).
    big.settimeout(5)
    try:
        got = big.recv(64)
    except ConnectionResetError:
        got = b"reset"
    check(got.startswith(b"HTTP/1.1 431") or got in (b"", b"reset"),
          "a 1 MiB request: %r" % got)
    worst = 0.0
    t_end = time.monotonic() + 6
    n = 0
    while time.monotonic() < t_end:
        try:
            loris.send(b"X: y\r\n")    # a header now and then, never the end
        except OSError:
            pass                        # evicted: a scraper needed its slot
        t0 = time.monotonic()
        scrape(port)
        worst = max(worst, time.monotonic() - t0)
        n += 1
        time.sleep(0.5)
    tl = tick_late(ctx, "mhostile")
    log("%d scrapes, slowest %.3f s; tick late %r" % (n, worst, tl))
    check(worst < 2.0, "a scrape took %.3f s among hostile clients" % worst)
    check(tl["p99"] < 50, "the tick was late: %r" % tl)
    for s in idle + [loris, big]:
        s.close()


BAD = [
    ("0", "port 0 out of range"),
    ("65536", "port 65536 out of range"),
    ("127.0.0.1:70000", "port 70000 out of range"),
    ("127.0.0.1:", "expected HOST:PORT"),
    ("127.0.0.1:http", "expected HOST:PORT"),
    ("::1:9477", "expected HOST:PORT"),
    ("no-such-host.invalid:9477", "cannot resolve 'no-such-host.invalid'"),
]


def bad_case(ctx, value, want):
    """One line, non-zero, and nothing of ours anywhere: no socket, no pin
    under this test's pin root (other suites' pins come and go meanwhile:
    only ours are looked at), no program, and no table printed (nothing
    was ever loaded)."""
    r = sdstest.run_group([SDS, "attach", "--app", "mbad", "--metrics", value,
                           TARGET, "work=work"], ctx.env, ctx.tmp, ctx.others,
                          30)
    lines = r.err.strip().splitlines()
    check(r.rc not in (0, None), "--metrics %s: %r" % (value, r))
    check(len(lines) == 1 and lines[0].startswith("sds-bpf: ") and
          want in lines[0], "--metrics %s: stderr %r, want one line with %r"
          % (value, r.err, want))
    eq(r.out, "", "--metrics %s: stdout (the table: probes were loaded)" % value)
    socks = [f for f in os.listdir(ctx.run_dir) if f.endswith(".sock")]
    eq(socks, [], "--metrics %s: sockets left" % value)
    pins = [f for f in sdstest.bpffs_pins() if f.startswith(ctx.pin_root)]
    eq(pins, [], "--metrics %s: pins left" % value)
    eq(sdstest.sds_progs_of(r.pid), [], "--metrics %s: programs held" % value)


@test
def test_bad_metrics_values(ctx):
    for value, want in BAD:
        bad_case(ctx, value, want)


@test
def test_metrics_address_in_use(ctx):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    try:
        bad_case(ctx, "127.0.0.1:%d" % s.getsockname()[1],
                 "Address already in use")
    finally:
        s.close()


def fleet_hb(host, period, app, points):
    return {"group": "fleet", "app": app, "host": host, "ip": "127.0.0.1",
            "period_start": period, "period_s": 10, "version": 0,
            "points": {n: {"visits": v, "exceptions": e, "timeouts": t,
                           "downgrades": d, "max_concurrency": c,
                           "latency_hist": [0] * 10 + [v - d]}
                       for n, (v, e, t, d, c) in points.items()}}


@test
def test_admin_fleet_sums(ctx):
    """Three hosts, two apps: /metrics sums the last complete period."""
    admin = sdsadmin.Admin(ctx, token="metrics-t0k3n_for.tests").start()
    port = admin.port
    # Every period a scrape in the next 30 s may take as the last complete
    # one gets the same rows: the sums cannot depend on when it runs.
    now = int(time.time())
    first = now - now % 10 - 20
    hosts = {"h1": {"shop": {"pay": (100, 3, 1, 10, 4), "cart": (7, 0, 0, 0, 1)},
                    "stock": {"get": (50, 0, 0, 0, 2)}},
             "h2": {"shop": {"pay": (200, 5, 0, 20, 6)}},
             "h3": {"shop": {"pay": (1, 0, 0, 1, 1)},
                    "stock": {"get": (9, 9, 9, 0, 3)}}}
    auth = {"Authorization": "Bearer metrics-t0k3n_for.tests"}
    for period in range(first - 10, first + 40, 10):
        for host, apps in hosts.items():
            for app, points in apps.items():
                st, body = sdstest.http_request(
                    port, "POST", "/api/v1/heartbeat",
                    fleet_hb(host, period, app, points), auth)
                check(st == 200, "heartbeat: %d %r" % (st, body))
    st, text = sdstest.http_request(port, "GET", "/metrics")
    eq(st, 200, "GET /metrics")
    promtool(text, "sds-admin's /metrics")
    parsed = parse(text)
    period = one(parsed, "sds_fleet_period_start_seconds")
    check(first <= period <= first + 20, "period %d, posted %d.." % (period, first))
    want = {("shop", "pay"): (301, 8, 1, 31, 11, 3),
            ("shop", "cart"): (7, 0, 0, 0, 1, 1),
            ("stock", "get"): (59, 9, 9, 0, 5, 2)}
    names = ["visits", "exceptions", "timeouts", "downgrades",
             "concurrency_max", "hosts"]
    for (app, point), vals in want.items():
        got = tuple(one(parsed, "sds_fleet_point_" + n, group="fleet",
                        app=app, point=point) for n in names)
        eq(got, vals, "fleet sums of %s/%s" % (app, point))
    eq(len(series(parsed, "sds_fleet_point_visits")), 3, "fleet series")
    eq(one(parsed, "sds_fleet_series_truncated"), 0, "truncated")
    admin.stop()


# As nobody: N connections that shrink their receive buffer, send a whole
# GET /metrics and never read; "held N" once all are sent, then wait.
UNREAD = r"""
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
held = []
for _ in range(n):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    held.append(s)
print("held %d" % n, flush=True)
time.sleep(600)
"""


@test
def test_unread_answers_hold_no_slot(ctx):
    """16 clients of nobody's send a whole GET /metrics and never read an
    answer larger than the socket buffers (1,024 points: several MB):
    scrapers are still answered, 5 of 5, each with all 1,024 points (they
    were closed at accept while the 16 held every slot)."""
    many = os.path.join(ctx.tmp, "many")
    shutil.copy2(os.path.join(BUILD, "test", "targets", "target_many"), many)
    os.chmod(many, 0o755)
    port = attach(ctx, "munread", many, ["p%04d=f%04d" % (i, i) for i in range(1024)],
                  extra=["--max-overhead", "0"])
    body = scrape(port)
    eq(body.count("\nsds_point_visits_total{"), 1024, "points in a scrape")
    check(len(body) > 4 << 20, "a body of %d bytes: not past the socket "
          "buffers, the test shows nothing" % len(body))
    p = subprocess.Popen(["setpriv", "--reuid=%d" % sdstest.NOBODY,
                          "--regid=%d" % sdstest.NOBODY, "--clear-groups",
                          sys.executable, "-c", UNREAD, str(port), "16"],
                         stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    ctx.others.append(p)
    eq(p.stdout.readline(), b"held 16\n", "nobody's clients")
    time.sleep(3)           # answered by the next tick: all in their write stage
    got = []
    for _ in range(5):
        st, text = http_get(port, timeout=30)
        got.append((st, text.count("\nsds_point_visits_total{")))
    eq(got, [(200, 1024)] * 5, "scrapes among 16 clients that never read")


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(
        __file__, SUITE, Ctx,
        needs=(SDS, TARGET, GUARDED, PROMTOOL, sdstest.admin_path())))
