// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/stats.c - the routes of statistics, hosts, points, events and audit,
 * and the heartbeat.
 */
#include <pthread.h>
#include "heartbeat/heartbeat.h"
#include "names.h"
#include "api/aggregate.h"
#include "strategy.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "cluster.h"

/* Host rows @hosts gain "shares": what this admin's allocator granted them. */
static void hosts_shares(struct api_route *r, const char *g, const char *a,
			 json_t *hosts)
{
	json_t *sh = cluster__shares_json(r->ad->cluster, g, a, cluster_now_ms());
	json_t *h;
	size_t i;

	json_array_foreach(hosts, i, h) {
		json_t *mine = json_object_get(sh, json_string_value(
						     json_object_get(h, "host")));

		if (mine)
			json_object_set(h, "shares", mine);
		else
			json_object_set_new(h, "shares", json_object());
	}
	json_decref(sh);
}


/* ---- statistics, hosts, events ------------------------------------------- */

void api_route_stats(struct api_route *r, const char *g, const char *a)
{
	int64_t to, from, step;
	const char *point;
	json_t *out;

	if (!api_is(r, "GET"))
		return api_not_allowed(r, "GET");
	if (api_query_int(r, "to", (store_now_s() / 10 + 1) * 10, &to) ||
	    api_query_int(r, "from", to - 3600, &from) || api_query_int(r, "step", 0, &step))
		return;
	point = http_query(r->rq->conn, "point");
	if (point && !sds_point_name_valid(point)) {
		api_fail(r, 400, "point: bad name (1-64 of [A-Za-z0-9_-])");
		return;
	}
	if (aggregate_range(&from, &to, &step, r->err, sizeof(r->err))) {
		api_fail(r, 400, "%s", r->err);
		return;
	}
	if (!api_store_rc(r, aggregate_query(r->ad->store, g, a, point, from, to, step, &out,
				     r->err)))
		api_reply(r, 200, out);
}

void api_route_listing(struct api_route *r, const char *g, const char *a, const char *what)
{
	struct store *st = r->ad->store;
	int64_t from, to, limit;
	json_t *out;
	int rc;

	if (!api_is(r, "GET"))
		return api_not_allowed(r, "GET");
	if (!strcmp(what, "hosts")) {
		rc = st->ops->host_list(st, g, a, &out, r->err);
		/* Each host's cluster shares, as this admin granted them. */
		if (!rc)
			hosts_shares(r, g, a, out);
	} else if (!strcmp(what, "points")) {
		rc = st->ops->point_list(st, g, a, &out, r->err);
	} else if (!strcmp(what, "events")) {
		if (api_query_int(r, "to", store_now_s() + 10, &to) ||
		    api_query_int(r, "from", to - 86400, &from) ||
		    api_query_int(r, "limit", 500, &limit))
			return;
		if (limit < 1 || limit > 10000) {
			api_fail(r, 400, "limit must be an integer 1..10000");
			return;
		}
		rc = st->ops->events(st, g, a, from, to, (int)limit, &out, r->err);
	} else {
		if (api_query_int(r, "limit", 100, &limit))
			return;
		if (limit < 1 || limit > 10000) {
			api_fail(r, 400, "limit must be an integer 1..10000");
			return;
		}
		rc = st->ops->audit(st, g, a, (int)limit, &out, r->err);
	}
	if (!api_store_rc(r, rc))
		api_reply(r, 200, out);
}

/* ---- the heartbeat ------------------------------------------------------- */

/*
 * Per-thread buffers: a heartbeat struct is ~160 KiB, which malloc would
 * map and unmap (and the kernel fault in) on every request.  Freed when
 * the thread ends.
 */
struct hb_bufs {
	struct sds_heartbeat *hb;	/* the parsed heartbeat */
	struct sds_strategies *strategies;	/* the reply's strategies, when they changed */
	struct sds_hb_drill drills[SDS_HB_MAX_DRILLS];	/* the reply's drills in force */
	struct sds_hb_copy copy;	/* ~270 KiB: the app's copy plans */
};

static pthread_key_t bufs_key;
static pthread_once_t bufs_once = PTHREAD_ONCE_INIT;

static void bufs_free(void *p)
{
	struct hb_bufs *b = p;

	heartbeat_free(b->hb);
	free(b->strategies);
	free(b);
}

static void bufs_key_make(void)
{
	pthread_key_create(&bufs_key, bufs_free);
}

static struct hb_bufs *bufs_get(void)
{
	struct hb_bufs *b;

	pthread_once(&bufs_once, bufs_key_make);
	b = pthread_getspecific(bufs_key);
	if (b)
		return b;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->hb = heartbeat_new();
	b->strategies = malloc(sizeof(*b->strategies));
	if (!b->hb || !b->strategies || pthread_setspecific(bufs_key, b)) {
		bufs_free(b);
		return NULL;
	}
	return b;
}

/*
 * The answer to a loader that has strategies version @have: the version,
 * the strategies when they changed, and every drill and copy plan in
 * force (one missing has stopped).  The heartbeat's and the sync's.
 */
static json_t *reply_doc(const struct store_hb_result *res, int64_t have)
{
	bool changed = have != res->version;
	json_t *doc = heartbeat_reply_to_json(res->version, changed,
					      changed ? res->strategies : NULL);

	if (doc) {
		json_object_set_new(doc, "drills",
				    heartbeat_drills_to_json(res->drills, res->ndrills));
		json_object_set_new(doc, "copy", heartbeat_copy_to_json(res->copy));
		/* The drills' version: a loader replaces its list with a newer one only. */
		json_object_set_new(doc, "drills_seq", json_integer(res->drills_seq));
	}
	return doc;
}

