// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * engine.c - strategies in force, and every tick: fold the counters, run
 * the chain for each point over its sliding window, publish the flag
 * entries and record the transitions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "durable.h"
#include "cli/cmd.h"
#include "publish/failfast.h"
#include "daemon/tick.h"
#include "daemon/events.h"
#include "kernel/counters.h"
#include "keys/keys.h"
#include "kernel/probes.h"
#include "publish/flags.h"
#include "serve/serve.h"
#include "capture/capture.h"
#include "deploy/watch.h"
#include "daemon/adaptive_run.h"
#include "daemon/budget_run.h"
#include "daemon/drill.h"
#include "daemon/engine.h"
#include "daemon/exact_run.h"
#include "daemon/keys_run.h"
#include "decide/keylimit.h"
#include "daemon/keep.h"
#include "decide/enforce.h"
#include "heartbeat/heartbeat.h"
#include "publish/lbpub.h"
#include "report/uplink.h"
#include "report/metrics.h"

/* The strategy of point @id as written (the admin's, the file's). */
static const struct sds_strategy *point_written(const struct engine *e, int id)
{
	if (!e->strategies)
		return NULL;
	return strategy_set_find(e->strategies, e->env.probes->pts[id].spec.name);
}

/*
 * A cluster-wide limit's share for this host (docs/CLUSTER.md): the
 * admin's grant while it is fresh, else the strategy's own field, else
 * an even share of the last known host count.
 */
static int64_t share_of(int64_t grant, bool fresh, int64_t local,
			int64_t cluster, int hosts, enum engine_share_source *src)
{
	if (fresh && grant >= 0) {
		*src = SHARE_ADMIN;
		return grant;
	}
	if (local >= 0) {
		*src = SHARE_LOCAL;
		return local;
	}
	*src = SHARE_EVEN;
	return cluster / (hosts > 0 ? hosts : 1);
}

/* @st (a copy of a cluster point's strategy) with this host's shares in force. */
static void cluster_apply(const struct engine *e, int id, struct sds_strategy *st,
			  struct engine_cluster *out)
{
	const struct uplink_share_grant *g = &e->shares[id];
	bool fresh = e->shares_at_ns &&
		     flags_now_ns() - e->shares_at_ns <
		     UPLINK_SHARE_LEASE_MS * 1000000ULL;
	enum engine_share_source src = SHARE_ADMIN;
	int64_t v;

	out->visits = out->token_rate = out->token_bucket = -1;
	if (st->cluster_visit_threshold >= 0) {
		v = share_of(g->visits, fresh, st->visit_threshold,
			     st->cluster_visit_threshold, e->share_hosts, &src);
		/* Never above the host's own limit. */
		if (st->visit_threshold < 0 || v < st->visit_threshold)
			st->visit_threshold = v;
		out->visits = st->visit_threshold;
	}
	if (st->cluster_token_rate > 0) {
		enum engine_share_source s2;
		int64_t r = share_of(g->token_rate, fresh, st->token_rate,
				     st->cluster_token_rate, e->share_hosts, &s2);
		int64_t b = share_of(g->token_bucket, fresh, st->token_bucket,
				     st->cluster_token_bucket, e->share_hosts, &s2);

		if (st->token_rate < 0 || r < st->token_rate)
			st->token_rate = r;
		if (st->token_bucket < 0 || b < st->token_bucket)
			st->token_bucket = b;
		out->token_rate = st->token_rate;
		out->token_bucket = st->token_bucket;
		/*
		 * A share of 0 is 0 calls, not "no limit" (a token_rate of 0
		 * is off): a bucket smaller than one token refuses every call
		 * (libsds/guard.c).
		 */
		if (st->token_rate == 0 || st->token_bucket == 0) {
			st->token_rate = 1;
			st->token_bucket = 0;
		}
		if (st->cluster_visit_threshold < 0)
			src = s2;
	}
	out->source = src;
	out->hosts = e->share_hosts;
	out->age_ms = e->shares_at_ns ?
		      (int64_t)((flags_now_ns() - e->shares_at_ns) / 1000000) : -1;
}

