// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * attach_wire.c - where attach hands the modules that do not see the
 * loader whole what they read of it and what they may ask of it: the
 * control socket's struct serve and its serve_ops (serve.h), built once
 * before the loop, and the drills' struct drill_ctx (state/drill.h).
 * The loader is whole only here, in the rest of attach and in the loop
 * (loop/loop.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "capture/capture.h"
#include "cli/attach_run.h"
#include "tick/budget_run.h"
#include "tick/exact_run.h"
#include "tick/engine.h"
#include "deps/deps.h"
#include "loop/loader.h"
#include "publish/delaydrill.h"
#include "publish/failfast.h"
#include "report/uplink.h"
#include "serve/serve.h"

/* ---- what the control socket asks (serve_ops) -------------------------- */

static int serve_point(void *ctx, const char *name)
{
	struct loader *l = ctx;

	return engine__point(&l->engine, name);
}

static char *serve_drill(void *ctx, const char *args)
{
	struct loader *l = ctx;

	return drill__request(&l->drill, args);
}

static struct snapshot *serve_query_snapshot(void *ctx)
{
	struct loader *l = ctx;

	return engine__query_snapshot(&l->engine);
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The tick's lateness over the last TICK_LATE_WINDOW_NS: p50, p99, max (ms). */
static json_t *tick_late_json(const struct tick_late *t)
{
	static uint32_t v[TICK_LATE_RING];
	uint64_t now = flags_now_ns();
	uint32_t i, n = 0;

	for (i = 0; i < t->n; i++)
		if (t->at_ns[i] + TICK_LATE_WINDOW_NS > now)
			v[n++] = t->us[i];
	qsort(v, n, sizeof(v[0]), u32_cmp);
	/* Nearest rank: the smallest value with at least p% of the samples at or below it. */
	return json_pack("{s:i, s:f, s:f, s:f}", "ticks", (int)n,
			 "p50", n ? v[(n * 50 + 99) / 100 - 1] / 1e3 : 0.0,
			 "p99", n ? v[(n * 99 + 99) / 100 - 1] / 1e3 : 0.0,
			 "max", n ? v[n - 1] / 1e3 : 0.0);
}

/*
 * The newest second every point has folded into its totals (and the
 * heartbeat into its periods), in Unix seconds as the periods are: the
 * ring's seconds plus the wall offset.  Before the first fold, the second
 * before attach (nothing before it counts).
 */
static json_t *folded_json(const struct loader *l)
{
	const struct counters *c = &l->counters;
	uint64_t f = UINT64_MAX;
	int i;

	if (!c->acc)
		return json_null();
	for (i = 0; i < c->npoints; i++)
		if (c->acc[i].folded_sec < f)
			f = c->acc[i].folded_sec;
	/* No point yet: the tick folds what is complete, up to its second - 2. */
	if (f == UINT64_MAX) {
		const struct snapshot *s = engine__last_tick(&l->engine)->snap;

		if (!s || s->sec < 2)
			return json_null();
		f = s->sec - 2;
	}
	return json_integer((json_int_t)f + l->wall_offset);
}

static json_t *serve_head(void *ctx)
{
	struct loader *l = ctx;
	json_t *o = json_object();

	json_object_set_new(o, "strategies_version",
			    json_integer(engine__version(&l->engine)));
	json_object_set_new(o, "admin", l->uplink ? uplink__json(l->uplink) : json_null());
	json_object_set_new(o, "tick_late_ms", tick_late_json(&l->tick_late));
	json_object_set_new(o, "tick_count", json_integer(l->tick_late.done));
	json_object_set_new(o, "folded_through", folded_json(l));
	json_object_set_new(o, "budget",
			    budget__json(&l->budget, l->probes.npoints));
	json_object_set_new(o, "pressure",
			    pressure_run__json(&l->engine.pressure, flags_now_ns()));
	return o;
}

static json_t *serve_point_state(void *ctx, int id, const struct point_stats *st)
{
	struct loader *l = ctx;
	json_t *o = json_object(), *state = json_object(), *ff, *ad;
	struct engine_cluster cl;
	uint32_t reason, rate;
	bool down;

	down = engine__state(&l->engine, id, &reason, &rate);
	json_object_set_new(state, "downgraded", json_boolean(down));
	json_object_set_new(state, "reason",
			    down ? json_string(chain_reason_name(reason)) : json_null());
	json_object_set_new(state, "rate", json_integer(rate));
	/* A function point's open trip: the call that crossed its mark (exact_fn.c). */
	if (probes__kind(&l->probes, id) == POINT_FUNCTION)
		json_object_set_new(state, "crossed",
				    exact_fn__json(&l->engine.exact, id));
	json_object_set_new(o, "state", state);
	json_object_set_new(o, "drill",
			    drill__json(&l->drill, id, flags_now_ns()));
	json_object_set_new(o, "overhead",
			    budget__point_json(&l->budget, id, st));
	/* Cluster-wide limits: this host's shares (docs/CLUSTER.md). */
	if (engine__cluster(&l->engine, id, &cl)) {
		static const char *const src[] = {
			[SHARE_ADMIN] = "admin", [SHARE_LOCAL] = "local",
			[SHARE_EVEN] = "even",
		};

		json_object_set_new(o, "cluster", json_pack(
			"{s:I, s:I, s:I, s:s, s:i, s:I}",
			"visits", (json_int_t)cl.visits,
			"token_rate", (json_int_t)cl.token_rate,
			"token_bucket", (json_int_t)cl.token_bucket,
			"source", src[cl.source], "hosts", cl.hosts,
			"age_ms", (json_int_t)cl.age_ms));
	}
	/* Adaptive concurrency: the limit in force and what it steers by. */
	ad = adaptive_run__json(&l->engine.adaptive, id);
	if (ad)
		json_object_set_new(o, "adaptive", ad);
	/* Hot keys' limits: the keys blocked now (reason "key"). */
	ad = keys_run__json(&l->engine.keys, id);
	if (ad)
		json_object_set_new(o, "key_limits", ad);
	/* Fail-fast, on points with :failfast=. */
	ff = failfast__point_json(l->failfast, id);
	if (ff)
		json_object_set_new(o, "failfast", ff);
	/* Delay drills, on points with failfast=connect. */
	ff = delaydrill__point_json(l->delay, id);
	if (ff)
		json_object_set_new(o, "delay", ff);
	return o;
}

static int serve_key_blocked(void *ctx, int id, uint64_t hash)
{
	struct loader *l = ctx;

	if (!keys_run__on(&l->engine.keys, id))
		return -1;
	return keys_run__is_blocked(&l->engine.keys, id, hash);
}

static json_t *serve_deps(void *ctx, const char *point)
{
	struct loader *l = ctx;

	return deps__json(l->deps, &l->probes, point);
}

void attach_wire_deps_fill(void *ctx, struct sds_heartbeat *hb)
{
	struct loader *l = ctx;
	uint64_t ovf[SDS_DEPS_OVF_NR];
	struct deps_edge *e;
	int n, total, i, j;

	if (!l->deps)
		return;
	e = calloc((size_t)deps__capacity(l->deps), sizeof(*e));
	if (!e)
		return;
	n = deps__read(l->deps, &l->probes, e, deps__capacity(l->deps), &total, ovf);
	for (i = 0; i < n && hb->ndeps < SDS_HB_MAX_DEPS; i++) {
		struct sds_hb_dep *d;

		/* Only to a point the period has: a point's deps ride with its counts. */
		for (j = 0; j < hb->n && strcmp(hb->points[j].name, e[i].name); j++)
			;
		if (j == hb->n || !(d = heartbeat_add_dep(hb, j)))
			continue;
		snprintf(d->addr, sizeof(d->addr), "%s", e[i].addr);
		d->port = e[i].port;
		snprintf(d->proto, sizeof(d->proto), "%s", e[i].proto);
		d->connects = e[i].c.connects;
		d->connect_errors = e[i].c.connect_errors;
		d->sends = e[i].c.sends;
		d->send_errors = e[i].c.send_errors;
		d->resets = e[i].c.resets;
		d->bytes = e[i].c.bytes;
	}
	free(e);
}

static const struct serve_ops serve_ops = {
	.point = serve_point,
	.drill = serve_drill,
	.query_snapshot = serve_query_snapshot,
	.head = serve_head,
	.point_state = serve_point_state,
	.key_blocked = serve_key_blocked,
	.deps = serve_deps,
};

static int drill_point(void *ctx, const char *name)
{
	return engine__point(ctx, name);
}

/* A stop condition stopped admin drill @id here: the admin stops it everywhere. */
static void drill_aborted(void *ctx, int64_t id, const char *why)
{
	struct loader *l = ctx;

	if (l->uplink)
		uplink_abort__note(l->uplink, id, why);
}

void attach_wire_drill(struct loader *l)
{
	const struct drill_ctx c = {
		.probes = &l->probes,
		.run = l->engine.run,
		.flags = &l->flags,
		.events = &l->events,
		.failfast = &l->failfast,
		.delay = &l->delay,
		.app = l->app,
		/* A drill from the admin may name a point no process has yet. */
		.point = drill_point,
		.point_ctx = &l->engine,
		/* Stop conditions: the tick's read, and the admin told of a stop. */
		.snap = &l->engine.snap,
		.tick_ns = &l->tick_ns,
		.aborted = drill_aborted,
		.aborted_ctx = l,
	};

	drill__init(&l->drill, &c);
}

void attach_wire_serve(struct loader *l)
{
	struct serve *sv = &l->serve;

	sv->app = l->app;
	sv->group = l->group;
	sv->target = l->target;
	sv->key = l->key;
	sv->epoch = l->epoch;
	sv->probes = &l->probes;
	sv->flags = &l->flags;
	sv->reg = &l->reg;
	sv->watch = &l->watch;
	sv->capture = &l->capture;
	sv->events = &l->events;
	sv->ops = &serve_ops;
	sv->ctx = l;
}
