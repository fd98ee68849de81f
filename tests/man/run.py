#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
Man page and completion tests (issue 17; docs/INSTALL.md):

  * every page of build/man (man/man.mk, from man/*.scd) is lint-free:
    `man --warnings -l PAGE` and `mandoc -T lint -W error PAGE` print
    nothing;
  * --help and the pages say the same: the commands `sds-bpf --help` lists
    are the page's COMMANDS subsections; for each sds-bpf command, for
    sds-admin and for each sds-copy command, the set of options --help
    prints (its usage lines and the lines that begin with an option) is
    the set the page documents (its option definitions: a line that
    begins with an option, followed by an indented body); a difference is
    shown both ways; the point options of `attach --help` are the keys
    THE POINT SPEC defines; sds-strategies(5) defines every field
    common/strategy.c validates, with its range;
  * packaging/bash-completion/sds-bpf, driven in bash (`complete -p`, the
    function called with COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT):
    exact candidates for the commands, every command's options (the
    --help sets), a TARGET's functions after `attach TARGET NAME=`
    (build/bin/sds-bpf list-symbols on a program built here), and apps
    and points from a stand-in sds-bpf that prints what `list --json`
    and `stats --json` print (no loader: an attach costs CPU).

Run from anywhere, after `make all` (which `make man-tests` does):

    python3 tests/man/run.py [-v] [NAME-SUBSTRING...]

The last line is "N passed, M failed, K skipped".  Python 3 standard library only.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import sdstest  # noqa: E402
from sdstest import BUILD, ROOT, Fail, check, eq, log  # noqa: E402

SUITE = sdstest.Suite(timeout=120)
test = SUITE.test
MAN = os.path.join(BUILD, "man")
BIN = os.path.join(BUILD, "bin")
PAGES = ("sds-bpf.8", "sds-admin.8", "sds-copy.8", "libsds.3",
         "sds-strategies.5")
COMPLETION = os.path.join(ROOT, "packaging", "bash-completion", "sds-bpf")


class Ctx:
    def __init__(self, name):
        self.tmp = tempfile.mkdtemp(prefix="sds-man-")

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def run(argv, ok=True, **kw):
    log(" ".join(argv))
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60, **kw)
    if ok and p.returncode:
        raise Fail("%s: exit %d: %s%s" % (" ".join(argv), p.returncode,
                                          p.stdout[-1000:], p.stderr[-1000:]))
    return p


# ---------------------------------------------------------------------------
# Parsing --help and the pages

OPT = r"--?[A-Za-z0-9][A-Za-z0-9-]*"


def help_options(text):
    """The options a --help text prints: every option in its usage lines
    (from "usage:" to the first line that is not a continuation of it),
    and the options a line begins with ("  -a, --app NAME  ...")."""
    opts = set()
    lines = text.splitlines()
    in_usage = False
    for line in lines:
        if re.match(r"(?i)usage:", line):
            in_usage = True
        elif in_usage and not re.match(r"\s+(\[|\(|-|sds-)", line):
            in_usage = False
        if in_usage:
            opts.update(re.findall(r"(?<![\w-])(%s)" % OPT, line))
            continue
        m = re.match(r"\s+((?:%s)(?:,\s*(?:%s))*)(?:\s|$)" % (OPT, OPT), line)
        if m:
            opts.update(re.split(r",\s*", m.group(1)))
    return opts


def help_commands(text):
    """The commands a top-level --help lists: "  NAME   what it does"
    lines after "Commands:" (sds-bpf) or after the usage (sds-copy)."""
    return set(re.findall(r"^  ([a-z][a-z-]*) +\S", text, re.M))


def page_definitions(path):
    """{(SH, SS): [the first line of each definition]} of a roff page
    that scdoc wrote: a definition is a line that begins with \\fB,
    followed by .RS (its body)."""
    with open(path) as f:
        lines = f.read().splitlines()
    out = {}
    sh = ss = None
    for i, line in enumerate(lines):
        if line.startswith(".SH "):
            sh, ss = line[4:].strip().strip('"'), None
            out.setdefault((sh, ss), [])
        elif line.startswith(".SS "):
            ss = line[4:].strip().strip('"')
            out.setdefault((sh, ss), [])
        elif line.startswith("\\fB") and i + 1 < len(lines) and \
                lines[i + 1].startswith(".RS"):
            out.setdefault((sh, ss), []).append(line.replace("\\&", ""))
    return out


def page_sections(path):
    """{(SH, SS): [the option names of each option definition]}: the
    options a definition line begins with (\\fB-a\\fR, \\fB--app\\fR ...)."""
    out = {}
    for key, defs in page_definitions(path).items():
        out[key] = []
        for line in defs:
            names = []
            pos = 0
            for m in re.finditer(r"\\fB(%s)\\fR" % OPT, line):
                if m.start() != pos:
                    break
                names.append(m.group(1))
                pos = m.end()
                if line.startswith(", ", pos):
                    pos += 2
            if names:
                out[key].append(names)
    return out


def page_options(sections, sh, ss=None):
    return {o for d in sections.get((sh, ss), []) for o in d}


def same(help_set, page_set, what):
    if help_set != page_set:
        raise Fail("%s: --help and the page differ: only in --help %s, "
                   "only in the page %s" % (what, sorted(help_set - page_set),
                                            sorted(page_set - help_set)))


def help_of(argv):
    p = run(argv)
    eq(p.stderr, "", "%s's stderr" % " ".join(argv))
    return p.stdout


# ---------------------------------------------------------------------------
# The pages

@test
def pages_built_and_lint_free(ctx):
    srcs = sorted(f[:-4] for f in os.listdir(os.path.join(ROOT, "man"))
                  if f.endswith(".scd"))
    eq(srcs, sorted(PAGES), "man/*.scd")
    for page in PAGES:
        path = os.path.join(MAN, page)
        check(os.path.isfile(path), "%s is not built" % path)
        p = run(["man", "--warnings", "-l", path], ok=False,
                env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0"))
        eq((p.returncode, p.stderr), (0, ""), "man --warnings -l %s" % page)
        check(len(p.stdout) > 1000, "%s renders to %d bytes" % (page, len(p.stdout)))
        p = run(["mandoc", "-T", "lint", "-W", "error", path], ok=False)
        eq((p.returncode, p.stdout + p.stderr), (0, ""),
           "mandoc -T lint -W error %s" % page)


@test
def sds_bpf_help_equals_page(ctx):
    sds = os.path.join(BIN, "sds-bpf")
    sec = page_sections(os.path.join(MAN, "sds-bpf.8"))
    cmds = help_commands(help_of([sds, "--help"]))
    check(len(cmds) >= 10, "sds-bpf --help lists %s" % sorted(cmds))
    page_cmds = {ss for (sh, ss) in sec if sh == "COMMANDS" and ss}
    same(cmds, page_cmds, "sds-bpf's commands")
    for c in sorted(cmds):
        opts = help_options(help_of([sds, c, "--help"]))
        check(opts, "sds-bpf %s --help: no options found" % c)
        same(opts, page_options(sec, "COMMANDS", c), "sds-bpf %s" % c)
    # The commands' options are documented only under COMMANDS; the
    # page's own OPTIONS are sds-bpf's (--help, --version), which
    # `sds-bpf --help` does not print (the test says so if it starts to).
    same(help_options(help_of([sds, "--help"])) | {"-h", "--help", "-V", "--version"},
         page_options(sec, "OPTIONS"), "sds-bpf (no command)")


@test
def sds_admin_help_equals_page(ctx):
    sec = page_sections(os.path.join(MAN, "sds-admin.8"))
    opts = help_options(help_of([os.path.join(BIN, "sds-admin"), "--help"]))
    same(opts, page_options(sec, "OPTIONS"), "sds-admin")


@test
def sds_copy_help_equals_page(ctx):
    copy = os.path.join(BIN, "sds-copy")
    sec = page_sections(os.path.join(MAN, "sds-copy.8"))
    cmds = help_commands(help_of([copy, "--help"]))
    page_cmds = {ss for (sh, ss) in sec if sh == "COMMANDS" and ss}
    same(cmds, page_cmds, "sds-copy's commands")
    for c in sorted(cmds):
        opts = help_options(help_of([copy, c, "--help"]))
        check(opts, "sds-copy %s --help: no options found" % c)
        same(opts, page_options(sec, "COMMANDS", c), "sds-copy %s" % c)


@test
def point_spec_keys_equal_help(ctx):
    """The point options of `attach --help` ("  err=neg|zero  ...") are
    the keys THE POINT SPEC of sds-bpf(8) defines."""
    text = help_of([os.path.join(BIN, "sds-bpf"), "attach", "--help"])
    block = text.split("Point options", 1)[1].split("\n\n", 1)[0]
    keys = set(re.findall(r"^  ([a-z_]+)=", block, re.M))
    check(len(keys) >= 5, "attach --help's point options: %s" % sorted(keys))
    defs = page_definitions(os.path.join(MAN, "sds-bpf.8"))[("THE POINT SPEC", None)]
    page = {m.group(1) for m in (re.match(r"\\fB([a-z_]+)=", d) for d in defs)
            if m}
    same(keys, page, "the point spec's keys")


def c_number(s):
    s = s.strip()
    m = re.fullmatch(r"(\d+)\^(\d+)", s)
    return int(m.group(1)) ** int(m.group(2)) if m else int(s)


@test
def strategy_fields_equal_validator(ctx):
    """sds-strategies(5) defines every field common/strategy.c accepts,
    with the range it validates (F(name, lo, hi), and S(...) for the
    settings that refuse a negative; LIMIT_MAX is 2^40), and "copy"."""
    with open(os.path.join(ROOT, "common", "strategy.c")) as f:
        src = f.read()
    with open(os.path.join(ROOT, "common", "strategy.h")) as f:
        hdr = f.read()
    # The bounds named by a constant: #define NAME ((int64_t)1 << N).
    consts = {n: 1 << int(b) for n, b in re.findall(
        r"#define (\w+)\s+\(\(int64_t\)1 << (\d+)\)", src + hdr)}
    check("LIMIT_MAX" in consts, "LIMIT_MAX in common/strategy.c")
    fields = {}
    for name, lo, hi in re.findall(r"^\s*[FS]\((\w+), (\w+), (\w+)\),", src, re.M):
        fields[name] = tuple(consts.get(v) or int(v) for v in (lo, hi))
    check(len(fields) >= 16, "fields of common/strategy.c: %s" % sorted(fields))
    check('"copy"' in src, "common/strategy.c has no \"copy\"")
    # The fields whose values are words: strcmp(key, "NAME") in the
    # parser, but the document's own keys ("unknown field ... (version,
    # points, ...)").
    top = re.search(r'unknown field \'%\.64s\' \(([\w, ]+)\)', src)
    check(top, "common/strategy.c: the document's keys")
    top = {k.strip() for k in top.group(1).split(",")}
    for name in re.findall(r'strcmp\(key, "(\w+)"\)', src):
        if name not in top:
            fields[name] = None
    page = {}
    defs = page_definitions(os.path.join(MAN, "sds-strategies.5"))[("DESCRIPTION", None)]
    for d in defs:
        for name, rng in re.findall(r"\\fB(\w+)\\fR \(([^)]*)\)", d):
            m = re.match(r"([\d^]+)\.\.([\d^]+)", rng)
            page[name] = (c_number(m.group(1)), c_number(m.group(2))) if m else None
    same(set(fields), set(page), "the strategy fields")
    for name in sorted(fields):
        eq(page[name], fields[name], "the range of %s in the page" % name)


# ---------------------------------------------------------------------------
# The completion

DRIVER = r'''
source "$1" || exit 1
complete -p sds-bpf || exit 1
line=$2
COMP_LINE=$line
COMP_POINT=${#line}
# The words as bash splits them: at blanks, and at the '=' and ':' of
# COMP_WORDBREAKS (each a word of its own).
read -ra COMP_WORDS <<< "$(sed -e 's/\(::*\|=\)/ \1 /g' <<< "$line")"
[[ $line == *' ' || -z $line ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_sds_bpf sds-bpf "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
'''


def complete(ctx, line, path=None):
    """The candidates of the completion for @line (cursor at its end)."""
    env = dict(os.environ, PATH=(path or BIN) + ":" + os.environ["PATH"])
    p = run(["bash", "--norc", "--noprofile", "-c", DRIVER, "drive",
             COMPLETION, line], env=env)
    first, rest = (p.stdout.split("\n", 1) + [""])[:2]
    check(first.startswith("complete -F _sds_bpf sds-bpf"),
          "complete -p sds-bpf: %r" % first)
    return sorted(x for x in rest.split("\n") if x)


@test
def completion_commands_and_options(ctx):
    sds = os.path.join(BIN, "sds-bpf")
    cmds = sorted(help_commands(help_of([sds, "--help"])))
    eq(complete(ctx, "sds-bpf "), sorted(cmds + ["--help", "--version"]),
       "sds-bpf <TAB>")
    eq(complete(ctx, "sds-bpf li"), ["list", "list-symbols"], "sds-bpf li<TAB>")
    for c in cmds:
        opts = help_options(help_of([sds, c, "--help"]))
        got = complete(ctx, "sds-bpf %s -" % c)
        if set(got) != opts:
            raise Fail("sds-bpf %s -<TAB>: only in --help %s, only in the "
                       "completion %s" % (c, sorted(opts - set(got)),
                                          sorted(set(got) - opts)))
    eq(complete(ctx, "sds-bpf attach --so"), ["--socket-group", "--socket-mode"],
       "attach --so<TAB>")
    # An option's value is not an option: nothing after --tick-ms.
    eq(complete(ctx, "sds-bpf attach --tick-ms "), [], "attach --tick-ms <TAB>")


SRC = r'''
int handle_order(int x) { return x - 1; }
int handle_refund(int x) { return x + 1; }
static int helper(int x) { return x * 2; }
int main(int argc, char **argv) { return handle_order(argc) + handle_refund(argc) + helper(argc) - 3; }
'''


CXX = r'''
namespace shop {
struct Cart { int add(int x); int add(long x); int total() const; };
int Cart::add(int x) { return x; }
int Cart::add(long x) { return (int)x; }
int Cart::total() const { return 1; }
int handle(const char *s) { return s != 0; }
}
int main() { shop::Cart c; return c.add(1) + c.add(2L) + c.total() + shop::handle("x") - 5; }
'''


@test
def completion_attach_symbols(ctx):
    """attach TARGET NAME=<TAB>: TARGET's functions (sds-bpf list-symbols
    --json), what follows the '=' as bash replaces it."""
    src = os.path.join(ctx.tmp, "svc.c")
    with open(src, "w") as f:
        f.write(SRC)
    exe = os.path.join(ctx.tmp, "svc")
    run(["gcc", "-O0", "-o", exe, src])
    eq(complete(ctx, "sds-bpf attach %s o=handle_" % exe),
       ["handle_order", "handle_refund"], "attach TARGET o=handle_<TAB>")
    eq(complete(ctx, "sds-bpf attach -g shop %s o=hel" % exe), ["helper"],
       "attach -g shop TARGET o=hel<TAB>")
    # After the options began: nothing.
    eq(complete(ctx, "sds-bpf attach %s o=handle_order:err=" % exe), [],
       "attach TARGET o=handle_order:err=<TAB>")
    # C++: a name without its signature where it names one function,
    # the symbol where it names overloads (or could not stay one word).
    cxx = os.path.join(ctx.tmp, "shop.cpp")
    with open(cxx, "w") as f:
        f.write(CXX)
    shop = os.path.join(ctx.tmp, "shop")
    run(["g++", "-O0", "-o", shop, cxx])
    eq(complete(ctx, "sds-bpf attach %s a=shop::" % shop),
       ["Cart::total", "handle"], "attach SHOP a=shop::<TAB> (bash replaces "
       "what follows the last ':')")
    eq(complete(ctx, "sds-bpf attach %s a=_ZN4shop4Cart3add" % shop),
       ["_ZN4shop4Cart3addEi", "_ZN4shop4Cart3addEl"],
       "attach SHOP a=_ZN4shop4Cart3add<TAB> (the overloads)")
    # TARGET itself: files.
    eq(complete(ctx, "sds-bpf attach %s/sv" % ctx.tmp),
       [exe, src], "attach DIR/sv<TAB>")
    eq(complete(ctx, "sds-bpf list-symbols %s/sh" % ctx.tmp),
       [shop, cxx], "list-symbols DIR/sh<TAB>")


# What `sds-bpf list --json` and `stats --json` print (loader/cli/query.c,
# loader/cli/stats.c, loader/serve/serve.c), for a stand-in: two apps, one of them with points.
LIST_JSON = ('[{"group":"shop","app":"frontend","pid":101,"points":["order","refund"],'
             '"socket":"/run/sds/shop.frontend.sock"},'
             '{"group":"default","app":"batch","pid":102,"points":["job"],'
             '"socket":"/run/sds/default.batch.sock"}]')
STATS_JSON = ('{"app":"frontend","group":"shop","points":[{"name":"order","kind":"guard",'
              '"site":"nop5","total":{"visits":1,"exceptions":0,"timeouts":0,'
              '"downgrades":0},"state":{"downgraded":false,"reason":"","rate":0}},'
              '{"name":"refund","kind":"function","site":"emulated","total":{}}]}')
STUB = r'''#!/bin/sh
echo "$*" >> "%(log)s"
case "$1 $*" in
list\ *--group\ shop*) echo '%(shop)s' ;;
list\ *) echo '%(list)s' ;;
stats\ *--app\ frontend*) echo '%(stats)s' ;;
*) exit 1 ;;
esac
'''


@test
def completion_apps_and_points(ctx):
    stub_dir = os.path.join(ctx.tmp, "bin")
    os.mkdir(stub_dir)
    logf = os.path.join(ctx.tmp, "calls")
    shop = '[' + LIST_JSON[1:].split('},{')[0] + '}]'
    with open(os.path.join(stub_dir, "sds-bpf"), "w") as f:
        f.write(STUB % {"log": logf, "list": LIST_JSON, "shop": shop,
                        "stats": STATS_JSON})
    os.chmod(os.path.join(stub_dir, "sds-bpf"), 0o755)
    eq(complete(ctx, "sds-bpf stats --app ", stub_dir), ["batch", "frontend"],
       "stats --app <TAB>")
    eq(complete(ctx, "sds-bpf top -g shop --app ", stub_dir), ["frontend"],
       "top -g shop --app <TAB>")
    eq(complete(ctx, "sds-bpf stats --group ", stub_dir), ["default", "shop"],
       "stats --group <TAB>")
    eq(complete(ctx, "sds-bpf hist --app frontend ", stub_dir),
       ["order", "refund"], "hist --app frontend <TAB>")
    eq(complete(ctx, "sds-bpf drill --app frontend r", stub_dir), ["refund"],
       "drill --app frontend r<TAB>")
    eq(complete(ctx, "sds-bpf hist --app frontend order ", stub_dir), [],
       "hist --app frontend order <TAB> (one POINT)")
    eq(complete(ctx, "sds-bpf record --app frontend order ", stub_dir),
       ["order", "refund"], "record --app frontend order <TAB> (POINT...)")
    with open(logf) as f:
        calls = f.read().splitlines()
    eq(calls, ["list --json", "list --json --group shop", "list --json",
               "stats --json --app frontend", "stats --json --app frontend",
               "stats --json --app frontend"],
       "the stand-in's command lines")


if __name__ == "__main__":
    sys.exit(sdstest.run_suite(
        __file__, SUITE, Ctx, root=False, tools=("man", "mandoc", "bash", "gcc"),
        needs=[os.path.join(BUILD, f) for f in
               ["bin/sds-bpf", "bin/sds-admin", "bin/sds-copy"]
               + ["man/" + p for p in PAGES]]))
