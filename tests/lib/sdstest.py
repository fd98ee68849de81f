# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The harness shared by the Python suites (tests/integration, tests/guard,
tests/e2e, tests/drill, tests/admin): paths from BUILD / SDS_ADMIN, the
failure type and checks, verbose logging, process groups and their
cleanup, temp dirs, waiting, free ports, the kernel side (our BPF
programs and bpffs pins), the running `sds-bpf attach`, sds-admin over
HTTP, and the runner that prints "N passed, M failed, K skipped".

A suite puts this directory on sys.path:

    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
    import sdstest

Python 3 standard library only.
"""

import glob
import http.client
import importlib
import json
import os
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
import traceback

# ---------------------------------------------------------------------------
# Paths

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
_build = os.environ.get("BUILD", "build")
BUILD = _build if os.path.isabs(_build) else os.path.join(ROOT, _build)
SDS = os.path.join(BUILD, "bin", "sds-bpf")


def admin_path(env=True):
    """sds-admin: $SDS_ADMIN when @env and set, else the one of BUILD;
    absolute (tests run it from their own dirs; the lanes' SDS_ADMIN is
    relative to the tree)."""
    return os.path.abspath((env and os.environ.get("SDS_ADMIN"))
                           or os.path.join(BUILD, "bin", "sds-admin"))


# The heartbeat offset of every loader the suites start (sds-bpf(8),
# SDS_HB_OFFSET_MS, test-only): 2 s after each period ends, on every
# machine, as the lane runner sets it; the host name's offset would be
# 2-9 s.  Subprocesses inherit it through os.environ and TestDir.env.
os.environ.setdefault("SDS_HB_OFFSET_MS", "2000")

NOBODY = 65534
PROG_PREFIX = "sds_"          # sds_enter, sds_leave, sds_thread_exit


LIBSDS_SO0 = os.path.join(BUILD, "lib", "libsds.so.0")


# ---------------------------------------------------------------------------
# Socket names (common/names.h: the loader's and libsds's rule)

SUN_PATH_MAX = 107            # sizeof(sun_path) - 1
SOCK_HASH_LEN = 16            # hex digits of FNV-1a 64 of "group\0app"


def sock_hash(group, app):
    h = 0xcbf29ce484222325
    for b in group.encode() + b"\0" + app.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def sock_stem(run_dir, group, app):
    """<group>.<app> when the path fits sun_path, else the hashed stem
    <group-prefix>.<app-prefix>.<hash>; None when nothing fits."""
    dirlen = len(run_dir.rstrip("/"))
    room = SUN_PATH_MAX - dirlen - 1 - len(".sock")
    if room <= 0:
        return None
    if len(group) + 1 + len(app) <= room:
        return "%s.%s" % (group, app)
    if room < 4 + SOCK_HASH_LEN:
        return None
    budget = room - 2 - SOCK_HASH_LEN
    gp = budget // 2
    if budget - gp > len(app):
        gp = budget - len(app)
    gp = min(gp, len(group))
    ap = min(budget - gp, len(app))
    return "%s.%s.%016x" % (group[:gp], app[:ap], sock_hash(group, app))


def sock_path(run_dir, group, app):
    """The socket of @group/@app in @run_dir (None: no name fits)."""
    stem = sock_stem(run_dir, group, app)
    if stem is None:
        return None
    return "%s/%s.sock" % (run_dir.rstrip("/") or "", stem)


# ---------------------------------------------------------------------------
# Staging: what a process that runs as nobody needs, where it can reach it

def stage(src, dst_dir, as_name=None):
    """A copy of @src in @dst_dir (its own inode, mode 0755), with a copy
    of build/lib/libsds.so.0 beside it if @src needs that library (its
    rpath begins with $ORIGIN: tests/targets/targets.mk).  With @dst_dir
    reachable by nobody, nobody runs it wherever the checkout is (a clone
    under /root: the build is not reachable).  Returns the copy's path."""
    dst = os.path.join(dst_dir, as_name or os.path.basename(src))
    shutil.copy2(src, dst)
    os.chmod(dst, 0o755)
    with open(src, "rb") as f:
        needs = b"libsds.so.0" in f.read()
    lib = os.path.join(dst_dir, "libsds.so.0")
    if needs and not os.path.exists(lib):
        shutil.copy2(LIBSDS_SO0, lib)
        os.chmod(lib, 0o755)
    return dst


# ---------------------------------------------------------------------------
# Failures, checks, logging

class Fail(AssertionError):
    pass


