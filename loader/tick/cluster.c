// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * cluster.c - a cluster-wide limit's share for this host, in the strategy
 * a point is judged by, and what the admin divides the limits by
 * (docs/CLUSTER.md).
 */
#include <string.h>
#include "tick/engine.h"
#include "tick/engine_internal.h"
#include "kernel/probes.h"
#include "publish/flags.h"
#include "report/uplink.h"

/* The strategy of point @id as written (the admin's, the file's). */
const struct sds_strategy *engine__point_written(const struct engine *e, int id)
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
const struct sds_strategy *engine__point_strategy(struct engine *e, int id)
{
	const struct sds_strategy *st = engine__point_written(e, id);
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
	const struct sds_strategy *st = engine__point_written(e, id);
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
void engine__cluster_report(struct engine *e)
{
	bool any = false;
	int id;

	if (!e->env.uplink)
		return;
	for (id = 0; id < e->env.probes->npoints; id++) {
		const struct sds_strategy *st = engine__point_written(e, id);
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

