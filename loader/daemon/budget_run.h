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
struct events;
struct loader;
struct probes;
struct tick;
struct point_stats;
struct sds_hb_point;

void budget__init(struct loader *l, uint64_t max_ns, const char *target,
		  pid_t pid);
/* A loader that adopted kept counts: the rates start from them. */
void budget__adopt(struct loader *l);
/* attach's first second: -1 (said) if a stepped point is refused. */
int budget__first_second(struct loader *l);
/*
 * Every tick, from its record: sample the judged points' rates, suspend
 * the ones over budget and try the suspended again (@pr), said in @ev.
 */
void budget__tick(struct budget *b, struct probes *pr, struct events *ev,
		  const struct tick *t);
/* `stats`: a point's "overhead" object, and the app's "budget". */
json_t *budget__point_json(struct loader *l, int id,
			   const struct point_stats *st);
json_t *budget__json(struct loader *l);
/* The heartbeat's point fields: suspended, overhead_pct. */
void budget__hb_point(struct loader *l, int id, const struct point_stats *st,
		      struct sds_hb_point *hp);

#endif /* SDS_BUDGET_RUN_H */
