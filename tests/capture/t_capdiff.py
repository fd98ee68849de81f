# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Responses (issue 37): a guarded HTTP service (tests/targets/httpsvc.c)
records request-response pairs -- by sds_copy_response() at its guard
point and by :copy_ret= at a function point -- and `sds-copy replay
--diff` against its build b, which answers "price" differently for every
tenth id, counts exactly what differs, where, under --ignore rules."""

import json
import os
import signal
import socket
import subprocess
import time

import sdstest
import sender
from cap_lib import SDS, check, eq, read_recording, test

SVC = os.path.join(sdstest.BUILD, "test", "targets", "httpsvc")
DAPP = "diffsvc"
N = 1000


def staged(ctx, name):
    """httpsvc of its own inode: the loader's probes see only this copy."""
    d = os.path.join(ctx.tmp, name)
    os.makedirs(d, exist_ok=True)
    return sdstest.stage(SVC, d)


def start_svc(ctx, path, app, build):
    p = subprocess.Popen([path, "default", app, build], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                         env=ctx.env, cwd=ctx.tmp, start_new_session=True)
    ctx.others.append(p)
    line = p.stdout.readline().split()
    check(line[:1] == [b"port"], "httpsvc said %r" % line)
    return int(line[1])


def price(i, build):
    """What the test's client expects: 3 i, + 1 in build b for i % 10 == 0."""
    return 3 * i + (1 if build == "b" and i % 10 == 0 else 0)


