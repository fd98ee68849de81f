/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * snapshot.h - every point's counters as one read saw them.
 *
 * Each tick counters__snap() reads every point's ring and gauge once
 * (batched) into a snapshot; the engine (windows, in-flight bound), the
 * uplink (concurrency, histogram marks), the budget (call rates) and the
 * queries (stats, hist) all read that snapshot, never the maps.  A
 * snapshot is never written while anyone holds it: a reader that keeps one
 * across passes of the loop (a `stats` built in slices) takes a reference,
 * and the next read goes into another buffer of the pool.
 */
#ifndef SDS_SNAPSHOT_H
#define SDS_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include "sds_types.h"
#include "window.h"

/* Snapshots alive at once: the engine's, a query's, a few `stats` in slices. */
#define SNAP_POOL	6

/* One point as a read saw it. */
struct point_stats {
	struct sds_counts total;	/* since attach, up to the read's second */
	struct sds_counts window;	/* the last SDS_WINDOW_S seconds, this one included */
	struct sds_counts secs[SDS_RING_SLOTS];	/* [i]: second (snapshot sec - i) */
	int64_t concurrency;		/* calls in flight now */
	uint64_t completed;		/* calls paired entry to return */
	uint64_t dropped;		/* entries given up (never returned) */
	uint64_t hist[SDS_HIST_BUCKETS];	/* latency histogram since attach */
	uint32_t stuck;			/* calls in flight past the timeout, counted now (stuck.h) */
	bool stuck_read;		/* @stuck was read (false: unknown, or no table) */
	bool ok;			/* read; false: its maps could not be read */
	bool gauges;			/* @concurrency .. @hist were read */
	/*
	 * Where the time of its completed calls went (docs/SPLIT.md), since
	 * attach, summed over CPUs: read every tick; a consumer diffs two
	 * snapshots for a tick's share (the mean blocked ns a call: the
	 * delta of @split_blocked_ns over the delta of @split_calls).
	 */
	bool split;			/* available: the tracepoints run and were read */
	bool split_hists;		/* @split_hist was read (COUNTERS_SPLIT_HIST) */
	uint64_t split_calls;		/* completed calls split */
	uint64_t split_on_cpu_ns;	/* their time on a CPU */
	uint64_t split_runq_ns;		/* ... runnable, waiting on a run queue */
	uint64_t split_blocked_ns;	/* ... asleep until woken */
	struct sds_split_hist split_hist;	/* each part's log2 histogram */
};

struct snapshot {
	int refs;			/* holders; 0: free for the next read */
	uint64_t sec;			/* the ring second it was read at */
	uint64_t taken_ns;		/* CLOCK_MONOTONIC of the read */
	uint64_t gen;			/* reads so far when it was taken (1, 2, ...) */
	bool gauges;			/* the gauges were read (COUNTERS_GAUGES) */
	bool split_hists;		/* the split's histograms were read (COUNTERS_SPLIT_HIST) */
	int npoints;			/* points read: ids 0..npoints-1 */
	int cap;			/* points @pts has room for */
	struct point_stats *pts;	/* @cap entries */
};

struct snap_pool {
	int cap;			/* points per snapshot */
	uint64_t gen;			/* reads taken so far */
	struct snapshot *s[SNAP_POOL];	/* allocated on first use */
};

/* A free snapshot of @p (refs 1), or NULL when all are held or memory ran out. */
struct snapshot *snap_pool__take(struct snap_pool *p);
void snap_pool__free(struct snap_pool *p);
struct snapshot *snapshot__get(struct snapshot *s);
void snapshot__put(struct snapshot *s);

/* Point @id of @s; NULL if @s did not read it. */
const struct point_stats *snapshot__point(const struct snapshot *s, int id);
/*
 * Add point @id's counts of seconds [@from, @to] to @out: only the last
 * SDS_RING_SLOTS seconds of the snapshot are there; older ones add 0.
 */
void snapshot__sum(const struct snapshot *s, int id, uint64_t from,
		   uint64_t to, struct sds_counts *out);

#endif /* SDS_SNAPSHOT_H */
