// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * drill_stop.c - a drill's stop conditions judged on this host every tick
 * (drill_stop.h).  The window's counts are the difference of the point's
 * totals now and at the newest sample at least a window old: exact per
 * tick, whatever the ring seconds, and the latency percentile is that of
 * the difference of two histograms, as the heartbeat's is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "decide/drill_stop.h"
#include "kernel/snapshot.h"
#include "window.h"

struct drill_stop *drill_stop__new(const struct sds_hb_stop *s, int n,
				   uint64_t tick_ns, char *err, size_t errlen)
{
	struct drill_stop *ds;
	uint64_t longest = 0;
	int i;

	if (n < 1 || n > SDS_HB_MAX_STOPS) {
		snprintf(err, errlen, "stop_when: 1..%d conditions", SDS_HB_MAX_STOPS);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		uint64_t w = (uint64_t)s[i].window_ms * 1000000ULL;

		/* A window under a tick would judge one sample against itself. */
		if (w < tick_ns) {
			snprintf(err, errlen,
				 "stop_when[%d].window_s %g is shorter than this loader's tick (%llu ms)",
				 i, s[i].window_ms / 1000.0,
				 (unsigned long long)(tick_ns / 1000000));
			return NULL;
		}
		if (w > longest)
			longest = w;
	}
	ds = calloc(1, sizeof(*ds));
	if (!ds) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ds->n = n;
	memcpy(ds->stop, s, n * sizeof(*s));
	/* The longest window in 120 samples, the ring's 8 others as slack. */
	ds->every_ns = longest / (DRILL_STOP_SAMPLES - 8);
	if (ds->every_ns < tick_ns)
		ds->every_ns = tick_ns;
	ds->head = -1;
	return ds;
}

static void sample(struct drill_stop *ds, const struct point_stats *st,
		   uint64_t now_ns)
{
	struct drill_stop_sample *x;

	if (ds->count && now_ns - ds->ring[ds->head].ns + ds->every_ns / 8 < ds->every_ns)
		return;
	ds->head = (ds->head + 1) % DRILL_STOP_SAMPLES;
	if (ds->count < DRILL_STOP_SAMPLES)
		ds->count++;
	x = &ds->ring[ds->head];
	x->ns = now_ns;
	x->visits = st->total.visits;
	x->exceptions = st->total.exceptions;
	x->downgrades = st->total.downgrades;
	x->hist_ok = st->gauges;
	if (st->gauges)
		memcpy(x->hist, st->hist, sizeof(x->hist));
}

/* The newest sample at least @w_ns before the newest one; NULL: none yet. */
static const struct drill_stop_sample *window_start(const struct drill_stop *ds,
						    uint64_t w_ns)
{
	const struct drill_stop_sample *now = &ds->ring[ds->head];
	int i;

	/* A tick's jitter: a sample a little less than a window old is the window's start. */
	for (i = 1; i < ds->count; i++) {
		const struct drill_stop_sample *x =
			&ds->ring[(ds->head - i + DRILL_STOP_SAMPLES) % DRILL_STOP_SAMPLES];

		if (now->ns - x->ns + ds->every_ns / 4 >= w_ns)
			return x;
	}
	return NULL;
}

static bool judge_one(const struct drill_stop *ds, const struct sds_hb_stop *s,
		      char *why, size_t whylen)
{
	const struct drill_stop_sample *now = &ds->ring[ds->head];
	const struct drill_stop_sample *from = window_start(ds, s->window_ms * 1000000ULL);
	uint64_t visits, hist[SDS_HIST_BUCKETS], calls = 0;
	double v;
	int i;

	if (!from)
		return false;
	visits = now->visits - from->visits;
	switch (s->field) {
	case SDS_STOP_EXCEPTION_RATE:
		if (visits < DRILL_STOP_MIN_CALLS)
			return false;
		v = (double)(now->exceptions - from->exceptions) / visits;
		if (v <= s->above)
			return false;
		snprintf(why, whylen, "exception_rate %.3f above %g over %g s: %llu of %llu calls",
			 v, s->above, s->window_ms / 1000.0,
			 (unsigned long long)(now->exceptions - from->exceptions),
			 (unsigned long long)visits);
		return true;
	case SDS_STOP_DOWNGRADES:
		v = (double)(now->downgrades - from->downgrades);
		if (v <= s->above)
			return false;
		snprintf(why, whylen, "downgrades %.0f above %g over %g s", v, s->above,
			 s->window_ms / 1000.0);
		return true;
	case SDS_STOP_P99_MS:
		if (!now->hist_ok || !from->hist_ok)
			return false;
		for (i = 0; i < SDS_HIST_BUCKETS; i++) {
			hist[i] = now->hist[i] - from->hist[i];
			calls += hist[i];
		}
		if (calls < DRILL_STOP_MIN_CALLS)
			return false;
		v = window_hist_percentile(hist, SDS_HIST_BUCKETS, 99) / 1e6;
		if (v <= s->above)
			return false;
		snprintf(why, whylen, "p99_ms %.1f above %g over %g s: %llu calls",
			 v, s->above, s->window_ms / 1000.0, (unsigned long long)calls);
		return true;
	}
	return false;
}

bool drill_stop__judge(struct drill_stop *ds, const struct point_stats *st,
		       uint64_t now_ns, char *why, size_t whylen)
{
	int i;

	if (!st || !st->ok)
		return false;
	sample(ds, st, now_ns);
	for (i = 0; i < ds->n; i++)
		if (judge_one(ds, &ds->stop[i], why, whylen))
			return true;
	return false;
}
