/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The flags region (docs/DESIGN.md §2, docs/PROTOCOL.md "Flags region"): two
 * shared mappings that the loader creates and every guarded process maps
 * (the fds come over the control socket with SCM_RIGHTS, in this order):
 *
 *   - "flags": everything the loader decides, in elements of
 *     SDS_FLAG_SIZE: element 0 is the header, element 1+i the flag entry
 *     of point id i; then one blocked-key table a point (hot keys).  A sealed memfd (loader/publish/flags.c says why not a BPF
 *     map) that clients get opened O_RDONLY and map PROT_READ: the kernel
 *     refuses them a writable mapping, mprotect to write, write(2) and
 *     reopening for writing.  The loader is its only writer; an entry is
 *     published under its sequence counter (odd while writing).
 *   - "cells": what the guards must write, a BPF_F_MMAPABLE array mapped
 *     read-write.  Element i is the cell of point id i (atomics only); the
 *     per-process permit table follows.  Any client of the app can write
 *     any byte of it, so every reader, libsds and the loader alike, bounds
 *     what it reads there (PROTOCOL.md, "Reading the cells").
 *
 * Changing anything here changes the ABI between libsds and the loader:
 * bump SDS_FLAGS_LAYOUT.
 */
#ifndef SDS_FLAGS_H
#define SDS_FLAGS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#include "sds_types.h"

#define SDS_FLAGS_MAGIC		0x53445346u	/* "SDSF" */
#define SDS_FLAGS_LAYOUT	5	/* 5: blocked-key tables (4: 1,024 points, 3: 256) */
#define SDS_FLAG_SIZE		128		/* a flags element: two cache lines */
#define SDS_CELL_SIZE		128		/* a cells element: two cache lines */
#define SDS_MAX_PROCS		64		/* guarded processes per loader */
/* Flags elements: the header, then one per point. */
#define SDS_FLAGS_ELEMS		(1 + SDS_MAX_POINTS)
/* Cells elements: one per point, then the permit table. */
#define SDS_PERMIT_ELEMS	((SDS_MAX_PROCS * SDS_MAX_POINTS * 4 + SDS_CELL_SIZE - 1) / SDS_CELL_SIZE)
#define SDS_CELLS_ELEMS		(SDS_MAX_POINTS + SDS_PERMIT_ELEMS)
#define SDS_STALE_NS		2000000000ULL	/* a tick this late: the loader is gone */
#define SDS_TICK_MAX_NS		10000000000ULL	/* the longest tick (--tick-ms 10000) */
/* The longest sleep of a delay drill (the loader's limit; libsds clamps too). */
#define SDS_DRILL_DELAY_MAX_NS	60000000000ULL

/* Why a point is downgraded (struct sds_flag.reason). */
enum sds_reason {
	SDS_REASON_NONE = 0,
	SDS_REASON_VISIT = 1,		/* visit_threshold (0: kill switch) */
	SDS_REASON_TOKEN = 2,		/* token bucket empty (guard) */
	SDS_REASON_CONCURRENT = 3,	/* concurrency semaphore full (guard) */
	SDS_REASON_TIMEOUT = 4,		/* timeout_count_threshold */
	SDS_REASON_EXCEPTION = 5,	/* exception_threshold */
	SDS_REASON_EXCEPTION_RATE = 6,	/* exception_rate_threshold */
	SDS_REASON_HOLD = 7,		/* delay_ms hold after a trip */
	SDS_REASON_DRILL = 8,		/* a fault drill (sds_should_downgrade's view of a fault) */
	SDS_REASON_SLOW_RATE = 9,	/* slow_rate_threshold: share of slow calls */
	SDS_REASON_OVERLOAD = 10,	/* a host pressure rule fires (docs/PRESSURE.md) */
	SDS_REASON_KEY = 11,		/* the call's key is blocked (docs/KEYS.md "Limits") */
	SDS_REASON_MAX,
};

/* Bits of struct sds_flag.active: what the guard must look at. */
#define SDS_ACT_DOWNGRADE	(1u << 0)	/* downgraded until @expires_ns */
#define SDS_ACT_CONCURRENT	(1u << 1)	/* enforce @concurrent_limit */
#define SDS_ACT_TOKEN		(1u << 2)	/* enforce the token bucket */
#define SDS_ACT_PROBE		(1u << 3)	/* hold: let one probe call through every @probe_interval_ns */
#define SDS_ACT_DRILL		(1u << 4)	/* a drill runs: read line 3 */
#define SDS_ACT_BUDGET		(1u << 5)	/* exact trips: read the *_upto marks of line 2 */
/*
 * With SDS_ACT_PROBE: a half-open phase of @probe_calls probes.  From
 * cell.next_probe_ns on, calls claim cell.probe_claimed while fewer than
 * @probe_calls are claimed; the loader opens each phase (never a guard).
 * Without it a hold lets one probe through per interval (probe_take).
 */
