// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * engine.c - every tick: one read of the counters, the chain run for each
 * point over its sliding window, the flag entries published and the
 * transitions recorded; the tick's record for its consumers.  The
 * strategies come in through apply.c, the admin's through admin.c, and
 * each point's cluster shares from cluster.c (engine_internal.h).
 */
#include <stdlib.h>
#include <string.h>
#include "publish/failfast.h"
#include "tick/tick.h"
#include "state/events.h"
#include "kernel/counters.h"
#include "keys/keys.h"
#include "kernel/probes.h"
#include "publish/flags.h"
#include "serve/serve.h"
#include "capture/capture.h"
#include "deploy/watch.h"
#include "tick/adaptive_run.h"
#include "tick/budget_run.h"
#include "state/drill.h"
#include "tick/engine_internal.h"
#include "tick/exact_run.h"
#include "tick/keys_run.h"
#include "state/keep.h"
#include "heartbeat/heartbeat.h"
#include "publish/lbpub.h"
#include "report/uplink.h"
#include "report/metrics.h"

void engine__init(struct engine *e, const struct engine_env *env)
{
	e->env = *env;
	e->snaps.cap = env->probes->cap;
	e->tick.pt = e->tick_pts;
	keys_run__init(&e->keys, env->probes, env->flags);
}

void engine__close(struct engine *e)
{
	int id;

	snapshot__put(e->snap);
	e->snap = NULL;
	snap_pool__free(&e->snaps);
	lbpub__free(e->lbpub);
	e->lbpub = NULL;
	free(e->strategies);
	e->strategies = NULL;
	pressure_run__close(&e->pressure);
	keys_run__close(&e->keys);
	for (id = 0; id < SDS_MAX_POINTS; id++)
		keys_period__free(&e->keys_period[id]);
}

int engine__point(struct engine *e, const char *name)
{
	int id = probes__find(e->env.probes, name);

	if (id >= 0)
		return id;
	id = probes__add_guard(e->env.probes, name);
	if (id < 0)
		return -1;
	memset(&e->run[id], 0, sizeof(e->run[id]));
	memset(&e->halfopen[id], 0, sizeof(e->halfopen[id]));
	flags__set_kind(e->env.flags, id, POINT_GUARD);
	counters__track(e->env.counters, e->env.probes->npoints);
	engine__point_configure(e, id);
	return id;
}

/*
 * Open or close the point's event as its visible state changes.  A
 * function point's trip opens at the call that crossed its mark, when
 * that call left its time (exact_fn.c); else at the tick.
 */
static void point_events(struct engine *e, int id, uint32_t reason,
			 uint64_t now_ns)
{
	struct point_run *r = &e->run[id];
	const char *name = e->env.probes->pts[id].spec.name;

	uint64_t at = exact_fn__tick(&e->exact, id,
				     e->snap ? e->snap->taken_ns : now_ns,
				     r->shown_reason, reason, now_ns);

	if (reason == r->shown_reason)
		return;
	if (r->shown_reason)
		events__add(e->env.events, name, r->shown_reason, false);
	if (reason && at)
		events__add_at_call(e->env.events, name, reason,
				    e->exact.pt[id].cross_ms);
	else if (reason)
		events__add(e->env.events, name, reason, true);
	r->shown_reason = reason;
}

/* Slots of the sessions open now: bit s for slot s (flags__repair). */
static uint64_t live_slots(const struct engine *e)
{
	uint64_t live = 0;
	int s;

	for (s = 0; s < SDS_MAX_PROCS; s++)
		if (e->env.sessions[s].fd >= 0)
			live |= 1ULL << s;
	return live;
}

/* Calls of point @id in flight at the tick's read; -1: unknown. */
static int64_t point_inflight(struct engine *e, int id)
{
	const struct point_stats *st = snapshot__point(e->snap, id);

	return st && st->gauges ? st->concurrency : -1;
}

static void point_tick(struct engine *e, int id, uint64_t now_ns,
		       uint64_t now_sec, uint64_t live, struct tick_point *tp)
{
	const struct sds_cell *c = flags__cell(e->env.flags, id);
	const struct engine_eval_in in = {
		.st = engine__point_strategy(e, id),
		.snap = e->snap,
		/* What guards wrote, as counts the loader bounded: never instructions. */
		.cells = flags__counts(e->env.flags, id),
		.now_ns = now_ns,
		.tick_ns = e->env.tick_ns,
		.now_sec = now_sec,
		.ho = &e->halfopen[id],
		.visit_full = exact__before(&e->exact, id, &e->run[id],
					    engine__point_strategy(e, id), e->snap, now_sec),
	};
	struct engine_eval_out out;

	engine_eval(&e->run[id], id, &in, &out);
	exact__after(&e->exact, id, &e->run[id], in.st, e->snap, now_sec,
		     out.reset, &out.fs);
	/* An adaptive point's semaphore: the limit of this tick's step. */
	adaptive_run__publish(&e->adaptive, id, &out.fs);
	/* A hold that (re)starts lets its first probe through one interval on. */
	if (out.hold_started)
		flags__set_probe(e->env.flags, id, now_ns + out.fs.probe_interval_ns);
	halfopen__cells(&e->halfopen[id], e->env.flags, id, in.st, now_ns, &out.fs);
	drill__tick(e->env.drill, id, now_ns, &out.fs);
	pressure_run__verdict(&e->pressure, id, engine__point_written(e, id), now_ns,
			      e->env.tick_ns, &out.fs, &out.shown);
	failfast__tick(e->env.failfast, id, now_ns, &out.fs, out.hold_started,
		       e->run[id].drill.err);
	flags__publish(e->env.flags, id, &out.fs);
	/* The kernel's count of calls in flight bounds held permits. */
	flags__repair(e->env.flags, id, &out.fs, now_ns, live,
		      __atomic_load_n(&c->permits, __ATOMIC_RELAXED) > 0 ?
		      point_inflight(e, id) : -1);
	point_events(e, id, out.shown, now_ns);
	/* The verdict in the tick's record. */
	tp->fs = out.fs;
	tp->shown = out.shown;
}

