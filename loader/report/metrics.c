// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * metrics.c - the tick's side of --metrics (metrics.h): when a scrape
 * waits, copy every point's counters where the thread renders them.
 */
#include <stdio.h>
#include <string.h>
#include "daemon/loader.h"
#include "daemon/engine.h"
#include "report/metrics.h"

void metrics__copy(struct loader *l, struct metrics_data *d)
{
	static const struct point_stats none;
	/* The tick's read, with the gauges it took for us; else a read of our own. */
	struct snapshot *snap = l->snap && l->snap->gauges ?
		snapshot__get(l->snap) : engine__query_snapshot(l);
	uint32_t reason, rate;
	int i;

	snprintf(d->group, sizeof(d->group), "%s", l->group);
	snprintf(d->app, sizeof(d->app), "%s", l->app);
	d->npoints = l->probes.npoints;
	for (i = 0; i < d->npoints; i++) {
		const struct probe_point *pp = &l->probes.pts[i];
		const struct point_stats *st = snapshot__point(snap, i);
		struct metrics_point *p = &d->pts[i];

		/* Added since the read (a guard's `point`): no calls yet. */
		if (!st)
			st = &none;
		snprintf(p->name, sizeof(p->name), "%s", pp->spec.name);
		p->guard = pp->kind != POINT_FUNCTION;
		p->latency = p->guard || pp->ret_mode != RET_ENTRY_ONLY;
		p->downgraded = engine__state(l, i, &reason, &rate);
		p->total = st->total;
		p->concurrency = st->concurrency;
		memcpy(p->hist, st->hist, sizeof(p->hist));
	}
	snapshot__put(snap);
}

bool metrics__wants(const struct loader *l)
{
	return l->metrics && metrics__waiting(l->metrics);
}

void metrics__tick(struct loader *l)
{
	struct metrics_data *d;

	if (!l->metrics)
		return;
	d = metrics__want(l->metrics);
	if (!d)
		return;
	metrics__copy(l, d);
	metrics__published(l->metrics);
}
