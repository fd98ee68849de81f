/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * api/aggregate.h - statistics over a time range: the store's per-host
 * per-period rows summed across hosts into steps (sums; max for
 * concurrency), with latency percentiles from the summed histograms.
 * Independent of the engine.
 */
#ifndef SDS_ADMIN_AGGREGATE_H
#define SDS_ADMIN_AGGREGATE_H

#include <stdint.h>
#include <jansson.h>
#include "store/store.h"

#define AGGREGATE_MAX_RANGE		(31 * 86400)	/* widest range: a scan is bounded */
#define AGGREGATE_TARGET_STEPS	360		/* the auto step aims at this many */
#define AGGREGATE_MAX_STEPS		2000		/* an explicit step may give this many */
#define AGGREGATE_MAX_CELLS		50000		/* points x steps in one answer */

/*
 * Check and complete a range: @from/@to in Unix seconds (from < to, range
 * at most AGGREGATE_MAX_RANGE), @step 0 for "fit the range" or a multiple of
 * 10.  On success from is aligned down and to up to the step.  On error
 * returns -1 with a message naming the parameter.
 */
int aggregate_range(int64_t *from, int64_t *to, int64_t *step, char *err, size_t errlen);

/*
 * The aggregated statistics of app @g/@a (one point or all) over an
 * already checked range.  Returns a STORE_* code; *out on success:
 *   {"from", "to", "step", "points": {NAME: {"t": [...], "visits": [...],
 *    "exceptions": [...], "timeouts": [...], "downgrades": [...],
 *    "max_concurrency": [...], "p50_ns": [...], "p90_ns": [...], "p99_ns": [...],
 *    "total": {...same counts..., "latency_hist": [...], "p50_ns", ...},
 *    "suspended": bool, "overhead_pct": N, "as_of": PERIOD|null}}}
 * The last three are the probe budget's state as of the newest period of
 * the point in the range ("as_of"): suspended on any host then, and the
 * highest host's estimated overhead (% of one CPU).
 * STORE_CONFLICT when the answer would exceed AGGREGATE_MAX_CELLS.
 */
int aggregate_query(struct store *st, const char *g, const char *a, const char *point,
		int64_t from, int64_t to, int64_t step, json_t **out, char *err);

/*
 * Point @point's statistics over the range broken down by host: *out is
 *   {"group", "app", "point", "from", "to", "step", "hosts": {HOST: {...}}}
 * each host's series as aggregate_query gives a point's (hosts with rows
 * in the range only).  STORE_CONFLICT past AGGREGATE_MAX_CELLS or
 * SDS_MAX_POINTS hosts.
 */
int aggregate_query_hosts(struct store *st, const char *g, const char *a, const char *point,
			  int64_t from, int64_t to, int64_t step, json_t **out, char *err);

#endif /* SDS_ADMIN_AGGREGATE_H */