/*
 * The tick's one read of every point's counters: a new snapshot, unless
 * every buffer is held by queries (then the last one serves again and the
 * seconds are folded at the next tick: nothing is lost, windows lag).
 */
static void engine_read(struct engine *e, uint64_t now_ns, uint64_t now_sec)
{
	struct snapshot *s = snap_pool__take(&e->snaps);
	unsigned int what = COUNTERS_FOLD;
	int id;

	if (!s)
		return;
	/*
	 * The gauges (1 KB a point on 2 CPUs) only when someone reads them
	 * this tick: the heartbeat's concurrency and histogram marks, a
	 * provider's load for balancers (lbpub.c), or a semaphore's permits
	 * to bound.
	 */
	if (lbpub__wants_gauges(&e->lbpub, e->env.probes) || e->env.uplink ||
	    adaptive_run__any(&e->adaptive, e->env.probes->npoints) ||
	    (e->env.metrics && metrics__waiting(e->env.metrics)))
		what |= COUNTERS_GAUGES;
	for (id = 0; !(what & COUNTERS_GAUGES) && id < e->env.probes->npoints; id++)
		if (__atomic_load_n(&flags__cell(e->env.flags, id)->permits,
				    __ATOMIC_RELAXED) > 0)
			what |= COUNTERS_GAUGES;
	s->taken_ns = now_ns;
	counters__snap(e->env.counters, now_sec, what, s);
	snapshot__put(e->snap);
	e->snap = s;
}

/*
 * The owners of the heartbeat's per-point extras push them into @t: the
 * drills' injections every tick; at a tick that closes a period, the
 * probes' cost (budget_run.c), traffic copy's counts (capture.c) and the
 * build followed (watch.c).
 */
static void tick_heartbeat(struct engine *e, struct tick *t)
{
	int id;

	for (id = 0; id < t->npoints; id++) {
		const struct cell_counts *n = flags__counts(e->env.flags, id);
		struct tick_point *tp = &t->pt[id];

		/* A function point's drill fails operations (failfast.c). */
		tp->drill_faults = tp->kind == POINT_FUNCTION ?
				   failfast__drilled(e->env.failfast, id) :
				   n->drill_faults;
		tp->drill_delays = n->drill_delays;
	}
	t->hb_close = uplink__closing(e->env.uplink, t->now_sec);
	t->build = NULL;
	t->nrules = 0;
	t->nrefused = 0;
	t->nkeys = 0;
	t->keys = e->tick_keys;
	if (!t->hb_close)
		return;
	/* The admin's strategies refused, until a later version is accepted. */
	t->nrefused = e->nrefused;
	t->refused = e->refused;
	/* The keyed points' heaviest keys as the period ends (docs/KEYS.md). */
	for (id = 0; id < t->npoints; id++)
		keys__heartbeat(e->env.probes, id, &e->keys_period[id], e->tick_keys,
				&t->nkeys, SDS_HB_MAX_KEYS);
	/* Host pressure rules as the period ends (docs/PRESSURE.md). */
	t->nrules = pressure_run__hb_rules(&e->pressure, e->tick_rules);
	t->rules = e->tick_rules;
	for (id = 0; id < t->npoints; id++) {
		const struct point_stats *st = snapshot__point(t->snap, id);
		struct sds_hb_point *hp = &t->pt[id].hb;

		memset(hp, 0, sizeof(*hp));
		if (!st)
			continue;
		budget__hb_point(e->env.budget, id, st, hp);
		capture__heartbeat(e->env.capture, id, hp);
		pressure_run__hb_point(&e->pressure, id, hp);
		adaptive_run__heartbeat(&e->adaptive, id, hp);
	}
	e->tick_build.build_id[0] = '\0';
	e->tick_build.deploys = 0;
	watch__heartbeat(e->env.watch, &e->tick_build);
	t->build = &e->tick_build;
}