class Timeout(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def eq(got, want, what):
    if got != want:
        raise Fail("%s: got %r, want %r" % (what, got, want))


_log = {"verbose": False, "stamp": False}


def set_verbose(on):
    _log["verbose"] = bool(on)


def verbose():
    return _log["verbose"]


def log_stamps(on=True):
    """Prefix verbose lines with the wall clock's seconds mod 100."""
    _log["stamp"] = bool(on)


def log(msg):
    if _log["verbose"]:
        if _log["stamp"]:
            sys.stdout.write("    [%.1f] %s\n" % (time.time() % 100, msg))
        else:
            sys.stdout.write("    " + msg + "\n")
        sys.stdout.flush()


# ---------------------------------------------------------------------------
# Processes, files, sockets, waiting

def kill_group(p, sig=signal.SIGKILL):
    """Signal the process group of @p (started with start_new_session)."""
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def reap(p, always=False, timeout=5):
    """Kill @p's process group (when @p still runs, or @always) and wait
    for @p a little."""
    if always or p.poll() is None:
        kill_group(p)
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        pass


def close_streams(p):
    for s in (p.stdin, p.stdout, p.stderr):
        if s:
            try:
                s.close()
            except OSError:
                pass


def spawn(argv, **kw):
    """A process in its own session, so its whole group can be killed."""
    return subprocess.Popen(argv, start_new_session=True, **kw)


def is_socket(path):
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def inode_of(path):
    try:
        return os.lstat(path).st_ino
    except FileNotFoundError:
        return None


def free_port():
    """A port that was free a moment ago: closed before anyone binds it,
    so another run's server (parallel lanes) may take it first.  Start a
    server with serve_on_free_port(); for a port where nothing listens,
    hold dead_port()'s socket."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def dead_port():
    """(sock, port): a port where nothing listens, for as long as @sock
    lives: bound by it (no SO_REUSEADDR) and never listening, so a connect
    is refused and no other process can bind the port meanwhile."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    return s, s.getsockname()[1]


def _tcp_sockets(port, listening):
    """Inodes of the TCP sockets (IPv4, IPv6) of this network namespace
    bound to local @port: those in LISTEN when @listening, else all."""
    inodes = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            w = line.split()
            if (len(w) > 9 and int(w[1].rsplit(":", 1)[1], 16) == port
                    and (w[3] == "0A" or not listening)):
                inodes.add(int(w[9]))
    return inodes


def _group_pids(pgid):
    """The pids of process group @pgid (a process spawn()ed in its own
    session, and what it started)."""
    pids = set()
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % pid) as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[2]) == pgid:
            pids.add(int(pid))
    return pids


