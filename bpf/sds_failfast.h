/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Fail-fast (issue 15, docs/FAILFAST.md): the map layouts shared by
 * bpf/failfast.bpf.c and the loader (loader/publish/failfast.c).  A function point
 * with :failfast= names operations (connect, send, open) that fail at
 * once, with an errno, for a thread inside the point while it is
 * downgraded.  Its own object: a loader without such points never loads it.
 */
#ifndef SDS_FAILFAST_H
#define SDS_FAILFAST_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Operations a point can fail fast (struct sds_ff_state.ops). */
#define SDS_FF_CONNECT		(1u << 0)	/* connect(2): LSM socket_connect */
#define SDS_FF_SEND		(1u << 1)	/* send/sendmsg/write on a socket: socket_sendmsg */
#define SDS_FF_OPEN		(1u << 2)	/* open(2) of a file: file_open */
#define SDS_FF_ALL		(SDS_FF_CONNECT | SDS_FF_SEND | SDS_FF_OPEN)

/*
 * Per point (array failfast_state), written whole by the loader when its
 * decision changes.  A value the BPF side cannot trust to be current is
 * bounded by @expires_ns: a loader that stops ticking stops denying.
 */
struct sds_ff_state {
	__u32 ops;		/* SDS_FF_* the point fails; 0: not a failfast point */
	__u32 deny;		/* 1: downgraded: deny its ops (at @rate) until @expires_ns */
	__u32 rate;		/* 0..100: share of the ops denied while @deny */
	__u32 drill_ratio;	/* 0..100: share denied by an error drill until @drill_expires_ns */
	__s32 sock_errno;	/* positive errno for connect and send */
	__s32 file_errno;	/* positive errno for open */
	__s32 drill_errno;	/* positive errno of the drill (--errno); 0: the two above */
	__u32 pad;		/* explicit: the loader writes the value whole */
	__u64 expires_ns;	/* CLOCK_MONOTONIC: @deny lapses then unless renewed */
	__u64 probe_interval_ns;	/* a hold: one op passes per interval (0: none) */
	__u64 drill_expires_ns;	/* CLOCK_MONOTONIC: the drill ends then */
};

/*
 * Per point (array failfast_probe), the BPF side's: the earliest time
 * the next probe op of a hold may pass.  Claimed with a compare-and-swap,
 * so of the threads racing for one probe exactly one passes; the loader
 * sets it one interval ahead when a hold starts.
 */
struct sds_ff_probe {
	__u64 next_ns;		/* CLOCK_MONOTONIC */
};

/* Per point, per CPU (failfast_count), since load. */
struct sds_ff_count {
	__u64 denied;		/* ops failed fast (downgrade or drill) */
	__u64 drilled;		/* of @denied, by an error drill */
	__u64 probes;		/* ops let through as a hold's probe */
};

#endif /* SDS_FAILFAST_H */