/* The strategy point @id is judged by: the written one, with its shares. */
static const struct sds_strategy *point_strategy(struct engine *e, int id)
{
	const struct sds_strategy *st = point_written(e, id);
	struct engine_cluster c;

	/* A firing pressure rule's limits replace the point's own. */
	if (e->pressure.rules) {
		const struct sds_strategy *lim =
			pressure_run__limits(&e->pressure, e->env.probes->pts[id].spec.name);

		if (lim)
			return lim;
	}
	if (!strategy_is_cluster(st))
		return st;
	e->eff[id] = *st;
	cluster_apply(e, id, &e->eff[id], &c);
	return &e->eff[id];
}

bool engine__cluster(struct engine *e, int id, struct engine_cluster *out)
{
	const struct sds_strategy *st = point_written(e, id);
	struct sds_strategy eff;

	if (!strategy_is_cluster(st))
		return false;
	eff = *st;
	cluster_apply(e, id, &eff, out);
	return true;
}

/*
 * What the admin divides the app's cluster limits by (uplink_share.c):
 * each cluster point's passes and tries in its window, tries in its last
 * second, and the shares in force, from the tick's read.
 */
static void cluster_report(struct engine *e)
{
	bool any = false;
	int id;

	if (!e->env.uplink)
		return;
	for (id = 0; id < e->env.probes->npoints; id++) {
		const struct sds_strategy *st = point_written(e, id);
		const struct point_stats *ps = snapshot__point(e->snap, id);
		struct uplink_share_report *r = &e->share_rep[id];
		struct engine_cluster c;

		memset(r, 0, sizeof(*r));
		if (!strategy_is_cluster(st) || !ps)
			continue;
		engine__cluster(e, id, &c);
		r->want = true;
		r->wants = (int64_t)ps->window.visits;
		r->used = (int64_t)(ps->window.visits - ps->window.downgrades);
		if (r->used < 0)
			r->used = 0;
		r->rate_wants = (int64_t)ps->secs[1].visits;
		/* What the admin granted, not a fallback: it counts its own. */
		r->visits = c.source == SHARE_ADMIN ? c.visits : -1;
		r->token_rate = c.source == SHARE_ADMIN ? c.token_rate : -1;
		any = true;
	}
	if (any || e->share_reporting)
		uplink_share__report(e->env.uplink, e->share_rep,
				     e->env.probes->npoints);
	e->share_reporting = any;
}

/*
 * A point's strategy is new: the BPF side's slow-call threshold (the
 * strategy's timeout_ms wins) and its adaptive limit, afresh.
 */
static void point_configure(struct engine *e, int id)
{
	const struct sds_strategy *st = point_strategy(e, id);
	uint64_t timeout_ns = 0;

	if (st && st->timeout_ms > 0)
		timeout_ns = (uint64_t)st->timeout_ms * 1000000ULL;
	probes__configure(e->env.probes, id, timeout_ns);
	/* A keyed point's table at its key_capacity (docs/KEYS.md). */
	if (keys__keyed(e->env.probes, id)) {
		char err[256];

		if (keys__table(e->env.probes, id, st ? st->key_capacity : SDS_OFF,
				err, sizeof(err)))
			cmd_err("%s", err);
	}
	adaptive_run__configure(&e->adaptive, id, st, flags_now_ns());
	/* Key limits are the written strategy's: its overrides live in its document. */
	keys_run__configure(&e->keys, id, e->strategies, point_written(e, id),
			    flags_now_ns());
}

int engine__check_key_limits(const struct sds_strategies *s,
			     const struct sds_strategy *st, bool function,
			     unsigned int key_kind, bool failfast, char *err,
			     size_t errlen)
{
	struct keylimit_override *ov;
	struct keylimit_limits def;
	int rc;

	if (!st || enforce__key_limits(st, function, key_kind != 0, failfast,
				       err, errlen))
		return st ? -1 : 0;
	if (!st->key_ov_n || (function && !key_kind))
		return 0;
	ov = calloc(SDS_KEY_OVERRIDES_MAX, sizeof(*ov));
	if (!ov) {
		snprintf(err, errlen, "point '%s': key_overrides: out of memory",
			 st->point);
		return -1;
	}
	rc = keylimit__from_strategy(s, st, function ? key_kind : SDS_KEY_BUF,
				     &def, ov, err, errlen);
	free(ov);
	return rc < 0 ? -1 : 0;
}

