// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/fleet.c - the dashboard's cockpit: GET /api/v1/fleet (every app by
 * group, its hosts live or stale, the points downgraded now and why, the
 * drills and copy plans in force) and GET {A}/stats/hosts (one point's
 * statistics broken down by host).
 *
 * The fleet is made of the store's reads, a handful per app (hosts, the
 * last 30 s's downgrade events, drills, copy plans, the active strategies,
 * the first period): each is an indexed read of one app, the same in both
 * engines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "names.h"
#include "strategy.h"
#include "api/aggregate.h"
#include "api/api.h"

#define FLEET_LIVE_S	30	/* a host heard within this is live */
#define FLEET_NOW_S	30	/* "downgraded now": periods from the current one's start back this far */

/* The set limits of @one, as "visit_threshold 1000, timeout_ms 200". */
static void limits_text(const struct sds_strategy *one, char *buf, size_t len)
{
	json_t *doc = strategy_to_json(one), *v;
	const char *k;
	size_t n = 0;

	buf[0] = '\0';
	json_object_foreach(doc, k, v) {
		/* Not limits: how a tripped point behaves. */
		if (!strcmp(k, "downgrade_rate") || !strcmp(k, "probe_calls") ||
		    !strcmp(k, "probe_failure_pct") || !strcmp(k, "retry_interval_ms") ||
		    !strcmp(k, "delay_ms") || !strcmp(k, "copy") || !json_is_integer(v))
			continue;
		if (n < len)
			n += snprintf(buf + n, len - n, "%s%s %lld", n ? ", " : "", k,
				      (long long)json_integer_value(v));
	}
	json_decref(doc);
}

/*
 * Why @point is downgraded, as far as the admin knows: the loaders report
 * counts, not reasons, so this is what is in force there — drills of the
 * point, the active scheme's strategy (a kill switch, else its limits).
 */
static json_t *why(const char *point, const struct sds_strategies *ss, json_t *drills,
		   json_t **strategy)
{
	const struct sds_strategy *one = strategy_set_find(ss, point);
	json_t *out = json_array(), *d;
	char buf[512];
	size_t i;

	json_array_foreach(drills, i, d) {
		if (strcmp(json_string_value(json_object_get(d, "point")), point))
			continue;
		if (!strcmp(json_string_value(json_object_get(d, "kind")), "delay"))
			snprintf(buf, sizeof(buf), "drill %lld: delay %lld ms on %lld%% of calls",
				 (long long)json_integer_value(json_object_get(d, "id")),
				 (long long)json_integer_value(json_object_get(d, "delay_ms")),
				 (long long)json_integer_value(json_object_get(d, "ratio")));
		else
			snprintf(buf, sizeof(buf), "drill %lld: error on %lld%% of calls",
				 (long long)json_integer_value(json_object_get(d, "id")),
				 (long long)json_integer_value(json_object_get(d, "ratio")));
		json_array_append_new(out, json_string(buf));
	}
	*strategy = one ? strategy_to_json_in(ss, one) : json_null();
	if (one && one->visit_threshold == 0) {
		json_array_append_new(out, json_string("kill switch (visit_threshold 0)"));
	} else if (one) {
		limits_text(one, buf, sizeof(buf));
		if (buf[0]) {
			char line[600];

			snprintf(line, sizeof(line), "limits of the active scheme: %s", buf);
			json_array_append_new(out, json_string(line));
		}
	}
	if (!json_array_size(out))
		json_array_append_new(out, json_string(
			"no limit of the active scheme: the host's own strategies, or an older version"));
	return out;
}

/* What of @list is in force at @now: drills neither stopped nor ended, active copy plans. */
static json_t *in_force(json_t *list, int64_t now, bool drills)
{
	json_t *out = json_array(), *x;
	size_t i;

	json_array_foreach(list, i, x) {
		if (drills ? (!json_is_null(json_object_get(x, "stopped_at")) ||
			      json_integer_value(json_object_get(x, "expires_at")) <= now)
			   : strcmp(json_string_value(json_object_get(x, "state")), "active"))
			continue;
		json_array_append(out, x);
	}
	return out;
}