def pid_listens(pid, port, want=None):
    """True when process @pid holds the socket listening on @port
    (/proc/net/tcp's inode of it among @pid's fds)."""
    if want is None:
        want = _tcp_sockets(port, True)
    if not want:
        return False
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return False
    for fd in fds:
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:[") and int(link[8:-1]) in want:
            return True
    return False


def listens(p, port):
    """True when @p (a Popen), or a process of the group it leads, holds
    the socket listening on @port: the server there is ours."""
    want = _tcp_sockets(port, True)
    return any(pid_listens(pid, port, want)
               for pid in {p.pid} | _group_pids(p.pid))


def serve_on_free_port(start, what, tries=8, timeout=10.0):
    """(port, server): a server of ours listening on a port of the
    kernel's choice.  @start(port) starts it and returns its Popen, or an
    object whose .p is one; it is up once that process (or its group)
    holds the listening socket of the port.  A free_port() can be taken
    by another run's process before the server binds it: when the server
    exits first (or @start raises Fail) and something else is bound to
    the port, the start is tried again on another port, @tries times at
    most.  Any other exit is a Fail saying so."""
    for _ in range(tries):
        port = free_port()
        try:
            srv = start(port)
        except Fail:
            if _tcp_sockets(port, False):
                log("%s: port %d taken, another one" % (what, port))
                continue
            raise
        p = getattr(srv, "p", srv)
        deadline = time.monotonic() + timeout
        while not listens(p, port):
            if p.poll() is not None:
                break
            if time.monotonic() > deadline:
                raise Fail("%s: not listening on port %d after %.0f s"
                           % (what, port, timeout))
            time.sleep(0.05)
        else:
            return port, srv
        if not _tcp_sockets(port, False):
            raise Fail("%s exited with %s before it listened on port %d"
                       % (what, p.returncode, port))
        log("%s: port %d taken, another one" % (what, port))
    raise Fail("%s: %d ports in a row taken before it bound one"
               % (what, tries))


def wait_until(fn, deadline, what, interval=0.2):
    """Poll @fn until it returns something true or the wall clock passes
    @deadline (time.time()); return the last value.  @what(last) or @what
    describes the failure."""
    last = None
    while True:
        last = fn()
        if last:
            return last
        if time.time() > deadline:
            raise Fail("%s" % (what(last) if callable(what) else what))
        time.sleep(interval)


def wait_admin_drill(ctx, want_id, point="fetch"):
    """Wait until the loader of @ctx (a Ctx whose point() reads its stats)
    runs admin drill @want_id at @point (None: none runs): the drill."""
    def ok():
        d = ctx.point(point)["drill"]
        if want_id is None:
            return d is None
        return d if d and d["source"] == want_id else None
    return wait_until(ok, time.time() + 30,
                      "the loader never took drill %r" % want_id, 0.5)


def wait_ticks(stats, n, timeout=30.0):
    """Until the loader has done @n ticks more than when called (`stats
    --json`'s tick_count, counted after each tick's work); @stats()
    returns its stats document.  The last document."""
    t0 = stats()["tick_count"]
    return wait_until(
        lambda: (lambda st: st if st["tick_count"] >= t0 + n else None)(
            stats()), time.time() + timeout,
        "the loader did not tick %d times within %.0f s (tick_count was %d)"
        % (n, timeout, t0), 0.02)


def heartbeat_after(admin, t):
    """When the loader whose `stats --json` "admin" object is @admin sends
    the first period it sends at or after wall time @t: period P goes at
    P + 10 s + admin.offset_ms, from admin.first_period on (the period
    open when it started)."""
    off = admin["offset_ms"] / 1000.0
    p = admin["first_period"]
    while p + 10 + off < t:
        p += 10
    return p + 10 + off


def period_sent_at(admin, t):
    """When that loader sends the period holding wall time @t (or its
    first period, if @t is before it)."""
    return heartbeat_after(admin, max(int(t) // 10 * 10, admin["first_period"])
                           + 10 + admin["offset_ms"] / 1000.0)


def write_token(path, token, fmt="%s\n", mode=0o600):
    """A token file as the programs accept it: the caller's, 0600."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w") as f:
        f.write(fmt % token)
    os.chmod(path, mode)
    return path


def json_out(r, what):
    """The JSON document a command printed (@r from run_group), or Fail
    naming the command (@what) if it failed or printed something else."""
    check(r.rc == 0, "%s: %r" % (what, r))
    try:
        return json.loads(r.out)
    except ValueError as e:
        raise Fail("%s printed no JSON (%s): %r" % (what, e, r.out))


def get_point(st, name, required=True):
    """The point @name of a stats document (`sds-bpf stats --json`);
    None when it has none and not @required."""
    pts = st.get("points")
    check(isinstance(pts, list), "stats: no points list: %r" % st)
    for p in pts:
        if p.get("name") == name:
            return p
    if not required:
        return None
    raise Fail("stats: no point %r in %r" % (name, [p.get("name")
                                                   for p in pts]))


class LineReader:
    """Mixin for a driven program: .p a Popen with stdout a pipe, .buf
    the bytes read but not yet returned (b"" to start), .name what to
    call it in failures."""

    CHUNK = 4096

    @property
    def pid(self):
        return self.p.pid

    def eof_message(self):
        """The failure when its stdout ends."""
        return "%s (pid %d) exited (status %s)" % (self.name, self.p.pid,
                                                   self.p.poll())

    def readline(self, timeout):
        deadline = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Fail("%s (pid %d): no output within %.0f s"
                           % (self.name, self.p.pid, timeout))
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, self.CHUNK)
                if not chunk:
                    raise Fail(self.eof_message())
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()


class Result:
    def __init__(self, rc, out, err, pid):
        self.rc, self.out, self.err, self.pid = rc, out, err, pid

    def __repr__(self):
        return "exit %s, stdout %r, stderr %r" % (self.rc, self.out, self.err)


def run_group(cmd, env, cwd, track, timeout=30, fail_on_timeout=True):
    """Run @cmd in its own session (appended to @track so that the test's
    cleanup kills it whatever happens), wait @timeout s: a Result.  On
    timeout its group is killed and Fail raised, or a Result with rc None
    returned (not @fail_on_timeout)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                         env=env, cwd=cwd, start_new_session=True)
    track.append(p)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(p)
        out, err = p.communicate()
        if fail_on_timeout:
            raise Fail("%s timed out after %d s; stdout %r stderr %r"
                       % (" ".join(cmd), timeout, out, err))
        return Result(None, out.decode(errors="replace"),
                      err.decode(errors="replace"), p.pid)
    return Result(p.returncode, out.decode(errors="replace"),
                  err.decode(errors="replace"), p.pid)


def ctl_request(sock, req, timeout=10):
    """One request line on the loader's control socket @sock, as a client
    that skips the command's own checks: the parsed reply."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    data = b""
    try:
        s.settimeout(timeout)
        s.connect(sock)
        s.sendall((req + "\n").encode())
        while not data.endswith(b"\n"):
            d = s.recv(65536)
            if not d:
                break
            data += d
    finally:
        s.close()
    return json.loads(data)


def start_line_target(ctx, path, what):
    """A test target at @path driven line by line on its stdin and stdout,
    in its own session in @ctx's dir (ended by @ctx's cleanup), past its
    first line "ready": the Popen.  @what names it in a failure."""
    p = subprocess.Popen([path], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, cwd=ctx.tmp,
                         start_new_session=True)
    ctx.others.append(p)
    eq(p.stdout.readline().strip(), b"ready", "%s's first line" % what)
    return p


class TestDir:
    """One test's 0755 temp dir with run/ and state/ in it, and an
    environment pointing SDS_RUN_DIR and SDS_STATE_DIR there, and
    SDS_PIN_ROOT at a pin root of its own (removed with the dir)."""

    def __init__(self, name, prefix):
        self.name = name
        self.tmp = tempfile.mkdtemp(prefix=prefix)
        os.chmod(self.tmp, 0o755)
        self.run_dir = os.path.join(self.tmp, "run")
        self.state_dir = os.path.join(self.tmp, "state")
        os.mkdir(self.run_dir, 0o755)
        os.mkdir(self.state_dir, 0o755)
        # docs/DESIGN.md §3's probe costs, not this boot's (loader/kernel/calib.h):
        # the same figures on every machine, and no measurement in each
        # test's fresh run dir; t_budget and t_calib ask for measured ones.
        self.pin_root = pin_root_for(self.tmp)
        _OWN_PIN_ROOTS.add(self.pin_root)
        self.env = dict(os.environ, SDS_RUN_DIR=self.run_dir,
                        SDS_STATE_DIR=self.state_dir,
                        SDS_PROBE_COSTS="design",
                        SDS_PIN_ROOT=self.pin_root)

    def remove(self):
        remove_pin_root(self.pin_root)
        _OWN_PIN_ROOTS.discard(self.pin_root)
        shutil.rmtree(self.tmp, ignore_errors=True)


class ProcDir(TestDir):
    """A TestDir with the processes a test started: .targets and .loaders
    (objects with a .cleanup()) and .others (Popens in their own
    sessions), all ended by cleanup(), which then removes the dir."""

    def __init__(self, name, prefix):
        super().__init__(name, prefix)
        self.targets = []
        self.loaders = []
        self.others = []

    def cleanup(self):
        for t in self.targets:
            t.cleanup()
        for l in self.loaders:
            l.cleanup()
        for p in self.others:
            reap(p)
        self.remove()


# ---------------------------------------------------------------------------
# ELF: where a symbol is in its file (what attach's OFFSET column shows)

def elf_symbol_vaddr(path, sym):
    r = subprocess.run(["nm", path], capture_output=True, text=True)
    check(r.returncode == 0, "nm %s: %s" % (path, r.stderr.strip()))
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] == sym and f[1] in "TtWi":
            return int(f[0], 16)
    raise Fail("nm: no symbol %s in %s" % (sym, path))


def elf_file_offset(path, vaddr):
    with open(path, "rb") as f:
        data = f.read()
    check(data[:4] == b"\x7fELF" and data[4] == 2, path + ": not ELF64")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        (p_type, _flags, p_offset, p_vaddr, _paddr, p_filesz,
         _memsz, _align) = struct.unpack_from("<IIQQQQQQ", data,
                                              phoff + i * phentsize)
        if p_type == 1 and p_vaddr <= vaddr < p_vaddr + p_filesz:
            return vaddr - p_vaddr + p_offset
    raise Fail("%s: vaddr %#x in no PT_LOAD segment" % (path, vaddr))


def symbol_file_offset(path, sym):
    return elf_file_offset(path, elf_symbol_vaddr(path, sym))


# ---------------------------------------------------------------------------
# The kernel side: our BPF programs and pins

def root_error():
    if os.geteuid() != 0:
        return "must run as root (BPF and uprobes need it)"
    return None


def stale_error(target, deps):
    """A one-line error if the built @target is older than any of @deps
    (the prerequisites its make rule names), else None.  `make` builds
    the libraries but not the test programs linked with them: a runner
    started directly would test an old libsds linked into an old target
    and report the new code's features as broken."""
    try:
        built = os.stat(target).st_mtime_ns
    except OSError as e:
        return "%s: %s: run make test-targets" % (target, e.strerror)
    for d in deps:
        try:
            newer = os.stat(d).st_mtime_ns > built
        except OSError as e:
            return "%s: %s" % (d, e.strerror)
        if newer:
            return "%s is older than %s: run make test-targets" % (target, d)
    return None