/* engine__check_key_limits of point @id of @pr. */
static int check_key_limits(const struct probes *pr, int id,
			    const struct sds_strategies *s,
			    const struct sds_strategy *st, char *err,
			    size_t errlen)
{
	const struct probe_point *pp = &pr->pts[id];

	return engine__check_key_limits(s, st, pp->kind == POINT_FUNCTION,
					pp->spec.key_kind,
					pp->spec.failfast_ops != 0, err, errlen);
}

int engine__check(const struct probes *pr, const struct sds_strategies *s,
		  char *err, size_t errlen)
{
	int i, id;

	for (i = 0; s && i < s->n; i++) {
		/* The blocked part needs the split, which this loader has not. */
		if (strategy_is_adaptive(&s->s[i]) &&
		    s->s[i].adaptive_signal == SDS_ADAPTIVE_BY_BLOCKED &&
		    (pr->split.off || (!pr->split.loaded && pr->split.why[0]))) {
			snprintf(err, errlen,
				 "point '%s': adaptive_signal \"blocked\" needs the split of calls' time, which this loader has not (%s; docs/SPLIT.md)",
				 s->s[i].point, pr->split.off ? "--no-split" : pr->split.why);
			return -1;
		}
		id = probes__find(pr, s->s[i].point);
		if (id >= 0 &&
		    (enforce__strategy(&s->s[i], pr->pts[id].kind == POINT_FUNCTION,
				       pr->pts[id].spec.failfast_ops != 0, err, errlen) ||
		     enforce__keys(&s->s[i], pr->pts[id].kind == POINT_FUNCTION,
				   pr->pts[id].spec.key_kind != 0, err, errlen) ||
		     check_key_limits(pr, id, s, &s->s[i], err, errlen)))
			return -1;
	}
	return 0;
}

int engine__set_files(struct engine *e, const char *strategies_path,
		      const char *cache_dir, const char *group, const char *app)
{
	e->strategies_path = strategies_path;
	e->cache_path[0] = '\0';
	if (!cache_dir)
		return 0;
	if (snprintf(e->cache_path, sizeof(e->cache_path),
		     "%s/%s.%s.strategies.json", cache_dir, group, app) >=
	    (int)sizeof(e->cache_path)) {
		e->cache_path[0] = '\0';
		return -1;
	}
	return 0;
}

void engine__init(struct engine *e, const struct engine_env *env)
{
	e->env = *env;
	e->snaps.cap = env->probes->cap;
	e->tick.pt = e->tick_pts;
	keys_run__init(&e->keys, env->probes, env->flags);
}