void api_route_heartbeat(struct api_route *r)
{
	struct store *st = r->ad->store;
	struct store_hb_result res = { 0 };
	struct sds_heartbeat *hb = NULL;
	struct hb_bufs *bufs;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!api_is(r, "POST"))
		return api_not_allowed(r, "POST");
	bufs = bufs_get();
	if (!bufs) {
		api_fail(r, 500, "out of memory");
		goto out;
	}
	hb = bufs->hb;
	res.strategies = bufs->strategies;
	res.drills = bufs->drills;
	res.copy = &bufs->copy;
	res.host = hb->host;	/* filled by the parse below */
	if (heartbeat_parse(r->rq->body, r->rq->len, hb, r->err, sizeof(r->err))) {
		atomic_fetch_add(&r->ad->m.heartbeat_rejected, 1);
		api_fail(r, 400, "%s", r->err);
		goto out;
	}
	if (hb->period_start > store_now_s() + 3600) {
		atomic_fetch_add(&r->ad->m.heartbeat_rejected, 1);
		api_fail(r, 400, "period_start is more than an hour in the future");
		goto out;
	}
	/*
	 * A scoped heartbeat token (--heartbeat-token-file FILE:GROUP[/APP])
	 * speaks for its apps only: outside them it creates no app and reads
	 * no strategies, drills or plans.
	 */
	if (r->rq->tok && !auth_in_scope(r->rq->tok, hb->group, hb->app)) {
		char scope[2 * ADMIN_NAME_MAX + 2], more[4 * ADMIN_NAME_MAX + 64];

		auth_scope_name(r->rq->tok, scope, sizeof(scope));
		snprintf(more, sizeof(more), "for %s/%s (scope %s)", hb->group, hb->app, scope);
		auth_audit_denied_app(r->ad, r->rq->tok, "POST", "/api/v1/heartbeat",
					    hb->group, hb->app, more);
		api_fail(r, 403, "this heartbeat token is for %s only: %s/%s is outside it",
		     scope, hb->group, hb->app);
		goto out;
	}
	if (api_store_rc(r, st->ops->heartbeat(st, hb, store_now_s(), &res, r->err)))
		goto out;
	if (res.duplicate) {
		atomic_fetch_add(&r->ad->m.heartbeat_duplicates, 1);
	} else {
		atomic_fetch_add(&r->ad->m.heartbeats, 1);
		atomic_fetch_add(&r->ad->m.heartbeat_points, hb->n);
		/* A period more of the fleet: its drills' stop conditions. */
		api_drill_judge(r, hb, &res);
	}
	api_reply(r, 200, reply_doc(&res, hb->version));
out:
	clock_gettime(CLOCK_MONOTONIC, &t1);
	atomic_fetch_add(&r->ad->m.heartbeat_usec,
			 (t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000);
}

/* ---- the push channel's sync (issue 32) ----------------------------------- */

/*
 * What a heartbeat of the app would be answered now, and nothing stored:
 * a loader woken by its watch reads it here, from its one sender thread,
 * so that answers reach it in the order the store committed them.
 */
void api_route_sync(struct api_route *r)
{
	const char *g = http_query(r->rq->conn, "group"), *a = http_query(r->rq->conn, "app");
	const char *host;
	struct store *st = r->ad->store;
	struct store_hb_result res = { 0 };
	struct hb_bufs *bufs;
	int64_t have;
	int rc;

	if (!api_is(r, "GET"))
		return api_not_allowed(r, "GET");
	if (!g || !*g || !a || !*a)
		return api_fail(r, 400, "%s: missing (sync?group=G&app=A&version=V)",
				!g || !*g ? "group" : "app");
	if (!sds_name_valid(g) || !sds_name_valid(a))
		return api_fail(r, 400, "%s: bad name (1-64 of [A-Za-z0-9_-])",
				!sds_name_valid(g) ? "group" : "app");
	if (api_query_int(r, "version", 0, &have))
		return;
	/* Its own drills (a blast radius names hosts); none said: every host's only. */
	host = http_query(r->rq->conn, "host");
	if (host && !heartbeat_host_valid(host))
		return api_fail(r, 400, "host: bad name (1-253 of [A-Za-z0-9._-])");
	/* A scoped heartbeat token reads its own apps only, as it heartbeats. */
	if (r->rq->tok && !auth_in_scope(r->rq->tok, g, a)) {
		char scope[2 * ADMIN_NAME_MAX + 2], more[4 * ADMIN_NAME_MAX + 64];

		auth_scope_name(r->rq->tok, scope, sizeof(scope));
		snprintf(more, sizeof(more), "for %s/%s (scope %s)", g, a, scope);
		auth_audit_denied_app(r->ad, r->rq->tok, "GET", "/api/v1/sync", g, a, more);
		return api_fail(r, 403, "this heartbeat token is for %s only: %s/%s is outside it",
				scope, g, a);
	}
	bufs = bufs_get();
	if (!bufs)
		return api_fail(r, 500, "out of memory");
	res.strategies = bufs->strategies;
	res.drills = bufs->drills;
	res.copy = &bufs->copy;
	res.host = host;
	if (!st->ops->app_state)
		return api_fail(r, 501, "this store cannot answer sync (no app_state)");
	rc = st->ops->app_state(st, g, a, have, store_now_s(), &res, r->err);
	if (rc == STORE_NOTFOUND)
		return api_fail(r, 404, "no app %s/%s", g, a);
	if (!api_store_rc(r, rc))
		api_reply(r, 200, reply_doc(&res, have));
}
