/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The loader's side of the flags region (bpf/sds_flags.h): the two
 * maps the guards map (flags read-only, cells read-write),
 * the header, publishing a point's state under the entry's sequence
 * counter, and reading the cells as the untrusted input they are.
 */
#ifndef SDS_FLAGS_REGION_H
#define SDS_FLAGS_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "sds_flags.h"
#include "decide/verdict.h"

/* The most a cell counter can honestly grow between two folds. */
#define FLAGS_DELTA_MAX		(1ULL << 32)
/*
 * A time cell (tat_ns, next_probe_ns) further than its bound + this past
 * now is no guard's doing: it is reset.  Also the guards' slack
 * (guard.c), which covers a thread preempted between its clock read and
 * its CAS.
 */
#define FLAGS_TIME_SLACK_NS	1000000000ULL

/*
 * Cells of their own (docs/TRUST.md, "Shared limits"): the processes of
 * one uid that the loader does not let share the app's cells get a cells
 * map of their own, shared only among them, which no other process maps.
 * Same layout and size as the shared one; the loader repairs it as it
 * does the shared one, starts its buckets, holds and half-open phases
 * afresh when it does the shared ones', but reads nothing else from it.
 */
#define FLAGS_OWN_MAX	SDS_MAX_PROCS	/* at most one per session */
#define FLAGS_OWN_NONE	0xff		/* own_of: no cells at all (none could be made) */
struct flags_own {
	int fd;				/* a memfd, read-write: sent to that uid's guards */
	uid_t uid;			/* whose processes map it */
	uint64_t slots;			/* bit s: session slot s maps it */
	void *cells;			/* mapped, cells_size bytes */
	uint8_t excess[SDS_MAX_POINTS];	/* as flags_region.excess */
	/* What the loader last did to the shared cells, done here too (own_follow). */
	uint32_t gen[SDS_MAX_POINTS];	/* the entry's gen: a new strategy */
	uint32_t tag[SDS_MAX_POINTS];	/* the half-open phase's tag */
	uint8_t hold[SDS_MAX_POINTS];	/* SDS_ACT_PROBE was set */
};

struct flags_region {
	int fd;				/* the flags memfd, read-write (the loader's), sealed */
	int ro_fd;			/* the same, reopened O_RDONLY: sent to guards */
	int cells_fd;			/* the cells BPF map: sent to guards */
	size_t size;			/* bytes of the flags map: whole pages */
	size_t cells_size;		/* bytes of the cells map: whole pages */
	void *mem;			/* the flags map, mapped */
	void *cells;			/* the cells map, mapped */
	struct sds_flags_header *hdr;	/* flags element 0 */
	struct cell_counts seen[SDS_MAX_POINTS];	/* cell counters at the last fold */
	struct cell_counts totals[SDS_MAX_POINTS];	/* what the loader counted */
	uint8_t excess[SDS_MAX_POINTS];	/* ticks in a row permits exceeded what live holders can hold */
	/* Cells of their own for processes outside the shared set (flags__own_join). */
	struct flags_own *own[FLAGS_OWN_MAX];
	uint8_t own_of[SDS_MAX_PROCS];	/* slot's cells: 0 the shared, i + 1 own[i], FLAGS_OWN_NONE none */
};

/*
 * Most fds a guard receives at registration (flags__client_fds): the
 * flags map read-only, then the cells map.
 */
#define FLAGS_CLIENT_FDS	2

int flags__create(struct flags_region *f, uint64_t epoch, uint64_t tick_ns);
void flags__destroy(struct flags_region *f);
/*
 * The fds the guard of session @slot gets, in @fds; returns how many
 * (0: a slot whose own cells could not be made gets none).
 */
int flags__client_fds(const struct flags_region *f, int slot,
		      int fds[FLAGS_CLIENT_FDS]);
/*
 * Session @slot (registering now, of uid @uid) gets cells of its own,
 * shared with the other sessions of @uid that have them, never with the
 * shared set: 0, or -1 (errno) and the slot gets no cells at all.
 */
int flags__own_join(struct flags_region *f, int slot, uid_t uid);

/*
 * Point @point's entry and cell, to read: flags.c is the region's one
 * writer (the setters below).
 */
const struct sds_flag *flags__entry(const struct flags_region *f,
				    uint32_t point);
const struct sds_cell *flags__cell(const struct flags_region *f,
				   uint32_t point);
/*
 * The counts of @point's cell as the loader has counted them (folds what
 * changed since the last call, bounded): use these, never the cell.
 */
const struct cell_counts *flags__counts(struct flags_region *f, uint32_t point);
/*
 * The crash-only keep (keep.c): @point's counts as the loader counted
 * them, saved, and restored into a new region whose cells count from 0.
 */
void flags__save(const struct flags_region *f, uint32_t point,
		 struct cell_counts *out);
void flags__restore(struct flags_region *f, uint32_t point,
		    const struct cell_counts *in);