void engine__close(struct engine *e)
{
	snapshot__put(e->snap);
	e->snap = NULL;
	snap_pool__free(&e->snaps);
	lbpub__free(e->lbpub);
	e->lbpub = NULL;
	free(e->strategies);
	e->strategies = NULL;
	pressure_run__close(&e->pressure);
	keys_run__close(&e->keys);
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
	point_configure(e, id);
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
		.st = point_strategy(e, id),
		.snap = e->snap,
		/* What guards wrote, as counts the loader bounded: never instructions. */
		.cells = flags__counts(e->env.flags, id),
		.now_ns = now_ns,
		.tick_ns = e->env.tick_ns,
		.now_sec = now_sec,
		.ho = &e->halfopen[id],
		.visit_full = exact__before(&e->exact, id, &e->run[id],
					    point_strategy(e, id), e->snap, now_sec),
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
	pressure_run__verdict(&e->pressure, id, point_written(e, id), now_ns,
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
		keys__heartbeat(e->env.probes, id, e->tick_keys, &t->nkeys,
				SDS_HB_MAX_KEYS);
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
	const struct sds_strategy *st = point_strategy(ctx, id);

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
		cluster_report(e);
	}
	/* Host pressure: a "limits" rule that fired or cleared changes strategies. */
	if (pressure_run__tick(&e->pressure, now_ns, e->env.events))
		for (id = 0; id < t->npoints; id++)
			if (pressure_run__names(&e->pressure, t->pt[id].name))
				point_configure(e, id);
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

/* Did point @id's strategy change between @old and @new? */
static bool strategy_changed(const struct sds_strategies *old,
			     const struct sds_strategies *new, const char *name)
{
	const struct sds_strategy *a = old ? strategy_set_find(old, name) : NULL;
	const struct sds_strategy *b = new ? strategy_set_find(new, name) : NULL;

	if (!a || !b)
		return a != b;
	return memcmp(a, b, sizeof(*a)) != 0;
}

int engine__apply(struct engine *e, struct sds_strategies *s)
{
	struct sds_strategies *old = e->strategies;
	/* Each point's limits from a firing pressure rule before the change. */
	const struct sds_strategy *lim[SDS_MAX_POINTS];
	int i, id, n = e->env.probes->npoints;
	char err[512];

	/*
	 * A field no point here can enforce, or a pressure rule this host
	 * cannot (docs/PRESSURE.md): refused whole, the old ones stay.
	 */
	if (engine__check(e->env.probes, s, err, sizeof(err)) ||
	    pressure_run__check(&e->pressure, s, e->env.probes,
				e->env.probes->npoints, err, sizeof(err))) {
		snprintf(e->apply_err, sizeof(e->apply_err), "%s", err);
		free(s);
		return cmd_err("%s; the strategies in force stay", err);
	}
	for (id = 0; id < n; id++)
		lim[id] = pressure_run__limits(&e->pressure, e->env.probes->pts[id].spec.name);
	e->strategies = s;
	pressure_run__set(&e->pressure, s, e->env.events);
	/* Points named in a strategy get their entries before anyone calls. */
	for (i = 0; s && i < s->n; i++)
		if (engine__point(e, s->s[i].point) < 0)
			cmd_err("strategy for '%s': no room for more points (at most %d)",
				s->s[i].point, e->env.probes->cap);
	/*
	 * Only the points whose strategy changed start afresh: a new version
	 * for one point must not end another point's hold.
	 */
	for (id = 0; id < e->env.probes->npoints; id++) {
		if (!strategy_changed(old, s, e->env.probes->pts[id].spec.name))
			continue;
		memset(&e->run[id].cs, 0, sizeof(e->run[id].cs));
		/* The tag goes on: a claim of an old phase must never fit a new one. */
		e->halfopen[id] = (struct halfopen_run){ .tag = e->halfopen[id].tag };
		point_configure(e, id);
		/* New limits start with a full bucket and no pending probe. */
		flags__reset_cell(e->env.flags, id);
	}
	/* A firing "limits" rule the new rules changed or dropped: reconfigured. */
	for (id = 0; id < n; id++) {
		const struct sds_strategy *now =
			pressure_run__limits(&e->pressure, e->env.probes->pts[id].spec.name);

		if (lim[id] && (!now || memcmp(lim[id], now, sizeof(*now))))
			point_configure(e, id);
	}
	free(old);
	/* In force now, not at the next tick: the kill switch trips at once. */
	engine__tick(e);
	return 0;
}

void engine__adopt(struct engine *e, struct sds_strategies *s)
{
	int i, id;

	e->strategies = s;
	pressure_run__set(&e->pressure, s, e->env.events);
	for (i = 0; s && i < s->n; i++)
		if (engine__point(e, s->s[i].point) < 0)
			cmd_err("strategy for '%s': no room for more points (at most %d)",
				s->s[i].point, SDS_MAX_POINTS);
	/* The kept chain states stand: only the BPF side is configured. */
	for (id = 0; id < e->env.probes->npoints; id++)
		point_configure(e, id);
	engine__tick(e);
}

int engine__reload(struct engine *e)
{
	struct sds_strategies *s;
	char err[512];

	if (!e->strategies_path)
		return 0;
	s = malloc(sizeof(*s));
	if (!s)
		return cmd_err("loading strategies: out of memory");
	if (strategy_set_load_file(e->strategies_path, s, err, sizeof(err))) {
		free(s);
		return cmd_err("%s; the strategies in force stay", err);
	}
	return engine__apply(e, s);
}

bool engine__state(struct engine *e, int id, uint32_t *reason, uint32_t *rate)
{
	struct point_run *r = &e->run[id];
	const struct sds_strategy *st = point_strategy(e, id);

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

#define CACHE_MAX	(1 << 20)	/* bytes: 256 points fit many times over */

/*
 * Keep the admin's strategies for a restart while the admin is away: a
 * reader sees the old cache or the new one, whole (common/durable.c).
 */
static void cache_write(struct engine *e)
{
	json_t *doc;
	char *text = NULL;

	if (!e->cache_path[0] || !e->strategies)
		return;
	doc = strategy_set_to_json(e->strategies);
	if (doc)
		text = json_dumps(doc, JSON_COMPACT);
	if (!text)
		errno = ENOMEM;
	if (!text || strlen(text) > CACHE_MAX ||
	    durable_write(e->cache_path, text, strlen(text)))
		cmd_err("caching strategies in %s: %s", e->cache_path,
			text && strlen(text) > CACHE_MAX ? "larger than 1 MiB" :
			strerror(errno));
	free(text);
	json_decref(doc);
}

/*
 * The admin's strategies @s were refused with @why: the heartbeat says so,
 * one line per point that cannot enforce a field of its strategy
 * (decide/enforce.c), or @why alone when no point's strategy was the
 * cause (a pressure rule, the split).  Each line is cut to
 * SDS_HB_REASON_MAX bytes.
 */
static void refusal_note(struct engine *e, const struct sds_strategies *s,
			 const char *why)
{
	const struct probes *pr = e->env.probes;
	char err[512];
	int i, id;

	e->nrefused = 0;
	for (i = 0; i < s->n && e->nrefused < SDS_HB_MAX_REFUSED; i++) {
		id = probes__find(pr, s->s[i].point);
		if (id < 0 ||
		    (!enforce__strategy(&s->s[i], pr->pts[id].kind == POINT_FUNCTION,
					pr->pts[id].spec.failfast_ops != 0, err, sizeof(err)) &&
		     !enforce__keys(&s->s[i], pr->pts[id].kind == POINT_FUNCTION,
				    pr->pts[id].spec.key_kind != 0, err, sizeof(err)) &&
		     !check_key_limits(pr, id, s, &s->s[i], err, sizeof(err))))
			continue;
		heartbeat_refusal_set(&e->refused[e->nrefused++], s->version,
				      s->s[i].point, err);
	}
	if (!e->nrefused)
		heartbeat_refusal_set(&e->refused[e->nrefused++], s->version, NULL, why);
}

void engine__admin_reply(struct engine *e)
{
	static struct sds_hb_drill drills[SDS_HB_MAX_DRILLS];
	struct sds_strategies *s = uplink__take_reply(e->env.uplink);
	static struct sds_strategies copy;
	int n;

	if (s) {
		/* engine__apply frees what it refuses: the report needs its points. */
		copy = *s;
		if (engine__apply(e, s))
			refusal_note(e, &copy, e->apply_err);
		else
			e->nrefused = 0;	/* a later version accepted: no longer refused */
		cache_write(e);
	}
	/* The cluster limits' shares: in force from this tick on. */
	n = uplink_share__take(e->env.uplink, e->shares);
	if (n >= 0) {
		e->shares_at_ns = flags_now_ns();
		e->share_hosts = n;
	}
	n = uplink__take_drills(e->env.uplink, drills);
	if (n >= 0)
		drill__apply_admin(e->env.drill, drills, n, time(NULL));
	engine__flush(e);
}

/*
 * Read the cache: only a regular file (O_NOFOLLOW; O_NONBLOCK and fstat
 * refuse a FIFO or device), at most CACHE_MAX bytes.  A missing cache is
 * normal; a bad one is said and ignored: the admin resends.
 */
int engine__load_cache(struct engine *e, struct sds_strategies **out)
{
	struct sds_strategies *s = NULL;
	char err[600], *buf = NULL;
	const char *why = NULL;
	struct stat st;
	ssize_t n = 0;
	int fd;

	*out = NULL;
	if (!e->cache_path[0])
		return 0;
	fd = open(e->cache_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			cmd_err("ignoring cached strategies: %s: %s", e->cache_path,
				errno == ELOOP ? "a symlink" : strerror(errno));
		return 0;
	}
	if (fstat(fd, &st))
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_size > CACHE_MAX)
		why = "larger than 1 MiB";
	if (!why) {
		buf = malloc(st.st_size + 1);
		s = malloc(sizeof(*s));
		if (!buf || !s) {
			close(fd);
			free(buf);
			free(s);
			return -1;
		}
		n = pread(fd, buf, st.st_size, 0);
		if (n < 0)
			why = strerror(errno);
	}
	close(fd);
	if (!why && strategy_set_parse(buf, n, s, err, sizeof(err)))
		why = err;
	free(buf);
	if (why) {
		cmd_err("ignoring cached strategies: %s: %s", e->cache_path, why);
		free(s);
		return 0;
	}
	*out = s;
	return 0;
}