/* The downgrade events of the last FLEET_NOW_S, one entry per point. */
static json_t *downgraded(json_t *events, const struct sds_strategies *ss, json_t *drills)
{
	json_t *by = json_object(), *out = json_array(), *e, *p, *hosts;
	const char *point;
	size_t i;

	json_array_foreach(events, i, e) {
		point = json_string_value(json_object_get(e, "point"));
		p = json_object_get(by, point);
		if (!p) {
			json_t *strategy;
			json_t *reasons = why(point, ss, drills, &strategy);

			p = json_pack("{s:s, s:I, s:I, s:I, s:[], s:o, s:o}", "point", point,
				      "downgrades", (json_int_t)0, "visits", (json_int_t)0,
				      "period_start", (json_int_t)0, "hosts",
				      "why", reasons, "strategy", strategy);
			json_object_set_new(by, point, p);
			json_array_append(out, p);
		}
		json_object_set_new(p, "downgrades", json_integer(
			json_integer_value(json_object_get(p, "downgrades")) +
			json_integer_value(json_object_get(e, "downgrades"))));
		json_object_set_new(p, "visits", json_integer(
			json_integer_value(json_object_get(p, "visits")) +
			json_integer_value(json_object_get(e, "visits"))));
		if (json_integer_value(json_object_get(e, "period_start")) >
		    json_integer_value(json_object_get(p, "period_start")))
			json_object_set(p, "period_start", json_object_get(e, "period_start"));
		hosts = json_object_get(p, "hosts");
		{
			json_t *h = json_object_get(e, "host"), *x;
			size_t j;
			bool seen = false;

			json_array_foreach(hosts, j, x)
				seen |= json_equal(x, h);
			if (!seen)
				json_array_append(hosts, h);
		}
	}
	json_decref(by);
	return out;
}

/* One app of the fleet; STORE_NOTFOUND when it went meanwhile. */
static int fleet_app(struct api_route *r, json_t *app, int64_t now, struct sds_strategies *ss,
		     json_t **out)
{
	struct store *st = r->ad->store;
	const char *g = json_string_value(json_object_get(app, "group"));
	const char *a = json_string_value(json_object_get(app, "name"));
	json_t *hosts = NULL, *events = NULL, *drills = NULL, *plans = NULL, *h;
	int64_t live = 0, stale = 0, first = 0;
	size_t i;
	int rc;

	if ((rc = st->ops->host_list(st, g, a, &hosts, r->err)) ||
	    (rc = st->ops->events(st, g, a, now / 10 * 10 - FLEET_NOW_S, now + 10, 10000,
				  &events, r->err)) ||
	    (rc = st->ops->drill_list(st, g, a, &drills, r->err)) ||
	    (rc = st->ops->copy_plan_list(st, g, a, now, &plans, r->err)) ||
	    (rc = st->ops->strategies_get(st, g, a, NULL, ss, NULL, r->err)) ||
	    (st->ops->stats_first && (rc = st->ops->stats_first(st, g, a, &first, r->err))))
		goto out;
	json_array_foreach(hosts, i, h) {
		bool l = now - json_integer_value(json_object_get(h, "last_seen")) <= FLEET_LIVE_S;

		json_object_set_new(h, "live", json_boolean(l));
		if (l)
			live++;
		else
			stale++;
	}
	{
		json_t *d = in_force(drills, now, true);

		*out = json_pack("{s:O, s:O, s:O, s:O, s:O, s:o, s:I, s:I, s:O, s:o, s:o, s:o, s:o}",
				 "group", json_object_get(app, "group"),
				 "name", json_object_get(app, "name"),
				 "description", json_object_get(app, "description"),
				 "version", json_object_get(app, "version"),
				 "active_scheme", json_object_get(app, "active_scheme"),
				 "first_period", first ? json_integer(first) : json_null(),
				 "live_hosts", (json_int_t)live, "stale_hosts", (json_int_t)stale,
				 "hosts", hosts,
				 "downgraded", downgraded(events, ss, d),
				 "drills", d,
				 "copy_plans", in_force(plans, now, false),
				 "refused", api_refused(hosts));
	}
out:
	json_decref(hosts);
	json_decref(events);
	json_decref(drills);
	json_decref(plans);
	return rc;
}

