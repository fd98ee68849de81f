// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/shares.c - POST /api/v1/shares: a loader's report of its use of the
 * cluster-wide limits, answered with its shares (admin/API.md, "Cluster
 * shares"; the allocator is admin/cluster.c), and the check that a
 * strategy PUT setting a cluster field has a host to enforce it.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heartbeat/heartbeat.h"
#include "names.h"
#include "strategy.h"
#include "cluster.h"
#include "api/api.h"

#define SHARES_MAX_BODY	(64 * 1024)
#define SHARES_AUDIT_S	10	/* refusals audited at most this often */
#define SHARES_VAL_MAX	((int64_t)1 << 40)

static const char *const f_body[] = { "group", "app", "host", "points", NULL };
static const char *const f_point[] = {
	"used", "wants", "visits", "rate_wants", "token_rate", NULL,
};

/* Field @key of point @p's object @o: an integer @min..2^40, @def when absent. */
static int point_int(struct api_route *r, const char *p, json_t *o, const char *key,
		     int64_t min, int64_t def, int64_t *out)
{
	json_t *v = json_object_get(o, key);
	int64_t x;

	*out = def;
	if (!v)
		return 0;
	x = json_is_integer(v) ? json_integer_value(v) : min - 1;
	if (x < min || x > SHARES_VAL_MAX || (min < 0 && x < 0 && x != -1)) {
		api_fail(r, 400, "point '%s': %s must be an integer %s..2^40", p, key,
			 min < 0 ? "-1 (none yet) or 0" : "0");
		return -1;
	}
	*out = x;
	return 0;
}

/* The body's points into @pts (CLUSTER_MAX_POINTS), *n of them. */
static int parse_points(struct api_route *r, struct cluster_point *pts, int *n)
{
	json_t *points = json_object_get(r->doc, "points"), *o;
	const char *p, *key;
	json_t *v;

	*n = 0;
	if (!json_is_object(points)) {
		api_fail(r, 400, "points must be an object of point name -> report");
		return -1;
	}
	if (json_object_size(points) > CLUSTER_MAX_POINTS) {
		api_fail(r, 400, "too many points: %zu (at most %d)",
			 json_object_size(points), CLUSTER_MAX_POINTS);
		return -1;
	}
	json_object_foreach(points, p, o) {
		struct cluster_point *pt = &pts[*n];

		if (!sds_point_name_valid(p)) {
			api_fail(r, 400, "point '%.64s': bad name (1-64 of [A-Za-z0-9_@-])", p);
			return -1;
		}
		if (!json_is_object(o)) {
			api_fail(r, 400, "point '%s': expected an object", p);
			return -1;
		}
		json_object_foreach(o, key, v) {
			const char *const *f;

			for (f = f_point; *f && strcmp(*f, key); f++)
				;
			if (!*f) {
				api_fail(r, 400, "point '%s': unknown field '%.64s'", p, key);
				return -1;
			}
		}
		pt->point = p;
		if (point_int(r, p, o, "used", 0, 0, &pt->used) ||
		    point_int(r, p, o, "wants", 0, 0, &pt->wants) ||
		    point_int(r, p, o, "visits", -1, -1, &pt->ack) ||
		    point_int(r, p, o, "rate_wants", 0, 0, &pt->rate_wants) ||
		    point_int(r, p, o, "token_rate", -1, -1, &pt->rate_ack))
			return -1;
		(*n)++;
	}
	return 0;
}

static json_t *share(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

/*
 * The app's cluster limits in the allocator's cache, read from the
 * store's active strategies when older than CLUSTER_CACHE_MS: a loader's
 * report never names its limits.
 */
static int limits(struct api_route *r, const char *g, const char *a, int64_t now_ms)
{
	struct cluster *c = r->ad->cluster;
	struct store *st = r->ad->store;
	struct sds_strategies *ss;
	int rc;

	if (cluster__limits_fresh(c, g, a, now_ms))
		return 0;
	ss = malloc(sizeof(*ss));
	if (!ss) {
		api_fail(r, 500, "out of memory");
		return -1;
	}
	rc = st->ops->strategies_get(st, g, a, NULL, ss, NULL, r->err);
	if (rc == STORE_NOTFOUND)
		cluster__limits_drop(c, g, a);
	if (!api_store_rc(r, rc) && cluster__limits_set(c, g, a, ss, now_ms)) {
		api_fail(r, 500, "out of memory");
		rc = -1;
	}
	free(ss);
	return rc ? -1 : 0;
}

void api_route_shares(struct api_route *r)
{
	struct cluster_point pts[CLUSTER_MAX_POINTS];
	const char *g, *a, *host;
	int64_t now_ms;
	json_t *h, *out, *po;
	int n, nhosts, rc;

	if (!api_is(r, "POST"))
		return api_not_allowed(r, "POST");
	if (r->rq->len > SHARES_MAX_BODY)
		return api_fail(r, 413, "body larger than 64 KiB");
	if (api_body_object(r) || api_only_fields(r, f_body) ||
	    api_name_field(r, "group", true, &g) || api_name_field(r, "app", true, &a))
		return;
	h = json_object_get(r->doc, "host");
	if (!json_is_string(h) || strlen(json_string_value(h)) != json_string_length(h) ||
	    !heartbeat_host_valid(json_string_value(h)))
		return api_fail(r, 400, "host: bad host name (1-253 of [A-Za-z0-9._-])");
	host = json_string_value(h);
	if (parse_points(r, pts, &n))
		return;
	/*
	 * A scoped heartbeat token speaks for its apps only (as the
	 * heartbeat).  A loader refused here reports every 500 ms, and its
	 * heartbeat with the same token is refused and audited every 10 s:
	 * these refusals are audited at most once per SHARES_AUDIT_S, so
	 * that one misconfigured host cannot fill the audit log.
	 */
	if (r->rq->tok && !auth_in_scope(r->rq->tok, g, a)) {
		static _Atomic int64_t audited = INT64_MIN;
		char scope[2 * ADMIN_NAME_MAX + 2], more[4 * ADMIN_NAME_MAX + 64];
		int64_t now = store_now_s(), last = atomic_load(&audited);

		auth_scope_name(r->rq->tok, scope, sizeof(scope));
		snprintf(more, sizeof(more), "for %s/%s (scope %s)", g, a, scope);
		if ((last == INT64_MIN || now - last >= SHARES_AUDIT_S) &&
		    atomic_compare_exchange_strong(&audited, &last, now))
			auth_audit_denied_app(r->ad, r->rq->tok, "POST", "/api/v1/shares",
					      g, a, more);
		return api_fail(r, 403, "this heartbeat token is for %s only: %s/%s is outside it",
				scope, g, a);
	}
	now_ms = cluster_now_ms();
	if (limits(r, g, a, now_ms))
		return;
	rc = cluster__report(r->ad->cluster, g, a, host, now_ms, pts, n, &nhosts);
	if (rc == -ENOSPC)
		return api_fail(r, 503, "cluster limits full: at most %d hosts per point, %d (app, point) entries, %d host records",
				CLUSTER_MAX_HOSTS, CLUSTER_MAX_ENTRIES, CLUSTER_MAX_RECORDS);
	if (rc)
		return api_fail(r, 500, "out of memory");
	po = json_object();
	if (!po)
		return api_fail(r, 500, "out of memory");
	for (int i = 0; i < n; i++)
		json_object_set_new(po, pts[i].point,
				    json_pack("{s:o, s:o, s:o}", "visits", share(pts[i].visits),
					      "token_rate", share(pts[i].token_rate),
					      "token_bucket", share(pts[i].token_bucket)));
	out = json_pack("{s:i, s:i, s:o}", "hosts", nhosts, "lease_ms", CLUSTER_LEASE_MS,
			"points", po);
	if (!out)
		return api_fail(r, 500, "out of memory");
	api_reply(r, 200, out);
}

/* ---- a strategy PUT ----------------------------------------------------- */

int api_cluster_check_hosts(struct api_route *r, const char *g, const char *a,
			    const struct sds_strategies *ss)
{
	struct store *st = r->ad->store;
	int64_t since = store_now_s() - CLUSTER_HOST_LIVE_S;
	bool cluster = false, live = false;
	json_t *hosts, *h;
	size_t i;

	for (int k = 0; k < ss->n && !cluster; k++)
		cluster = strategy_is_cluster(&ss->s[k]);
	if (!cluster)
		return 0;
	if (api_store_rc(r, st->ops->host_list(st, g, a, &hosts, r->err)))
		return -1;
	json_array_foreach(hosts, i, h)
		live |= json_integer_value(json_object_get(h, "last_seen")) >= since;
	json_decref(hosts);
	if (live)
		return 0;
	api_fail(r, 400, "cluster limits need a host: app %s/%s has none that sent a heartbeat in the last %d s",
		 g, a, CLUSTER_HOST_LIVE_S);
	return -1;
}
