# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The tree suite's checks, each a function that returns the list of what
is wrong (one line each, empty when nothing is): the exported names
against docs/NAMING.md, the citations, the folders' sizes (the
programs' sources and tools/), and docs/ARCHITECTURE.md against the
source files.  Every check takes the repository's root (and the build
directory), so that the suite can run it on a planted copy too.  Python 3 standard library only.
"""

import glob
import os
import re
import subprocess

# The folders whose files are the five programs' and their shared code
# (web/ is the dashboard's static files, not C).
SOURCE_DIRS = ("bpf", "common", "loader", "libsds", "admin", "copy")
ARCH_DIRS = ("loader", "libsds", "admin", "copy", "common", "bpf")
FOLDER_MAX = 25
# tools/ (the benchmarks, the demo, the installer's helpers) is scripts as
# much as C: every file of each of its folders counts, except the
# benchmarks' recorded runs (RECORDED_DIRS: data, one folder per run,
# never reorganized).
TOOL_DIRS = ("tools",)
RECORDED_DIRS = ("tools/bench/results/",)
SRC_EXT = (".c", ".h")
# tests/ is held to the same size: a folder of it counts when it holds
# code of any kind (a suite's runner and modules, its C, its .mk), not
# when it is only data (tests/admin/fuzz/corpus/'s heartbeats).
TEST_DIRS = ("tests",)
CODE_EXT = SRC_EXT + (".cc", ".cpp", ".S", ".py", ".sh", ".mk", ".go", ".rs")

# Each product: its objects' folder (under the build directory) and the
# globs, under it, of its objects; an object's path under the folder,
# with .c for .o, is its source's.  The loader links three of libsds's
# sources (LOADER_USRC: obj/libsds/*.o).
PRODUCTS = (
    ("sds-bpf", "obj", ("loader/**/*.o", "common/*.o", "libsds/*.o")),
    ("sds-admin", "obj/admin", ("**/*.o",)),
    ("sds-copy", "obj/copy-prog", ("**/*.o",)),
)
LIBSDS_A = "lib/libsds.a"

# nm's letters for a defined global: T text, D/B/R data, G/S small data,
# V/W weak, u unique, i indirect.
GLOBAL_DEFINED = set("TDBRGSVWui")


def git_files(root):
    r = subprocess.run(["git", "-C", root, "ls-files", "-z"],
                       capture_output=True, timeout=60)
    if r.returncode:
        raise RuntimeError("git ls-files: %s" % r.stderr.decode().strip())
    return [p for p in r.stdout.decode().split("\0") if p]


def nm_globals(path):
    """[(letter, name)] of @path's defined global symbols; for an archive,
    {member: [...]}."""
    r = subprocess.run(["nm", "--defined-only", "-g", path],
                       capture_output=True, text=True, timeout=60)
    if r.returncode:
        raise RuntimeError("nm %s: %s" % (path, r.stderr.strip()))
    members, cur = {}, None
    for line in r.stdout.splitlines():
        if line.endswith(":") and " " not in line:
            cur = line[:-1]
            members[cur] = []
            continue
        f = line.split()
        if len(f) == 3 and f[1] in GLOBAL_DEFINED:
            members.setdefault(cur, []).append((f[1], f[2]))
    return members


def includes(root, src):
    """The quoted includes of @src, as written."""
    try:
        with open(os.path.join(root, src), errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    return re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M)


# The build's include paths (-I), after the including file's folder.
INCLUDE_DIRS = ("loader", "common", "bpf", "admin", "libsds", "copy")


def resolve_include(root, folder, inc):
    """The tree path of "@inc" included from @folder, or None (a
    generated or system header)."""
    for d in (folder,) + INCLUDE_DIRS:
        p = os.path.normpath(os.path.join(d, inc))
        if os.path.isfile(os.path.join(root, p)):
            return p
    return None


def folder_header(root, folder):
    """The header of @folder that more than half of the folder's .c files
    include (copy/serve.h, admin/api/api.h), or None: the folder's files
    that include it are one module, named after the folder."""
    try:
        cs = [f for f in os.listdir(os.path.join(root, folder)) if f.endswith(".c")]
    except OSError:
        return None
    seen = {}
    for c in cs:
        for inc in set(includes(root, os.path.join(folder, c))):
            h = os.path.normpath(os.path.join(folder, os.path.basename(inc)))
            if h.endswith(".h") and os.path.exists(os.path.join(root, h)):
                seen[h] = seen.get(h, 0) + 1
    best = [h for h, n in seen.items() if 2 * n > len(cs)]
    return best[0] if len(best) == 1 else None


def modules(root, src):
    """The module names @src may prefix its exports with (docs/NAMING.md
    "What a module is"): its stem; the stem of a header in its folder
    that it includes and whose stem begins its own (probes_pin.c and
    probes.h); its folder's name when it includes the folder's header
    (folder_header(): copy/serve.h, admin/api/api.h)."""
    folder, base = os.path.split(src)
    stem = base.split(".")[0]
    mods = {stem}
    fh = folder_header(root, folder)
    for inc in includes(root, src):
        h = resolve_include(root, folder, inc)
        if not h or not h.endswith(".h"):
            continue
        hstem = os.path.basename(h)[:-2]
        # A family shares its header wherever it is (decide/budget.h for
        # tick/budget_run.c).
        if stem.startswith(hstem + "_"):
            mods.add(hstem)
        if os.path.dirname(h) == folder and \
                (h == fh or hstem == os.path.basename(folder)):
            mods.add(os.path.basename(folder))
        # The folder's shared header names the module too (store/query/sq.h: sq_).
        if h == fh:
            mods.add(hstem)
    return mods


def own_structs(root, src):
    """The structs @src or a header of its folder that it includes
    defines: their methods (`elf_file__open`) are the file's to export."""
    folder = os.path.dirname(src)
    paths = [src] + [os.path.normpath(os.path.join(folder, os.path.basename(i)))
                     for i in includes(root, src)]
    found = set()
    for p in paths:
        try:
            with open(os.path.join(root, p), errors="replace") as f:
                found.update(re.findall(r"^struct\s+(\w+)\s*\{", f.read(), re.M))
        except OSError:
            pass
    return found