/* keys__tick's capacity of a guard point's new table: its strategy's. */
static int64_t key_capacity_of(void *ctx, int id)
{
	const struct sds_strategy *st = engine__point_strategy(ctx, id);

	return st ? st->key_capacity : SDS_OFF;
}

void engine__tick(struct engine *e)
{
	struct tick *t = &e->tick;
	uint64_t now_ns = flags_now_ns();
	uint64_t now_sec = counters_now_sec();
	uint64_t live = live_slots(e);
	int id;

	engine_read(e, now_ns, now_sec);
	/* Guard points passed keys since the last tick get their tables. */
	keys__tick(e->env.probes, key_capacity_of, e);
	if (e->snap)
		now_sec = e->snap->sec;
	t->snap = e->snap;
	t->now_ns = now_ns;
	t->now_sec = now_sec;
	t->strategies_version = e->strategies ? e->strategies->version : 0;
	t->npoints = e->env.probes->npoints;
	t->group = e->env.group;
	t->app = e->env.app;
	for (id = 0; id < t->npoints; id++) {
		const struct probe_point *pp = &e->env.probes->pts[id];

		t->pt[id].name = pp->spec.name;
		t->pt[id].kind = pp->kind;
		t->pt[id].latency = pp->kind != POINT_FUNCTION ||
				    pp->ret_mode != RET_ENTRY_ONLY;
	}
	if (e->env.uplink) {
		tick_heartbeat(e, t);
		uplink__tick(e->env.uplink, t);
		engine__cluster_report(e);
	}
	/* Host pressure: a "limits" rule that fired or cleared changes strategies. */
	if (pressure_run__tick(&e->pressure, now_ns, e->env.events))
		for (id = 0; id < t->npoints; id++)
			if (pressure_run__names(&e->pressure, t->pt[id].name))
				engine__point_configure(e, id);
	for (id = 0; id < t->npoints; id++) {
		/* Stepped once a tick: a drill's flush publishes the same limit. */
		adaptive_run__tick(&e->adaptive, id, snapshot__point(e->snap, id),
				   flags__counts(e->env.flags, id), now_ns,
				   e->env.events, t->pt[id].name);
		drill__take_dirty(e->env.drill, id);
		point_tick(e, id, now_ns, now_sec, live, &t->pt[id]);
		/* Hot keys' limits: blocks and lifts from this tick's per-key counts. */
		keys_run__tick(&e->keys, id, now_ns, e->env.events, t->pt[id].name);
	}
	lbpub__tick(e->lbpub, e->env.flags, t);
	flags__tick(e->env.flags, now_ns);
	budget__tick(e->env.budget, e->env.probes, e->env.events, t);
	/* The tick's state whole in the pinned copy (keep.c). */
	keep__commit(e->env.keep);
}

void engine__flush(struct engine *e)
{
	uint64_t now_ns, live;
	int id;

	if (!drill__dirty(e->env.drill) || !e->snap)
		return;
	now_ns = flags_now_ns();
	live = live_slots(e);
	for (id = 0; id < e->env.probes->npoints; id++)
		if (drill__take_dirty(e->env.drill, id))
			point_tick(e, id, now_ns, e->snap->sec, live, &e->tick_pts[id]);
}

const struct tick *engine__last_tick(const struct engine *e)
{
	return &e->tick;
}

int64_t engine__version(const struct engine *e)
{
	return e->strategies ? e->strategies->version : -1;
}

struct snapshot *engine__query_snapshot(struct engine *e)
{
	uint64_t now_ns = flags_now_ns();
	struct snapshot *s;
	int i, busy = 0;

	for (i = 0; i < SNAP_POOL; i++)
		busy += e->snaps.s[i] && e->snaps.s[i]->refs;
	/*
	 * Fresh enough and with the gauges (a tick reads them only when it
	 * needs them), or the pool nearly held: the tick's serves.
	 */
	if (e->snap && ((e->snap->gauges && e->snap->split_hists &&
			 now_ns - e->snap->taken_ns < 1000000ULL) ||
			busy >= SNAP_POOL - 1))
		return snapshot__get(e->snap);
	s = snap_pool__take(&e->snaps);
	if (!s)
		return snapshot__get(e->snap);
	s->taken_ns = now_ns;
	/* With the split's histograms (`hist --split`): the tick reads none. */
	counters__snap(e->env.counters, counters_now_sec(),
		       COUNTERS_GAUGES | COUNTERS_SPLIT_HIST, s);
	return s;
}

bool engine__state(struct engine *e, int id, uint32_t *reason, uint32_t *rate)
{
	struct point_run *r = &e->run[id];
	const struct sds_strategy *st = engine__point_strategy(e, id);

	*reason = r->shown_reason;
	*rate = 0;
	if (!r->shown_reason)
		return false;
	*rate = r->cs.tripped && st ? (uint32_t)st->downgrade_rate : 100;
	return true;
}

void engine__save(const struct engine *e, int id, struct point_run *out)
{
	*out = e->run[id];
}

void engine__restore(struct engine *e, int id, const struct point_run *in)
{
	e->run[id] = *in;
}

