/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * drill_stop.h - a drill's automatic abort on this host (docs/DRILL.md,
 * "Automatic abort"): the stop conditions an admin's drill carries
 * ("stop_when"), judged every tick over the point's own counts, from
 * samples of its totals the loader takes while the drill runs.
 */
#ifndef SDS_DRILL_STOP_H
#define SDS_DRILL_STOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "heartbeat/heartbeat.h"
#include "sds_types.h"

#define DRILL_STOP_SAMPLES	128	/* the ring: a window spans at most 120 of them */
#define DRILL_STOP_MIN_CALLS	10	/* a rate or percentile needs this many calls in its window */

struct point_stats;

/* A point's totals at one tick. */
struct drill_stop_sample {
	uint64_t ns;			/* CLOCK_MONOTONIC of the tick */
	uint64_t visits, exceptions, downgrades;
	bool hist_ok;			/* @hist was read (the tick read the gauges) */
	uint64_t hist[SDS_HIST_BUCKETS];	/* latency histogram since attach */
};

struct drill_stop {
	int n;				/* conditions in @stop */
	struct sds_hb_stop stop[SDS_HB_MAX_STOPS];
	uint64_t every_ns;		/* samples this far apart at least */
	int head, count;		/* the newest sample's index, samples held */
	struct drill_stop_sample ring[DRILL_STOP_SAMPLES];
};

/*
 * A judge of @n conditions (n >= 1) on a loader ticking every @tick_ns;
 * NULL with one line in @err when a window is shorter than a tick (it
 * could not be judged) or out of memory.  Free with free().
 */
struct drill_stop *drill_stop__new(const struct sds_hb_stop *s, int n,
				   uint64_t tick_ns, char *err, size_t errlen);
/*
 * At a tick: sample @st (NULL: the point was not read) at @now_ns, then
 * judge each condition over its window.  True when one broke: @why says
 * which and by what ("exception_rate 0.41 above 0.3 over 2 s: 823 of
 * 2,007 calls").  A window not yet covered by samples judges nothing.
 */
bool drill_stop__judge(struct drill_stop *ds, const struct point_stats *st,
		       uint64_t now_ns, char *why, size_t whylen);

#endif /* SDS_DRILL_STOP_H */
