/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Types shared by the BPF programs (bpf/sds.bpf.c) and user space (the
 * loader, the unit tests).  Everything here is a map layout: changing a
 * struct changes the ABI between the kernel side and the loader.
 */
#ifndef SDS_TYPES_H
#define SDS_TYPES_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * Points one loader can serve (point ids 0..1023).  The flags region has
 * room for all of them (its layout); the loader sizes the counting maps
 * at load to the points it can actually serve (probes__load).
 */
#define SDS_MAX_POINTS		1024
#define SDS_RING_SLOTS		16	/* one-second slots per point */
#define SDS_WINDOW_S		10	/* sliding window of the strategies */
#define SDS_HIST_BUCKETS	64	/* log2 latency buckets, [2^i, 2^(i+1)) ns */
#define SDS_MAX_DEPTH		64	/* pending calls one thread can nest */
#define SDS_NAME_MAX		64	/* points, apps, groups: 1..64 chars */
/*
 * Or'ed into the point id of sds__site_exit(): not the end of a call but
 * libsds giving up the frame of a call that never ended (its stack of
 * SDS_MAX_DEPTH was full): the oldest guard frame of the point is dropped.
 */
#define SDS_SITE_EVICT		(1u << 31)
/*
 * Or'ed into the attach cookie (the point id) of the entry of a .part.N
 * piece of a function point that has other sites too (loader/point/clones.c):
 * entered on a thread whose innermost live call is one of the point's
 * own, entered at another site, it is that call going on (the function's
 * head calling or jumping to its rest), not a new call.  Above the 32
 * bits a return program truncates the cookie to.
 */
#define SDS_COOKIE_PART		(1ULL << 32)
/*
 * Or'ed into the point id of any site by a keyed guard call
 * (sds_should_downgrade_key, sds_enter_key): the site's third argument is
 * then a `const struct sds_key *` (bpf/sds_keys.h, zero-padded) and its
 * fourth the key's sds_key_hash(); unkeyed calls leave both unset.
 */
#define SDS_SITE_KEYED		(1u << 30)

/* Which return values count as an exception. */
enum sds_err_mode {
	SDS_ERR_NONE = 0,	/* never */
	SDS_ERR_NEG = 1,	/* ret < 0 */
	SDS_ERR_ZERO = 2,	/* ret == 0 (NULL pointers, false) */
	SDS_ERR_NONZERO = 3,	/* ret != 0 (errno-style codes) */
};

/*
 * One second of one point on one CPU.  The first writer of a new second
 * claims the slot by swapping @sec and zeroes the counters, so no thread
 * has to clear the ring.
 */
struct sds_slot {
	__u64 sec;		/* CLOCK_MONOTONIC second the counters belong to */
	__u64 visits;		/* calls entered */
	__u64 exceptions;	/* calls whose return matched the error predicate */
	__u64 timeouts;		/* calls slower than the point's timeout */
	__u64 downgrades;	/* calls refused by a guard (guard points only) */
	__u64 latency_sum;	/* ns, over completed calls */
};

/*
 * Per point, per CPU, since attach.  Summed over CPUs by the loader.  The
 * concurrency is entered - completed - dropped, where completed is the sum
 * of the histogram: no counter is both added to at entry and taken from
 * at exit, which saves the return path an add.
 */
struct sds_gauge {
	__u64 entered;		/* calls whose frame was pushed */
	__u64 dropped;		/* pushed frames given up: never returned */
	__u64 unpaired;		/* calls that could not push a frame (stack full) */
	__u64 hist[SDS_HIST_BUCKETS];	/* log2 latency histogram of completed calls */
};

/* Per point, written by the loader before it attaches. */
struct sds_point_cfg {
	__u64 timeout_ns;	/* slower than this counts as a timeout; 0: off */
	__u32 err_mode;		/* enum sds_err_mode */
	__u32 ret64;		/* judge the full 64-bit return, not the int */
};

/*
 * Exact trips of a function point (docs/PROTOCOL.md "Exact trips"): the
 * loader's marks for the BPF side, in the programs' global fn_marks[]
 * (bpf/sds.bpf.c), written by the loader only (clients never see them).
 * The loader stores the marks, then @armed (release); 0 (the zeroed
 * start): no mark, and the entry pays one load for it.
 */
#define SDS_FN_VISIT		(1u << 0)	/* visit_upto is a mark */
#define SDS_FN_EXC		(1u << 1)	/* exc_upto is a mark */
#define SDS_FN_SLOW		(1u << 2)	/* slow_upto is a mark */

struct sds_fn_marks {
	__u32 armed;		/* SDS_FN_* bits of the marks in force */
	__u32 pad;
	__u64 visit_upto;	/* a call past it (cell.visit_spent before its add) crosses */
	__u64 exc_upto;		/* a call entering with cell.exc_spent at it crosses */
	__u64 slow_upto;	/* a call entering with cell.slow_spent at it crosses */
};

