/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * adaptive.h - concurrency limits that find themselves (docs/ADAPTIVE.md).
 *
 * A point with `adaptive_limit` has no operator-chosen number of calls in
 * flight: every tick the loader feeds this module what the kernel counted
 * (the calls that completed since the last tick, their time, the calls the
 * limit refused, the calls in flight) and publishes the limit it answers
 * as the point's concurrency limit, which the guards enforce exactly, as
 * they do `concurrent_threshold`.
 *
 * All three algorithms steer by the same two latencies: the tick's mean
 * (what calls cost now) and the no-load latency (what they cost with no
 * queue in front of the dependency), the least tick mean of an epoch.  An
 * epoch lasts ADAPTIVE_EPOCH_NS with +-20 % jitter (hosts of one app do not
 * re-measure in step) and begins with a re-measure, as Envoy's adaptive
 * concurrency filter does: the limit is the floor for ADAPTIVE_PROBE_TICKS
 * ticks or more, until a tick that began with no more than the floor in
 * flight (its calls were all admitted at the floor) has calls: its mean
 * is the new epoch's first no-load latency.  The first epoch begins so,
 * before the initial limit is tried, and an idle point stays there until
 * such a tick comes; a later re-measure without one keeps the old base
 * after ADAPTIVE_PROBE_MAX ticks.  A
 * latency that stays ADAPTIVE_STALE_RATIO above the no-load one while the
 * limit halved, or a limit within a call of its floor for a second,
 * re-measures at once: a queue of ours would have emptied, so the
 * dependency itself became slower (its no-load latency rose).
 *
 *   gradient2  Netflix's Gradient2: new = limit * clamp(base / rtt, .5, 1)
 *              + queue (a quarter call + 2 %), smoothed (0.5), with the
 *              no-load latency as the long-term one (an average of a
 *              queued run drifts up); a gradient within 3 % of 1 is noise,
 *              and the limit grows by 5 % (at least a quarter call).
 *   vegas      TCP Vegas: the queue in front of the dependency,
 *              limit * (1 - base / rtt), kept between alpha (0.3 calls +
 *              2 %) and beta (twice alpha): below it grows by 5 %, above
 *              it sheds the excess.
 *   aimd       additive increase (2 %, at least a quarter call),
 *              multiplicative decrease (x0.9) when the tick's mean is
 *              more than 10 % above the no-load latency.
 *
 * No algorithm raises a limit that is not in use (demand below half of it
 * and nothing refused): an idle point cannot talk itself into a limit it
 * never tried.  Pure: no clock, no maps (tests/unit/decide/test_adaptive.c).
 */
#ifndef SDS_ADAPTIVE_H
#define SDS_ADAPTIVE_H

#include <stdbool.h>
#include <stdint.h>
#include "strategy.h"	/* enum sds_adaptive, enum sds_adaptive_signal */

#define ADAPTIVE_EPOCH_NS	30000000000ULL	/* the no-load latency is re-measured this often */
#define ADAPTIVE_PROBE_TICKS	2		/* ticks at the floor at least, while re-measuring */
#define ADAPTIVE_PROBE_MAX	20		/* at most, when a base is known already */
#define ADAPTIVE_FLOOR_NS	1000000000ULL	/* at the floor this long: re-measure now */
#define ADAPTIVE_MIN_CALLS	3		/* a tick with fewer completed calls tells nothing */
#define ADAPTIVE_STALE_RATIO	1.3		/* a latency this far above no-load, through a halving: re-measure */

/* A point's settings, from its strategy. */
struct adaptive_cfg {
	uint32_t algo;			/* enum sds_adaptive */
	int64_t min;			/* the floor, >= 1 */
	int64_t max;			/* the ceiling, <= SDS_ADAPTIVE_MAX */
	int64_t initial;		/* the first limit; clamped to [min, max] */
};

/* One tick's view of the point. */
struct adaptive_sample {
	uint64_t now_ns;		/* CLOCK_MONOTONIC */
	uint64_t calls;			/* calls completed since the last sample */
	uint64_t time_ns;		/* their time (the signal's): sum, ns */
	uint64_t refused;		/* calls the limit refused since the last sample */
	int64_t inflight;		/* calls in flight at the read; < 0: unknown */
};

/* What the loader keeps of one adaptive point between ticks. */
struct adaptive_state {
	bool on;			/* configured (adaptive__reset) */
	uint32_t algo;			/* the cfg's, to see a change */
	double limit;			/* the algorithm's limit, in [min, max] */
	double base_ns;			/* no-load latency of this epoch; 0: none yet */
	double rtt_ns;			/* the last informative tick's mean; 0: none yet */
	uint64_t epoch_end_ns;		/* the next re-measure begins then */
	uint64_t floor_since_ns;	/* the limit is at its floor since; 0: it is not */
	double high_since_limit;	/* the limit published when the latency went high; 0: it is not */
	bool probing;			/* re-measuring: the limit is the floor */
	int probe_ticks;		/* ticks of this re-measure so far */
	int64_t inflight;		/* in flight at the last read; < 0: unknown */
	double probe_saved;		/* the limit the re-measure comes back to */
	uint64_t seed;			/* the jitter's state */
	int64_t published;		/* the limit published at the last tick */
	uint64_t remeasures;		/* re-measures begun since the reset */
};

/* Start @r afresh for @cfg at @now_ns (@seed: jitter, e.g. the point id and pid). */
void adaptive__reset(struct adaptive_state *r, const struct adaptive_cfg *cfg,
		     uint64_t now_ns, uint64_t seed);
/*
 * Re-measure the no-load latency from the next tick (the limit is the
 * floor meanwhile): the latency @r steers by became another number.
 */
void adaptive__remeasure(struct adaptive_state *r);
/* One tick: the limit to publish, in [cfg->min, cfg->max]. */
int64_t adaptive__step(struct adaptive_state *r, const struct adaptive_cfg *cfg,
		       const struct adaptive_sample *s);

#endif /* SDS_ADAPTIVE_H */
