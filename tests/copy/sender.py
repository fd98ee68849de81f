#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""
The copy record (docs/COPY.md, version 1) in Python: what a loader sends
to `sds-copy serve` and what a recording file holds.  Standing in for the
loader until `sds-bpf record` and the capture side exist; also the
"small documented tool" that reads a recording:

    python3 tests/copy/sender.py send HOST:PORT --app A --point P --count N
    python3 tests/copy/sender.py dump FILE

Python 3 standard library only.
"""

import socket
import struct
import sys
import time

VERSION = 1
STREAM_MAGIC = b"SDSc"
FILE_MAGIC = b"SDSr"
F_TRUNCATED = 0x1
F_WRITE = 0x2
F_PAIRED = 0x4                      # a u64 pair id follows the names
F_RESPONSE = 0x8                    # the response of its pair id's request
HDR = struct.Struct("<QIIHBB")      # ts_ns orig cap flags app_len point_len


def hello():
    return STREAM_MAGIC + struct.pack("<HH", VERSION, 0)


def file_header(created_ns=None):
    if created_ns is None:
        created_ns = time.time_ns()
    return FILE_MAGIC + struct.pack("<HHQ", VERSION, 0, created_ns)


def record(app, point, data, ts_ns=None, write=False, orig_len=None,
           pair=None, response=False):
    """One encoded record; @orig_len > len(@data) marks it truncated;
    @pair (an int) makes it paired, @response the response of that pair."""
    if ts_ns is None:
        ts_ns = time.time_ns()
    orig = len(data) if orig_len is None else orig_len
    flags = (F_WRITE if write else 0) | (F_TRUNCATED if orig > len(data) else 0) \
        | (F_PAIRED if pair is not None else 0) | (F_RESPONSE if response else 0)
    a, p = app.encode(), point.encode()
    pid = struct.pack("<Q", pair) if pair is not None else b""
    return HDR.pack(ts_ns, orig, len(data), flags, len(a), len(p)) + a + p + pid + data


def parse(buf, pos):
    """(record dict, next pos) of the record at @pos of @buf; raises
    ValueError naming the offset when it is bad or cut."""
    if len(buf) - pos < HDR.size:
        raise ValueError("offset %d: truncated record" % pos)
    ts, orig, cap, flags, al, pl = HDR.unpack_from(buf, pos)
    if cap > 65536 or cap > orig or flags & ~15 or not 1 <= al <= 64 \
            or not 1 <= pl <= 64:
        raise ValueError("offset %d: bad record header" % pos)
    pl8 = 8 if flags & F_PAIRED else 0
    end = pos + HDR.size + al + pl + pl8 + cap
    if end > len(buf):
        raise ValueError("offset %d: truncated record" % pos)
    o = pos + HDR.size
    pair = struct.unpack_from("<Q", buf, o + al + pl)[0] if pl8 else None
    return {"ts_ns": ts, "orig_len": orig, "flags": flags, "pair": pair,
            "app": buf[o:o + al].decode(), "point": buf[o + al:o + al + pl].decode(),
            "data": buf[o + al + pl + pl8:end]}, end


def read_file(path):
    """(created_ns, [records]) of a recording."""
    with open(path, "rb") as f:
        buf = f.read()
    if buf[:4] != FILE_MAGIC:
        raise ValueError("offset 0: bad magic")
    ver, _, created = struct.unpack_from("<HHQ", buf, 4)
    if ver != VERSION:
        raise ValueError("offset 4: unsupported version %d" % ver)
    pos, recs = 16, []
    while pos < len(buf):
        r, pos = parse(buf, pos)
        recs.append(r)
    return created, recs


def write_file(path, records, created_ns=None):
    """A recording of @records (encoded ones)."""
    with open(path, "wb") as f:
        f.write(file_header(created_ns))
        for r in records:
            f.write(r)


def connect(addr, hello_bytes=None):
    host, port = addr.rsplit(":", 1)
    s = socket.create_connection((host, int(port)), timeout=10)
    s.sendall(hello() if hello_bytes is None else hello_bytes)
    return s


def send(addr, records):
    """Send encoded @records on one stream and close it."""
    s = connect(addr)
    try:
        s.sendall(b"".join(records))
    finally:
        s.close()


def main(argv):
    if len(argv) >= 2 and argv[0] == "dump":
        created, recs = read_file(argv[1])
        print("created %d, %d records" % (created, len(recs)))
        for r in recs:
            print("%d %s/%s flags %d orig %d %r" % (r["ts_ns"], r["app"], r["point"],
                                                  r["flags"], r["orig_len"], r["data"][:60]))
        return 0
    if len(argv) >= 2 and argv[0] == "send":
        opts = dict(zip(argv[2::2], argv[3::2]))
        n = int(opts.get("--count", "1"))
        send(argv[1], [record(opts["--app"], opts["--point"],
                              b"req-%06d\n" % i) for i in range(n)])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
