// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * budget_run.c - the probe-cost budget at work in a loader: the call
 * rates every tick, the probes detached and re-attached as budget.c
 * decides, the transitions as events, and what `stats` and the
 * heartbeat show of it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "decide/budget.h"
#include "cli/cmd.h"
#include "state/events.h"
#include "kernel/counters.h"
#include "kernel/probes.h"
#include "kernel/snapshot.h"
#include "publish/flags.h"
#include "tick/budget_run.h"
#include "tick/tick.h"
#include "heartbeat/heartbeat.h"

/* "5", "2.5", "155.632": thousandths of a percent, no trailing zeros. */
static const char *pct_str(uint64_t milli, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%llu.%03llu", (unsigned long long)(milli / 1000),
			 (unsigned long long)(milli % 1000));

	while (n > 0 && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 0 && buf[n - 1] == '.')
		buf[--n] = '\0';
	return buf;
}

/* The count of calls of point @id at the tick's read (its entries); -1: unread. */
static int point_calls(const struct tick *t, int id, uint64_t *calls)
{
	const struct point_stats *st = snapshot__point(t->snap, id);

	if (!st)
		return -1;
	*calls = st->total.visits;
	return 0;
}

/* The same, read now: attach's first second runs before any tick. */
static int point_calls_now(struct counters *c, int id, uint64_t *calls)
{
	struct point_stats st;

	if (counters__read_point(c, id, counters_now_sec(), &st))
		return -1;
	*calls = st.total.visits;
	return 0;
}

void budget__init(struct budget *b, const struct probes *pr, uint64_t max_ns,
		  const char *target, pid_t pid)
{
	uint64_t now = flags_now_ns();
	int id;

	b->max_ns = max_ns;
	b->target = target;
	b->pid = pid;
	/* Guard points are not judged: their cost is the guard's own. */
	for (id = 0; id < pr->npoints; id++)
		if (pr->pts[id].kind == POINT_FUNCTION)
			budget_point_start(&b->pts[id],
					   probes__point_cost_ns(&pr->pts[id]),
					   now, 0);
}

void budget__adopt(struct budget *b, const struct probes *pr,
		   struct counters *c)
{
	uint64_t now = flags_now_ns(), calls;
	int id;

	/*
	 * The kept totals are not this second's calls: rates start from them
	 * (else the first tick sees them as a burst and suspends the point).
	 * Read now: no tick has taken a snapshot yet.
	 */
	for (id = 0; id < pr->npoints; id++)
		if (b->pts[id].used && !point_calls_now(c, id, &calls))
			budget_point_start(&b->pts[id], b->pts[id].cost_ns, now,
					   calls);
}

/*
 * attach's first second: a stepped site on a function hot beyond the
 * budget is refused, unless its point says :site=any.  Measured before
 * the socket exists, so that a refused attach leaves nothing behind.
 */
int budget__first_second(struct budget *b, const struct probes *pr,
			 struct counters *c)
{
	uint64_t c0[SDS_MAX_POINTS], c1, t0, span;
	struct timespec ts = { .tv_sec = 1 };
	bool any = false;
	int id;

	if (!b->max_ns)
		return 0;
	t0 = flags_now_ns();
	for (id = 0; id < pr->npoints; id++) {
		const struct probe_point *p = &pr->pts[id];

		c0[id] = 0;
		if (p->kind != POINT_FUNCTION || !probes__point_stepped(p) ||
		    p->spec.site_policy == SITE_POLICY_ANY)
			continue;
		if (point_calls_now(c, id, &c0[id]))
			return cmd_err("reading counters: %s", strerror(errno));
		any = true;
	}
	if (!any)
		return 0;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	span = flags_now_ns() - t0;
	for (id = 0; id < pr->npoints; id++) {
		const struct probe_point *p = &pr->pts[id];
		unsigned int cost = probes__point_cost_ns(p);
		char a[32], m[32];
		uint64_t cpu;

		if (p->kind != POINT_FUNCTION || !probes__point_stepped(p) ||
		    p->spec.site_policy == SITE_POLICY_ANY)
			continue;
		if (point_calls_now(c, id, &c1))
			return cmd_err("reading counters: %s", strerror(errno));
		cpu = budget_cpu_ns(cost, c1 - c0[id], span);
		if (cpu <= b->max_ns)
			continue;
		return cmd_err("point '%s' (%s): %s (~%u ns a call) called %llu times/s in its first second takes %s%% of a CPU, over --max-overhead %s%%: refused; add :site=any to probe it anyway (suspended while over budget)",
			       p->spec.name, p->spec.symbol,
			       p->site.kind == SITE_STEPPED ? "a stepped site" :
			       "a stepped probe on each ret", cost,
			       (unsigned long long)budget_rate(c1 - c0[id], span),
			       pct_str(budget_pct_milli(cpu), a, sizeof(a)),
			       pct_str(budget_pct_milli(b->max_ns), m, sizeof(m)));
	}
	return 0;
}