/*
 * The limits a function point with :failfast= keeps at its calls' entry
 * (bpf/sds_fnlimit.bpf.h, docs/FAILFAST.md "Limits"): a semaphore of calls
 * in flight and a GCRA token bucket, across every process of the app (the
 * programs are the loader's, one set for the app).  In the programs'
 * global fn_limits[], mapped by the loader (loader/publish/failfast_limit.c):
 * the first part is the loader's, stored field by field and @armed last
 * (release); the rest is the BPF side's, which the loader only resets.
 * Never visible to clients: nothing a client writes moves them.
 */
#define SDS_FNL_CONC		(1u << 0)	/* enforce @concurrent_limit */
#define SDS_FNL_TOKEN		(1u << 1)	/* enforce the bucket */

struct sds_fn_limit {
	/* the loader's */
	__u32 armed;		/* SDS_FNL_* in force; 0: the entry pays one load */
	__u32 pad;
	__s64 concurrent_limit;	/* calls in flight allowed */
	__u64 token_interval_ns;	/* ns per token: 1e9 / token_rate */
	__u64 token_burst_ns;	/* (token_bucket) * token_interval_ns */
	/* the BPF side's */
	__s64 inflight;		/* calls holding a permit now */
	__u64 tat_ns;		/* GCRA: theoretical arrival time */
	__u64 refused_concurrent;	/* calls refused by the semaphore, since load */
	__u64 refused_token;	/* calls refused by the bucket, since load */
};

/* Why a function point's call fails fast from its entry (sds_frame.refused). */
enum sds_fn_refusal {
	SDS_FNR_NONE = 0,
	SDS_FNR_BUDGET = 1,	/* it crossed an exact mark (visit, exception, slow) */
	SDS_FNR_CONC = 2,	/* the semaphore was full */
	SDS_FNR_TOKEN = 3,	/* the bucket was empty */
};

/*
 * Calls in flight of points with a timeout (bpf/sds_stuck.bpf.h), kept
 * per thread where the loader can read them, so that it can count at each
 * tick the calls slower than their timeout that have not returned yet
 * ("stuck", docs/LIMITS.md).  An mmapable array of SDS_STUCK_THREADS
 * entries, one per thread that has entered a timed call, found from the
 * thread's id at one of SDS_STUCK_PROBES places; each with room for
 * SDS_STUCK_CALLS such calls in flight at once on that thread.  A call
 * that finds no room is not tracked (counted slow when it returns, never
 * stuck: the programs' stuck_lost counts such calls).
 */
#define SDS_STUCK_THREADS_SHIFT	12
#define SDS_STUCK_THREADS	(1u << SDS_STUCK_THREADS_SHIFT)
#define SDS_STUCK_PROBES	4
#define SDS_STUCK_CALLS		7

/* One timed call in flight; @ts 0: a free slot. */
struct sds_stuck_call {
	__u64 ts;		/* bpf_ktime_get_ns() at entry; written last */
	__u32 point;		/* point id */
	__u32 pad;
};

/* A thread's timed calls in flight: 128 bytes, two cache lines of its own. */
struct sds_stuck_thread {
	__u32 tid;		/* the owner (the kernel's pid of the task); 0: free */
	__u32 pad;
	__u64 pad2;
	struct sds_stuck_call c[SDS_STUCK_CALLS];
};

/* One call that has entered and not yet returned. */
struct sds_frame {
	__u64 sp;		/* stack pointer at entry: the return sees sp + 8; 0 for guards */
	__u64 ts;		/* bpf_ktime_get_ns() at entry */
	__u32 point;		/* point id */
	__u8 guard;		/* a guard point's call: paired by point, not sp */
	__u8 split;		/* the call keeps its split (bpf/sds_split.bpf.h) */
	__u8 exits;		/* ended by an exit probe on a ret (loader/target/exits.c):
				 * a frame unwound without one left by an exception */
	__u8 ff_probe;		/* a fail-fast hold let this call through as its probe
				 * (bpf/failfast.bpf.c): its end reports the outcome */
	__u64 split_runq;	/* the thread's run-queue ns at entry (@split) */
	__u64 split_blocked;	/* the thread's blocked ns at entry (@split) */
	__u64 key_hash;		/* a keyed point's call: its key's sds_key_hash(); 0: none */
	__u8 key_blocked;	/* its key is blocked (bpf/sds_keys.bpf.h): fail fast */
	__u8 refused;		/* enum sds_fn_refusal: its limits refused it at entry: fail fast */
	__u8 permit;		/* it holds a permit of its point's semaphore (sds_fnlimit.bpf.h) */
	__u8 part;		/* entered at a .part.N piece (SDS_COOKIE_PART), counted */
	__u8 cont;		/* a piece's entry that continues the call below it: not
				 * counted; its end is that call's (SDS_COOKIE_PART) */
	__u8 key_pad[3];
};