def bpffs_mounted():
    with open("/proc/mounts") as f:
        for line in f:
            fs = line.split()
            if len(fs) > 2 and fs[1] == "/sys/fs/bpf" and fs[2] == "bpf":
                return True
    return False


def mount_bpffs():
    """None once bpffs is at /sys/fs/bpf, else why not."""
    if bpffs_mounted():
        return None
    r = subprocess.run(["mount", "-t", "bpf", "bpf", "/sys/fs/bpf"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return "cannot mount bpffs at /sys/fs/bpf: " + r.stderr.strip()
    return None


def prog_holders(pids=None):
    """{prog id: set of pids} from /proc/*/fdinfo: every process holding a
    program fd or a link to it, or only those of @pids.  (bpftool here may
    lack pid iterators.)"""
    holders = {}
    names = os.listdir("/proc") if pids is None else [str(p) for p in pids]
    for pid in names:
        if not pid.isdigit():
            continue
        d = "/proc/%s/fdinfo" % pid
        try:
            fds = os.listdir(d)
        except OSError:
            continue
        for fd in fds:
            try:
                with open(os.path.join(d, fd)) as f:
                    for line in f:
                        if line.startswith("prog_id:"):
                            holders.setdefault(int(line.split()[1]),
                                               set()).add(int(pid))
            except (OSError, ValueError):
                continue
    return holders


def bpftool_progs(prefix=PROG_PREFIX):
    """bpftool's records of the loaded programs named @prefix*."""
    r = subprocess.run(["bpftool", "prog", "show", "--json"],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "bpftool prog show failed: " + r.stderr.strip())
    return [p for p in json.loads(r.stdout or "[]")
            if p.get("name", "").startswith(prefix)]


def sds_progs():
    """{prog id: set of pids holding it} for programs named sds_*."""
    progs = bpftool_progs()
    holders = prog_holders()
    return {p["id"]: holders.get(p["id"], set()) for p in progs}


def sds_progs_of(pid):
    """Names of the sds_* programs process @pid holds."""
    holders = prog_holders()
    return sorted({p["name"] for p in bpftool_progs()
                   if pid in holders.get(p["id"], ())})


def bpffs_pins():
    pins = set()
    for d, dirs, files in os.walk("/sys/fs/bpf"):
        for f in dirs + files:
            p = os.path.join(d, f)
            if "sds" in p.lower():
                pins.add(p)
    return pins


def pin_root_for(tmp):
    """A test's own SDS_PIN_ROOT (docs/CRASH.md): a loader killed by the
    test's cleanup (SIGKILL) leaves its pins there, where no later test
    adopts them, and remove_pin_root() takes them away.  bpffs refuses
    names with a dot."""
    return "/sys/fs/bpf/sds-test-%s" % os.path.basename(
        tmp.rstrip("/")).replace(".", "_")


def remove_pin_root(root):
    """Every pin under @root, then its directories, bottom up: their
    probes and maps leave the kernel with them."""
    if not root or not os.path.isdir(root):
        return
    for d, dirs, files in os.walk(root, topdown=False):
        for f in files:
            try:
                os.unlink(os.path.join(d, f))
            except OSError:
                pass
        for sub in dirs:
            try:
                os.rmdir(os.path.join(d, sub))
            except OSError:
                pass
    try:
        os.rmdir(root)
    except OSError:
        pass


def _bpftool_pinned(kind):
    """bpftool -f's records of every @kind ("prog", "link", "map"): each
    with its "pinned" paths, wherever on bpffs they are."""
    r = subprocess.run(["bpftool", "-f", "--json", kind, "show"],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, "bpftool %s show failed: %s"
          % (kind, r.stderr.strip()))
    return json.loads(r.stdout or "[]")


def _under(path, roots):
    return any(path == r or path.startswith(r + "/") for r in roots)


def pins_under(roots):
    """Every path at or below the pin roots @roots (the roots themselves
    too: a root the step made and left is a leak of its)."""
    pins = set()
    for root in roots:
        if not os.path.isdir(root):
            continue
        pins.add(root)
        for d, dirs, files in os.walk(root):
            pins.update(os.path.join(d, f) for f in dirs + files)
    return pins


def progs_pinned_under(roots, progs=None):
    """{prog id: why} for the programs that something pinned under @roots
    keeps: the program itself, a link to it, or a map it uses (the
    loader pins its maps and links there, docs/DESIGN.md §5).  @progs: the
    records of _bpftool_pinned("prog") to judge (else all of them, asked
    for here)."""
    own = {}
    maps = {m["id"] for m in _bpftool_pinned("map")
            if any(_under(p, roots) for p in m.get("pinned", ()))}
    for ln in _bpftool_pinned("link"):
        pinned = [p for p in ln.get("pinned", ()) if _under(p, roots)]
        if pinned and "prog_id" in ln:
            own[ln["prog_id"]] = "link " + pinned[0]
    for pr in _bpftool_pinned("prog") if progs is None else progs:
        pinned = [p for p in pr.get("pinned", ()) if _under(p, roots)]
        if pinned:
            own[pr["id"]] = "pinned " + pinned[0]
        elif maps & set(pr.get("map_ids", ())):
            own.setdefault(pr["id"], "maps %s" % sorted(
                maps & set(pr["map_ids"])))
    return own


# The pin roots of this process's live TestDirs: what a KernelSnapshot
# watches unless told otherwise.
_OWN_PIN_ROOTS = set()


class KernelSnapshot:
    """What of this test's own is in the kernel before a step, to compare
    after it.  Only its own: pins under its pin roots (@roots, else those
    of this process's live TestDirs), and programs its own processes hold
    or that are kept by something pinned under those roots.  Another run
    of the suites on the machine (CI beside a developer) loads, pins and
    frees its own meanwhile, under a root of its own: never a failure of
    this one."""

    def __init__(self, roots=None):
        if roots is None:
            roots = _OWN_PIN_ROOTS
        self.roots = sorted(r.rstrip("/") for r in roots)
        self.progs = {p["id"] for p in _bpftool_pinned("prog")}
        self.pins = pins_under(self.roots)

    def leaked_progs(self, dead_pids):
        """{prog id: why} of the programs loaded since the snapshot that
        are still ours: held by one of @dead_pids, or kept by a pin under
        our roots.  One bpftool call per kind, and none but the programs'
        when no program is new; only @dead_pids' fds are read (a holder
        outside them is no leak of ours)."""
        progs = _bpftool_pinned("prog")
        new = [p for p in progs if p["id"] not in self.progs]
        if not new:
            return {}
        holders = prog_holders(dead_pids)
        own = progs_pinned_under(self.roots, new)
        leaked = {}
        for i in sorted(p["id"] for p in new):
            pids = holders.get(i, set()) & dead_pids
            if pids:
                leaked[i] = "held by pids %s" % sorted(pids)
            elif i in own:
                leaked[i] = own[i]
        return leaked

    def assert_nothing_new(self, dead_pids, what, timeout=5.0):
        """No program loaded since the snapshot is still held by one of
        @dead_pids (our processes, ended) or kept by a pin under our pin
        roots, and nothing new is pinned under those roots.  Programs are
        freed asynchronously, so poll a little."""
        dead_pids = set(dead_pids)
        deadline = time.monotonic() + timeout
        while True:
            leaked = self.leaked_progs(dead_pids)
            pins = pins_under(self.roots) - self.pins
            if not leaked and not pins:
                return
            if time.monotonic() > deadline:
                raise Fail("%s: left behind in the kernel: %d programs %s "
                           "(id: what keeps it), %d pins under %s: %s"
                           % (what, len(leaked), leaked, len(pins),
                              self.roots, sorted(pins)))
            time.sleep(0.2)


# ---------------------------------------------------------------------------
# A running `sds-bpf attach`

class AttachProcess:
    """`sds-bpf attach ARGS` of @ctx (a TestDir with a .loaders list), its
    output in files of the test's temp dir; ready once its socket
    (sock_path(): GROUP.APP.sock, or hashed) is in the run dir."""

    # A hang, not speed: a loader verifying fail-fast programs beside
    # other suites has taken 20 s to open its socket here.
    READY_TIMEOUT = 30.0

    def __init__(self, ctx, args, app, group="default", wait=True,
                 stale_inode=None, binary=None):
        self.ctx = ctx
        self.args = args
        self.app = app
        self.group = group
        n = len(ctx.loaders)
        self.outpath = os.path.join(ctx.tmp, "attach-%d.out" % n)
        self.errpath = os.path.join(ctx.tmp, "attach-%d.err" % n)
        self.sock = sock_path(ctx.run_dir, group, app)
        log("sds-bpf attach " + " ".join(args))
        with open(self.outpath, "wb") as o, open(self.errpath, "wb") as e:
            self.p = subprocess.Popen([binary or SDS, "attach"] + args, stdout=o,
                                      stderr=e, stdin=subprocess.DEVNULL,
                                      env=ctx.env, cwd=ctx.tmp,
                                      start_new_session=True)
        ctx.loaders.append(self)
        if wait:
            self.wait_ready(stale_inode)

    @property
    def pid(self):
        return self.p.pid

    def stdout(self):
        with open(self.outpath, errors="replace") as f:
            return f.read()

    def stderr(self):
        with open(self.errpath, errors="replace") as f:
            return f.read()

    def wait_ready(self, stale_inode=None, timeout=None):
        """The socket appears once every probe is attached."""
        if timeout is None:
            timeout = self.READY_TIMEOUT
        deadline = time.monotonic() + timeout
        while True:
            rc = self.p.poll()
            if rc is not None:
                raise Fail("sds-bpf attach %s exited with %d before its "
                           "socket %s appeared; stderr: %s"
                           % (" ".join(self.args), rc, self.sock,
                              self.stderr().strip() or "(empty)"))
            if is_socket(self.sock) and inode_of(self.sock) != stale_inode:
                return
            if time.monotonic() > deadline:
                raise Fail("sds-bpf attach %s: no socket %s after %.0f s; "
                           "stdout: %r stderr: %r"
                           % (" ".join(self.args), self.sock, timeout,
                              self.stdout(), self.stderr()))
            time.sleep(0.02)

    def cleanup(self):
        """What ProcDir.cleanup calls: end it, stopped or not."""
        self.end(cont=True)

    def end(self, cont=False):
        """SIGINT (after SIGCONT when @cont), then its group's SIGKILL if
        it has not exited within 5 s."""
        if self.p.poll() is None:
            try:
                if cont:
                    os.kill(self.p.pid, signal.SIGCONT)
                os.kill(self.p.pid, signal.SIGINT)
                self.p.wait(5)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                pass
        if self.p.poll() is None:
            kill_group(self.p)
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                pass


# ---------------------------------------------------------------------------
# sds-admin

def admin_argv(admin, port, db, token_file, extra=()):
    return [admin, "--listen", "127.0.0.1:%d" % port, "--db", db,
            "--token-file", token_file] + list(extra)


def http_request(port, method, path, body=None, headers=None, raw=None):
    """(status, parsed JSON or text) of one request to 127.0.0.1:@port;
    @body is sent as JSON, else @raw as it is."""
    h = dict(headers or {})
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
    if data is not None and "Content-Type" not in h:
        h["Content-Type"] = "application/json"
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        text = r.read().decode("utf-8", "replace")
        ctype = r.getheader("Content-Type", "")
    finally:
        c.close()
    if ctype.startswith("application/json"):
        return r.status, json.loads(text)
    return r.status, text


def healthz(port):
    """True when the admin on @port answers /healthz with 200."""
    try:
        return http_request(port, "GET", "/healthz")[0] == 200
    except OSError:
        return False


# ---------------------------------------------------------------------------
# The runner

def import_test_modules(here):
    """Import every t_*.py of the suite directory @here, in name order:
    a suite split by concept registers its tests as each is imported."""
    if here not in sys.path:
        sys.path.insert(0, here)
    for path in sorted(glob.glob(os.path.join(here, "t_*.py"))):
        importlib.import_module(os.path.basename(path)[:-3])


def preflight_error(root=True, needs=(), tools=(), bpffs=False, extra=None):
    """What a suite's runner checks before its first test, as one line
    (None when all is there): root; every path of @needs built (`make
    test-bins` builds what any runner needs); every tool of @tools in
    PATH (`make deps` installs them); bpffs mounted with @bpffs; then
    @extra(), the suite's own checks (a line or None)."""
    if root and os.geteuid() != 0:
        return "must run as root (BPF and uprobes need it)"
    for path in needs:
        if not os.path.exists(path):
            return "%s missing: run make test-bins" % path
    for tool in tools:
        if not shutil.which(tool):
            return "%s not found in PATH (make deps)" % tool
    if bpffs:
        err = mount_bpffs()
        if err:
            return err
    return extra() if extra else None


def run_suite(runner, suite, new_ctx, argv=None, **checks):
    """The main of every suite's run.py: import the t_*.py beside
    @runner (its __file__), check what preflight_error(**@checks) checks
    and run @suite's tests selected by @argv (sys.argv[1:]), each with
    new_ctx(name).  Returns the exit status.  The runner's module stays
    importable without running anything (tests/probepath, tests/crash and
    tools/demo load runners as modules)."""
    import_test_modules(os.path.dirname(os.path.abspath(runner)))
    return suite.main(sys.argv[1:] if argv is None else argv, new_ctx,
                      lambda: preflight_error(**checks))


# A function point's two probe paths (docs/PROBES.md), as SDS_PROBE_PATH names them.
PROBE_PATHS = ("session", "pair")


def on_probe_paths(suite):
    """A decorator: register @fn(ctx, path) in @suite once per probe path
    (the loader's SDS_PROBE_PATH), named NAME_PATH."""
    def register(fn):
        for path in PROBE_PATHS:
            def one(ctx, fn=fn, path=path):
                ctx.env["SDS_PROBE_PATH"] = path
                fn(ctx, path)
            one.__name__ = "%s_%s" % (fn.__name__, path)
            suite.test(one)
        return fn
    return register


class Suite:
    """A registry of tests and the loop that runs them, with the one
    report every Python suite prints and tests/lanes.py counts:

        PASS NAME (1.2 s)
        FAIL NAME (1.2 s): why          (an unexpected error: its traceback)
        SKIP NAME: why                  (skip(): the kernel cannot do it)
        N passed, M failed, K skipped   (the last line)

    @timeout: seconds per test (SIGALRM raises Timeout), or None.
    Arguments starting with '-' are options (-v: verbose, tracebacks of
    failed checks, the total time; --list: the names, one a line, and
    the SKIP lines, nothing run); the others select the tests whose name
    holds one.  A preflight error fails every selected test; the exit
    status is non-zero when a test failed or none passed."""

    def __init__(self, timeout=None):
        self.tests = []
        self.skips = []         # (name, why): tests that cannot run here
        # Seconds a test takes, for SDS_TEST_SHARD's split (selected()).
        self.weights = {}
        self.timeout = timeout

    def test(self, fn):
        self.tests.append(fn)
        return fn

    def skip(self, name, why):
        """Register @name as a test that cannot run on this host, for
        @why (one line): printed as SKIP and counted as skipped, never
        silent (docs/TESTING.md: only a kernel that cannot do what the
        test needs)."""
        self.skips.append((name, why))

    def selected(self, sel):
        """The tests to run: those whose name holds one of @sel (all when
        @sel is empty), and of those, with SDS_TEST_SHARD=K/N, every N-th
        from the K-th (tests/lanes.py splits a long suite that way)."""
        tests = [fn for fn in self.tests
                 if not sel or any(s in fn.__name__ for s in sel)]
        shard = os.environ.get("SDS_TEST_SHARD")
        if not shard:
            return tests
        try:
            k, n = (int(x) for x in shard.split("/"))
        except ValueError:
            k = n = 0
        if not 1 <= k <= n:
            raise SystemExit("SDS_TEST_SHARD=%r: want K/N with 1 <= K <= N"
                             % shard)
        # Longest first, each to the shard with the least so far (ties to
        # the lower shard): the same split on every machine, from the
        # seconds a suite gives its long tests in self.weights (others 20).
        load = [0.0] * n
        mine = set()
        for i, fn in sorted(enumerate(tests),
                            key=lambda e: (-self.weights.get(e[1].__name__, 20),
                                           e[0])):
            j = load.index(min(load))
            load[j] += self.weights.get(fn.__name__, 20)
            if j == k - 1:
                mine.add(i)
        return [fn for i, fn in enumerate(tests) if i in mine]

    def _alarm(self, signum, frame):
        raise Timeout("test timed out after %d s" % self.timeout)

    def main(self, argv, new_ctx, preflight=None):
        """Run the tests @argv selects, each with new_ctx(name) (cleaned
        up whatever happens); print the report; the exit status."""
        sel = [a for a in argv if not a.startswith("-")]
        skips = [(n, w) for n, w in self.skips
                 if not sel or any(s in n for s in sel)]
        if "--list" in argv:
            # make test-inventory: the names, one a line, nothing run.
            for fn in self.selected([]):
                print(fn.__name__)
            for name, why in self.skips:
                print("SKIP %s: %s" % (name, why))
            return 0
        set_verbose("-v" in argv)
        err = preflight() if preflight else None
        passed = failed = 0
        t_all = time.monotonic()
        if self.timeout:
            signal.signal(signal.SIGALRM, self._alarm)
        for name, why in skips:
            print("SKIP %s: %s" % (name, why))
        for fn in self.selected(sel):
            name = fn.__name__
            if err:
                failed += 1
                print("FAIL %s (0.0 s): %s" % (name, err))
                continue
            t0 = time.monotonic()
            ctx = new_ctx(name)
            try:
                if self.timeout:
                    signal.alarm(self.timeout)
                fn(ctx)
                signal.alarm(0)
                passed += 1
                print("PASS %s (%.1f s)" % (name, time.monotonic() - t0))
            except (Fail, Timeout) as e:
                signal.alarm(0)
                failed += 1
                print("FAIL %s (%.1f s): %s" % (name, time.monotonic() - t0, e))
                if verbose():
                    traceback.print_exc()
            except Exception:
                signal.alarm(0)
                failed += 1
                print("FAIL %s (%.1f s): unexpected error\n%s"
                      % (name, time.monotonic() - t0,
                         traceback.format_exc().rstrip()))
            finally:
                signal.alarm(0)
                ctx.cleanup()
            sys.stdout.flush()
        log("total %.1f s" % (time.monotonic() - t_all))
        print("%d passed, %d failed, %d skipped" % (passed, failed, len(skips)))
        return 1 if failed or passed == 0 else 0
