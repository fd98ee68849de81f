#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Where `make bench` keeps what it measured, and how the docs get it.

  results.py new                 a new run directory under
                                 tools/bench/results/ named by the UTC date
                                 and time, with machine.md (date, kernel,
                                 CPU, cores, commit); prints its path and
                                 points results/latest at it
  results.py readme [DIR]        replace each section of docs/BENCHMARKS.md
                                 marked <!-- bench:NAME --> ...
                                 <!-- /bench:NAME --> with DIR/NAME.md
                                 verbatim (or NAME.txt as a code block; DIR:
                                 the latest run), under a line saying which
                                 run and machine it came from (a marked
                                 section whose file the run lacks is left
                                 alone and named); then write the README's
                                 <!-- bench:summary --> section: one row per
                                 section of docs/BENCHMARKS.md, its headline
                                 figure and target read from the tables there,
                                 with the command and the run that made them

Every bench script writes its tables as DIR/NAME.md (markdown, exactly as
it printed them) and its per-round data as DIR/NAME.raw/ or NAME.raw.json
when BENCH_OUT=DIR is set; `make bench` sets it.  Nothing in a generated
table is edited by hand: a figure in docs/BENCHMARKS.md or the README's
summary comes from a file here, and the command that made it is named
beside it.  The summary reads the document, not DIR, because its sections
may come from different runs (a partial run fills only its own).
Runs recorded before tools/bench/ had its folders name the scripts by
their old paths, all in tools/bench/ itself: a section copied into the
docs names them by today's (MOVED below, guard.sh as guard/guard.sh);
the recorded files stay as they are.
"""
import datetime
import json
import os
import platform
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(HERE, "results")
MARK = re.compile(r"(<!-- bench:([a-z0-9_-]+) -->\n)(.*?)(<!-- /bench:\2 -->)",
                  re.S)
BENCHMARKS = os.path.join(ROOT, "docs", "BENCHMARKS.md")
README = os.path.join(ROOT, "README.md")
# tools/bench/NAME before the folders -> the folder NAME is in now.
MOVED = {}
for _folder, _names in (
        ("baseline", "bare.bpf.c bare.c bare_up.c bare_counts.h bench_probe.h "
                     "floor.bpf.c floor.c"),
        ("probe", "run.sh driver.c fn_stepped.S fn_endbr.c fn_nop5.c variants"),
        ("multilink", "multilink.c multilink.h multilink_fns.c multilink.py"),
        ("guard", "guard.c guard_cost.c guard_react.c guard_exact.c "
                  "guard_sites.S bench_guard.h guard.sh guard_ab.sh "
                  "guard_decide.c guard_report.py"),
        ("exact", "exact_bench.py exact_cost.c exact_decide.c "
                  "bench_threads.c bench_threads.h"),
        ("copy", "copy.py copy_load.c copy_cost.py copy_fn.c copy_target.c"),
        ("failfast", "ff_connect.c ff_connect.py ff_empty.bpf.c"),
        ("loader", "loader_cost.py hostile.py overhead.py"),
        ("lb", "lb.mk lb_pick.c")):
    MOVED.update((n, _folder) for n in _names.split())
OLD_PATH = re.compile(r"tools/bench/(%s)(?!\w|\.\w)" % "|".join(
    re.escape(n) for n in sorted(MOVED, key=len, reverse=True)))


def today(text):
    """@text (a recorded table or command) with tools/bench's old paths
    written as today's."""
    return OLD_PATH.sub(lambda m: "tools/bench/%s/%s" % (MOVED[m.group(1)],
                                                      m.group(1)), text)


GENERATED = re.compile(r"_Generated: (`[^`]*`)( on ([0-9-]+ [0-9:]+) UTC)?"
                       r".*?commit ([0-9a-f]+).*?\(`([^`]*)`\)\._")


def save(name, text, raw=None):
    """Keep a bench's tables (@text, markdown, as printed) and its rounds
    (@raw, anything JSON can hold) in the run directory $BENCH_OUT, if
    `make bench` set one; a bench run by hand just prints."""
    d = os.environ.get("BENCH_OUT")
    if not d:
        return
    with open(os.path.join(d, name + ".md"), "w") as f:
        f.write(text.rstrip("\n") + "\n")
    if raw is not None:
        with open(os.path.join(d, name + ".raw.json"), "w") as f:
            json.dump(raw, f, indent=1, sort_keys=True)
            f.write("\n")


def spread(ratios):
    """'lo–hi' of per-round ratios."""
    return "%.2f×–%.2f×" % (min(ratios), max(ratios)) if ratios else "n/a"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def commit():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                               "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine_line(d):
    """One line naming the run: date, kernel, CPU, cores, commit."""
    try:
        with open(os.path.join(d, "machine.md")) as f:
            return today(f.read().strip())
    except OSError:
        return "run %s" % os.path.basename(d)


