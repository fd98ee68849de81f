# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""`sds-copy replay --diff` of hand-made recordings (issue 37) against the
suite's HTTP shadow (it answers "HTTP/1.1 200 X", Content-Length 2, "ok"):
pairs found whatever their order, per-point counts, requests without a
response, headers and --ignore header:, --examples."""

import json
import os
import socket
import threading

import sender
from copy_lib import Shadow, eq, test

SHADOW_ANSWER = b"HTTP/1.1 200 X\r\nContent-Length: 2\r\n\r\nok"


def write(ctx, name, recs):
    path = os.path.join(ctx.tmp, name)
    with open(path, "wb") as f:
        f.write(sender.file_header() + b"".join(recs))
    return path


def diff(ctx, path, sh, extra=()):
    r = ctx.run(["replay", path, "--to", sh.addr, "--framing", "http", "--diff",
                 "--json"] + list(extra))
    return r.rc, json.loads(r.out) if r.out else None, r.err


@test
def t_diff_pairs_points_unpaired(ctx):
    """Two threads' pairs interleaved (req A, req B, resp B, resp A), two
    points: p1's bare bodies all "ok" (same), p2's every third "no"; two
    requests without a response are sent and not compared."""
    recs, want = [], {"p1": [0, 0], "p2": [0, 0]}
    for i in range(0, 30, 2):
        pt = "p1" if i < 14 else "p2"
        a, b = i, i + 1
        ra = b"no" if pt == "p2" and a % 3 == 0 else b"ok"
        rb = b"no" if pt == "p2" and b % 3 == 0 else b"ok"
        recs += [sender.record("app", pt, b"req %d" % a, pair=1000 + a),
                 sender.record("app", pt, b"req %d" % b, pair=1000 + b),
                 sender.record("app", pt, rb, pair=1000 + b, response=True),
                 sender.record("app", pt, ra, pair=1000 + a, response=True)]
        for r in (ra, rb):
            want[pt][r == b"no"] += 1
    recs += [sender.record("app", "p1", b"lone 1"), sender.record("app", "p2", b"lone 2",
                                                                   pair=7)]
    sh = Shadow(http=True)
    try:
        rc, d, err = diff(ctx, write(ctx, "pairs.rec", recs), sh, ["--examples", "2"])
        eq(rc, 1, "exit with differences (%r)" % err)
        eq((d["pairs"], d["same"], d["different"], d["sent"], d["unpaired"]),
           (30, want["p1"][0] + want["p2"][0], want["p2"][1], 32, 2),
           "pairs, same, different, sent, unpaired")
        eq([(p["point"], p["pairs"], p["same"], p["different"], len(p["examples"]))
            for p in d["points"]],
           [("p1", 14, 14, 0, 0), ("p2", 16, want["p2"][0], want["p2"][1], 2)],
           "per point")
        eq({(e["path"], e["recorded"], e["shadow"]) for e in d["points"][1]["examples"]},
           {("body byte 0", "no", "ok")}, "p2's examples")
        eq(sh.count(), 32, "requests the shadow received")
    finally:
        sh.close()


@test
def t_diff_headers(ctx):
    """A recorded HTTP response with a header the shadow does not send
    differs at that header; --ignore header:NAME (any case) makes it the
    same; --examples 0 keeps none."""
    resp = b"HTTP/1.1 200 X\r\nContent-Length: 2\r\nX-Build: 7\r\n\r\nok"
    recs = []
    for i in range(5):
        recs += [sender.record("a", "p", b"r%d" % i, pair=i),
                 sender.record("a", "p", resp if i < 3 else SHADOW_ANSWER, pair=i,
                               response=True)]
    path = write(ctx, "h.rec", recs)
    sh = Shadow(http=True)
    try:
        rc, d, _ = diff(ctx, path, sh)
        eq((rc, d["same"], d["different"]), (1, 2, 3), "exit, same, different")
        eq({(e["path"], e["recorded"]) for e in d["points"][0]["examples"]},
           {("header X-Build", "7")}, "examples")
        rc, d, _ = diff(ctx, path, sh, ["--ignore", "header:x-build", "--examples", "0"])
        eq((rc, d["same"], d["different"], d["points"][0]["examples"]), (0, 5, 0, []),
           "with header:x-build ignored")
    finally:
        sh.close()


class Pong:
    """A raw line server: each "LINE\\n" answered "pong LINE\\n"; counts
    the lines and the connections."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.addr = "127.0.0.1:%d" % self.sock.getsockname()[1]
        self.lines = self.conns = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns += 1
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        buf = b""
        with c:
            while True:
                try:
                    d = c.recv(65536)
                except OSError:
                    return
                if not d:
                    return
                buf += d
                *lines, buf = buf.split(b"\n")
                for l in lines:
                    self.lines += 1
                    c.sendall(b"pong " + l + b"\n")

    def close(self):
        self.sock.close()


@test
def t_diff_raw_bytes_and_unpaired(ctx):
    """Raw framing, bytes that are not HTTP: each answer read to the
    recorded response's length; a request without a recorded response in
    the middle finishes its connection, so its answer is never taken for
    the next one's: 6 pairs, 5 the same, the one recorded "pang" differs at
    byte 1; 7 lines reached the server over 2 connections."""
    recs = []
    for i in range(7):
        req = b"r%d\n" % i
        if i == 3:
            recs.append(sender.record("a", "p", req))
            continue
        resp = b"pang r%d\n" % i if i == 5 else b"pong r%d\n" % i
        recs += [sender.record("a", "p", req, pair=i),
                 sender.record("a", "p", resp, pair=i, response=True)]
    path = write(ctx, "raw.rec", recs)
    srv = Pong()
    try:
        r = ctx.run(["replay", path, "--to", srv.addr, "--diff", "--json"])
        d = json.loads(r.out)
        eq((r.rc, d["pairs"], d["same"], d["different"], d["unpaired"], d["sent"]),
           (1, 6, 5, 1, 1, 7), "exit, pairs, same, different, unpaired, sent")
        eq([(e["record"], e["path"], e["recorded"], e["shadow"])
            for e in d["points"][0]["examples"]],
           [(10, "body byte 1", "ang r5\\x0a", "ong r5\\x0a")], "the difference")
        eq((srv.lines, srv.conns), (7, 2), "lines and connections the server saw")
    finally:
        srv.close()
