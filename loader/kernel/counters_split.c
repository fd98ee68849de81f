// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * counters_split.c - where calls' time went (docs/SPLIT.md), summed over
 * CPUs into a snapshot: every read the sums (32 bytes a point and CPU),
 * the histograms only when asked (COUNTERS_SPLIT_HIST: `hist --split`,
 * 1.5 KB a point and CPU).  A point whose split is unavailable (no
 * tracepoints: --no-split, refused, adopted; or its read failed) has
 * split false, never zeros that look like counts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/counters.h"

static int split_scratch(struct counters *c, bool hists)
{
	if (!c->split)
		c->split = calloc((size_t)c->ncpu * COUNTERS_CHUNK, sizeof(*c->split));
	if (hists && !c->split_hist)
		c->split_hist = calloc((size_t)c->ncpu * COUNTERS_CHUNK,
				       sizeof(*c->split_hist));
	return c->split && (!hists || c->split_hist) ? 0 : -1;
}

static void sum_one(const struct sds_split_sum *s, int ncpu,
		    struct point_stats *p)
{
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++) {
		p->split_calls += s[cpu].calls;
		p->split_on_cpu_ns += s[cpu].on_cpu_ns;
		p->split_runq_ns += s[cpu].runq_ns;
		p->split_blocked_ns += s[cpu].blocked_ns;
	}
	p->split = true;
}

static void hist_one(const struct sds_split_hist *h, int ncpu,
		     struct point_stats *p)
{
	int cpu, b;

	for (cpu = 0; cpu < ncpu; cpu++)
		for (b = 0; b < SDS_HIST_BUCKETS; b++) {
			p->split_hist.on_cpu[b] += h[cpu].on_cpu[b];
			p->split_hist.runq[b] += h[cpu].runq[b];
			p->split_hist.blocked[b] += h[cpu].blocked[b];
		}
	p->split_hists = true;
}

void counters_split__snap(struct counters *c, unsigned int what,
			  struct snapshot *out)
{
	bool hists = (what & COUNTERS_SPLIT_HIST) && c->src.read_split_hist;
	int first, n, i;

	out->split_hists = false;
	if (!c->src.read_split || split_scratch(c, hists))
		return;
	for (first = 0; first < out->npoints; first += n) {
		n = out->npoints - first;
		if (n > COUNTERS_CHUNK)
			n = COUNTERS_CHUNK;
		if (c->src.read_split(c->src.ctx, first, n, c->split))
			return;	/* unavailable, or unread: split false */
		for (i = 0; i < n; i++)
			sum_one(c->split + (size_t)i * c->ncpu, c->ncpu,
				&out->pts[first + i]);
		if (!hists || c->src.read_split_hist(c->src.ctx, first, n,
						     c->split_hist))
			continue;
		for (i = 0; i < n; i++)
			hist_one(c->split_hist + (size_t)i * c->ncpu, c->ncpu,
				 &out->pts[first + i]);
	}
	out->split_hists = hists;
}

void counters_split__free(struct counters *c)
{
	free(c->split);
	free(c->split_hist);
	c->split = NULL;
	c->split_hist = NULL;
}