#define SDS_ACT_HALFOPEN	(1u << 6)

/* struct sds_flag.drill_kind */
enum sds_drill_kind {
	SDS_DRILL_NONE = 0,
	SDS_DRILL_ERROR = 1,		/* the call fails (SDS_FAULT) */
	SDS_DRILL_DELAY = 2,		/* the call sleeps drill_delay_ns first */
};

/* Flags element 0: the loader's. */
struct sds_flags_header {
	__u32 magic;		/* SDS_FLAGS_MAGIC */
	__u32 layout;		/* SDS_FLAGS_LAYOUT */
	__u32 loader_pid;	/* the loader that writes this region */
	__u32 npoints;		/* entries in use */
	__u64 epoch;		/* random per loader start: a new loader is a new epoch */
	__u64 tick_ns;		/* CLOCK_MONOTONIC of the loader's last tick */
	__u64 tick_interval_ns;	/* the loader's tick */
	__u8 pad[SDS_FLAG_SIZE - 40];
};

/* Flags element 1 + point id: the loader's only (clients map it read-only). */
struct sds_flag {
	/* ---- line 1: the decision, under @seq ---- */
	__u32 seq;		/* odd while the loader writes this entry */
	__u32 active;		/* SDS_ACT_* bits; 0: pass without looking further */
	__u32 reason;		/* enum sds_reason of the downgrade */
	__u32 rate;		/* 0..100: share of calls downgraded while tripped */
	__u64 expires_ns;	/* CLOCK_MONOTONIC: the downgrade lapses then unless renewed */
	__s64 concurrent_limit;	/* permits of the semaphore */
	__u64 token_interval_ns;	/* ns per token: 1e9 / token_rate */
	__u64 token_burst_ns;	/* token_bucket * token_interval_ns */
	__u64 probe_interval_ns;	/* hold: one probe call this often */
	__u32 point_kind;	/* 0: unused, 1: function point, 2: guard point */
	__u32 gen;		/* bumped when a strategy is (re)applied */
	/* ---- line 2: the drill's settings, under @seq; read only with SDS_ACT_DRILL ---- */
	__u32 drill_kind;	/* enum sds_drill_kind */
	__u32 drill_ratio;	/* 0..100: share of the passed calls it hits */
	__u64 drill_delay_ns;	/* SDS_DRILL_DELAY: how long a hit call sleeps */
	__u64 drill_expires_ns;	/* CLOCK_MONOTONIC: the guard ignores the drill from then on */
	/*
	 * Not under @seq: a single aligned store of the loader
	 * (flags__set_copy), read with one plain load by sds_copy().  1:
	 * something consumes the point's copies, so sds_copy() calls the
	 * copy site; 0 (older loaders never write it): sds_copy() returns.
	 * Older libsds never read it, so it is no layout change.
	 */
	__u32 copy;
	/*
	 * Balancing (loader/publish/lbpub.c, docs/BALANCE.md): for a provider point
	 * "<dep>@<provider>" only, each a single aligned relaxed store of the
	 * loader every tick, not under @seq -- a balancer decides on loads a
	 * tick old anyway, and a torn pair (one field of the last tick, one
	 * of this) only makes one pick as good as the last tick's.  Older
	 * libsds never read them and older loaders leave them 0 (load
	 * unknown), so they are no layout change.
	 */
	__u32 lb_inflight;	/* balancing: calls in flight host-wide at the tick (gauge) */
	/*
	 * Exact trips (loader/decide/exact.c, PROTOCOL.md "Exact trips"): marks the
	 * loader only ever raises while a strategy stands, each one aligned
	 * store not under @seq, stored before the line 1 that sets
	 * SDS_ACT_BUDGET is published.  UINT64_MAX: no such threshold.
	 */
	__u64 visit_upto;	/* a pass is allowed while cell.visit_spent < this */
	__u64 exc_upto;		/* calls pass while cell.exc_spent < this */
	__u64 slow_upto;	/* calls pass while cell.slow_spent < this */
	__u32 lb_latency_ns;	/* balancing: recent mean latency, ns, saturated at 2^32-1 */
	/*
	 * Not under @seq: one aligned store of the loader before it
	 * publishes SDS_ACT_HALFOPEN, read with one plain load only when that
	 * bit is set.  Probes of one half-open phase; 0 or 1: one (older
	 * loaders never write it and never set the bit).
	 */
	__u32 probe_calls;
};