def name_ok(name, mods, src, structs=()):
    if name == "main":
        return True
    if "__" in name and name.split("__", 1)[0] in structs:
        return True
    # Commands: do_<verb> (bpftool's way), in loader/cli/ only.
    if src.startswith("loader/cli/") and name.startswith("do_"):
        return True
    return any(name == m or name.startswith(m + "_") for m in mods)


def libsds_members(build):
    """The object names libsds.a holds: their sources are in libsds's
    namespace (sds_) wherever else they are linked too."""
    a = os.path.join(build, LIBSDS_A)
    if not os.path.exists(a):
        return None
    return nm_globals(a)


def check_names(root, build):
    bad = []
    lib = libsds_members(build)
    if lib is None:
        return ["%s: missing (run make all)" % os.path.join(build, LIBSDS_A)]
    # libsds.a: only sds_*, every kind of global (it links into other
    # people's programs: any other name can collide with theirs).
    for member, syms in sorted(lib.items()):
        for letter, name in syms:
            if not name.startswith("sds_"):
                bad.append("libsds.a(%s): %s (%s): libsds exports only sds_*"
                           % (member, name, letter))
    in_lib = set(lib)
    for product, sub, globs in PRODUCTS:
        top = os.path.join(build, sub)
        objs = sorted(set(o for g in globs for o in
                          glob.glob(os.path.join(top, g), recursive=True)))
        if not objs:
            bad.append("%s: no objects under %s (run make all)" % (product, top))
            continue
        for obj in objs:
            rel = os.path.relpath(obj, top)[:-2] + ".c"
            if not os.path.exists(os.path.join(root, rel)):
                continue    # a stale object of a removed source
            mods = modules(root, rel)
            structs = own_structs(root, rel)
            sds_ns = os.path.basename(obj) in in_lib and \
                rel.startswith(("libsds/", "common/"))
            for letter, name in nm_globals(obj).get(None, []):
                if letter not in "TW":
                    continue
                if sds_ns:
                    if not name.startswith("sds_"):
                        bad.append("%s: %s: %s is linked into libsds: "
                                   "want sds_*" % (product, rel, name))
                    continue
                if not name_ok(name, mods, rel, structs):
                    bad.append("%s: %s: %s: want the prefix %s" % (
                        product, rel, name,
                        " or ".join(m + "_" for m in sorted(mods))))
    return sorted(set(bad))


# What a citation outside the tree looks like: a path up into a sibling
# folder, or an absolute path into the workspace.  Built from parts so
# that this file does not cite them itself.
OUTSIDE = re.compile(r"\.\./" + "shared" + r"\b|(?<![\w.])/" + "work" + r"/")
DESIGN_CITE = re.compile(r"((?:[\w./-]*/)?DESIGN\.md)\s*§\s*(\d+)")
DESIGN = "docs/DESIGN.md"


def design_sections(root):
    try:
        with open(os.path.join(root, DESIGN)) as f:
            text = f.read()
    except OSError:
        return set()
    return set(re.findall(r"^#+\s*(\d+)\.", text, re.M))


def text_of(root, path):
    try:
        with open(os.path.join(root, path), "rb") as f:
            data = f.read(2 << 20)
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


def recorded(path):
    """A benchmark's raw output (tools/bench/results/<run>/<x>.raw/):
    what a program printed, paths of the machine it ran on included, not
    a citation."""
    return path.startswith("tools/bench/results/") and ".raw/" in path


