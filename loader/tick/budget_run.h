/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * budget_run.h - the probe-cost budget at the tick (budget_run.c, over the
 * pure rules of decide/budget.h): --max-overhead, and what `stats` and the
 * heartbeat show of it.
 */
#ifndef SDS_BUDGET_RUN_H
#define SDS_BUDGET_RUN_H

#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

struct budget;
struct counters;
struct events;
struct probes;
struct tick;
struct point_stats;
struct sds_hb_point;

/* --max-overhead @max_ns (0: none) over @pr's function points. */
void budget__init(struct budget *b, const struct probes *pr, uint64_t max_ns,
		  const char *target, pid_t pid);
/*
 * A loader that adopted kept counts (read now from @c): the rates start
 * from them.
 */
void budget__adopt(struct budget *b, const struct probes *pr,
		   struct counters *c);
/*
 * attach's first second (counts read from @c): -1 (said) if a stepped
 * point is refused.
 */
int budget__first_second(struct budget *b, const struct probes *pr,
			 struct counters *c);
/*
 * Every tick, from its record: sample the judged points' rates, suspend
 * the ones over budget and try the suspended again (@pr), said in @ev.
 */
void budget__tick(struct budget *b, struct probes *pr, struct events *ev,
		  const struct tick *t);
/* `stats`: a point's "overhead" object, and the app's "budget". */
json_t *budget__point_json(const struct budget *b, int id,
			   const struct point_stats *st);
json_t *budget__json(const struct budget *b, int npoints);
/* The heartbeat's point fields: suspended, overhead_pct. */
void budget__hb_point(const struct budget *b, int id,
		      const struct point_stats *st, struct sds_hb_point *hp);

#endif /* SDS_BUDGET_RUN_H */