def cmd_new():
    now = datetime.datetime.now(datetime.timezone.utc)
    d = os.path.join(RESULTS, now.strftime("%Y-%m-%dT%H%MZ"))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "machine.md"), "w") as f:
        f.write("`make bench` on %s UTC, kernel %s, %s, %d cores, commit %s\n"
                % (now.strftime("%Y-%m-%d %H:%M"), platform.release(),
                   cpu_model(), os.cpu_count() or 0, commit()))
    latest = os.path.join(RESULTS, "latest")
    tmp = latest + ".new"
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(os.path.basename(d), tmp)
    os.replace(tmp, latest)
    print(d)
    return 0


def cmd_readme(d, doc_path=BENCHMARKS, readme=README):
    d = os.path.realpath(d)
    with open(doc_path) as f:
        text = f.read()
    missing = []

    def fill(m):
        path = os.path.join(d, m.group(2) + ".md")
        try:
            with open(path) as f:
                body = f.read().rstrip("\n")
        except OSError:
            # A bench that prints plain text (NAME.txt): as a code block.
            path = os.path.join(d, m.group(2) + ".txt")
            try:
                with open(path) as f:
                    body = "```\n%s\n```" % f.read().rstrip("\n")
            except OSError:
                missing.append(m.group(2))
                return m.group(0)
        return "%s_Generated: %s (`%s`)._\n\n%s\n%s" % (
            m.group(1), machine_line(d),
            os.path.relpath(path, ROOT), today(body), m.group(4))

    new = MARK.sub(fill, text)
    if new != text:
        with open(doc_path + ".tmp", "w") as f:
            f.write(new)
        os.replace(doc_path + ".tmp", doc_path)
    for name in missing:
        print("results.py: %s.md not in %s: section left as it was"
              % (name, d), file=sys.stderr)
    return write_summary(readme, new)


# The README's summary: one row per generated section of docs/BENCHMARKS.md.
# Each reader takes the section's body (as the bench printed it) and returns
# (headline, target); a table whose shape changed gives None, and the row
# then sends the reader to docs/BENCHMARKS.md instead of guessing.

def rows(body):
    """The cells of every markdown table row of @body, stripped."""
    out = []
    for line in body.split("\n"):
        if line.startswith("|") and not re.match(r"\|[-: |]+\|$", line):
            out.append([c.strip() for c in line.strip().strip("|").split("|")])
    return out


def row(body, first):
    """The first table row whose first cell starts with @first."""
    for r in rows(body):
        if r and r[0].replace("*", "").startswith(first):
            return r
    return None


def median(cell):
    """'1.173× (1.053×–1.228×)' -> '1.173×'."""
    return cell.replace("*", "").split(" ")[0]


def lines(body, pattern):
    return [l.strip() for l in body.split("\n") if re.search(pattern, l)]


def verdict(line):
    """'target ...: met (1.049×; ...)' -> 'met'; 'NOT met' kept whole."""
    m = re.search(r"(NOT met|MISSED|missed|met)\b", line.split(":")[-1]
                  if ":" in line else line)
    return m.group(1) if m else None


def sum_function(b):
    r = row(b, "nop5")
    if not r or len(r) < 10:
        return None
    return ("sds-bpf on a nop5 site: %s the bare uprobe pair, %s bpftrace"
            % (median(r[6]), median(r[7])),
            "%s: %s" % (r[8], r[9]))


def sum_overhead(b):
    checked = [r for r in rows(b)[1:]
               if len(r) >= 10 and not r[9].startswith("not checked")]
    if not checked:
        return None
    r = checked[0]
    return ("point `%s` (%s site, %s calls/s): measured %s of a CPU against "
            "%s estimated (%s×)" % (r[0], r[2], r[3], r[6], r[5],
                                    median(r[7])),
            "within 25%%: %s" % r[9])


def sum_guard(b):
    r = row(b, "passing ÷ two bare uprobes")
    n = row(b, "no loader")
    t = lines(b, r"^target ")
    if not r or not n or not t:
        return None
    got = [verdict(l.split(":", 1)[1]) for l in t if ":" in l]
    return ("a passing guarded call %s two bare uprobes; %s ns without a "
            "loader" % (median(r[1]), n[1]),
            "%d of %d targets met" % (sum(v == "met" for v in got), len(got)))


def sum_copy_cost(b):
    r = row(b, "256 B")
    if not r or len(r) < 6:
        return None
    return ("copying a 256-B request costs a call %s ns (all sampled), "
            "%s ns (10%%)" % (median(r[4]), median(r[5])), "none")