/*
 * Cells element point id: the guards' (atomics only), writable by every
 * client of the app, so never an instruction to anyone: readers clamp.
 * The loader writes it only to reset (tat_ns, next_probe_ns for a new
 * strategy or hold) and to repair (permits, corrupt times).
 */
struct sds_cell {
	/* ---- line 1: the shared limits and probe outcomes ---- */
	__s64 permits;		/* concurrency semaphore: permits held now */
	__u64 tat_ns;		/* token bucket: theoretical arrival time (GCRA) */
	__u64 next_probe_ns;	/* hold: the earliest time of the next probe call */
	__u64 probes_ok;	/* probe calls that succeeded */
	__u64 probes_failed;	/* probe calls that failed */
	__u64 refused_concurrent;	/* calls refused by the semaphore */
	__u64 refused_token;	/* calls refused by the bucket */
	/*
	 * Function points' exact trips (below): CLOCK_MONOTONIC entry of the
	 * first call that found slow_spent at slow_upto; 0: none this trip.
	 */
	__u64 slow_cross_ns;
	/* ---- line 2: the drill's counts (busy only while a drill runs) ---- */
	__u64 drill_faults;	/* calls faulted, ever (cumulative) */
	__u64 drill_delays;	/* calls delayed, ever (cumulative) */
	/*
	 * Exact trips: cumulative, never reset while a strategy stands (the
	 * loader re-bases on a new one, or on a value no guard could have
	 * left: PROTOCOL.md "Exact trips").
	 */
	__u64 visit_spent;	/* passes claimed against flag.visit_upto (CAS) */
	__u64 exc_spent;	/* exceptions signed while SDS_ACT_BUDGET was set */
	__u64 slow_spent;	/* calls slower than the point's timeout (not yet counted) */
	/*
	 * Half-open (SDS_ACT_HALFOPEN): low 32 bits, the probes claimed in
	 * the current phase (guards CAS it up while below probe_calls); high
	 * 32 bits, the phase's tag, set by the loader when it opens a phase,
	 * so that a claim read in an old phase can never succeed in a new one
	 * (no ABA on a count reset to 0).
	 */
	__u64 probe_claimed;
	/*
	 * Function points only (bpf/sds.bpf.c, PROTOCOL.md "Exact trips"):
	 * the CLOCK_MONOTONIC entry of the call that crossed a mark, written
	 * once by the BPF side with a compare-and-swap from 0 (first writer
	 * wins), cleared by the loader per trip.  Writable by every client,
	 * so the loader believes a stamp only within (last tick, now].
	 */
	__u64 visit_cross_ns;	/* the first call that found visit_spent at visit_upto */
	__u64 exc_cross_ns;	/* the first call after the exc_upto-th exception */
};

/*
 * Hot keys' limits (docs/KEYS.md "Limits"): in the flags map, after the
 * flag entries, one blocked-key table per point id, the loader's only
 * (flags__key_block, flags__key_clear), read by a keyed guard call
 * (sds_should_downgrade_key, sds_enter_key) with plain loads.
 *
 * Open addressing with a bounded window: a key of hash h lives in one of
 * the SDS_KEY_BLOCK_PROBES slots from its home, the group of four slots
 * (one cache line) that h's low bits name, wrapping.  A lookup reads the
 * whole window -- two cache lines, never more -- so a cleared slot needs
 * no tombstone, and the writer refuses a key whose window is full.
 * @nblocked counts the slots in use: a keyed call of a point with none
 * blocked reads that one word.
 *
 * A slot is written until_ns first, then hash (release), and cleared
 * hash first: a lookup that matches the hash reads that key's until_ns,
 * or, if the slot is reused in between, the next key's, a tick's race.
 * A block is believed only while now < until_ns <= now +
 * SDS_KEY_BLOCK_MAX_NS, and not from a stale region: garbage cannot
 * block a key for long, nor a dead loader at all.
 */
#define SDS_KEY_BLOCK_SLOTS	512	/* slots of a point's table: a power of 2 */
#define SDS_KEY_BLOCK_GROUP	4	/* slots a cache line */
#define SDS_KEY_BLOCK_PROBES	8	/* slots a lookup reads: two groups */
#define SDS_KEY_BLOCK_MAX_NS	60000000000ULL	/* a block ahead by more: no loader's */

struct sds_keyblock_slot {
	__u64 hash;		/* sds_key_hash() of the blocked key; 0: free */
	__u64 until_ns;		/* CLOCK_MONOTONIC: the block lapses then unless renewed */
};

struct sds_key_table {
	__u32 nblocked;		/* slots in use; 0: nothing blocked, look no further */
	__u32 pad[15];		/* the count's cache line of its own */
	struct sds_keyblock_slot slot[SDS_KEY_BLOCK_SLOTS];
};