/*
 * Repair @point's cell against what the loader published in @st at
 * @now_ns: a tat or next probe beyond any guard's reach is reset; permits
 * above what the live sessions (bit s of @live: slot s) hold, read while
 * no guard moved, two ticks in a row, are set back to it; permits above
 * the limit (forged) to the smaller of that and @inflight calls (the
 * kernel's count; < 0: unknown); below 0, to 0.
 */
void flags__repair(struct flags_region *f, uint32_t point,
		   const struct flag_state *st, uint64_t now_ns,
		   uint64_t live, int64_t inflight);

/* Mark @point in use by @kind (1 function, 2 guard) and count it. */
void flags__set_kind(struct flags_region *f, uint32_t point, uint32_t kind);
/* Publish @st for @point: seq odd, fields, seq even. */
void flags__publish(struct flags_region *f, uint32_t point,
		    const struct flag_state *st);
/*
 * Turn sds_copy() of guard point @point on or off (its entry's copy
 * word); out-of-range points are ignored.
 */
void flags__set_copy(struct flags_region *f, int point, bool on);
/* Renew the header's tick: guards treat an old tick as a dead loader. */
void flags__tick(struct flags_region *f, uint64_t now_ns);
/* Before flags__create: no region yet (flags__destroy then does nothing). */
void flags__init(struct flags_region *f);
/* A hold (re)started: @point's next probe call not before @next_probe_ns. */
void flags__set_probe(struct flags_region *f, uint32_t point,
		      uint64_t next_probe_ns);
/*
 * A half-open phase: the entry's probe_calls (before the entry is
 * published with SDS_ACT_HALFOPEN); a phase opened, cell.next_probe_ns
 * and then cell.probe_claimed (@claimed: halfopen_claimed0 of its tag), in
 * that order, so that a guard that sees the new claims sees the new start.
 */
void flags__set_probe_calls(struct flags_region *f, uint32_t point,
			    uint32_t calls);
void flags__open_phase(struct flags_region *f, uint32_t point,
		       uint64_t next_probe_ns, uint64_t claimed);
/*
 * A new strategy for @point: a full bucket, no pending probe, and the
 * entry's gen bumped (the cells of their own follow it).
 */
void flags__reset_cell(struct flags_region *f, uint32_t point);
/*
 * Exact trips: @point's visit, exception and slow-call marks (UINT64_MAX:
 * none), before line 1: a guard that sees SDS_ACT_BUDGET sees these or
 * later.
 */
void flags__set_marks(struct flags_region *f, uint32_t point,
		      uint64_t visit_upto, uint64_t exc_upto, uint64_t slow_upto);
/*
 * The CLOCK_MONOTONIC time a call left when it crossed @point's mark of
 * @reason (SDS_REASON_VISIT, _EXCEPTION, _TIMEOUT; 0: none, or another
 * reason): written by the BPF side and any client, so only a hint.
 * Cleared at once, or only if it still holds @seen (a newer crossing
 * stays).
 */
uint64_t flags__cross(const struct flags_region *f, uint32_t point,
		      uint32_t reason);
void flags__clear_cross(struct flags_region *f, uint32_t point,
			uint32_t reason);
void flags__forget_cross(struct flags_region *f, uint32_t point,
			 uint32_t reason, uint64_t seen);
/* Balancing loads: @point's calls in flight and mean latency (lbpub.c). */
void flags__set_lb(struct flags_region *f, uint32_t point, uint32_t inflight,
		   uint32_t latency_ns);
/*
 * Hot keys (docs/KEYS.md "Limits"): @point's blocked-key table, which
 * keyed guard calls read (bpf/sds_flags.h).  flags__key_block blocks the
 * key of sds_key_hash() @hash until CLOCK_MONOTONIC @until_ns (renewing
 * or moving the end of a block it already holds): 0, or -1 with errno
 * EINVAL (@point out of range, @hash 0) or ENOSPC (the key's window of
 * SDS_KEY_BLOCK_PROBES slots is full: it is not blocked; the caller
 * counts it).  A guard ignores an end more than SDS_KEY_BLOCK_MAX_NS
 * ahead of its clock: renew a longer block each tick.
 * flags__key_clear lifts one block (-1, ENOENT: none),
 * flags__key_clear_all every block of @point (its strategy went), and
 * flags__key_blocked says how many @point holds.
 */
int flags__key_block(struct flags_region *f, uint32_t point, uint64_t hash,
		     uint64_t until_ns);
int flags__key_clear(struct flags_region *f, uint32_t point, uint64_t hash);
void flags__key_clear_all(struct flags_region *f, uint32_t point);
uint32_t flags__key_blocked(const struct flags_region *f, uint32_t point);
/*
 * Give back the permits process @slot held (it died or left): its row,
 * bounded by the permits there are (a forged row gives back at most all),
 * in the cells it had; a slot with cells of its own leaves them (the last
 * one out frees them) and is back on the shared cells.
 */
void flags__release_slot(struct flags_region *f, uint32_t slot);

uint64_t flags_now_ns(void);

#endif /* SDS_FLAGS_REGION_H */