def drive(port, ids, build):
    """One keep-alive connection, GET /item/ID for each id, each answer
    checked against what the service is meant to say."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    f = s.makefile("rb")
    try:
        for i in ids:
            s.sendall(b"GET /item/%d HTTP/1.1\r\nHost: svc\r\n\r\n" % i)
            status = f.readline()
            check(status.startswith(b"HTTP/1.1 200"), "status %r" % status)
            n = None
            while True:
                h = f.readline()
                if h == b"\r\n":
                    break
                if h.lower().startswith(b"content-length:"):
                    n = int(h.split(b":")[1])
            body = json.loads(f.read(n))
            eq(body["price"], price(i, build), "price of %d" % i)
    finally:
        f.close()
        s.close()


def record(ctx, point, path):
    """`sds-bpf record` of @point until stop() (SIGINT), as t_capring."""
    out, err = os.path.join(ctx.tmp, "rec.out"), os.path.join(ctx.tmp, "rec.err")
    with open(out, "wb") as o, open(err, "wb") as e:
        p = subprocess.Popen([SDS, "record", "--app", DAPP, point, "--out", path],
                             stdout=o, stderr=e, env=ctx.env, cwd=ctx.tmp,
                             start_new_session=True)
    ctx.others.append(p)

    def on():
        check(p.poll() is None, "record exited %r: %r" % (p.returncode, open(err).read()))
        return ctx.copy_counts(point, DAPP)["rate"] == 100
    sdstest.wait_until(on, time.time() + 20, "not capturing while recording", 0.05)

    def stop():
        os.kill(p.pid, signal.SIGINT)
        eq(p.wait(20), 0, "record's exit status (stderr %r)" % open(err).read())
    return stop


def recorded_pairs(path):
    """The recording checked whole: N requests and N responses, each
    response after its request with its pair id; [(request record number,
    id, response body)] in file order."""
    recs = read_recording(path)
    eq(len(recs), 2 * N, "records in the recording")
    reqs, out = {}, []
    for k, (_ts, app, _pt, flags, orig, data, pair) in enumerate(recs, 1):
        check(pair is not None and flags & 4, "record %d not paired: %r" % (k, flags))
        if not flags & 8:
            check(pair not in reqs, "pair id %x twice" % pair)
            reqs[pair] = (k, int(data.split(b" ")[1].split(b"/")[2]))
            continue
        check(pair in reqs, "response %d before (or without) its request" % k)
        rk, i = reqs.pop(pair)
        check(data.startswith(b"HTTP/1.1 200 OK\r\n"), "response %d: %r" % (k, data[:40]))
        body = json.loads(data.split(b"\r\n\r\n", 1)[1])
        eq(body["price"], price(i, "a"), "recorded price of %d" % i)
        out.append((rk, i))
    eq(sorted(i for _, i in out), list(range(1, N + 1)), "ids of the pairs")
    return out


def replay(ctx, path, port, extra=()):
    return ctx.run(["replay", path, "--to", "127.0.0.1:%d" % port, "--diff"]
                   + list(extra), timeout=120)


def check_diff(ctx, path, port, pairs, point):
    """--diff against build b: exactly the multiples of 10 differ, at
    $.price, the first five of them the examples; ignored, none."""
    r = replay(ctx, path, port, ["--json"])
    eq(r.rc, 1, "replay --diff's exit status with differences (%r)" % r.err)
    d = json.loads(r.out)
    want_diff = sum(1 for _, i in pairs if i % 10 == 0)
    eq(want_diff, 100, "ids the test made differ")
    eq((d["pairs"], d["same"], d["different"], d["shadow_errors"], d["timeouts"],
        d["sent"], d["unpaired"]), (N, N - want_diff, want_diff, 0, 0, N, 0),
       "pairs, same, different, shadow errors, timeouts, sent, unpaired")
    eq([(p["app"], p["point"], p["pairs"], p["different"]) for p in d["points"]],
       [(DAPP, point, N, want_diff)], "per point")
    first = [(k, i) for k, i in pairs if i % 10 == 0][:5]
    eq([(e["record"], e["path"], e["recorded"], e["shadow"])
        for e in d["points"][0]["examples"]],
       [(k, "$.price", str(price(i, "a")), str(price(i, "b"))) for k, i in first],
       "the first five differences")
    # The text report says the same.
    r = replay(ctx, path, port)
    eq(r.rc, 1, "replay --diff (text)")
    lines = r.out.splitlines()
    eq(lines[0], "%d pairs: %d same, %d different, 0 shadow errors, 0 timeouts "
       "(%d requests sent, 0 without a recorded response)"
       % (N, N - want_diff, want_diff, N), "the text summary")
    k, i = first[0]
    eq(lines[2], "  record %d: $.price: recorded %d, shadow %d"
       % (k, price(i, "a"), price(i, "b")), "the text's first example")
    # Ignored three ways: all the same.
    for rule in ("$.price", "price", '/"price":[0-9]+/'):
        r = replay(ctx, path, port, ["--json", "--ignore", rule])
        eq(r.rc, 0, "replay --diff --ignore %s (%r)" % (rule, r.err))
        d = json.loads(r.out)
        eq((d["pairs"], d["same"], d["different"]), (N, N, 0),
           "pairs, same, different with --ignore %s" % rule)


@test
def test_guard_pairs_diff(ctx):
    """sds_copy() + sds_copy_response() at the guard point: 1,000 recorded
    pairs; replayed against build b, exactly 100 differ at $.price."""
    a = staged(ctx, "a")
    sdstest.AttachProcess(ctx, ["--app", DAPP, a], DAPP)
    port = start_svc(ctx, a, DAPP, "a")
    sdstest.wait_until(lambda: sdstest.get_point(
        json.loads(ctx.sds(["stats", "--json", "--app", DAPP]).out), "api",
        required=False), time.time() + 20, "the guard point never registered")
    path = os.path.join(ctx.tmp, "api.rec")
    stop = record(ctx, "api", path)
    drive(port, range(1, N + 1), "a")
    c = ctx.wait_copy(lambda c: c["captured"] == N and c["responses"] == N,
                      "all pairs captured", name="api", app=DAPP)
    eq((c["dropped"], c["truncated"]), (0, 0), "dropped, truncated")
    stop()
    pairs = recorded_pairs(path)
    b = staged(ctx, "b")
    check_diff(ctx, path, start_svc(ctx, b, "diffsvcb", "b"), pairs, "api")


@test
def test_copy_ret_pairs_diff(ctx):
    """fn=handle:copy=1,2:copy_ret=3,4: the response read at the return;
    the same 100 of 1,000 differ."""
    a = staged(ctx, "a")
    sdstest.AttachProcess(ctx, ["--app", DAPP, a, "fn=handle:copy=1,2:copy_ret=3,4"],
                          DAPP)
    port = start_svc(ctx, a, DAPP, "a")
    path = os.path.join(ctx.tmp, "fn.rec")
    stop = record(ctx, "fn", path)
    drive(port, range(1, N + 1), "a")
    c = ctx.wait_copy(lambda c: c["captured"] == N and c["responses"] == N,
                      "all pairs captured", name="fn", app=DAPP)
    eq((c["dropped"], c["truncated"]), (0, 0), "dropped, truncated")
    stop()
    pairs = recorded_pairs(path)
    b = staged(ctx, "b")
    check_diff(ctx, path, start_svc(ctx, b, "diffsvcb", "b"), pairs, "fn")


@test
def test_diff_old_recording_and_errors(ctx):
    """A recording without responses replays as before and --diff
    compares nothing (one line, exit 1); a shadow that never answers is a
    timeout per pair."""
    sh = sender
    path = os.path.join(ctx.tmp, "old.rec")
    with open(path, "wb") as f:
        f.write(sh.file_header() + b"".join(
            sh.record("x", "p", b"GET /item/%d HTTP/1.1\r\n\r\n" % i) for i in range(5)))
    b = staged(ctx, "b")
    port = start_svc(ctx, b, "diffsvcb", "b")
    r = ctx.run(["replay", path, "--to", "127.0.0.1:%d" % port])
    eq(r.rc, 0, "plain replay of an old recording (%r)" % r.err)
    r = replay(ctx, path, port)
    eq(r.rc, 1, "--diff of a recording without responses")
    eq(r.err.count("\n"), 1, "one line: %r" % r.err)
    check("no request has a recorded response" in r.err, r.err)
    # Pairs by hand, against a shadow that never answers.
    resp = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    with open(path, "wb") as f:
        f.write(sh.file_header() + b"".join(
            sh.record("x", "p", b"GET /item/%d HTTP/1.1\r\n\r\n" % i, pair=i)
            + sh.record("x", "p", resp, pair=i, response=True) for i in range(3)))
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        r = replay(ctx, path, silent.getsockname()[1], ["--json", "--timeout", "300"])
        d = json.loads(r.out)
        eq((r.rc, d["pairs"], d["timeouts"], d["same"]), (1, 3, 3, 0),
           "a silent shadow: exit, pairs, timeouts, same")
    finally:
        silent.close()


@test
def test_diff_bad_input(ctx):
    """Unknown --ignore syntax, --ignore without --diff, bad :copy_ret=:
    one line each, exit 2 (replay) or 1 (attach), nothing sent/attached."""
    path = os.path.join(ctx.tmp, "x.rec")
    with open(path, "wb") as f:
        f.write(sender.file_header())
    for rule, why in (("$..a", "unknown syntax at character 3"),
                      ("a[x]", "unknown syntax at character 3"),
                      ("$.a[", "unknown syntax at character 5"),
                      ("/[/", "bad regular expression"),
                      ("/abc", "closing / missing"),
                      ("header:", "header:NAME wants a header name")):
        r = ctx.run(["replay", path, "--to", "127.0.0.1:9", "--diff", "--ignore", rule])
        eq(r.rc, 2, "--ignore %r: exit" % rule)
        eq(r.err.count("\n"), 1, "--ignore %r: one line: %r" % (rule, r.err))
        check(r.err.startswith("sds-copy: replay: --ignore '%s': " % rule) and why in r.err,
              "--ignore %r: %r" % (rule, r.err))
    r = ctx.run(["replay", path, "--to", "127.0.0.1:9", "--ignore", "a"])
    eq((r.rc, r.err), (2, "sds-copy: replay: --ignore needs --diff\n"), "--ignore alone")
    a = staged(ctx, "a")
    for spec, why in (("fn=handle:copy=1,2:copy_ret=3", "copy_ret= takes two argument numbers"),
                      ("fn=handle:copy=1,2:copy_ret=3,7", "copy_ret= takes two argument numbers"),
                      ("fn=handle:copy=1,2:copy_ret=4,4", "two different arguments"),
                      ("fn=handle:copy_ret=3,4", "copy_ret= needs copy=BUF,LEN")):
        r = ctx.sds(["attach", "--app", DAPP, a, spec])
        eq(r.rc, 1, "attach %s: exit (%r)" % (spec, r.err))
        eq(r.err.count("\n"), 1, "attach %s: one line: %r" % (spec, r.err))
        check(why in r.err, "attach %s: %r" % (spec, r.err))