/* Carry out @act for point @id of @pr, said in @ev. */
static void point_act(struct budget *b, struct probes *pr, struct events *ev,
		      int id, enum budget_action act, const struct tick *t)
{
	struct budget_point *bp = &b->pts[id];
	const char *name = pr->pts[id].spec.name;
	uint64_t calls;
	char err[512];

	switch (act) {
	case BUDGET_NONE:
		break;
	case BUDGET_SUSPEND:
		probes__suspend(pr, id);
		events__add_budget(ev, name, true);
		break;
	case BUDGET_RESUSPEND:
		probes__suspend(pr, id);
		break;
	case BUDGET_TRY:
		if (probes__resume(pr, id, b->target, b->pid, err, sizeof(err))) {
			cmd_err("%s; trying again later", err);
			budget_try_failed(bp, t->now_ns);
			break;
		}
		/* Its rate counts from now. */
		if (!point_calls(t, id, &calls))
			budget_sample(bp, t->now_ns, calls);
		break;
	case BUDGET_RESUME:
		events__add_budget(ev, name, false);
		break;
	}
}

void budget__tick(struct budget *b, struct probes *pr, struct events *ev,
		  const struct tick *t)
{
	static enum budget_action acts[SDS_MAX_POINTS];
	uint64_t calls;
	int id;

	for (id = 0; id < pr->npoints; id++) {
		struct budget_point *bp = &b->pts[id];

		/* Detached, a point counts nothing: its rate is unknown. */
		if (!bp->used || bp->state == BUDGET_SUSPENDED)
			continue;
		if (!point_calls(t, id, &calls))
			budget_sample(bp, t->now_ns, calls);
	}
	budget_decide(b, pr->npoints, t->now_ns, acts);
	for (id = 0; id < pr->npoints; id++)
		point_act(b, pr, ev, id, acts[id], t);
}

/* Rate and estimate of point @id: guards from their 10-s window. */
static void point_estimate(const struct budget *b, int id,
			   const struct point_stats *st, unsigned int *cost,
			   uint64_t *rate, uint64_t *cpu)
{
	const struct budget_point *bp = &b->pts[id];

	if (bp->used) {
		*cost = bp->cost_ns;
		*rate = bp->rate;
		*cpu = bp->cpu_ns;
		return;
	}
	*cost = BUDGET_GUARD_COST_NS;
	*rate = budget_rate(st->window.visits, SDS_WINDOW_S * 1000000000ULL);
	*cpu = budget_cpu_ns(*cost, st->window.visits,
			     SDS_WINDOW_S * 1000000000ULL);
}

json_t *budget__point_json(const struct budget *b, int id,
			   const struct point_stats *st)
{
	const struct budget_point *bp = &b->pts[id];
	bool susp = budget_suspended(bp);
	unsigned int cost;
	uint64_t rate, cpu;

	point_estimate(b, id, st, &cost, &rate, &cpu);
	return json_pack("{s:f, s:i, s:I, s:b, s:o, s:b, s:I}",
			 "estimated_pct", budget_pct_milli(cpu) / 1000.0,
			 "cost_ns", (int)cost,
			 "rate", (json_int_t)rate,
			 "suspended", susp,
			 "reason", susp ? json_string("overhead") : json_null(),
			 "exempt", !bp->used,
			 "suspensions", (json_int_t)bp->suspensions);
}

json_t *budget__json(const struct budget *b, int npoints)
{
	uint64_t total = 0;
	int id;

	for (id = 0; id < npoints; id++) {
		const struct budget_point *bp = &b->pts[id];

		if (bp->used && bp->state != BUDGET_SUSPENDED)
			total += bp->cpu_ns;
	}
	return json_pack("{s:f, s:f}",
			 "max_pct", budget_pct_milli(b->max_ns) / 1000.0,
			 "estimated_pct", budget_pct_milli(total) / 1000.0);
}

void budget__hb_point(const struct budget *b, int id,
		      const struct point_stats *st, struct sds_hb_point *hp)
{
	unsigned int cost;
	uint64_t rate, cpu;

	point_estimate(b, id, st, &cost, &rate, &cpu);
	hp->suspended = budget_suspended(&b->pts[id]);
	hp->overhead_milli = budget_pct_milli(cpu);
}
