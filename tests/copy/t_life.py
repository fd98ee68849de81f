# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""sds-copy serve: dead shadows, reload, expiry, hostile senders, stats."""

import json
import os
import socket
import stat
import struct
import time

import sdstest
import sender
from copy_lib import Server, check, eq, plan, test


@test
def t_unreachable_shadow(ctx):
    """A plan whose shadow refuses connections: the server keeps
    receiving, the copies queue (bounded: --queue 1000) and are dropped
    and counted, errors are counted and shown; a second plan on a live
    shadow gets every one of its copies meanwhile (sent in chunks its
    queue holds)."""
    live = ctx.shadow()
    hold, dead = sdstest.dead_port()    # refused for the whole test
    srv = Server(ctx, [plan("dead", ["127.0.0.1:%d" % dead], app="a", amplification=3),
                       plan("live", [live.addr], app="b", amplification=3)],
                 extra=["--queue", "1000"])
    for chunk in range(10):
        recs = []
        for i in range(chunk * 200, chunk * 200 + 200):
            recs.append(sender.record("a", "pt", b"d-%d\n" % i))
            recs.append(sender.record("b", "pt", b"l-%d\n" % i))
        sender.send(srv.addr, recs)
        srv.wait_settled("live")
    eq(live.wait_count(6000), 6000, "copies at the live shadow")
    lp = srv.wait_settled("live")
    eq((lp["received"], lp["dispatched"], lp["shadow_errors"]), (2000, 6000, 0),
       "live: received, dispatched, errors")
    dp = srv.plan_stats("dead")
    eq((dp["received"], dp["copies"], dp["dispatched"]), (2000, 6000, 0),
       "dead: received, copies, dispatched")
    # Nothing leaves the queue of a shadow that never connects.
    eq((dp["queued"], dp["dropped"]["queue"], dp["dropped"]["shadow"]), (1000, 5000, 0),
       "dead: queued, dropped(queue), dropped(shadow)")
    sdstest.wait_until(lambda: srv.plan_stats("dead")["shadow_errors"] >= 2,
                       time.time() + 10, "no shadow errors counted")
    r = ctx.run(["stats", "--name", "default"])
    eq(r.rc, 0, "stats exit")
    check("dead" in r.out and "127.0.0.1:%d" % dead in r.out, "stats table: %r" % r.out)
    srv.stop()
    hold.close()


@test
def t_stalled_shadow_pool(ctx):
    """A shadow that accepts and never reads: at most pool (2)
    connections to it, the server keeps receiving, the queue stays within
    --queue and the rest is dropped and counted; stats show it all."""
    sh = ctx.shadow(stall=True)
    srv = Server(ctx, [plan("s", [sh.addr], pool=2)], extra=["--queue", "1000"])
    body = b"x" * 4000 + b"\n"
    sender.send(srv.addr, [sender.record("app", "pt", body) for _ in range(5000)])
    sdstest.wait_until(lambda: srv.plan_stats("s")["received"] == 5000,
                       time.time() + 20, lambda _: "received: %r" % srv.plan_stats("s"))
    time.sleep(0.5)
    p = srv.plan_stats("s")
    eq(sh.conns, 2, "connections the shadow accepted")
    eq(p["endpoints"][0]["connections"], 2, "connections in stats")
    # Full, less what the connections took off it after the last drop.
    check(1000 - 2 * 256 <= p["queued"] <= 1000, "queued: %d" % p["queued"])
    check(p["dispatched"] > 0, "nothing fitted the socket buffers: %r" % p)
    check(p["in_flight"] <= 2 * 256, "in flight: %d" % p["in_flight"])
    eq(p["dispatched"] + p["queued"] + p["in_flight"] + p["dropped"]["queue"], 5000,
       "dispatched + queued + in flight + dropped(queue)")
    srv.stop()


@test
def t_memory_bound(ctx):
    """--queue-bytes bounds the request bytes held for a stalled shadow,
    whatever --queue allows: the rest is dropped as 'queue' and counted."""
    sh = ctx.shadow(stall=True)
    srv = Server(ctx, [plan("m", [sh.addr], pool=1, amplification=3)],
                 extra=["--queue-bytes", "100000"])
    body = b"m" * 3999 + b"\n"
    sender.send(srv.addr, [sender.record("app", "pt", body) for _ in range(2000)])
    sdstest.wait_until(lambda: srv.plan_stats("m")["received"] == 2000,
                       time.time() + 20, lambda _: "received: %r" % srv.plan_stats("m"))
    st = srv.stats()
    p = st["plans"][0]
    check(0 < st["queued_bytes"] <= 100000, "queued bytes: %d" % st["queued_bytes"])
    # One body serves a record's three copies: at most 100000 / 4000 bodies.
    check(p["queued"] + p["in_flight"] <= 3 * 25, "held: %r" % p)
    check(p["dropped"]["queue"] > 0, "dropped: %r" % p["dropped"])
    eq(p["dispatched"] + p["queued"] + p["in_flight"] + p["dropped"]["queue"], 6000,
       "dispatched + queued + in flight + dropped(queue)")
    srv.stop()


