// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* counters.c - sum the per-CPU BPF counters into what the views show. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kernel/counters.h"

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
	c->ring = calloc((size_t)c->ncpu * COUNTERS_ROW_CHUNK, sizeof(*c->ring));
	c->gauge = calloc((size_t)c->ncpu * COUNTERS_CHUNK, sizeof(*c->gauge));
	c->acc = calloc(SDS_MAX_POINTS, sizeof(*c->acc));
	c->secs = calloc((size_t)SDS_MAX_POINTS * SDS_RING_SLOTS, sizeof(*c->secs));
	if (!c->ring || !c->gauge || !c->acc || !c->secs) {
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
	if (npoints > c->npoints && npoints <= SDS_MAX_POINTS) {
		c->npoints = npoints;
		/* The new points' seconds were never read: all rows again. */
		c->complete_upto = 0;
	}
}

void counters__save(const struct counters *c, int id, struct point_acc *out)
{
	*out = c->acc[id];
}

void counters__restore(struct counters *c, int id, const struct point_acc *in)
{
	c->acc[id] = *in;
}

/* Second @sec of points [0, @n): each point's CPUs summed into c->secs. */
static int read_row(struct counters *c, uint64_t sec, int n)
{
	int idx = sec % SDS_RING_SLOTS, first, k, i, cpu;

	for (first = 0; first < n; first += k) {
		k = n - first < COUNTERS_ROW_CHUNK ? n - first : COUNTERS_ROW_CHUNK;
		if (c->src.read_row(c->src.ctx, idx, first, k, c->ring))
			return -1;
		for (i = 0; i < k; i++) {
			struct counters_sec *cs = &c->secs[(size_t)(first + i) *
							   SDS_RING_SLOTS + idx];
			const struct sds_slot *sl = c->ring + (size_t)i * c->ncpu;

			memset(cs, 0, sizeof(*cs));
			cs->sec = sec;
			for (cpu = 0; cpu < c->ncpu; cpu++) {
				/* A stale stamp: that CPU counted nothing this second. */
				if (sl[cpu].sec != sec)
					continue;
				cs->c.visits += sl[cpu].visits;
				cs->c.exceptions += sl[cpu].exceptions;
				cs->c.timeouts += sl[cpu].timeouts;
				cs->c.downgrades += sl[cpu].downgrades;
				cs->c.latency_sum += sl[cpu].latency_sum;
			}
		}
	}
	return 0;
}

/*
 * The rows that can have changed since the last read: a second is
 * complete (never written again) once we are two seconds past it.
 */
static int read_rows(struct counters *c, uint64_t now_sec)
{
	uint64_t from = now_sec >= SDS_RING_SLOTS - 1 ? now_sec - (SDS_RING_SLOTS - 1) : 0;
	uint64_t sec;

	if (c->complete_upto + 1 > from)
		from = c->complete_upto + 1;
	for (sec = from; sec <= now_sec; sec++)
		if (read_row(c, sec, c->npoints))
			return -1;
	if (now_sec >= 2 && now_sec - 2 > c->complete_upto)
		c->complete_upto = now_sec - 2;
	return 0;
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

		window_counts_add(&a->totals, one);
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
	p->completed = window_hist_total(p->hist, SDS_HIST_BUCKETS);
	/* In flight: entered, not completed, not given up. */
	p->concurrency -= (int64_t)(p->completed + p->dropped);
	/* CPUs are read one after another: a call can look ended before begun. */
	if (p->concurrency < 0)
		p->concurrency = 0;
	p->gauges = true;
}

/* Point @id's seconds from c->secs into @p; folded with @do_fold. */
static void point_snap(struct counters *c, int id, uint64_t now_sec,
		       bool do_fold, struct point_stats *p)
{
	const struct counters_sec *cs = &c->secs[(size_t)id * SDS_RING_SLOTS];
	uint64_t age;

	memset(p, 0, sizeof(*p));
	for (age = 0; age < SDS_RING_SLOTS && age <= now_sec; age++) {
		const struct counters_sec *one = &cs[(now_sec - age) % SDS_RING_SLOTS];

		if (one->sec == now_sec - age)
			p->secs[age] = one->c;
	}
	if (do_fold)
		fold(c, id, now_sec, p);
	p->total = c->acc[id].totals;
	for (age = 0; age < SDS_RING_SLOTS && now_sec - age > c->acc[id].folded_sec; age++)
		window_counts_add(&p->total, &p->secs[age]);
	for (age = 0; age < SDS_WINDOW_S; age++)
		window_counts_add(&p->window, &p->secs[age]);
	p->ok = true;
}

int counters__snap(struct counters *c, uint64_t now_sec, unsigned int what,
		   struct snapshot *out)
{
	int first, n, i;

	out->sec = now_sec;
	out->npoints = c->npoints < out->cap ? c->npoints : out->cap;
	out->gauges = what & COUNTERS_GAUGES;
	if (read_rows(c, now_sec)) {
		/* Unread, not folded: the next tick folds their seconds. */
		for (i = 0; i < out->npoints; i++)
			out->pts[i].ok = false;
		return -1;
	}
	for (i = 0; i < out->npoints; i++)
		point_snap(c, i, now_sec, what & COUNTERS_FOLD, &out->pts[i]);
	/* Where the calls' time went: every read, the adaptive limit's steer. */
	counters_split__snap(c, what, out);
	for (first = 0; (what & COUNTERS_GAUGES) && first < out->npoints;
	     first += n) {
		n = out->npoints - first;
		if (n > COUNTERS_CHUNK)
			n = COUNTERS_CHUNK;
		if (c->src.read_gauges(c->src.ctx, first, n, c->gauge))
			continue;	/* gauges false: unknown this time */
		for (i = 0; i < n; i++)
			gauge_sum(c->gauge + (size_t)i * c->ncpu, c->ncpu,
				  &out->pts[first + i]);
	}
	/* After the ring: a stuck call that ends meanwhile is in neither. */
	if (c->read_stuck)
		c->read_stuck(c->stuck, out);
	return 0;
}

int counters__read_point(struct counters *c, int id, uint64_t now_sec,
			 struct point_stats *out)
{
	if (id < 0 || id >= c->npoints || read_rows(c, now_sec))
		return -1;
	point_snap(c, id, now_sec, false, out);
	return 0;
}

void counters__free(struct counters *c)
{
	free(c->ring);
	free(c->gauge);
	free(c->acc);
	free(c->secs);
	counters_split__free(c);
	c->ring = NULL;
	c->gauge = NULL;
	c->acc = NULL;
	c->secs = NULL;
}
