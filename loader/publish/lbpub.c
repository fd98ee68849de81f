// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * lbpub.c - publish each provider point's load for libsds's balancer
 * (docs/BALANCE.md, "How the load is published").
 *
 * A provider is a guard point named "<dep>@<provider>".  Every tick its
 * flag entry gets, in two single aligned relaxed stores outside the
 * entry's seq (bpf/sds_flags.h says why that is enough):
 *
 *   lb_inflight    the kernel's in-flight gauge of the point: calls of
 *                  every registered process of the app, entered and not
 *                  returned, at the tick's read;
 *   lb_latency_ns  the mean latency of the newest completed calls (at
 *                  least LBPUB_MIN_CALLS of them, within the last
 *                  LBPUB_SPAN_NS; lbpub.h): the difference of the point's
 *                  cumulative latency sum (the ring's slots) over the
 *                  difference of its completed calls (the histogram's
 *                  total), between the tick's read and an older sample.
 *                  Exact sums, no bucket rounding: the histogram's
 *                  log2 buckets would be off by up to 2x, and summing
 *                  them is 64 adds a point where this is two subtractions.
 *
 * Reading the gauges costs the tick 1 KB a point (2 CPUs), so the tick
 * reads them only when a provider point exists (lbpub__wants_gauges).
 */
#include <stdlib.h>
#include <string.h>
#include "publish/lbpub.h"
#include "kernel/probes.h"
#include "kernel/snapshot.h"
#include "publish/flags.h"
#include "tick/tick.h"

bool lbpub_is_provider(const char *name)
{
	return strchr(name, '@') != NULL;
}

static struct lbpub *lbpub_get(struct lbpub **lpp)
{
	if (!*lpp)
		*lpp = calloc(1, sizeof(**lpp) +
			      SDS_MAX_POINTS * sizeof((*lpp)->pt[0]));
	return *lpp;
}

bool lbpub__wants_gauges(struct lbpub **lpp, const struct probes *p)
{
	struct lbpub *lp = *lpp;
	int id;

	/* The common case, no provider and no new point: two loads. */
	if (lp && lp->scanned == p->npoints)
		return lp->nproviders > 0;
	for (id = lp ? lp->scanned : 0; id < p->npoints; id++) {
		if (!lbpub_is_provider(p->pts[id].spec.name))
			continue;
		lp = lbpub_get(lpp);
		if (!lp)
			return false;
		lp->pt[id] = calloc(1, sizeof(*lp->pt[id]));
		if (!lp->pt[id])
			return lp->nproviders > 0;	/* tried again next tick */
		lp->nproviders++;
	}
	if (!lp && !(lp = lbpub_get(lpp)))
		return false;
	lp->scanned = id;
	return lp->nproviders > 0;
}

/* The newest sample, or NULL. */
static const struct lbpub_sample *newest(const struct lbpub_point *p)
{
	return p->n ? &p->s[(p->pos + LBPUB_RING - 1) % LBPUB_RING] : NULL;
}

/*
 * The sample to measure @cur from: going back from the newest, the first
 * with LBPUB_MIN_CALLS completed since, or the last one within the span
 * (NULL: none yet).
 */
static const struct lbpub_sample *base(const struct lbpub_point *p,
				       const struct lbpub_sample *cur)
{
	const struct lbpub_sample *s, *best = NULL;
	unsigned int i;

	for (i = 1; i <= p->n; i++) {
		s = &p->s[(p->pos + LBPUB_RING - i) % LBPUB_RING];
		if (best && cur->at_ns - s->at_ns > LBPUB_SPAN_NS)
			break;
		best = s;
		if (cur->done - s->done >= LBPUB_MIN_CALLS)
			break;
	}
	return best;
}

uint64_t lbpub_mean(struct lbpub_point *p, const struct point_stats *st,
		    uint64_t now_ns)
{
	struct lbpub_sample cur = {
		.at_ns = now_ns,
		.lat_sum = st->total.latency_sum,
		.done = st->completed,
	};
	const struct lbpub_sample *nw = newest(p), *b;

	/* Counts that went back (a loader that adopted others): start over. */
	if (nw && (cur.done < nw->done || cur.lat_sum < nw->lat_sum ||
		   now_ns < nw->at_ns)) {
		p->n = 0;
		nw = NULL;
	}
	b = base(p, &cur);
	if (nw && cur.done != nw->done)
		p->last_done_ns = now_ns;
	if (b && cur.done > b->done)
		p->mean_ns = (cur.lat_sum - b->lat_sum) / (cur.done - b->done);
	else if (now_ns - p->last_done_ns > LBPUB_FORGET_NS)
		p->mean_ns = 0;
	/* Else nothing completed within the span: the last mean stands. */
	if (!nw || now_ns - nw->at_ns >= LBPUB_STEP_NS) {
		p->s[p->pos] = cur;
		p->pos = (p->pos + 1) % LBPUB_RING;
		if (p->n < LBPUB_RING)
			p->n++;
	}
	return p->mean_ns;
}

void lbpub__tick(struct lbpub *lp, struct flags_region *f, const struct tick *t)
{
	const struct point_stats *st;
	uint64_t mean;
	int64_t inflight;
	int id;

	if (!lp || !lp->nproviders || !t->snap)
		return;
	for (id = 0; id < lp->scanned; id++) {
		if (!lp->pt[id])
			continue;
		st = snapshot__point(t->snap, id);
		/* Not read this tick: the last tick's values stand. */
		if (!st || !st->gauges)
			continue;
		inflight = st->concurrency < 0 ? 0 : st->concurrency;
		mean = lbpub_mean(lp->pt[id], st, t->now_ns);
		flags__set_lb(f, id,
			      inflight > UINT32_MAX ? UINT32_MAX : (uint32_t)inflight,
			      mean > UINT32_MAX ? UINT32_MAX : (uint32_t)mean);
	}
}

void lbpub__free(struct lbpub *lp)
{
	int id;

	if (!lp)
		return;
	for (id = 0; id < SDS_MAX_POINTS; id++)
		free(lp->pt[id]);
	free(lp);
}