@test
def t_http_shadow_never_answers(ctx):
    """An http shadow that takes requests and never answers: each of the
    pool's connections times out after 5 s (a shadow error, the copy it
    wrote stays dispatched, nothing is resent) while the server goes on
    receiving at once."""
    sh = ctx.shadow(http=True, stall=True)
    srv = Server(ctx, [plan("n", [sh.addr], framing="http", pool=2)])
    sender.send(srv.addr, [sender.record("app", "pt", b"q-%d" % i) for i in range(10)])
    sdstest.wait_until(lambda: srv.plan_stats("n")["dispatched"] == 2, time.time() + 5,
                       lambda _: "two requests not written: %r" % srv.plan_stats("n"))
    t0 = time.monotonic()
    sender.send(srv.addr, [sender.record("app", "pt", b"r-%d" % i) for i in range(10)])
    sdstest.wait_until(lambda: srv.plan_stats("n")["received"] == 20, time.time() + 2,
                       "receiving waited for the shadow")
    check(time.monotonic() - t0 < 2, "receiving took %.1f s" % (time.monotonic() - t0))
    # Two time out, the endpoint backs off, reconnects, writes two more.
    p = sdstest.wait_until(lambda: (lambda p: p if p["dispatched"] >= 4 else None)(
        srv.plan_stats("n")), time.time() + 8,
        lambda _: "no reconnect after the timeouts: %r" % srv.plan_stats("n"))
    check(p["shadow_errors"] >= 2, "timeouts counted: %r" % p)
    eq(p["dropped"]["shadow"], 0, "copies lost (the timed-out ones were written)")
    eq(p["dispatched"] + p["queued"] + p["in_flight"], 20, "dispatched + queued + in flight")
    srv.stop()


@test
def t_reload(ctx):
    """SIGHUP with a bad file: one line, the old plans keep serving; with
    a good one: the new plans, counters kept by plan name."""
    sh = ctx.shadow()
    p0 = plan("p", [sh.addr], amplification=2)
    srv = Server(ctx, [p0])
    sender.send(srv.addr, [sender.record("app", "pt", b"a-%d\n" % i) for i in range(100)])
    srv.wait_settled("p")
    srv.write_plans([dict(p0, amplification=0)])
    srv.hup()
    sdstest.wait_until(lambda: srv.stats()["reload_errors"] == 1, time.time() + 5,
                       "reload error not counted")
    err = srv.stderr().strip().splitlines()
    eq(len(err), 1, "stderr lines: %r" % err)
    check(err[0].startswith("sds-copy: reload: ") and "amplification" in err[0]
          and err[0].endswith("keeping the old plans"), "line: %r" % err[0])
    sender.send(srv.addr, [sender.record("app", "pt", b"b-%d\n" % i) for i in range(100)])
    p = srv.wait_settled("p")
    eq((p["received"], p["dispatched"]), (200, 400), "old plan still x2")
    srv.write_plans([dict(p0, amplification=5)])
    srv.hup()
    sdstest.wait_until(lambda: srv.stats()["reloads"] == 1, time.time() + 5,
                       "reload not counted")
    sender.send(srv.addr, [sender.record("app", "pt", b"c-%d\n" % i) for i in range(100)])
    p = srv.wait_settled("p")
    eq((p["received"], p["amplification"], p["dispatched"]), (300, 5, 900),
       "after reload: received, x, dispatched")
    eq(sh.wait_count(900), 900, "copies at the shadow")
    srv.stop()