#define SDS_KEY_TABLES_OFF	((__u64)SDS_FLAGS_ELEMS * SDS_FLAG_SIZE)
#define SDS_KEY_TABLE_OFF(point)	(SDS_KEY_TABLES_OFF + \
					 (__u64)(point) * sizeof(struct sds_key_table))
/* The flags map's bytes: entries, then the tables (before page rounding). */
#define SDS_FLAGS_BYTES		SDS_KEY_TABLE_OFF(SDS_MAX_POINTS)

/*
 * Permit table, in the cells map after the cells: for process slot s
 * (given at registration) and point id p, the permits that process holds
 * (it raises its cell before it takes a permit and lowers it after it gives
 * one back), so the loader can give back those of a process that died and
 * bound the semaphore by what live processes hold.
 */
#define SDS_PERMITS_OFF	(SDS_MAX_POINTS * SDS_CELL_SIZE)
#define SDS_PERMIT_IDX(slot, point)	((slot) * SDS_MAX_POINTS + (point))

#ifndef __VMLINUX_H__
_Static_assert(sizeof(struct sds_flags_header) == SDS_FLAG_SIZE, "header size");
_Static_assert(sizeof(struct sds_flag) == SDS_FLAG_SIZE, "entry size");
_Static_assert(sizeof(struct sds_cell) == SDS_CELL_SIZE, "cell size");
_Static_assert(__builtin_offsetof(struct sds_flag, drill_kind) == 64,
	       "the drill's settings start at 64");
_Static_assert(__builtin_offsetof(struct sds_flag, copy) == 88,
	       "the copy switch is at 88 (PROTOCOL.md)");
_Static_assert(__builtin_offsetof(struct sds_flag, lb_inflight) == 92,
	       "the balancer's in-flight gauge is at 92 (PROTOCOL.md)");
_Static_assert(__builtin_offsetof(struct sds_flag, lb_latency_ns) == 120,
	       "the balancer's latency is at 120 (PROTOCOL.md)");
_Static_assert(__builtin_offsetof(struct sds_flag, visit_upto) == 96 &&
	       __builtin_offsetof(struct sds_flag, exc_upto) == 104 &&
	       __builtin_offsetof(struct sds_flag, slow_upto) == 112,
	       "the exact trips' marks are at 96, 104, 112 (PROTOCOL.md)");
_Static_assert(__builtin_offsetof(struct sds_cell, visit_spent) == 80 &&
	       __builtin_offsetof(struct sds_cell, exc_spent) == 88 &&
	       __builtin_offsetof(struct sds_cell, slow_spent) == 96,
	       "the exact trips' counts are at 80, 88, 96 (PROTOCOL.md)");
_Static_assert(__builtin_offsetof(struct sds_cell, slow_cross_ns) == 56 &&
	       __builtin_offsetof(struct sds_cell, visit_cross_ns) == 112 &&
	       __builtin_offsetof(struct sds_cell, exc_cross_ns) == 120,
	       "function points' crossings at 56, 112, 120 (PROTOCOL.md)");
_Static_assert(__builtin_offsetof(struct sds_cell, drill_faults) == 64,
	       "the drill's counts start at 64");
_Static_assert(__builtin_offsetof(struct sds_flag, probe_calls) == 124,
	       "half-open: probe_calls at 124 (PROTOCOL.md)");
_Static_assert(__builtin_offsetof(struct sds_cell, probe_claimed) == 104,
	       "half-open: probe_claimed at 104 (PROTOCOL.md)");
_Static_assert(sizeof(struct sds_key_table) == 8256 &&
	       SDS_KEY_TABLES_OFF == 131200,
	       "blocked-key tables of 8,256 bytes from 131,200 (PROTOCOL.md)");
_Static_assert(sizeof(struct sds_key_table) % 64 == 0 &&
	       SDS_KEY_TABLES_OFF % 64 == 0,
	       "blocked-key tables: whole cache lines");
_Static_assert((SDS_KEY_BLOCK_SLOTS & (SDS_KEY_BLOCK_SLOTS - 1)) == 0 &&
	       SDS_KEY_BLOCK_PROBES % SDS_KEY_BLOCK_GROUP == 0 &&
	       SDS_KEY_BLOCK_GROUP * sizeof(struct sds_keyblock_slot) == 64,
	       "blocked-key windows: whole groups of a cache line");
_Static_assert(SDS_PERMIT_ELEMS * SDS_CELL_SIZE >= SDS_MAX_PROCS * SDS_MAX_POINTS * 4,
	       "the permit table fits");
#endif

#endif /* SDS_FLAGS_H */
