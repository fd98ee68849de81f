// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* counters.c - sum the per-CPU BPF counters into what the views show. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
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

/* All per-CPU copies of @point's ring into c->ring. */
static int ring_read(struct counters *c, int point)
{
	__u32 key;
	int i;

	for (i = 0; i < SDS_RING_SLOTS; i++) {
		key = point * SDS_RING_SLOTS + i;
		if (bpf_map_lookup_elem(c->slots_fd, &key,
					c->ring + (size_t)i * c->ncpu))
			return -1;
	}
	return 0;
}

int counters__init(struct counters *c, int slots_fd, int gauges_fd,
		   int npoints)
{
	uint64_t now = counters_now_sec();
	int i;

	memset(c, 0, sizeof(*c));
	c->slots_fd = slots_fd;
	c->gauges_fd = gauges_fd;
	c->npoints = npoints;
	c->ncpu = libbpf_num_possible_cpus();
	if (c->ncpu <= 0)
		return -1;
	c->ring = calloc((size_t)c->ncpu * SDS_RING_SLOTS, sizeof(*c->ring));
	c->gauge = calloc(c->ncpu, sizeof(*c->gauge));
	c->acc = calloc(SDS_MAX_POINTS, sizeof(*c->acc));
	if (!c->ring || !c->gauge || !c->acc) {
		counters__free(c);
		errno = ENOMEM;
		return -1;
	}
	/* Nothing before attach counts: the maps are new, all slots stale. */
	for (i = 0; i < SDS_MAX_POINTS; i++)
		c->acc[i].folded_sec = now - 1;
	return 0;
}

void counters__track(struct counters *c, int npoints)
{
	if (npoints > c->npoints && npoints <= SDS_MAX_POINTS)
		c->npoints = npoints;
}

int counters__window(struct counters *c, int point, uint64_t from_sec,
		     uint64_t to_sec, struct sds_counts *out)
{
	memset(out, 0, sizeof(*out));
	if (ring_read(c, point))
		return -1;
	window_sum(c->ring, (size_t)c->ncpu * SDS_RING_SLOTS, from_sec, to_sec,
		   out);
	return 0;
}

int counters__tick(struct counters *c, uint64_t now_sec)
{
	size_t n = (size_t)c->ncpu * SDS_RING_SLOTS;
	int i;

	/* A probe that read the clock in second S writes within microseconds:
	 * S is complete once we are in S + 2. */
	if (now_sec < 2)
		return 0;
	for (i = 0; i < c->npoints; i++) {
		struct point_acc *a = &c->acc[i];
		uint64_t upto = now_sec - 2;

		if (upto <= a->folded_sec)
			continue;
		if (ring_read(c, i))
			return -1;
		if (!c->on_second) {
			window_sum(c->ring, n, a->folded_sec + 1, upto, &a->totals);
			a->folded_sec = upto;
			continue;
		}
		/* Second by second, so the heartbeat can put each in its period. */
		if (upto - a->folded_sec > SDS_RING_SLOTS)
			a->folded_sec = upto - SDS_RING_SLOTS;
		while (a->folded_sec < upto) {
			struct sds_counts one = {};

			a->folded_sec++;
			window_sum(c->ring, n, a->folded_sec, a->folded_sec, &one);
			counts_add(&a->totals, &one);
			c->on_second(c->hook_ctx, i, a->folded_sec, &one);
		}
	}
	return 0;
}

int counters__read(struct counters *c, int point, uint64_t now_sec,
		   struct point_stats *out)
{
	size_t n = (size_t)c->ncpu * SDS_RING_SLOTS;
	struct point_acc *a = &c->acc[point];
	__u32 key = point;
	int cpu, b;

	memset(out, 0, sizeof(*out));
	if (ring_read(c, point))
		return -1;
	out->total = a->totals;
	window_sum(c->ring, n, a->folded_sec + 1, now_sec, &out->total);
	window_sum(c->ring, n, now_sec + 1 - SDS_WINDOW_S, now_sec,
		   &out->window);

	if (bpf_map_lookup_elem(c->gauges_fd, &key, c->gauge))
		return -1;
	for (cpu = 0; cpu < c->ncpu; cpu++) {
		const struct sds_gauge *g = &c->gauge[cpu];

		out->concurrency += g->entered;
		out->dropped += g->dropped;
		for (b = 0; b < SDS_HIST_BUCKETS; b++)
			out->hist[b] += g->hist[b];
	}
	out->completed = hist_total(out->hist, SDS_HIST_BUCKETS);
	/* In flight: entered, not completed, not given up. */
	out->concurrency -= (int64_t)(out->completed + out->dropped);
	/* CPUs are read one after another: a call can look ended before begun. */
	if (out->concurrency < 0)
		out->concurrency = 0;
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
