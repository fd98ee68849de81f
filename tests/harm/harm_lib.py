# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
What the harm tests share (tests/harm/run.py, issue 9): the suite and
the per-test context.  (The unwind helper's minimal copy, as the budget
helper's, until the fork helper's harm_lib.py is merged: same names,
same interface.)

Each test module (tests/harm/t_*.py) registers its tests with @test;
run.py imports them all.  A test gets a Ctx: a ProcDir (own run and
state dirs in .env, processes in .others and .loaders ended at cleanup).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import BUILD  # noqa: E402

HARM_BIN = os.path.join(BUILD, "test", "harm")
SUITE = sdstest.Suite(timeout=180)
test = SUITE.test


class Ctx(sdstest.ProcDir):
    """One test's dirs and processes (see sdstest.ProcDir)."""

    def __init__(self, name):
        super().__init__(name, "sds-harm-")

    def harm(self, name):
        """build/test/harm/@name, which `make harm-bins` built."""
        path = os.path.join(HARM_BIN, name)
        sdstest.check(os.path.exists(path),
                      "%s missing: run make harm-bins" % path)
        return path
