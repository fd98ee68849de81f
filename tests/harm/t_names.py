# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Names as users write them (issue 10): C++ and Rust points named by their
demangled names, Go's names as written, Go's refusals of what needs a
return probe, and `list-symbols`.

- names_cart (g++ -O2): shop::Cart::add(int) and its overload
  add(std::string const&).  `a=shop::Cart::add(int)` counts exactly the
  1,000 calls of add(int) (none of the 500 of the other); attach shows the
  demangled name beside the mangled one.  `shop::Cart::add` alone exits 1
  listing both; `shop::Cart::ad` exits 1 listing the nearest first.
- names_handler (rustc -O, crate main): `h=main::handler:err=neg` counts
  300,000 visits exactly, and, a leaf that cannot panic, keeps its
  return probe: 300,000 latencies and the 100,000 errors exact.
- shop::Cart::add(int) is a leaf too: the pair, its 1,000 latencies.
- names_go: main.handler, main.(*Cart).Add and math/rand.(*Rand).Seed as
  written, visits exact, main.handler's probe moved past its stack check
  and frame setup to an emulated instruction; err= and timeout_ms= refused (exit 1, why).
- A '::' among the options: exit 1, one line saying where '::' goes.
- list-symbols on names_cart: the two overloads' rows exactly, and --json.
- names_clone (g++ -O2 -fwhole-program): shop::Cart::add(int) exists only
  as its .constprop/.isra clone; named as written it counts 1,000 calls
  and 250 errors exactly, attach says it probes the clone, and copy= is
  refused (the compiler changed the arguments).
- names_clones (g++ -O2 -fipa-cp-clone): shop::charge(int, long) exists
  only as two .constprop clones; named as written, one point probes both:
  1,000 + 600 calls count 1,600 visits and latencies and 400 errors
  exactly, attach names both clones, copy= is refused; `shop::charge`,
  which also names an overload with a symbol of its own, is listed;
  across a kill -9 of the loader both clones count on (pinned, adopted).
- names_cpart (gcc -O2, C): work() split into work (its head) and
  work.part.0 (its rest, called straight by callers that inlined the
  head, and by itself); `w=work` probes both as one point: a call that
  enters work and goes on into work.part.0 counts once, every recursive
  call counts; visits, latencies and errors exact; stats lists both sites
  and prices a call at both.  price() exists only as price.isra.0:
  `p=price` finds it, counts exactly; copy= and key= are refused.