def sum_loader(b):
    r = [x for x in rows(b) if len(x) >= 6 and x[0] == "1024" and x[1] == "new"]
    if not r:
        return None
    r = r[0]
    try:
        ok = (float(r[2]) <= 1 and float(r[3]) <= 32 and float(r[4]) <= 50)
    except ValueError:
        return None
    return ("1,024 points: %s%% of a core, %s MB RSS, `stats --json` %s ms"
            % (r[2], r[3], r[4]),
            "≤ 1%%, ≤ 32 MB, ≤ 50 ms: %s" % ("met" if ok else "missed"))


def sum_multilink(b):
    r = [x for x in rows(b) if len(x) >= 6 and x[1] == "1 link, 64 offsets"]
    if not r:
        return None
    return ("detaching 64 points: one link of 64 offsets %s the time of 64 "
            "links" % median(r[0][5]), "none")


def sum_hostile(b):
    r = row(b, "p99 hostile ÷ unloaded")
    if not r or len(r) < 6:
        return None
    return ("tick p99 under hostile clients %s unloaded" % median(r[2]),
            r[5])


def sum_admin(b):
    t = lines(b, r"^target for ")
    r = [x for x in rows(b)[1:] if len(x) >= 4 and "3 admins" in x[0]]
    s = [x for x in rows(b)[1:] if len(x) >= 4 and x[0].startswith("SQLite")]
    if not t or not r or not s:
        return None
    return ("%s heartbeats/s (p99 %s ms) on SQLite, %s/s (p99 %s ms) from 3 "
            "admins on PostgreSQL" % (s[0][1], s[0][3], r[0][1], r[0][3]),
            "≥ 2,000/s, p99 < 50 ms: %s" %
            ", ".join(verdict(l) or "?" for l in t))


def sum_admin_sustain(b):
    r = row(b, "whole run")
    t = lines(b, r"^sustained target")
    if not r or not t:
        return None
    bad = len(lines(b, r"^  interval \d+:"))
    return ("%s heartbeats/s for %s s, p99 %s ms over the run"
            % (r[2], r[1], r[4]),
            "every 10-s interval p99 < 50 ms: %s%s"
            % (verdict(t[0]), " (%d intervals over)" % bad if bad else ""))


def sum_push(b):
    t = lines(b, r"^target \d+ loaders")
    r = [x for x in rows(b)[1:] if len(x) >= 6 and x[0] in ("1000", "10000")]
    if not t or len(r) < 2:
        return None
    return ("PUT to state, slowest: %s at 1,000 loaders, %s at 10,000; admin "
            "RSS %s with 10,000 waiting" % (r[0][4], r[1][4], r[1][5]),
            "≤ 1 s, ≤ 2 s: %s" % ", ".join(verdict(l) or "?" for l in t))


def sum_copy(b):
    m = re.search(r"ratio of the medians\s+([0-9.]+)\s+target (>= [0-9.]+): "
                  r"(NOT met|met)", b)
    if not m:
        return None
    return ("sds-copy dispatches %s× what a minimal sender reaches"
            % m.group(1), "%s: %s" % (m.group(2), m.group(3)))


def sum_overload(b):
    t = lines(b, r"^target (gradient2|vegas|aimd): ")
    w = lines(b, r"^back within the bounds, ")
    if not t:
        return None
    got = []
    for l in t:
        m = re.match(r"target (\w+): (?:met at every load \((\d+)\)|"
                     r"missed at (\d+) of (\d+) loads)", l)
        if not m:
            return None
        n = int(m.group(2) or m.group(4))
        got.append((m.group(1), n - int(m.group(3) or 0), n))
    back, back_ok = [], []
    for l in w:
        m = re.match(r"back within the bounds, (\w+) \([^)]*\): ([^;]*); "
                     r"target <= (\d+) s: (met|missed)$", l)
        if not m:
            return None
        back.append("%s %s" % (m.group(1), m.group(2)))
        back_ok.append(m.group(4) == "met")
    return ("adaptive against the best static limit, loads met: %s; after "
            "a 2× slowdown back within the bounds: %s"
            % (", ".join("%s %d of %d" % g for g in got),
               ", ".join(back) or "not run"),
            "goodput ≥ 95 %%, p99 ≤ 1.5× at every load: %s; back in 10 s: %s"
            % ("met" if all(g[1] == g[2] for g in got) else "missed",
               ("met" if all(back_ok) else "missed") if back else "not run"))


