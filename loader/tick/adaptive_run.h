/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * adaptive_run.h - adaptive concurrency at the tick (adaptive_run.c): each
 * adaptive point's limit, stepped once a tick from the tick's read
 * (decide/adaptive.c), published as the point's concurrency limit.
 */
#ifndef SDS_ADAPTIVE_RUN_H
#define SDS_ADAPTIVE_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "sds_types.h"
#include "decide/adaptive.h"

struct cell_counts;
struct events;
struct flag_state;
struct point_stats;
struct sds_hb_point;
struct sds_strategy;

/* One point's adaptive limit and what it was last fed. */
struct adaptive_point {
	struct adaptive_state st;	/* the algorithm's (decide/adaptive.c) */
	struct adaptive_cfg cfg;	/* from the strategy */
	uint32_t signal;		/* enum sds_adaptive_signal: the strategy's */
	uint32_t used;			/* the one the last read gave (the split can be unreadable) */
	bool fed;			/* the counters below are a read's */
	uint64_t completed;		/* the read's completed calls (the signal's: split calls) */
	uint64_t time_ns;		/* the read's time of those calls (the signal's) */
	uint64_t refused;		/* the loader's count of refusals by the semaphore */
	int64_t shown;			/* the limit the last event was written for */
};

struct adaptive_run {
	struct adaptive_point pt[SDS_MAX_POINTS];	/* per point id; .st.on: adaptive */
	uint64_t seed;			/* the epochs' jitter differs per loader */
};

/* Point @id's strategy changed (@st, NULL: none) at @now_ns: start afresh or turn off. */
void adaptive_run__configure(struct adaptive_run *ar, int id,
			     const struct sds_strategy *st, uint64_t now_ns);
/* Is any point adaptive (the tick must then read the gauges)? */
bool adaptive_run__any(const struct adaptive_run *ar, int npoints);
/*
 * The tick: point @id's limit stepped from its read @ps (NULL: not read)
 * and the loader's counts @cells; a move of more than 10 % from the last
 * one shown is an event named @name in @ev.
 */
void adaptive_run__tick(struct adaptive_run *ar, int id,
			const struct point_stats *ps,
			const struct cell_counts *cells, uint64_t now_ns,
			struct events *ev, const char *name);
/* Point @id's limit into @fs (its concurrency semaphore), if adaptive. */
void adaptive_run__publish(const struct adaptive_run *ar, int id,
			   struct flag_state *fs);
/* Point @id's limit and latency into its heartbeat point @hp, if adaptive. */
void adaptive_run__heartbeat(const struct adaptive_run *ar, int id,
			     struct sds_hb_point *hp);
/*
 * {"algorithm", "limit", "min", "max", "latency_ns", "no_load_ns",
 * "signal", "steered_by", "remeasuring", "remeasures"}, or NULL.
 */
json_t *adaptive_run__json(const struct adaptive_run *ar, int id);

#endif /* SDS_ADAPTIVE_RUN_H */
