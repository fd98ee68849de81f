# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""The C header's type names (sds_point_t, sds_client_t) compile in C and
in C++, beside the struct names of existing C users; sds.hpp compiles
clean (-Wall -Wextra -Werror -pedantic) alone."""

import os
import subprocess

from bindings_lib import BUILD, HERE, test
from sdstest import check, log

INC = os.path.join(BUILD, "include")


def compiles(argv):
    log(" ".join(argv))
    r = subprocess.run(argv, capture_output=True, text=True)
    check(r.returncode == 0, "%s: exit %d: %s" % (" ".join(argv),
                                                  r.returncode, r.stderr))


@test
def type_names_in_c_and_cpp(ctx):
    src = os.path.join(HERE, "types.c")
    warn = ["-Wall", "-Wextra", "-Werror", "-pedantic", "-I" + INC]
    compiles(["gcc", "-std=c99", "-fsyntax-only"] + warn + [src])
    compiles(["gcc", "-std=gnu11", "-fsyntax-only"] + warn + [src])
    compiles(["g++", "-std=c++17", "-x", "c++", "-fsyntax-only"] + warn
             + [src])
    # The spelling the issue reports: sds_point is the function in C++.
    bad = os.path.join(ctx.tmp, "bad.cc")
    with open(bad, "w") as f:
        f.write('#include <sds.h>\nvoid f(sds_client_t *c)\n'
                '{ sds_point *p = sds_point(c, "dep"); (void)p; }\n')
    r = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-I" + INC,
                        bad], capture_output=True, text=True)
    check(r.returncode != 0, "`sds_point *p = sds_point(...)` compiled in "
          "C++: the header's note on sds_point_t is out of date")


@test
def sds_hpp_alone(ctx):
    src = os.path.join(ctx.tmp, "only.cc")
    with open(src, "w") as f:
        f.write("#include <sds.hpp>\n")
    compiles(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror",
              "-pedantic", "-fsyntax-only", "-I" + INC, src])