def check_citations(root, files=None):
    bad = []
    sections = design_sections(root)
    if not sections:
        bad.append("%s: no numbered heading (## N. ...)" % DESIGN)
    for path in files if files is not None else git_files(root):
        if recorded(path):
            continue
        text = text_of(root, path)
        if text is None:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            m = OUTSIDE.search(line)
            if m:
                bad.append("%s:%d: cites %r, outside the repository"
                           % (path, n, m.group(0)))
            for m in DESIGN_CITE.finditer(line):
                cited, sec = m.group(1), m.group(2)
                target = os.path.normpath(os.path.join(os.path.dirname(path), cited)) \
                    if "/" in cited else None
                if cited != "DESIGN.md" and target != DESIGN and cited != DESIGN:
                    bad.append("%s:%d: cites %s §%s: the design is %s"
                               % (path, n, cited, sec, DESIGN))
                elif sec not in sections:
                    bad.append("%s:%d: cites DESIGN.md §%s: %s has no section %s"
                               % (path, n, sec, DESIGN, sec))
    return bad


def is_code(p):
    base = os.path.basename(p)
    return p.endswith(CODE_EXT) or base == "Makefile" or base.startswith("Makefile.")


def source_folders(files):
    """{folder: number of files in it} for the folders under SOURCE_DIRS
    that hold a C source or header (admin/web/ is not C), and those under
    TEST_DIRS that hold code of any kind (is_code())."""
    count, has_src = {}, set()
    for p in files:
        if p.startswith(tuple(d + "/" for d in SOURCE_DIRS)):
            src = p.endswith(SRC_EXT)
        elif p.startswith(tuple(d + "/" for d in TEST_DIRS)):
            src = is_code(p)
        else:
            continue
        d = os.path.dirname(p)
        count[d] = count.get(d, 0) + 1
        if src:
            has_src.add(d)
    return {d: n for d, n in count.items() if d in has_src}


def tool_folders(files):
    """{folder: number of files in it} for every folder under TOOL_DIRS,
    whatever its files, the recorded runs under RECORDED_DIRS aside."""
    count = {}
    for p in files:
        if not p.startswith(tuple(d + "/" for d in TOOL_DIRS)) or \
                p.startswith(RECORDED_DIRS):
            continue
        d = os.path.dirname(p)
        count[d] = count.get(d, 0) + 1
    return count


def check_folders(root, files=None):
    files = files if files is not None else git_files(root)
    sizes = source_folders(files)
    sizes.update(tool_folders(files))
    return ["%s/: %d files, more than %d" % (d, n, FOLDER_MAX)
            for d, n in sorted(sizes.items())
            if n > FOLDER_MAX]


ARCH = "docs/ARCHITECTURE.md"
# A file named in ARCHITECTURE.md: a word with a C or BPF extension,
# optionally with folders (`report/uplink.c`, `loader/report/uplink.c`,
# `sds.bpf.c`).  [ch] pairs (`query.[ch]`) name both.
ARCH_NAME = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+(?:\.bpf)?)\.(\[ch\]|c|h)\b")


def arch_sources(files):
    return sorted(p for p in files
                  if p.startswith(tuple(d + "/" for d in ARCH_DIRS))
                  and not p.startswith("admin/web/")
                  and p.endswith(SRC_EXT))


def arch_names(root):
    """The file names ARCHITECTURE.md writes, as written."""
    try:
        with open(os.path.join(root, ARCH)) as f:
            text = f.read()
    except OSError:
        return None
    names = set()
    for m in ARCH_NAME.finditer(text):
        stem, ext = m.group(1), m.group(2)
        for e in (("c", "h") if ext == "[ch]" else (ext,)):
            names.add("%s.%s" % (stem, e))
    return names


def resolve(name, sources):
    """The sources @name means: itself written in full
    (`loader/report/uplink.c`), or relative to its program's folder
    (`report/uplink.c`, `api/org.c`, `sds.c` in libsds/)."""
    if name in sources:
        return [name]
    return [d + "/" + name for d in ARCH_DIRS if d + "/" + name in sources]


def check_architecture(root, files=None):
    files = files if files is not None else git_files(root)
    names = arch_names(root)
    if names is None:
        return ["%s: missing" % ARCH]
    sources = arch_sources(files)
    srcset = set(sources)
    allfiles = set(files)
    bad, named = [], set()
    for n in sorted(names):
        hits = resolve(n, srcset)
        if len(hits) == 1:
            named.update(hits)
        elif hits:
            bad.append("%s names %s: which one? %s (write the full path)"
                       % (ARCH, n, ", ".join(hits)))
        elif n not in allfiles:
            # Not a source of the documented folders, nor any file of the
            # tree written in full (tests/..., tools/...).
            bad.append("%s names %s: no such file (write it relative to "
                       "its program's folder, e.g. report/uplink.c, or in full)"
                       % (ARCH, n))
    for s in sources:
        if s not in named:
            bad.append("%s does not name %s" % (ARCH, s))
    return bad
