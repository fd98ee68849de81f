// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* counters.c - sum the per-CPU BPF counters into what the views show. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "counters.h"

/* See counters_align(): the BPF side adds the same to its clock. */
static uint64_t sec_offset_ns;

void counters_align(uint64_t offset_ns)
{
	sec_offset_ns = offset_ns;
}

uint64_t counters_align_wall(int64_t *wall_offset)
{
	struct timespec mono, real;
	int64_t m, r, d, off;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	m = (int64_t)mono.tv_sec * 1000000000LL + mono.tv_nsec;
	r = (int64_t)real.tv_sec * 1000000000LL + real.tv_nsec;
	d = r - m;
	off = ((d % 1000000000LL) + 1000000000LL) % 1000000000LL;
	counters_align((uint64_t)off);
	*wall_offset = (d - off) / 1000000000LL;
	return (uint64_t)off;
}

uint64_t counters_now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec + sec_offset_ns) /
	       1000000000ULL;
}

int counters__init(struct counters *c, const struct counters_source *src,
		   int npoints, uint64_t now_sec)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->src = *src;
	c->ncpu = src->ncpu;
	c->npoints = npoints;
	if (c->ncpu <= 0) {
		errno = EINVAL;
		return -1;
	}
	c->ring = calloc((size_t)c->ncpu * SDS_RING_SLOTS * COUNTERS_CHUNK,
			 sizeof(*c->ring));
	c->gauge = calloc((size_t)c->ncpu * COUNTERS_CHUNK, sizeof(*c->gauge));
	c->acc = calloc(SDS_MAX_POINTS, sizeof(*c->acc));
	if (!c->ring || !c->gauge || !c->acc) {
		counters__free(c);
		errno = ENOMEM;
		return -1;
	}
	/* Nothing before attach counts: the maps are new, all slots stale. */
	for (i = 0; i < SDS_MAX_POINTS; i++)
		c->acc[i].folded_sec = now_sec - 1;
	return 0;
}

void counters__track(struct counters *c, int npoints)
{
	if (npoints > c->npoints && npoints <= SDS_MAX_POINTS)
		c->npoints = npoints;
}

/* @ring (all CPUs' copies of one point's ring) per second into @p->secs. */
static void ring_secs(const struct sds_slot *ring, size_t n, uint64_t now_sec,
		      struct point_stats *p)
{
	size_t k;

	for (k = 0; k < n; k++) {
		const struct sds_slot *s = &ring[k];
		struct sds_counts one;

		/* Stale slots (nobody wrote them since) are older than the ring. */
		if (s->sec > now_sec || now_sec - s->sec >= SDS_RING_SLOTS)
			continue;
		one.visits = s->visits;
		one.exceptions = s->exceptions;
		one.timeouts = s->timeouts;
		one.downgrades = s->downgrades;
		one.latency_sum = s->latency_sum;
		counts_add(&p->secs[now_sec - s->sec], &one);
	}
}

/* The seconds of @p that are complete (up to @now_sec - 2) into @id's totals. */
static void fold(struct counters *c, int id, uint64_t now_sec,
		 const struct point_stats *p)
{
	static const struct sds_counts zero;
	struct point_acc *a = &c->acc[id];
	uint64_t upto;

	/* A probe that read the clock in second S writes within microseconds:
	 * S is complete once we are in S + 2. */
	if (now_sec < 2 || now_sec - 2 <= a->folded_sec)
		return;
	upto = now_sec - 2;
	if (upto - a->folded_sec > SDS_RING_SLOTS)
		a->folded_sec = upto - SDS_RING_SLOTS;
	/* Second by second, so the heartbeat can put each in its period. */
	while (a->folded_sec < upto) {
		uint64_t age = now_sec - ++a->folded_sec;
		const struct sds_counts *one = age < SDS_RING_SLOTS ?
					       &p->secs[age] : &zero;

		counts_add(&a->totals, one);
		if (c->on_second)
			c->on_second(c->hook_ctx, id, a->folded_sec, one);
	}
}

/* Gauges of all CPUs: concurrency, completed, dropped, histogram. */
static void gauge_sum(const struct sds_gauge *gauge, int ncpu,
		      struct point_stats *p)
{
	int cpu, b;

	for (cpu = 0; cpu < ncpu; cpu++) {
		const struct sds_gauge *g = &gauge[cpu];

		p->concurrency += g->entered;
		p->dropped += g->dropped;
		for (b = 0; b < SDS_HIST_BUCKETS; b++)
			p->hist[b] += g->hist[b];
	}
	p->completed = hist_total(p->hist, SDS_HIST_BUCKETS);
	/* In flight: entered, not completed, not given up. */
	p->concurrency -= (int64_t)(p->completed + p->dropped);
	/* CPUs are read one after another: a call can look ended before begun. */
	if (p->concurrency < 0)
		p->concurrency = 0;
}

/* Point @id from the chunk's scratch (@i-th of it) into @p. */
static void point_snap(struct counters *c, int id, int i, uint64_t now_sec,
		       bool do_fold, struct point_stats *p)
{
	size_t n = (size_t)c->ncpu * SDS_RING_SLOTS;
	uint64_t age;

	memset(p, 0, sizeof(*p));
	ring_secs(c->ring + (size_t)i * n, n, now_sec, p);
	if (do_fold)
		fold(c, id, now_sec, p);
	p->total = c->acc[id].totals;
	for (age = 0; age < SDS_RING_SLOTS && now_sec - age > c->acc[id].folded_sec; age++)
		counts_add(&p->total, &p->secs[age]);
	for (age = 0; age < SDS_WINDOW_S; age++)
		counts_add(&p->window, &p->secs[age]);
	gauge_sum(c->gauge + (size_t)i * c->ncpu, c->ncpu, p);
	p->ok = true;
}

int counters__snap(struct counters *c, uint64_t now_sec, bool do_fold,
		   struct snapshot *out)
{
	int first, n, i, ret = 0;

	out->sec = now_sec;
	out->npoints = c->npoints < out->cap ? c->npoints : out->cap;
	for (first = 0; first < out->npoints; first += n) {
		n = out->npoints - first;
		if (n > COUNTERS_CHUNK)
			n = COUNTERS_CHUNK;
		if (c->src.read(c->src.ctx, first, n, c->ring, c->gauge)) {
			/* Unread, not folded: the next tick folds its seconds. */
			for (i = 0; i < n; i++)
				out->pts[first + i].ok = false;
			ret = -1;
			continue;
		}
		for (i = 0; i < n; i++)
			point_snap(c, first + i, i, now_sec, do_fold,
				   &out->pts[first + i]);
	}
	return ret;
}

int counters__read_point(struct counters *c, int id, uint64_t now_sec,
			 struct point_stats *out)
{
	if (id < 0 || id >= SDS_MAX_POINTS ||
	    c->src.read(c->src.ctx, id, 1, c->ring, c->gauge))
		return -1;
	point_snap(c, id, 0, now_sec, false, out);
	return 0;
}

void counters__free(struct counters *c)
{
	free(c->ring);
	free(c->gauge);
	free(c->acc);
	c->ring = NULL;
	c->gauge = NULL;
	c->acc = NULL;
}
