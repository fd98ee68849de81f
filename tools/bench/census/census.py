#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Site census (issue 35): over the functions of real binaries, the share by
entry site kind and by return mode, from `sds-bpf list-symbols --json`.
"Before" is each function's own first instruction (`entry_site`) and the
return mode a target that can unwind gave every function before
loader/target/nothrow.c (exits or entry-only, never the pair); "after" is
the site attach now probes (`site`, moved by loader/target/entry.c) and
its return mode.

    python3 tools/bench/census/census.py [BINARY...]

Default binaries: Debian's nginx, postgres and python3.11 where they are
installed, and libstdc++ (a target that can unwind); `make site-census`
adds Debian's ninja-build (C++) and ripgrep (Rust), built from their
Debian sources with symbols kept (debsrc.sh: the packages' binaries are
stripped).  Prints a markdown table.  Python 3 standard library only.
"""

import collections
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
SDS = os.path.join(ROOT, "build", "bin", "sds-bpf")
DEFAULT = ["/usr/sbin/nginx"] + sorted(glob.glob(
    "/usr/lib/postgresql/*/bin/postgres"))[-1:] + [
    "/usr/bin/python3.11", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"]
KINDS = ("nop5", "emulated", "stepped")
MODES = ("pair", "exits", "entry-only")


def pct(n, total):
    return "%d (%.0f %%)" % (n, 100.0 * n / total) if total else "0"


def census(path):
    r = subprocess.run([SDS, "list-symbols", "--json", path],
                       capture_output=True, text=True, timeout=1800)
    if r.returncode:
        sys.exit("census: sds-bpf list-symbols %s: %s" % (path, r.stderr))
    doc = json.loads(r.stdout)
    fns = doc["functions"]
    before = collections.Counter(f["entry_site"] for f in fns)
    after = collections.Counter(f["site"] for f in fns)
    ret_after = collections.Counter(f["returns"] for f in fns)
    ret_before = collections.Counter(
        # What the pair of a nothrow function was before: exits, or
        # entry-only where its exits cannot all be found (not told apart).
        ("exits|entry-only" if f["returns"] == "pair" and
         f["returns_why"].startswith("cannot unwind") else f["returns"])
        for f in fns)
    return doc, len(fns), before, after, ret_before, ret_after


def main(argv):
    paths = argv or [p for p in DEFAULT if os.path.exists(p)]
    print("| binary | language | functions | entry site: nop5 / emulated / "
          "stepped, before | after | returns: pair / exits / entry-only, "
          "before | after |")
    print("|---|---|---:|---|---|---|---|")
    for path in paths:
        doc, n, before, after, rb, ra = census(path)
        site = lambda c: " / ".join(pct(c[k], n) for k in KINDS)
        ret = lambda c: " / ".join(pct(c[k], n) for k in MODES) + (
            " + %s exits or entry-only" % pct(c["exits|entry-only"], n)
            if c["exits|entry-only"] else "")
        print("| %s | %s | %d | %s | %s | %s | %s |" % (
            os.path.basename(path), doc["language"], n, site(before),
            site(after), ret(rb), ret(ra)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
