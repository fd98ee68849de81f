/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Reading the kernel's counters: per-CPU ring slots and gauges summed
 * into totals since attach and the 10-s sliding window.
 *
 * The ring holds only 16 seconds, so every tick folds the seconds that
 * can no longer change (older than now - 1) into per-point totals; a
 * query adds the seconds not folded yet.
 */
#ifndef SDS_COUNTERS_H
#define SDS_COUNTERS_H

#include <stdint.h>
#include "sds_types.h"
#include "window.h"

/* What a query shows of one point. */
struct point_stats {
	struct sds_counts total;	/* since attach */
	struct sds_counts window;	/* the last SDS_WINDOW_S seconds, this one included */
	int64_t concurrency;		/* calls in flight now */
	uint64_t completed;		/* calls paired entry to return */
	uint64_t dropped;		/* entries given up (never returned) */
	uint64_t hist[SDS_HIST_BUCKETS];	/* latency histogram since attach */
};

/* Running totals of one point. */
struct point_acc {
	struct sds_counts totals;	/* every second up to @folded_sec */
	uint64_t folded_sec;		/* last second added to @totals */
};

struct counters {
	int slots_fd;			/* PERCPU_ARRAY of struct sds_slot */
	int gauges_fd;			/* PERCPU_ARRAY of struct sds_gauge */
	int ncpu;			/* possible CPUs: per-CPU values per key */
	int npoints;			/* points tracked */
	struct sds_slot *ring;		/* scratch: ncpu * SDS_RING_SLOTS slots */
	struct sds_gauge *gauge;	/* scratch: ncpu gauges */
	struct point_acc *acc;		/* npoints running totals */
	/* Called for every second folded, in order (the heartbeat's periods). */
	void (*on_second)(void *ctx, int point, uint64_t sec,
			  const struct sds_counts *c);
	void *hook_ctx;			/* @on_second's first argument */
};

/*
 * The seconds the ring is kept in: CLOCK_MONOTONIC shifted by @offset_ns
 * (< 1 s) so that they begin when wall-clock seconds do, and every second
 * of the ring falls in exactly one natural 10-s period of the heartbeat.
 * The BPF side adds the same offset (its rodata sec_offset_ns).
 */
void counters_align(uint64_t offset_ns);
uint64_t counters_now_sec(void);
/*
 * Align with the wall clock now: returns the offset (for the BPF side)
 * and sets *@wall_offset to Unix seconds minus the ring's seconds.
 */
uint64_t counters_align_wall(int64_t *wall_offset);

int counters__init(struct counters *c, int slots_fd, int gauges_fd,
		   int npoints);
/* Points 0..@npoints-1 are in use (the table only grows). */
void counters__track(struct counters *c, int npoints);
/* Sum @point's ring over [@from_sec, @to_sec]. */
int counters__window(struct counters *c, int point, uint64_t from_sec,
		     uint64_t to_sec, struct sds_counts *out);
/* Fold the seconds that are complete into the totals. */
int counters__tick(struct counters *c, uint64_t now_sec);
int counters__read(struct counters *c, int point, uint64_t now_sec,
		   struct point_stats *out);
void counters__free(struct counters *c);

#endif /* SDS_COUNTERS_H */
