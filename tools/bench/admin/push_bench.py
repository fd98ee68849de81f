#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
make push-bench (and make bench): the push channel (docs/PUSH.md) of one
real sds-admin on a fresh SQLite file, driven by simulated loaders that
do what a loader's push thread and sender do: a long-poll
(GET /api/v1/watch) held open, and on its answer the app's state
(GET /api/v1/sync).  Each simulated loader keeps one connection for its
watches and one for its syncs, from its own loopback address
(127.1.X.Y: the admin's per-address connection cap is not what is
measured).

  - wake: PUTs of a strategy (--changes of them, a second apart); for
    each, the time from the PUT's start to each loader's sync answered
    (the state in its hands): p50, p99, max, at 2, 100 and 1,000 loaders
    (--sizes);
  - idle: --idle waiting loaders (10,000) for --seconds (10): the admin's
    RSS before and with them, and its CPU over the seconds they wait;
  - heartbeats: admin-bench's heartbeats per second (8 connections, 20
    points) for --seconds with no loader waiting, then with --idle of them
    waiting (the channel open beside today's figure).

    python3 tools/bench/admin/push_bench.py [--sizes 2,100,1000]
            [--changes 5] [--idle 10000] [--seconds 10]

Targets (issue 32): the slowest loader <= 1 s at 1,000 loaders and
<= 2 s at 10,000 (the idle row gives one change at its size too).
Python 3 standard library only; as root (rlimits, many sockets).
"""
import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from sdstest import BUILD, admin_argv, free_port, healthz, write_token  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
GROUP, APP, POINT = "bench", "push", "p"
TOKEN = "push-bench-t0ken-%d" % os.getpid()


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


async def request(reader, writer, method, path, body=None):
    """One HTTP/1.1 request on a kept-alive connection: (status, doc)."""
    data = json.dumps(body).encode() if body is not None else b""
    head = ("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
            "Content-Length: %d\r\n%s\r\n"
            % (method, path, TOKEN, len(data),
               "Content-Type: application/json\r\n" if data else ""))
    writer.write(head.encode() + data)
    await writer.drain()
    status = int((await reader.readline()).split()[1])
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        k, _, v = line.decode().partition(":")
        if k.lower() == "content-length":
            length = int(v)
    payload = await reader.readexactly(length) if length else b""
    try:
        return status, json.loads(payload)
    except ValueError:
        return status, payload


def source(i):
    return "127.1.%d.%d" % (1 + i // 250, 1 + i % 250)


class Loader:
    """A simulated loader: a watch connection and a sync connection."""

    def __init__(self, i):
        self.i = i
        self.seq = None
        self.version = 0
        self.done = []          # monotonic times of its syncs answered

    async def open(self, port):
        self.w = await asyncio.open_connection("127.0.0.1", port,
                                               local_addr=(source(self.i), 0))
        self.s = await asyncio.open_connection("127.0.0.1", port,
                                               local_addr=(source(self.i), 0))

    async def run(self, stop):
        q = "/api/v1/watch?group=%s&app=%s&wait=25" % (GROUP, APP)
        while not stop.is_set():
            st, doc = await request(*self.w, "GET", q + (
                "&seq=%d" % self.seq if self.seq is not None else ""))
            if st != 200:
                raise RuntimeError("watch: HTTP %d %r" % (st, doc))
            if doc["seq"] != self.seq:
                first = self.seq is None
                self.seq = doc["seq"]
                st, doc = await request(*self.s, "GET",
                                        "/api/v1/sync?group=%s&app=%s&version=%d"
                                        % (GROUP, APP, self.version))
                if st != 200:
                    raise RuntimeError("sync: HTTP %d %r" % (st, doc))
                self.version = doc.get("version", self.version)
                if not first:
                    self.done.append(time.monotonic())

    def close(self):
        for _, w in (self.w, self.s):
            w.close()


def pct(v, p):
    v = sorted(v)
    return v[max(0, (len(v) * p + 99) // 100 - 1)]


async def put(port, n):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    st, doc = await request(r, w, "PUT", "/api/v1/groups/%s/apps/%s/schemes/"
                            "default/strategies/%s" % (GROUP, APP, POINT),
                            {"visit_threshold": n})
    w.close()
    if st != 200:
        raise RuntimeError("PUT: HTTP %d %r" % (st, doc))


async def waiting(port):
    """The admin's sds_admin_watchers gauge."""
    r, w = await asyncio.open_connection("127.0.0.1", port)
    st, text = await request(r, w, "GET", "/metrics")
    w.close()
    for line in (text.decode() if isinstance(text, bytes) else "").splitlines():
        if line.startswith("sds_admin_watchers "):
            return int(float(line.split()[1]))
    return -1


async def hb_rate(port, seconds, tok):
    """admin-bench's heartbeats per second against the admin."""
    p = await asyncio.create_subprocess_exec(
        os.path.join(BUILD, "bench", "admin-bench"), "--token-file", tok,
        "--seconds", str(seconds), "--conns", "8", "--points", "20",
        "--addr", "127.0.0.1:%d" % port, stdout=asyncio.subprocess.PIPE)
    out, _ = await p.communicate()
    kv = out.decode().split()
    return float(dict(zip(kv[0::2], kv[1::2])).get("heartbeats_per_s", 0))


async def fleet(port, n, changes, idle_s, pid, tok=None):
    loaders = [Loader(i) for i in range(n)]
    for k in range(0, n, 500):
        await asyncio.gather(*(x.open(port) for x in loaders[k:k + 500]))
    stop = asyncio.Event()
    rss0 = rss_kib(pid)
    tasks = [asyncio.ensure_future(x.run(stop)) for x in loaders]
    deadline = time.monotonic() + 60
    while await waiting(port) < n:
        if time.monotonic() > deadline:
            raise RuntimeError("only %d of %d loaders waiting after 60 s"
                               % (await waiting(port), n))
        for t in tasks:
            if t.done():
                t.result()
        await asyncio.sleep(0.2)
    out = {"loaders": n}
    if idle_s:
        c0 = cpu_s(pid)
        await asyncio.sleep(idle_s)
        out["rss_kib"] = (rss0, rss_kib(pid))
        out["cpu_s"] = cpu_s(pid) - c0
        out["idle_s"] = idle_s
        if tok:
            out["hb_waiting"] = await hb_rate(port, idle_s, tok)
    lat = []
    for k in range(changes):
        for x in loaders:
            x.done.clear()
        t0 = time.monotonic()
        await put(port, 1000 + k)
        deadline = time.monotonic() + 30
        while any(not x.done for x in loaders):
            if time.monotonic() > deadline:
                raise RuntimeError("change %d: %d loaders without it after 30 s"
                                   % (k, sum(1 for x in loaders if not x.done)))
            await asyncio.sleep(0.01)
        lat += [x.done[0] - t0 for x in loaders]
        await asyncio.sleep(1.0)
    stop.set()
    await put(port, 1)          # the last watches answered: the tasks end
    await asyncio.wait(tasks, timeout=30)
    for x in loaders:
        x.close()
    out["lat"] = lat
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="2,100,1000")
    ap.add_argument("--changes", type=int, default=5)
    ap.add_argument("--idle", type=int, default=10000)
    ap.add_argument("--seconds", type=int, default=10)
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",") if x]
    need = 2 * max(sizes + [args.idle]) + 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, need)), hard))
    rows = []
    with tempfile.TemporaryDirectory(prefix="sds-push-bench-") as tmp:
        tok = write_token(os.path.join(tmp, "token"), TOKEN)
        port = free_port()
        watchers = max(sizes + [args.idle]) + 16
        argv = admin_argv(os.path.join(BUILD, "bin", "sds-admin"), port,
                          os.path.join(tmp, "sds.db"), tok,
                          ["--max-watchers", str(watchers)])
        adm = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                               stderr=open(os.path.join(tmp, "admin.err"), "wb"))
        try:
            t = time.time() + 10
            while not healthz(port):
                if time.time() > t or adm.poll() is not None:
                    sys.exit("push-bench: sds-admin did not start: %s"
                             % open(os.path.join(tmp, "admin.err")).read())
                time.sleep(0.1)
            import http.client
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("POST", "/api/v1/groups/%s/apps" % GROUP,
                      json.dumps({"name": APP}),
                      {"Authorization": "Bearer " + TOKEN,
                       "Content-Type": "application/json"})
            c.getresponse().read()
            hb_alone = asyncio.run(hb_rate(port, args.seconds, tok))
            for n in sizes:
                rows.append(asyncio.run(fleet(port, n, args.changes, 0, adm.pid)))
            if args.idle:
                rows.append(asyncio.run(fleet(port, args.idle, 1, args.seconds,
                                              adm.pid, tok)))
        finally:
            adm.terminate()
            adm.wait(20)
    print("| loaders | changes | PUT to state, p50 | p99 | max | admin RSS idle -> waiting | admin CPU while they wait |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        lat = r["lat"]
        extra = ("%d -> %d KiB | %.2f s of %d s (%.1f %%)"
                 % (r["rss_kib"][0], r["rss_kib"][1], r["cpu_s"], r["idle_s"],
                    100 * r["cpu_s"] / r["idle_s"])) if "rss_kib" in r else " | "
        print("| %d | %d | %.0f ms | %.0f ms | %.0f ms | %s |"
              % (r["loaders"], len(lat) // r["loaders"], 1e3 * pct(lat, 50),
                 1e3 * pct(lat, 99), 1e3 * max(lat), extra))


    print()
    for r in rows:
        bound = 1.0 if r["loaders"] <= 1000 else 2.0
        if r["loaders"] >= 1000:
            print("target %d loaders (slowest <= %.0f s): %s (%.0f ms)"
                  % (r["loaders"], bound, "met" if max(r["lat"]) <= bound
                     else "NOT met", 1e3 * max(r["lat"])))
    w = [r for r in rows if "hb_waiting" in r]
    if w:
        print()
        print("| heartbeats/s (admin-bench, 8 connections, 20 points) | no loader waiting | %d waiting |" % w[0]["loaders"])
        print("|---|---:|---:|")
        print("| SQLite | %.0f | %.0f |" % (hb_alone, w[0]["hb_waiting"]))


if __name__ == "__main__":
    main()