The points sit on stepped sites (-O2 prologues): --max-overhead 0, as
these tests count and do not budget.
"""

import json
import os
import re
import time
import subprocess

import sdstest
from harm_lib import test
from sdstest import SDS, check, eq

ENTRY_ONLY = "returns: entry-only"
ADD_INT = "_ZN4shop4Cart3addEi"
ADD_STR = "_ZN4shop4Cart3addERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"
ADD_STR_NAME = ("shop::Cart::add(std::__cxx11::basic_string<char, "
                "std::char_traits<char>, std::allocator<char> > const&)")
GO_REFUSED = ("%s needs the function's return, and a Go binary gets no "
              "return probe (its address would make the Go runtime's stack "
              "walk fail and kill the program): Go points count visits only")


def run(ctx, argv, timeout=120):
    """Run @argv to its end: (exit status, stdout)."""
    r = subprocess.run(argv, env=ctx.env, cwd=ctx.tmp, capture_output=True,
                       text=True, timeout=timeout)
    return r.returncode, r.stdout


def attach_refused(ctx, args, want):
    """`sds-bpf attach ARGS` exits 1 at once with the one line @want."""
    r = ctx.sds(["attach", "--max-overhead", "0"] + args)
    eq(r.rc, 1, "attach %s: exit status (%r)" % (" ".join(args), r))
    eq(r.err, "sds-bpf: %s\n" % want, "attach %s: message" % " ".join(args))
    eq(r.out, "", "attach %s: stdout" % " ".join(args))


def wait_visits(ctx, app, name, want):
    """Point @name once its visits reach @want; they must be exactly it."""
    def got():
        p = sdstest.get_point(ctx.stats(app), name)
        return p if p["total"]["visits"] >= want else None
    p = sdstest.wait_until(got, time.time() + 10,
                           "point %s: visits never reached %d" % (name, want))
    eq(p["total"]["visits"], want, "%s visits" % name)
    return p


def check_pair(a, p, name, calls, errors):
    """A C++ or Rust point nothing below which can throw keeps its return
    probe (attach says why, stats says "pair"): @calls latencies and
    @errors errors, exact."""
    want = "returns: pair (cannot unwind: a leaf: a return probe is safe"
    check(want in a.stdout(), "%s: attach's table lacks %r: %r"
          % (name, want, a.stdout()))
    eq(p["returns"], "pair", "%s returns" % name)
    eq(p["latency_ns"]["count"], calls, "%s latency count" % name)
    eq(p["total"]["exceptions"], errors, "%s exceptions" % name)


@test
def test_names_cxx_signature_counts_exactly(ctx):
    prog = ctx.program("names_cart")
    eq(run(ctx, [prog, "1000"]), (0, "calls 1000 items 1500\n"),
       "names_cart unprobed")
    a = ctx.attach(["--max-overhead", "0", prog, "a=shop::Cart::add(int)"],
                   "names_cart")
    eq(run(ctx, [prog, "1000"]), (0, "calls 1000 items 1500\n"),
       "names_cart under attach")
    p = wait_visits(ctx, "names_cart", "a", 1000)
    # A leaf: the pair, like plain C (docs/UNWIND.md).
    check_pair(a, p, "a", 1000, 0)
    want = "symbol: shop::Cart::add(int) [%s]" % ADD_INT
    check(want in a.stdout(), "attach's table lacks %r: %r" % (want, a.stdout()))


def clone_symbol(prog):
    """names_clone's one symbol of shop::Cart::add(int): its clone, as nm
    reads it (the suffix is the compiler's to number)."""
    out = subprocess.run(["nm", prog], capture_output=True, text=True,
                         check=True).stdout
    syms = [ln.split()[-1] for ln in out.splitlines()
            if ln.split()[-1].startswith(ADD_INT)]
    eq(len(syms), 1, "names_clone's symbols of add(int): %r" % syms)
    check(syms[0] != ADD_INT and ".isra." in syms[0],
          "names_clone: add(int) is not an .isra clone: %r" % syms[0])
    return syms[0]


@test
def test_names_cxx_clone_by_its_name(ctx):
    """g++ left only shop::Cart::add(int) [clone .constprop.0] [clone
    .isra.0]: named as written in the source, it is found, said so, and
    counts the 1,000 calls and 250 errors exactly; copy= is refused."""
    prog = ctx.program("names_clone")
    sym = clone_symbol(prog)
    out = "calls 1000 errors 250 items 750\n"
    eq(run(ctx, [prog, "1000"]), (0, out), "names_clone unprobed")
    attach_refused(ctx, [prog, "a=shop::Cart::add(int):copy=1,2"],
                   "bad point 'a=shop::Cart::add(int):copy=1,2': %s is the "
                   "compiler's clone %s of shop::Cart::add(int), whose "
                   "arguments it changed: copy= cannot read them"
                   % (sym, sym[len(ADD_INT):]))
    a = ctx.attach(["--max-overhead", "0", prog,
                    "a=shop::Cart::add(int):err=neg"], "names_clone")
    want = "clone: the compiler's %s clone" % sym[len(ADD_INT):]
    check(want in a.stdout(), "attach's table lacks %r: %r"
          % (want, a.stdout()))
    eq(run(ctx, [prog, "1000"]), (0, out), "names_clone under attach")
    p = wait_visits(ctx, "names_clone", "a", 1000)
    # Plain C++ without libstdc++: nothing unwinds, the pair's latency.
    eq(p["latency_ns"]["count"], 1000, "a latency count")
    eq(p["total"]["exceptions"], 250, "a errors (err=neg)")


CHARGE = "_ZN4shopL6chargeEil"
CHARGE_NAME = "shop::charge(int, long)"


def clones_symbols(prog):
    """names_clones' symbols of shop::charge(int, long): two clones, no
    symbol of its own, as nm reads them (sorted)."""
    out = subprocess.run(["nm", prog], capture_output=True, text=True,
                         check=True).stdout
    syms = sorted(ln.split()[-1] for ln in out.splitlines()
                  if ln.split()[-1].startswith(CHARGE))
    eq(len(syms), 2, "names_clones' symbols of charge(int, long): %r" % syms)
    check(all(".constprop." in s for s in syms),
          "names_clones: charge(int, long) is not two clones: %r" % syms)
    return syms


@test
def test_names_cxx_clones_one_point(ctx):
    """g++ left shop::charge(int, long) as two clones, one per constant
    rate, and no symbol of its own: named as written, one point probes
    both; 1,000 calls through one and 600 through the other count 1,600
    visits, 1,600 latencies and 400 errors exactly; attach names both
    clones; copy= is refused."""
    prog = ctx.program("names_clones")
    syms = clones_symbols(prog)
    sfx = [s[len(CHARGE):] for s in syms]
    # Amounts 0..N-1 of each caller; a multiple of 4 fails.
    n, m = 1000, 600
    errs = (n + 3) // 4 + (m + 3) // 4
    out = "calls %d %d errors %d total %d\n" % (
        n, m, errs,
        sum(3 * i for i in range(n) if i % 4) +
        sum(7 * i for i in range(m) if i % 4) + 2 * 3)
    eq(run(ctx, [prog, str(n), str(m)]), (0, out), "names_clones unprobed")
    attach_refused(ctx, [prog, "a=%s:copy=1,2" % CHARGE_NAME],
                   "bad point 'a=%s:copy=1,2': %s has no symbol of its own, "
                   "only the compiler's %s and %s clones, whose arguments "
                   "the compiler changed: copy= cannot read them"
                   % (CHARGE_NAME, CHARGE_NAME, sfx[0], sfx[1]))
    a = ctx.attach(["--max-overhead", "0", prog,
                    "a=%s:err=neg" % CHARGE_NAME], "names_clones")
    for want in ["clones: the compiler's %s and %s clones (no symbol of "
                 "%s's own)" % (sfx[0], sfx[1], CHARGE_NAME),
                 "also: %s at 0x" % syms[1]]:
        check(want in a.stdout(), "attach's table lacks %r: %r"
              % (want, a.stdout()))
    eq(run(ctx, [prog, str(n), str(m)]), (0, out), "names_clones under attach")
    p = wait_visits(ctx, "names_clones", "a", n + m)
    # Plain C++, a leaf: each clone keeps the pair, latency for every call.
    eq(p["latency_ns"]["count"], n + m, "a latency count")
    eq(p["total"]["exceptions"], errs, "a errors (err=neg)")
    eq(p["returns"], "pair", "a returns (both clones)")
    eq([x["symbol"] for x in p.get("sites", [])], syms, "a's sites")


def pinned_names(root):
    """The names of the pins under @root (link and map pins)."""
    return {f for _, _, files in os.walk(root) for f in files}


@test
def test_names_cxx_clones_survive_kill9(ctx):
    """The other clone's links are pinned beside the point's: after a
    kill -9 of the loader both clones go on counting, and a new attach
    adopts them (not a second set): two runs of 1,000 + 600 calls, one
    with no loader alive, count 3,200 visits and 800 errors exactly."""
    prog = ctx.program("names_clones")
    clones_symbols(prog)
    n, m = 1000, 600
    errs = (n + 3) // 4 + (m + 3) // 4
    args = ["--max-overhead", "0", prog, "a=%s:err=neg" % CHARGE_NAME]
    l1 = ctx.attach(args, "names_clones")
    pins = pinned_names(ctx.pin_root)
    check("p0_c0_enter" in pins and "p0_c0_leave" in pins,
          "the second clone's links are not pinned: %r" % sorted(pins))
    stale = sdstest.inode_of(l1.sock)
    sdstest.kill_group(l1.p)
    l1.p.wait(10)
    rc, out = run(ctx, [prog, str(n), str(m)])
    eq(rc, 0, "names_clones with no loader alive")
    l2 = ctx.attach(args, "names_clones", stale_inode=stale)
    eq(run(ctx, [prog, str(n), str(m)])[0], 0, "names_clones, adopted")
    p = wait_visits(ctx, "names_clones", "a", 2 * (n + m))
    eq(p["total"]["exceptions"], 2 * errs, "a errors across kill -9")
    # Said before its socket is served: in its stderr by now.
    check("adopted the pins in" in l2.stderr(),
          "no 'adopted' line: %r" % l2.stderr())


def cpart_expect(n, m):
    """names_cpart N M's calls of work(), as its code makes them: N
    straight calls work(i % 9, ...) whose head is inlined (a call with
    n <= 0 runs no code of work's own: never seen), M through a pointer to
    work itself (every one enters it), and every recursive call that gets
    past its inlined head (n > 0).  (visits, errors) under err=neg."""
    def val(x):
        return 0 if x <= 0 else val(x - 3) + val(x - 4) + (-5 if x % 4 == 0 else 1)

    def inner(x):
        # The recursive calls under a call of work(x), x > 0, seen.
        calls, errs = 0, 0
        for c in (x - 3, x - 4):
            if c > 0:
                k, e = inner(c)
                calls += 1 + k
                errs += e + (val(c) < 0)
        return calls, errs
    visits = errors = 0
    for i in range(n):
        a = i % 9
        if a > 0:
            k, e = inner(a)
            visits += 1 + k
            errors += e + (val(a) < 0)
    for i in range(m):
        a = i % 9
        visits += 1
        if a > 0:
            k, e = inner(a)
            visits += k
            errors += e + (val(a) < 0)
    return visits, errors


def cpart_out(n, m):
    """names_cpart N M's line, computed as its code computes it."""
    total = 0
    errs = 0

    def work(x, s):
        nonlocal total
        if x <= 0:
            return 0
        for i in range(x):
            total += len(s) * i
        return work(x - 3, s) + work(x - 4, s) + (-5 if x % 4 == 0 else 1)
    for i in range(n):
        errs += work(i % 9, "abc") < 0
    for i in range(m):
        errs += work(i % 9, "de") < 0
    errs += sum(1 for i in range(n) if i % 5 == 0)
    return "errs %d total %d\n" % (errs, total)


def cpart_symbols(prog):
    """names_cpart's functions as gcc -O2 left them: work with its .part.0
    piece, price only as price.isra.0; else the test says so."""
    r = subprocess.run(["nm", prog], capture_output=True, text=True, check=True)
    syms = sorted(l.split()[2] for l in r.stdout.splitlines()
                  if len(l.split()) == 3 and l.split()[1] in "tT"
                  and (l.split()[2].startswith("work") or
                       l.split()[2].startswith("price")))
    eq(syms, ["price.isra.0", "work", "work.part.0"],
       "names_cpart's functions (gcc -O2 no longer splits work or "
       "clones price?)")


@test
def test_names_c_part_counts_each_call_once(ctx):
    """gcc split C's work() into its head (work, which jumps to its rest)
    and work.part.0, which its callers in the file call straight (the
    head inlined) and which calls itself: `w=work` probes both as one
    point; a call that enters work and goes on into work.part.0 counts
    once, and every recursive call counts.  Exact visits, latencies and
    errors (err=neg) from what the program did."""
    prog = ctx.program("names_cpart")
    cpart_symbols(prog)
    n, m = 900, 450
    out = cpart_out(n, m)
    visits, errors = cpart_expect(n, m)
    eq(run(ctx, [prog, str(n), str(m)]), (0, out), "names_cpart unprobed")
    a = ctx.attach(["--max-overhead", "0", prog, "w=work:err=neg"],
                   "names_cpart")
    wants = ["clone: its own symbol and the compiler's .part.0 clone, "
             "one point",
             "also: work.part.0 at 0x"]
    # Where the kernel has sessions, attach says why this point has none.
    if "probe path: session" in a.stdout():
        wants.append("the pair (a .part piece's entry reads the "
                     "per-thread frame stack)")
    for want in wants:
        check(want in a.stdout(), "attach's table lacks %r: %r"
              % (want, a.stdout()))
    eq(run(ctx, [prog, str(n), str(m)]), (0, out), "names_cpart under attach")
    p = wait_visits(ctx, "names_cpart", "w", visits)
    eq(p["latency_ns"]["count"], visits, "w latency count")
    eq(p["total"]["exceptions"], errors, "w errors (err=neg)")
    eq(p["returns"], "pair", "w returns")
    eq(p.get("probe"), "pair", "w's probe path (its piece reads the frames)")
    eq([(x["symbol"], x["returns"], x.get("piece", False))
        for x in p.get("sites", [])],
       [("work", "pair", False), ("work.part.0", "pair", True)],
       "w's sites")
    # A call through work's head enters both sites: it pays both.
    r = ctx.sds(["list-symbols", "--json", prog])
    eq(r.rc, 0, "list-symbols: %r" % (r,))
    cost = {f["symbol"]: f["cost_ns"] for f in json.loads(r.out)["functions"]}
    eq(p["overhead"]["cost_ns"], cost["work"] + cost["work.part.0"],
       "w's cost a call")


@test
def test_names_c_clone_by_its_name(ctx):
    """gcc left C's static price() only as price.isra.0: `p=price` finds
    it, counts its 700 calls and 140 errors exactly; copy= is refused (the
    compiler changed its arguments)."""
    prog = ctx.program("names_cpart")
    cpart_symbols(prog)
    n = 700
    out = cpart_out(n, 0)
    attach_refused(ctx, [prog, "p=price:copy=1,2"],
                   "bad point 'p=price:copy=1,2': price.isra.0 is the "
                   "compiler's clone .isra.0 of price, whose arguments it "
                   "changed: copy= cannot read them")
    attach_refused(ctx, [prog, "w=work:key=arg1"],
                   "bad point 'w=work:key=arg1': work has the compiler's "
                   ".part.0 clone beside its own symbol, whose arguments the "
                   "compiler changed: key= cannot read them")
    a = ctx.attach(["--max-overhead", "0", prog, "p=price:err=neg"],
                   "names_cpart")
    want = "clone: the compiler's .isra.0 clone (no symbol of price's own)"
    check(want in a.stdout(), "attach's table lacks %r: %r"
          % (want, a.stdout()))
    eq(run(ctx, [prog, str(n), "0"]), (0, out), "names_cpart under attach")
    p = wait_visits(ctx, "names_cpart", "p", n)
    eq(p["latency_ns"]["count"], n, "p latency count")
    eq(p["total"]["exceptions"], (n + 4) // 5, "p errors (err=neg)")


@test
def test_names_cxx_clones_and_overload_listed(ctx):
    """shop::charge alone names the two clones and the overload
    charge(double), which has a symbol of its own: ambiguous, listed."""
    prog = ctx.program("names_clones")
    syms = clones_symbols(prog)
    attach_refused(ctx, [prog, "a=shop::charge"],
                   "symbol 'shop::charge' in %s matches 3 functions: "
                   "shop::charge(double) [_ZN4shop6chargeEd]; "
                   "%s [clone %s] [%s]; %s [clone %s] [%s]; name one by its "
                   "full signature or its mangled name"
                   % (prog, CHARGE_NAME, syms[0][len(CHARGE):], syms[0],
                      CHARGE_NAME, syms[1][len(CHARGE):], syms[1]))


@test
def test_names_cxx_overloads_listed(ctx):
    prog = ctx.program("names_cart")
    attach_refused(ctx, [prog, "a=shop::Cart::add"],
                   "symbol 'shop::Cart::add' in %s matches 2 functions: "
                   "shop::Cart::add(int) [%s]; %s [%s]; name one by its full "
                   "signature or its mangled name"
                   % (prog, ADD_INT, ADD_STR_NAME, ADD_STR))


@test
def test_names_cxx_nearest_listed(ctx):
    prog = ctx.program("names_cart")
    r = ctx.sds(["attach", prog, "a=shop::Cart::ad"])
    eq(r.rc, 1, "attach a=shop::Cart::ad: exit status (%r)" % r)
    want = ("sds-bpf: symbol 'shop::Cart::ad' not found in %s; nearest: "
            "shop::Cart::add(int) [%s], %s [%s], " % (prog, ADD_INT,
                                                      ADD_STR_NAME, ADD_STR))
    check(r.err.startswith(want) and r.err.count("\n") == 1,
          "message: %r, want one line starting %r" % (r.err, want))


@test
def test_names_malformed_spec(ctx):
    prog = ctx.program("names_cart")
    attach_refused(ctx, [prog, "a=shop::Cart::add(int):err=neg::zero"],
                   "bad point 'a=shop::Cart::add(int):err=neg::zero': '::' in "
                   "the options ('err=neg::zero'): a name's '::' goes before "
                   "the first :KEY= (as p=ns::f:err=neg)")
    attach_refused(ctx, [prog, "a=shop::Cart::add(int)::err=neg"],
                   "bad point 'a=shop::Cart::add(int)::err=neg': '::' before "
                   "option 'err': one ':' separates the symbol from its "
                   "options")


@test
def test_names_rust_handler(ctx):
    prog = ctx.program("names_handler")
    out = "calls 300000 errors 100000\n"
    eq(run(ctx, [prog]), (0, out), "names_handler unprobed")
    a = ctx.attach(["--max-overhead", "0", prog, "h=main::handler:err=neg"],
                   "names_handler")
    check("symbol: main::handler [_ZN4main7handler17h" in a.stdout(),
          "attach's table: %r" % a.stdout())
    eq(run(ctx, [prog]), (0, out), "names_handler under attach")
    p = wait_visits(ctx, "names_handler", "h", 300000)
    # No panicking call in it: the pair, its latency exact.
    check_pair(a, p, "h", 300000, 100000)


@test
def test_names_go_as_written(ctx):
    prog = ctx.program("names_go")
    out = "calls 1000 items 1000\n"
    eq(run(ctx, [prog, "1000"]), (0, out), "names_go unprobed")
    a = ctx.attach(["--max-overhead", "0", prog, "h=main.handler",
                    "a=main.(*Cart).Add", "s=math/rand.(*Rand).Seed"],
                   "names_go")
    eq(run(ctx, [prog, "1000"]), (0, out), "names_go under attach")
    for name, calls in (("h", 1000), ("a", 1000), ("s", 1)):
        p = wait_visits(ctx, "names_go", name, calls)
        eq(p["latency_ns"]["count"], 0, "%s latency count (Go)" % name)
    eq(a.stdout().count(ENTRY_ONLY), 3, "entry-only lines: %r" % a.stdout())
    # main.handler's frame setup (sub, mov) past its stack check would be
    # stepped: the probe sits on its first emulated instruction instead,
    # and still counts each call once (above).
    eq(sdstest.get_point(ctx.stats("names_go"), "h")["site"], "emulated",
       "h's site")
    check(re.search(r"site: \+0x[0-9a-f]+, `[^`]+`: first emulated "
                    r"instruction on every path", a.stdout()),
          "attach's table: h's moved site: %r" % a.stdout())


@test
def test_names_go_refuses_returns(ctx):
    prog = ctx.program("names_go")
    for spec, opt in (("h=main.handler:err=neg", "err="),
                      ("h=main.handler:timeout_ms=5", "timeout_ms="),
                      ("a=main.(*Cart).Add:err=zero:timeout_ms=5", "err=")):
        attach_refused(ctx, [prog, spec],
                       "bad point '%s': %s" % (spec, GO_REFUSED % opt))


@test
def test_names_list_symbols_overloads(ctx):
    prog = ctx.program("names_cart")
    r = ctx.sds(["list-symbols", "--json", prog, "shop::Cart::add"])
    eq(r.rc, 0, "list-symbols --json: %r" % r)
    doc = json.loads(r.out)
    eq(doc["language"], "C++", "language")
    eq(doc["returns"], "exits", "returns (a C++ target: a probe on each ret "
       "but where nothing can throw)")
    fns = doc["functions"]
    eq([(f["name"], f["symbol"], f["offset"], f["site"], f["returns"])
        for f in fns],
       [("shop::Cart::add(int)", ADD_INT,
         sdstest.symbol_file_offset(prog, ADD_INT), "stepped", "pair"),
        (ADD_STR_NAME, ADD_STR, sdstest.symbol_file_offset(prog, ADD_STR),
         "stepped", "pair")], "list-symbols --json functions")
    eq([f["returns_why"] for f in fns], ["cannot unwind: a leaf"] * 2,
       "list-symbols --json returns_why")
    r = ctx.sds(["list-symbols", prog, "shop::Cart::add"])
    eq(r.rc, 0, "list-symbols: %r" % r)
    rows = []
    for f in fns:
        rows.append("%-8s %-10s %-9s %-10s %s [%s]" % (
            f["site"], "~%d ns" % f["cost_ns"], "0x%x" % f["offset"],
            f["returns"], f["name"], f["symbol"]))
        # Where the entry probe sits and why (docs/PROBES.md).
        if f["site_why"]:
            rows.append("%8s site: %s" % ("", f["site_why"]))
        rows.append("%8s returns: %s (%s)" % ("", f["returns"],
                                              f["returns_why"]))
    head = "%-8s %-10s %-9s %-10s %s" % ("SITE", "COST", "OFFSET", "RETURNS",
                                         "FUNCTION [SYMBOL]")
    lines = r.out.splitlines()
    eq(lines[1:], [head] + rows, "list-symbols rows")
    check(lines[0].startswith("returns: per function: the pair where nothing "
                              "it calls can throw, else exits, a probe on "
                              "each ret, where they can all be found, else "
                              "entry-only ("),
          "list-symbols: first line %r" % lines[0])
    # A glob, and what matches nothing.
    r = ctx.sds(["list-symbols", "--json", prog, "shop::*(int)"])
    eq([f["symbol"] for f in json.loads(r.out)["functions"]], [ADD_INT],
       "glob shop::*(int)")
    r = ctx.sds(["list-symbols", "--json", prog, "nothing-like-it"])
    eq(json.loads(r.out)["functions"], [], "no match")
    r = ctx.sds(["list-symbols"])
    eq((r.rc, r.err), (1, "sds-bpf: list-symbols: missing TARGET (see "
                          "sds-bpf list-symbols --help)\n"), "no TARGET")
