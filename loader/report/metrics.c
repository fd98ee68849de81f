// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * metrics.c - the tick's side of --metrics (metrics.h): when a scrape
 * waits, copy every point's counters where the thread renders them, from
 * the tick's record and a read with the gauges.
 */
#include <stdio.h>
#include <string.h>
#include "tick/tick.h"
#include "kernel/probes.h"
#include "kernel/snapshot.h"
#include "report/metrics.h"

void metrics__copy(const struct tick *t, const struct snapshot *snap,
		   struct metrics_data *d)
{
	static const struct point_stats none;
	int i;

	snprintf(d->group, sizeof(d->group), "%s", t->group);
	snprintf(d->app, sizeof(d->app), "%s", t->app);
	d->npoints = t->npoints;
	for (i = 0; i < d->npoints; i++) {
		const struct tick_point *tp = &t->pt[i];
		const struct point_stats *st = snapshot__point(snap, i);
		struct metrics_point *p = &d->pts[i];

		/* Added since the read (a guard's `point`): no calls yet. */
		if (!st)
			st = &none;
		snprintf(p->name, sizeof(p->name), "%s", tp->name);
		p->guard = tp->kind != POINT_FUNCTION;
		p->latency = tp->latency;
		p->downgraded = tp->shown != 0;
		p->total = st->total;
		p->concurrency = st->concurrency;
		memcpy(p->hist, st->hist, sizeof(p->hist));
	}
}

void metrics__tick(struct metrics *m, const struct tick *t,
		   const struct snapshot *snap)
{
	struct metrics_data *d;

	if (!m)
		return;
	d = metrics__want(m);
	if (!d)
		return;
	metrics__copy(t, snap, d);
	metrics__published(m);
}
