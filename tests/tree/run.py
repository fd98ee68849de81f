#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The tree suite (issue 31): what the house holds to, checked on the tree
and the built objects, nothing run.

  names         every global function of sds-bpf's, sds-admin's and
                sds-copy's objects starts with its module's name
                (docs/NAMING.md), and libsds.a exports only sds_*
  citations     no tracked file cites a path outside the repository, and
                every "DESIGN.md §N" is docs/DESIGN.md's and has its
                section
  folders       no folder of the programs' sources, of tests/ (those
                that hold code) or of tools/ (the benchmarks' recorded
                runs aside) holds more than 25 files
  architecture  docs/ARCHITECTURE.md names every source file of loader/,
                libsds/, admin/, copy/, common/ and bpf/, and no file
                that does not exist

Each failure prints one line per thing wrong.  Needs `make all` (names
reads build/obj and build/lib/libsds.a) and git.

    python3 tests/tree/run.py [-v] [NAME-SUBSTRING...]

The last line is "N passed, M failed"; non-zero exit when anything failed.
"""

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
import tree_lib  # noqa: E402

SUITE = sdstest.Suite(timeout=120)


class Ctx:
    def __init__(self, name):
        self.name = name

    def cleanup(self):
        pass


def none_wrong(bad, what):
    if bad:
        raise sdstest.Fail("%d %s:\n  %s" % (len(bad), what, "\n  ".join(bad)))


@SUITE.test
def names(ctx):
    none_wrong(tree_lib.check_names(sdstest.ROOT, sdstest.BUILD),
               "exported names against docs/NAMING.md")


@SUITE.test
def citations(ctx):
    none_wrong(tree_lib.check_citations(sdstest.ROOT), "citations")


@SUITE.test
def folders(ctx):
    none_wrong(tree_lib.check_folders(sdstest.ROOT), "folders too large")


@SUITE.test
def architecture(ctx):
    none_wrong(tree_lib.check_architecture(sdstest.ROOT),
               "differences between docs/ARCHITECTURE.md and the tree")


def preflight():
    if not shutil.which("nm") or not shutil.which("git"):
        return "nm and git are needed (binutils, git)"
    if not os.path.isdir(os.path.join(sdstest.ROOT, ".git")) and \
            not os.path.isfile(os.path.join(sdstest.ROOT, ".git")):
        return "%s is not a git checkout" % sdstest.ROOT
    return None


if __name__ == "__main__":
    sys.exit(SUITE.main(sys.argv[1:], Ctx, preflight))