/* What kind of call a frame is: how its end is seen. */
enum sds_frame_kind {
	SDS_FRAME_PAIR = 0,	/* a function point with a uretprobe */
	SDS_FRAME_GUARD = 1,	/* a libsds guard: its exit is a call of its own */
	SDS_FRAME_EXITS = 2,	/* a function point with a uprobe on each ret */
};

/*
 * Per thread (task local storage): the calls it has entered, innermost
 * last.  A return pops its own frame and any deeper frames that can no
 * longer return (longjmp, the kernel's return-probe depth limit); a thread
 * that exits gives back whatever it still holds, and one that calls
 * execve() from inside a call leaves frames that no longer count.
 */
struct sds_frames {
	__u32 depth;		/* frames in use */
	__u32 exec_id;		/* the thread's exec generation when they were pushed
				 * (low half of task->self_exec_id, which execve()
				 * increments): frames of another are a program's
				 * the thread no longer runs */
	struct sds_frame f[SDS_MAX_DEPTH];
};

/*
 * Where the time of a point's calls went (bpf/sds_split.bpf.h,
 * docs/SPLIT.md): per point, per CPU, since load, over the calls that
 * kept a split (those that entered with the tracepoints attached).
 */
#define SDS_SPLIT_PARKED	16384	/* blocked threads inside calls tracked at once */

struct sds_split_sum {
	__u64 calls;		/* completed calls split */
	__u64 on_cpu_ns;	/* their time on a CPU */
	__u64 runq_ns;		/* ... runnable, waiting on the run queue */
	__u64 blocked_ns;	/* ... asleep until a wakeup */
};

/* The same calls' three parts, each a log2 histogram as sds_gauge.hist. */
struct sds_split_hist {
	__u64 on_cpu[SDS_HIST_BUCKETS];
	__u64 runq[SDS_HIST_BUCKETS];
	__u64 blocked[SDS_HIST_BUCKETS];
};

/*
 * Traffic copy (bpf/copy.bpf.c, loader/capture/capture.c, docs/COPY.md).  A point
 * whose requests are captured has a config; its buffer and length come
 * from argument registers (function points) or from libsds's copy site
 * sds__site_copy(id, buf, len) (guard points).
 */
#define SDS_COPY_MAX		65536	/* most bytes one capture copies */
#define SDS_COPY_MAX_DEFAULT	4096	/* :copy_max= when not given */
#define SDS_COPY_ARGS		6	/* x86-64 System V: six integer args in registers */

/* What a point is to the copy programs. */
enum sds_copy_kind {
	SDS_COPY_OFF = 0,	/* not a copy point: both programs return at once */
	SDS_COPY_FUNC = 1,	/* a function point: buffer and length from registers */
	SDS_COPY_GUARD = 2,	/* a guard point: sds_copy() calls the copy site */
};

/* Per point, written by the loader (array map copy_cfg). */
struct sds_copy_cfg {
	__u32 kind;		/* enum sds_copy_kind */
	__u32 rate;		/* percent of calls captured, 0..100; 0: none */
	__u32 max;		/* bytes captured at most, 1..SDS_COPY_MAX */
	__u8 buf_arg;		/* function points: argument holding the buffer, 1..6 */
	__u8 len_arg;		/* ... and the one holding its length, 1..6 */
	__u8 ret_buf_arg;	/* :copy_ret=BUF,LEN: the response buffer, 1..6; 0: none */
	__u8 ret_len_arg;	/* ... and the size_t * the function fills with its length */
};

/*
 * A request captured by a program that will also capture its response
 * (libsds's sds_copy_response(), a function point's :copy_ret=) is keyed
 * by thread in copy_pending until then (LRU: a response that never comes
 * costs a slot that is reused).
 */
#define SDS_COPY_PENDING	16384
struct sds_copy_pending {
	__u64 pair;		/* the pair id both captures carry */
	__u64 buf;		/* function points: the response buffer */
	__u64 lenp;		/* ... and the address of its length (size_t) */
	__u32 point;		/* the point whose request it was */
	__u32 pad;
};

#define SDS_COPY_EV_PAIRED	0x1	/* @pair is set */
#define SDS_COPY_EV_RESPONSE	0x2	/* the response of @pair's request */

/* Per point, per CPU, since load (per-CPU array copy_counts). */
struct sds_copy_count {
	__u64 captured;		/* events put in the ring */
	__u64 dropped;		/* sampled calls lost: ring full, or the buffer unreadable */
	__u64 truncated;	/* of @captured (and @responses), cut at the point's max */
	__u64 responses;	/* responses put in the ring (docs/COPY.md, "Responses") */
};

/* One capture in the ring: this header, then @cap_len bytes. */
struct sds_copy_event {
	__u64 ts;		/* bpf_ktime_get_ns() of the call */
	__u32 point;		/* point id */
	__u32 orig_len;		/* the length argument (clamped to 32 bits) */
	__u32 cap_len;		/* bytes that follow */
	__u32 flags;		/* SDS_COPY_EV_* */
	__u64 pair;		/* pair id when SDS_COPY_EV_PAIRED */
};

#endif /* SDS_TYPES_H */