def sum_keys(b):
    f = lines(b, r"^target integer key")
    s = lines(b, r"^target string key")
    g = lines(b, r"^target keyed ")
    t = lines(b, r"^target top 20 ")
    r = row(b, "keyed ÷ unkeyed")
    if not (f and s and g and t and r):
        return None
    added = [re.search(r"\(([-0-9.]+) ns\)", l) for l in (f[0], s[0])]
    rank = re.search(r"\((\d+) of 20 in rank, worst count error ([0-9.]+) %", t[0])
    if not all(added) or not rank:
        return None
    return ("a key adds %s ns (integer), %s ns (32-B string) to a function "
            "point; a keyed guarded call %s an unkeyed one; top 20 of a "
            "Zipf(1.1) stream: %s of 20 in rank, counts within %s %%"
            % (added[0].group(1), added[1].group(1), median(r[1]),
               rank.group(1), rank.group(2)),
            "≤ 100 ns, ≤ 250 ns, ≤ 1.5×, exact top 20: %s"
            % ", ".join(verdict(l[0]) or "?" for l in (f, s, g, t)))


SUMMARY = (
    ("function", "function points, per call", "tools/bench/probe/run.sh",
     sum_function),
    ("overhead", "the probe budget's estimate", "tools/bench/loader/overhead.py",
     sum_overhead),
    ("guard", "guard points (libsds)", "tools/bench/guard/guard.sh", sum_guard),
    ("copy_cost", "traffic copy, per call", "make copy-cost-bench",
     sum_copy_cost),
    ("loader", "a loader's own cost", "tools/bench/loader/loader_cost.py",
     sum_loader),
    ("multilink", "session links: per point or per binary",
     "make multilink-bench", sum_multilink),
    ("hostile", "hostile clients", "tools/bench/loader/hostile.py", sum_hostile),
    ("admin", "sds-admin heartbeats", "make admin-bench", sum_admin),
    ("push", "the push channel", "make push-bench", sum_push),
    ("admin_sustain", "sds-admin, 10 minutes at 2,000/s",
     "make admin-bench-sustain", sum_admin_sustain),
    ("copy", "sds-copy dispatch", "make copy-bench", sum_copy),
    ("overload", "adaptive concurrency under overload",
     "make overload-bench", sum_overload),
    ("keys", "hot keys: cost and top-K", "make keys-bench", sum_keys),
)


def summary(doc):
    """The README's summary table of the sections of @doc (the text of
    docs/BENCHMARKS.md); the names of the sections it could not read."""
    sections = {m.group(2): m.group(3) for m in MARK.finditer(doc)}
    out = ["| benchmark | bench | headline | target | run |",
           "|---|---|---|---|---|"]
    unread = []
    for name, title, cmd, read in SUMMARY:
        body = sections.get(name)
        if body is None:
            unread.append(name)
            continue
        g = GENERATED.search(body)
        got = read(body)
        if got is None:
            unread.append(name)
            got = ("see docs/BENCHMARKS.md", "")
        run = ("%s, %s, %s" % (g.group(1), g.group(3) or "?", g.group(4))
               if g else "?")
        out.append("| %s | `%s` | %s | %s | %s |"
                   % (title, cmd, got[0], got[1], run))
    return "\n".join(out), unread


def write_summary(readme, doc):
    with open(readme) as f:
        text = f.read()
    table, unread = summary(doc)
    body = ("_Generated from docs/BENCHMARKS.md's tables by "
            "`python3 tools/bench/results.py readme`; each row's run is the "
            "command and commit that measured it, its full table is in "
            "docs/BENCHMARKS.md._\n\n%s\n" % table)
    new, n = re.subn(r"(<!-- bench:summary -->\n)(.*?)(<!-- /bench:summary -->)",
                     lambda m: m.group(1) + body + m.group(3), text,
                     flags=re.S)
    if n == 0:
        print("results.py: %s has no <!-- bench:summary --> section" %
              os.path.relpath(readme, ROOT), file=sys.stderr)
        return 1
    if new != text:
        with open(readme + ".tmp", "w") as f:
            f.write(new)
        os.replace(readme + ".tmp", readme)
    for name in unread:
        print("results.py: summary: section %s of docs/BENCHMARKS.md not "
              "read (missing, or its table changed shape)" % name,
              file=sys.stderr)
    return 0


def main(argv):
    if argv[:1] == ["new"] and len(argv) == 1:
        return cmd_new()
    if argv[:1] == ["readme"] and len(argv) <= 2:
        d = argv[1] if len(argv) == 2 else os.path.join(RESULTS, "latest")
        if not os.path.isdir(d):
            print("results.py: %s: no such run directory (run make bench)"
                  % d, file=sys.stderr)
            return 1
        return cmd_readme(d)
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
