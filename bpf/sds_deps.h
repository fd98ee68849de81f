/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Dependencies found by themselves (docs/DEPS.md): the map layouts shared
 * by bpf/deps.bpf.c and the loader (loader/deps/deps.c).  While a thread
 * is inside a function or guard point, the peers its sockets reach are
 * counted per (point, peer): an edge.  Its own object, loaded only by
 * `attach --deps`.
 */
#ifndef SDS_DEPS_H
#define SDS_DEPS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* The edges one loader keeps (deps_edges); beyond them, counted as overflow. */
#define SDS_DEPS_EDGES		4096

/* enum sds_dep_proto: the transport of an edge, as the heartbeat names it. */
#define SDS_DEP_TCP		6
#define SDS_DEP_UDP		17

/* enum sds_dep_overflow: what deps_overflow counts, one slot each. */
#define SDS_DEPS_OVF_EDGES	0	/* events of an edge the full table had no room for */
#define SDS_DEPS_OVF_MARK	1	/* connects whose socket could not be marked (no memory) */
#define SDS_DEPS_OVF_NR		2

/*
 * An edge: a point and the peer its thread's socket reached.  @addr is
 * the IPv6 address, or an IPv4 one mapped (::ffff:a.b.c.d) so that a v4
 * peer reached by a v4 socket and by a dual-stack v6 socket is one edge.
 */
struct sds_dep_key {
	__u32 point;		/* point id */
	__u16 port;		/* the peer's port, host order */
	__u8 proto;		/* SDS_DEP_TCP, SDS_DEP_UDP */
	__u8 pad;
	__u8 addr[16];		/* the peer's address, network order */
};

/*
 * An edge's counts since the object was loaded (deps_edges), written by
 * the BPF programs only (atomic adds), read by the loader.
 */
struct sds_dep_count {
	__u64 connects;		/* connect(2) calls inside the point */
	__u64 connect_errors;	/* of those, TCP connects that failed: refused, reset, timed out */
	__u64 sends;		/* send calls on a socket to the peer inside the point */
	__u64 send_errors;	/* of those, the ones that failed (not EAGAIN or EINTR) */
	__u64 bytes;		/* bytes those sends took */
	__u64 resets;		/* established TCP sockets it connected, reset by the peer */
};

/* Socket storage (deps_mark): the edge a TCP socket connected inside a point is. */
struct sds_dep_mark {
	struct sds_dep_key key;
};

#endif /* SDS_DEPS_H */