/*
 * ?group=G: that group only; ?group=G&app=A: that app only (404 when it
 * is not there), what one app's page asks for.
 */
static int fleet_lists(struct api_route *r, json_t **groups, json_t **apps)
{
	struct store *st = r->ad->store;
	const char *g = http_query(r->rq->conn, "group");
	const char *a = http_query(r->rq->conn, "app");
	json_t *one;

	if ((g && !sds_name_valid(g)) || (a && !sds_name_valid(a))) {
		api_fail(r, 400, "%s: bad name (1-64 of [A-Za-z0-9_-])",
			 g && !sds_name_valid(g) ? "group" : "app");
		return -1;
	}
	if (a && !g) {
		api_fail(r, 400, "app: needs group");
		return -1;
	}
	if (!g)
		return api_store_rc(r, st->ops->group_list(st, groups, r->err)) ||
		       api_store_rc(r, st->ops->app_list(st, NULL, apps, r->err));
	if (api_store_rc(r, st->ops->group_get(st, g, &one, r->err)))
		return -1;
	*groups = json_pack("[o]", one);
	if (!a)
		return api_store_rc(r, st->ops->app_list(st, g, apps, r->err));
	if (api_store_rc(r, st->ops->app_get(st, g, a, &one, r->err)))
		return -1;
	*apps = json_pack("[o]", one);
	return 0;
}

void api_route_fleet(struct api_route *r)
{
	json_t *groups = NULL, *apps = NULL, *byg, *g, *app, *one = NULL;
	struct sds_strategies *ss = NULL;
	int64_t now = store_now_s();
	size_t i;
	int rc;

	if (!api_is(r, "GET"))
		return api_not_allowed(r, "GET");
	ss = malloc(sizeof(*ss));
	if (!ss) {
		api_fail(r, 500, "out of memory");
		return;
	}
	if (fleet_lists(r, &groups, &apps))
		goto out;
	byg = json_object();
	json_array_foreach(groups, i, g) {
		json_object_set_new(g, "apps", json_array());
		json_object_set(byg, json_string_value(json_object_get(g, "name")), g);
	}
	json_array_foreach(apps, i, app) {
		rc = fleet_app(r, app, now, ss, &one);
		if (rc == STORE_NOTFOUND)	/* deleted since app_list */
			continue;
		if (api_store_rc(r, rc)) {
			json_decref(byg);
			goto out;
		}
		g = json_object_get(byg, json_string_value(json_object_get(app, "group")));
		if (g)
			json_array_append_new(json_object_get(g, "apps"), one);
		else
			json_decref(one);
	}
	json_decref(byg);
	api_reply(r, 200, json_pack("{s:I, s:i, s:i, s:O}", "now", (json_int_t)now,
				    "live_s", FLEET_LIVE_S, "downgraded_s", FLEET_NOW_S,
				    "groups", groups));
out:
	json_decref(groups);
	json_decref(apps);
	free(ss);
}

void api_route_stats_hosts(struct api_route *r, const char *g, const char *a)
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
	if (!point || !sds_point_name_valid(point)) {
		api_fail(r, 400, "point: %s (1-64 of [A-Za-z0-9_-])", point ? "bad name" : "required");
		return;
	}
	if (aggregate_range(&from, &to, &step, r->err, sizeof(r->err))) {
		api_fail(r, 400, "%s", r->err);
		return;
	}
	if (!api_store_rc(r, aggregate_query_hosts(r->ad->store, g, a, point, from, to, step,
					   &out, r->err)))
		api_reply(r, 200, out);
}
