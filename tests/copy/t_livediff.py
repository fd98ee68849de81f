# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Live diff plans (`"diff": true`, issue 37): sds-copy compares the
answer to the first copy of each paired request with the production
response streamed after it.  The shadow here is build "b": a real HTTP
server that answers {"id": N, "price": P} with P off by one for every
tenth id; the production responses say the right price.  Exact counts
per point from what the test sent, never from sds-copy."""

import json
import socket
import time

import sender
from copy_lib import Server, check, eq, plan, test

import sdstest


def price(i):
    return 10 * i + 7


def http(body):
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" \
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def prod_answer(i):
    return http(json.dumps({"id": i, "price": price(i)}).encode())


def build_b(body):
    """Build b: every tenth id's price is one more than production's."""
    i = int(body.split(b"=")[1])
    return http(json.dumps({"id": i, "price": price(i) + (i % 10 == 0)}).encode())


def pairs(app, point, ids, base=0, lone=()):
    """Requests and their responses, two threads interleaved (req a, req b,
    resp b, resp a): the server must pair them by id, not by order.
    @lone: ids sent without a response."""
    recs = []
    ids = list(ids)
    for k in range(0, len(ids) - 1, 2):
        a, b = ids[k], ids[k + 1]
        recs += [sender.record(app, point, b"id=%d" % a, pair=base + a),
                 sender.record(app, point, b"id=%d" % b, pair=base + b),
                 sender.record(app, point, prod_answer(b), pair=base + b, response=True),
                 sender.record(app, point, prod_answer(a), pair=base + a, response=True)]
    if len(ids) % 2:
        a = ids[-1]
        recs += [sender.record(app, point, b"id=%d" % a, pair=base + a),
                 sender.record(app, point, prod_answer(a), pair=base + a, response=True)]
    for i in lone:
        recs.append(sender.record(app, point, b"id=%d" % i, pair=base + i))
    return recs


def diff_of(srv, name, want_pairs, timeout=40):
    def done():
        d = srv.plan_stats(name)["diff"]
        return d if d["pairs"] + d["unpaired"] >= want_pairs else None
    return sdstest.wait_until(done, time.time() + timeout,
                              lambda _: "plan %s's diff: %r" % (name, srv.plan_stats(name)["diff"]),
                              0.2)


@test
def t_livediff_counts(ctx):
    """200 pairs x3 onto build b: exactly 20 different (ids 0, 10, ...,
    190) and 180 same, the first copy of each compared; 5 requests whose
    production response never comes are "unpaired" (after the 10-s wait),
    never "same".  The same 200 on a plan that ignores $.price: all same.
    A shadow that never answers: each pair a timeout."""
    sh = ctx.shadow(http=True, answer=build_b)
    slow = ctx.shadow(http=True, stall=True)
    srv = Server(ctx, [plan("d", [sh.addr], points=["api"], amplification=3,
                            framing="http", diff=True),
                       plan("ign", [sh.addr], points=["api2"], framing="http",
                            diff=True, ignore=["$.price"]),
                       plan("slow", [slow.addr], points=["api3"], framing="http",
                            diff=True),
                       plan("plain", [sh.addr], points=["api4"], framing="http")])
    sender.send(srv.addr, pairs("app", "api", range(200), lone=range(1000, 1005)) +
                pairs("app", "api2", range(200), base=1 << 40) +
                pairs("app", "api3", range(6), base=1 << 41) +
                pairs("app", "api4", range(10), base=1 << 42))
    d = diff_of(srv, "d", 205)
    eq((d["pairs"], d["same"], d["different"], d["shadow_errors"], d["timeouts"],
        d["unpaired"]), (200, 180, 20, 0, 0, 5), "plan d: pairs, same, different, errors, timeouts, unpaired")
    eq([(p["point"], p["pairs"], p["different"]) for p in d["points"]], [("api", 200, 20)],
       "plan d per point")
    st = srv.wait_settled("d")
    eq((st["received"], st["dispatched"]), (205, 615), "plan d: received, dispatched (x3)")
    d = diff_of(srv, "ign", 200)
    eq((d["pairs"], d["same"], d["different"], d["unpaired"]), (200, 200, 0, 0),
       "plan ign ($.price ignored)")
    d = diff_of(srv, "slow", 6)
    eq((d["pairs"], d["same"], d["timeouts"]), (6, 0, 6), "plan slow: timeouts")
    eq(srv.plan_stats("plain")["diff"], None, "a plan without diff compares nothing")
    eq(sh.wait_count(615 + 200 + 10), 615 + 200 + 10, "requests build b received")
    srv.stop()


@test
def t_livediff_bad_plans(ctx):
    """diff on raw framing, ignore without diff, an ignore rule that does
    not parse: one line, exit 1, nothing served."""
    from t_plans import refused
    sh = "127.0.0.1:9"
    for p, want in (
            (plan("p", [sh], diff=True), "plan 0 (p): \"diff\" needs \"framing\": \"http\""),
            (plan("p", [sh], framing="http", ignore=["$.a"]), "\"ignore\" needs \"diff\": true"),
            (plan("p", [sh], framing="http", diff="yes"), "\"diff\" not true or false"),
            (plan("p", [sh], framing="http", diff=True, ignore=["$..a"]),
             "ignore[0]: --ignore '$..a': unknown syntax at character 3"),
            (plan("p", [sh], framing="http", diff=True, ignore="$.a"),
             "\"ignore\" not a list of at most 16 rules")):
        refused(ctx, [p], want)