@test
def t_expiry(ctx):
    """A plan stops at expires_at: later records are counted as dropped
    'expired' and nothing more is sent."""
    sh = ctx.shadow()
    srv = Server(ctx, [plan("e", [sh.addr], expires_in=2)])
    sender.send(srv.addr, [sender.record("app", "pt", b"x-%d\n" % i) for i in range(50)])
    srv.wait_settled("e")
    sdstest.wait_until(lambda: srv.plan_stats("e")["state"] == "expired",
                       time.time() + 6, "plan never expired")
    sender.send(srv.addr, [sender.record("app", "pt", b"y-%d\n" % i) for i in range(50)])
    sdstest.wait_until(lambda: srv.plan_stats("e")["received"] == 100,
                       time.time() + 5, "records after expiry not received")
    p = srv.plan_stats("e")
    eq((p["dispatched"], p["dropped"]["expired"]), (50, 50), "dispatched, dropped(expired)")
    eq(sh.wait_count(50), 50, "copies at the shadow")
    srv.stop()


def cut_off(addr, data):
    """Send @data; True when the server closes the connection."""
    s = socket.create_connection(addr, timeout=5)
    try:
        s.sendall(data)
        return s.recv(16) == b""
    except ConnectionResetError:
        return True
    finally:
        s.close()


@test
def t_hostile_senders(ctx):
    """Bad hello, wrong version, oversize length, a bad name: each such
    sender is cut off and counted; the records before the bad one and
    other senders are served; --max-senders refuses the extra ones."""
    sh = ctx.shadow()
    srv = Server(ctx, [plan("h", [sh.addr])], extra=["--max-senders", "2"])
    host = ("127.0.0.1", srv.port)
    good = sender.record("app", "pt", b"good\n")
    big = bytearray(sender.record("app", "pt", b"z\n"))
    struct.pack_into("<II", big, 8, 70000, 70000)
    badname = sender.record("app", "pt", b"q\n").replace(b"apppt", b"ap/pt")
    for data in (b"XXXX\x01\x00\x00\x00", b"SDSc\x02\x00\x00\x00",
                 sender.hello() + good + bytes(big), sender.hello() + badname):
        check(cut_off(host, data), "not cut off after %r" % data[:40])
    sdstest.wait_until(lambda: srv.stats()["bad_streams"] == 4, time.time() + 5,
                       lambda _: "bad streams: %r" % srv.stats())
    a, b = sender.connect(srv.addr), sender.connect(srv.addr)
    check(cut_off(host, sender.hello()), "a third sender was served")
    a.sendall(good)
    b.sendall(good)
    a.close()
    b.close()
    sdstest.wait_until(lambda: srv.plan_stats("h")["received"] == 3, time.time() + 5,
                       lambda _: "received: %r" % srv.plan_stats("h"))
    st = srv.stats()
    eq((st["refused"], st["bad_streams"], st["unmatched"]), (1, 4, 0),
       "refused, bad streams, unmatched")
    eq(sh.wait_count(3), 3, "copies at the shadow")
    srv.stop()


@test
def t_control_socket(ctx):
    """The control socket is root's (0600) in the checked run dir, stats
    --json is one document, a second server of the same name is refused
    with one line, and a run dir others can write is refused."""
    sh = ctx.shadow()
    srv = Server(ctx, [plan("c", [sh.addr])])
    st = os.lstat(srv.sock)
    eq((stat.S_IMODE(st.st_mode), st.st_uid), (0o600, 0), "socket mode, owner")
    doc = srv.stats()
    eq(sorted(doc), sorted(["listen", "senders", "records", "unmatched", "bad_streams",
                            "refused", "refused_addr", "timed_out", "auth_failed",
                            "reloads", "reload_errors", "queued_bytes",
                            "plans"]), "stats keys")
    second = Server(ctx, [plan("c", [sh.addr])], wait=False)
    eq(second.p.wait(10), 1, "second server's exit")
    err = second.stderr().strip().splitlines()
    check(len(err) == 1 and "another sds-copy" in err[0], "line: %r" % err)
    srv.stop()
    os.chmod(ctx.run_dir, 0o777)
    bad = Server(ctx, [plan("c", [sh.addr])], wait=False)
    eq(bad.p.wait(10), 1, "exit with a writable run dir")
    check("writable by group or others" in bad.stderr(), bad.stderr())
    check(not os.listdir(ctx.run_dir), "left in the run dir: %r" % os.listdir(ctx.run_dir))
    for cmd in ("serve", "stats", "replay"):
        r = ctx.run([cmd, "--help"])
        check(r.rc == 0 and r.out.startswith("usage: sds-copy " + cmd), "%s --help: %r" % (cmd, r))
    r = ctx.run(["--help"])
    eq(r.rc, 0, "--help")
    r = ctx.run(["stats", "--json", "--name", "nosuch"])
    check(r.rc == 1 and r.err.count("\n") == 1 and r.err.startswith("sds-copy: stats: "),
          "stats of no server: %r" % r)
    json.dumps(doc)
