#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Where `make bench` keeps what it measured, and how the README gets it.

  results.py new                 a new run directory under
                                 tools/bench/results/ named by the UTC date
                                 and time, with machine.md (date, kernel,
                                 CPU, cores, commit); prints its path and
                                 points results/latest at it
  results.py readme [DIR]        replace each section of README.md marked
                                 <!-- bench:NAME --> ... <!-- /bench:NAME -->
                                 with DIR/NAME.md verbatim (or NAME.txt
                                 as a code block; DIR: the latest run), under a line saying which run and
                                 machine it came from; a marked section
                                 whose file the run lacks is left alone
                                 and named

Every bench script writes its tables as DIR/NAME.md (markdown, exactly as
it printed them) and its per-round data as DIR/NAME.raw/ or NAME.raw.json
when BENCH_OUT=DIR is set; `make bench` sets it.  Nothing in a generated
table is edited by hand: a figure in the README comes from a file here,
and the command that made it is named beside it.
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
            return f.read().strip()
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


def cmd_readme(d, readme):
    d = os.path.realpath(d)
    with open(readme) as f:
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
            os.path.relpath(path, ROOT), body, m.group(4))

    new = MARK.sub(fill, text)
    if new != text:
        with open(readme + ".tmp", "w") as f:
            f.write(new)
        os.replace(readme + ".tmp", readme)
    for name in missing:
        print("results.py: %s.md not in %s: section left as it was"
              % (name, d), file=sys.stderr)
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
        return cmd_readme(d, os.path.join(ROOT, "README.md"))
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
