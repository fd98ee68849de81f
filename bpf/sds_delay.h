/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Delay drills at function points (docs/DELAY.md): the map layouts shared
 * by bpf/delay.bpf.c and the loader (loader/publish/delaydrill.c).  A
 * socket connected by a thread inside a drilled point is marked (socket
 * storage, at the cgroup connect hook); a tc egress program gives the
 * marked sockets' packets an earliest departure time N ms on, which the
 * fq qdisc honours.  Its own object: loaded only when a point can be
 * drilled so, attached only while such a drill runs.
 */
#ifndef SDS_DELAY_H
#define SDS_DELAY_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* The peer-port bitmap (delay_ports): 65536 ports, 64 a word. */
#define SDS_DL_PORT_WORDS	1024

/*
 * Per point (array delay_state), written whole by the loader when a
 * delay drill starts or ends.  @gen numbers the point's drills: a socket
 * marked by an earlier drill is not delayed by a later one.
 */
struct sds_dl_state {
	__u32 ratio;		/* 0..100: share of the connects marked; 0: no drill */
	__u32 gen;		/* the drill's number, in each mark it makes */
	__u64 delay_ns;		/* added to each marked packet's departure */
	__u64 expires_ns;	/* CLOCK_MONOTONIC: the drill ends then */
};

/* Socket storage (delay_mark): the drill that chose this socket. */
struct sds_dl_mark {
	__u32 point;		/* point id */
	__u32 gen;		/* sds_dl_state.gen when it was marked */
};

/* Per point, per CPU (delay_count), since load. */
struct sds_dl_count {
	__u64 marked;		/* sockets connected inside the point and chosen */
	__u64 spared;		/* connected inside it during a drill, not chosen */
	__u64 packets;		/* marked sockets' packets given a later departure */
};

#endif /* SDS_DELAY_H */
