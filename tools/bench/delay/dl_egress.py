#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
What the delay drills' tc egress program costs a packet of an unmarked
socket (docs/DELAY.md), beside no program and an empty one.

A veth pair into a namespace of this script's own; UDP datagrams from a
socket no drill marked go out of the host's end.  Rounds rotate between
nothing on the veth's egress, an empty tc program
(build/bench/dl_empty.bpf.o, by `tc filter add ... egress bpf da`) and a
loader (dry run, SDS_DELAY_DRYRUN) whose delay drill runs on a point
nobody calls, so its sds_dl_egress sees every packet and marks none.
kernel.bpf_stats_enabled gives the programs' run time per packet (the
stats read the clock around each run: the empty program shows that
floor); the sends are timed in the script too.  Root; everything it made
goes at the end.

    python3 tools/bench/delay/dl_egress.py [ROUNDS [PACKETS]]
"""

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
SDS = os.path.join(BUILD, "bin", "sds-bpf")
TARGET = os.path.join(BUILD, "test", "targets", "dltarget")
EMPTY = os.path.join(BUILD, "bench", "dl_empty.bpf.o")
NS = "sdsdlbench%d" % os.getpid()
DEV = "dlb%dh" % (os.getpid() % 100000)
PEER = "dlb%dn" % (os.getpid() % 100000)
ADDR = "10.232.7.2"


def sh(*cmd, check=True):
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=60)
    if check and r.returncode:
        sys.exit("%s: %s" % (" ".join(cmd), r.stderr.strip()))
    return r


def prog_stats(prefix):
    """(run_time_ns, run_cnt) summed over the programs named @prefix*."""
    r = sh("bpftool", "prog", "show", "--json")
    t = n = 0
    for p in json.loads(r.stdout or "[]"):
        if p.get("name", "").startswith(prefix):
            t += p.get("run_time_ns", 0)
            n += p.get("run_cnt", 0)
    return t, n


def send_round(n):
    """@n datagrams out of the veth: ns per sendto, median of 1000-blocks."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    blocks = []
    msg = b"x" * 64
    for _ in range(n // 1000):
        t0 = time.perf_counter_ns()
        for _ in range(1000):
            s.sendto(msg, (ADDR, 9))
        blocks.append((time.perf_counter_ns() - t0) / 1000)
    s.close()
    return statistics.median(blocks)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    packets = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    for p in (SDS, TARGET, EMPTY):
        if not os.path.exists(p):
            sys.exit("%s missing: make all build/test/targets/dltarget "
                     "build/bench/dl_empty.bpf.o" % p)
    tmp = tempfile.mkdtemp(prefix="sds-dlbench-")
    env = dict(os.environ, SDS_RUN_DIR=tmp, SDS_PIN_ROOT="/sys/fs/bpf/sds-dlbench-%d" % os.getpid(),
               SDS_DELAY_DRYRUN="1", SDS_PROBE_COSTS="design")
    loader = None
    old_stats = open("/proc/sys/kernel/bpf_stats_enabled").read().strip()
    try:
        sh("ip", "netns", "add", NS)
        sh("ip", "link", "add", DEV, "type", "veth", "peer", "name", PEER, "netns", NS)
        sh("ip", "addr", "add", "10.232.7.1/30", "dev", DEV)
        sh("ip", "link", "set", DEV, "up")
        sh("ip", "-n", NS, "addr", "add", ADDR + "/30", "dev", PEER)
        sh("ip", "-n", NS, "link", "set", PEER, "up")
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write("1")
        res = {"none": [], "empty": [], "sds_dl_egress": []}
        per = {"empty": [], "sds_dl_egress": []}
        for r in range(rounds):
            for state in ("none", "empty", "sds_dl_egress"):
                if state == "empty":
                    sh("tc", "qdisc", "add", "dev", DEV, "clsact")
                    sh("tc", "filter", "add", "dev", DEV, "egress", "bpf", "da",
                       "obj", EMPTY, "sec", "tc")
                    prefix = "sds_bench_dl_em"
                elif state == "sds_dl_egress":
                    loader = subprocess.Popen(
                        [SDS, "attach", "--app", "dlbench", "--drill-dev", DEV,
                         TARGET, "fetch=fetch:failfast=connect"], env=env,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        start_new_session=True)
                    sock = os.path.join(tmp, "default.dlbench.sock")
                    deadline = time.time() + 90
                    while not os.path.exists(sock) and time.time() < deadline:
                        time.sleep(0.1)
                    subprocess.run(
                        [SDS, "drill", "--app", "dlbench", "fetch", "--delay-ms",
                         "200", "--for", "600"], env=env, check=True,
                        capture_output=True, timeout=60)
                    prefix = "sds_dl_egress"
                t0, n0 = prog_stats(prefix) if state != "none" else (0, 0)
                res[state].append(send_round(packets))
                if state != "none":
                    t1, n1 = prog_stats(prefix)
                    per[state].append((t1 - t0) / max(1, n1 - n0))
                if state == "empty":
                    sh("tc", "qdisc", "del", "dev", DEV, "clsact")
                elif state == "sds_dl_egress":
                    loader.send_signal(signal.SIGINT)
                    loader.wait(30)
                    loader = None
            print("round %d: sendto %s; run time per packet %s" % (
                r + 1, ", ".join("%s %.0f ns" % (k, v[-1]) for k, v in res.items()),
                ", ".join("%s %.1f ns" % (k, v[-1]) for k, v in per.items())))
        print("medians of %d rounds of %d datagrams:" % (rounds, packets))
        for k, v in res.items():
            print("  sendto, %-14s %.0f ns" % (k + ":", statistics.median(v)))
        for k, v in per.items():
            print("  bpf_stats run time, %-14s %.1f ns a packet (%.1f-%.1f)"
                  % (k + ":", statistics.median(v), min(v), max(v)))
    finally:
        if loader:
            loader.kill()
            loader.wait()
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(old_stats)
        sh("ip", "link", "del", DEV, check=False)
        sh("ip", "netns", "del", NS, check=False)
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
