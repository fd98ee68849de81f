/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Window math shared by the loader and the admin: sums over the per-CPU
 * one-second ring and percentiles of log2 latency histograms.  Pure
 * functions, no I/O: unit tested in tests/unit/common/test_window.c.
 */
#ifndef SDS_WINDOW_H
#define SDS_WINDOW_H

#include <stddef.h>
#include <stdint.h>
#include "sds_types.h"

/* The four counters every view shows, plus the latency sum. */
struct sds_counts {
	uint64_t visits;	/* calls entered */
	uint64_t exceptions;	/* calls that failed */
	uint64_t timeouts;	/* calls slower than the timeout */
	uint64_t downgrades;	/* calls refused by a guard */
	uint64_t latency_sum;	/* ns, over completed calls */
};

/*
 * Add to @out every slot of @slots[0..n) whose second lies in
 * [@from_sec, @to_sec].  @slots holds any number of per-CPU copies of a
 * point's ring in any order; slots left over from older seconds (stale:
 * not reset because nobody wrote them since) are skipped by their stamp.
 */
void window_sum(const struct sds_slot *slots, size_t n,
		uint64_t from_sec, uint64_t to_sec, struct sds_counts *out);

/* @a += @b, field by field. */
void window_counts_add(struct sds_counts *a, const struct sds_counts *b);

/* Index of the log2 bucket for @ns: [2^i, 2^(i+1)); 0 and 1 go to 0. */
int window_hist_bucket(uint64_t ns);

/* Sum of all buckets. */
uint64_t window_hist_total(const uint64_t *buckets, int nbuckets);

/*
 * The @pct-th percentile (0 < pct <= 100) in ns, interpolated linearly
 * inside the log2 bucket that holds it; 0 for an empty histogram.
 */
uint64_t window_hist_percentile(const uint64_t *buckets, int nbuckets, double pct);

#endif /* SDS_WINDOW_H */
