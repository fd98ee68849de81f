// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * uplink_split.c - the heartbeat's split (docs/SPLIT.md): the kernel sums
 * where calls' time went since attach, so a period's share is the
 * difference of the sums marked at the first tick of the period and of
 * the next, as for the latency histograms (uplink.c, hist_mark()): the
 * same boundaries, so the split's calls are the histogram's.  A point
 * whose split was not read at both ends sends none for that period,
 * never a split of zeros.
 */
#include <string.h>
#include "kernel/snapshot.h"
#include "report/uplink.h"

void uplink_split__mark(struct uplink *u, int id, const struct point_stats *st)
{
	struct uplink_split *m = &u->split_mark[id];

	if (!st || !st->split) {
		m->known = false;
		return;
	}
	m->known = true;
	m->calls = st->split_calls;
	m->on_cpu_ns = st->split_on_cpu_ns;
	m->runq_ns = st->split_runq_ns;
	m->blocked_ns = st->split_blocked_ns;
}

void uplink_split__close(struct uplink *u, int id, struct sds_hb_point *hp)
{
	struct uplink_split *b = &u->split_base[id];
	const struct uplink_split *m = &u->split_mark[id];

	/* Sums only grow while known: a smaller one is a new load's. */
	if (b->known && m->known && m->calls >= b->calls &&
	    m->on_cpu_ns >= b->on_cpu_ns && m->runq_ns >= b->runq_ns &&
	    m->blocked_ns >= b->blocked_ns) {
		hp->split_calls = m->calls - b->calls;
		hp->split_on_cpu_ns = m->on_cpu_ns - b->on_cpu_ns;
		hp->split_runqueue_ns = m->runq_ns - b->runq_ns;
		hp->split_blocked_ns = m->blocked_ns - b->blocked_ns;
	} else if (!b->known && m->known && !b->calls) {
		/* The split began in this period: its sums began at 0. */
		hp->split_calls = m->calls;
		hp->split_on_cpu_ns = m->on_cpu_ns;
		hp->split_runqueue_ns = m->runq_ns;
		hp->split_blocked_ns = m->blocked_ns;
	}
	*b = *m;
}
