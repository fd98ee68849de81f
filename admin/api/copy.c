// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/copy.c - the routes of traffic copy (issue 12, docs/COPY.md): an
 * app's copy plans, their statistics, and the copy servers' heartbeat.
 *
 * A plan says which points the loaders capture (sample_pct) and what the
 * copy servers do with the captures (amplification, shadows, framing,
 * writes, rate); the loaders learn theirs from the heartbeat reply, the
 * copy servers all active plans from theirs.  An unreachable shadow is not
 * an input error: sds-copy counts it (shadow_errors) and the dashboard
 * shows it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "names.h"

#define COPY_RATE_MAX		1000000000LL	/* copies/s, as sds-copy allows */
#define COPY_DURATION_MAX	(30 * 86400)	/* a plan runs at most 30 days */
#define COPY_SHADOWS_MAX	64		/* endpoints of one plan */
#define COPY_WEIGHT_MAX		1000
#define COPY_HB_PLANS_MAX	1024		/* plans in a copy server's heartbeat */

static int opt_int(struct api_route *r, const char *key, int64_t min, int64_t max,
		   int64_t def, int64_t *out, const char *why)
{
	json_t *v = json_object_get(r->doc, key);

	*out = def;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max) {
		api_fail(r, 400, "%s must be an integer %lld..%lld%s", key,
		     (long long)min, (long long)max, why);
		return -1;
	}
	*out = json_integer_value(v);
	return 0;
}

/* "points": 1..64 distinct valid names (a point may not exist yet). */
static int points_field(struct api_route *r, struct store_copy_plan *p)
{
	json_t *a = json_object_get(r->doc, "points"), *v;
	size_t i;
	int j;

	if (!json_is_array(a) || !json_array_size(a) ||
	    json_array_size(a) > SDS_HB_COPY_POINTS) {
		api_fail(r, 400, "points must be an array of 1..%d point names", SDS_HB_COPY_POINTS);
		return -1;
	}
	json_array_foreach(a, i, v) {
		const char *s = json_string_value(v);

		if (!s || strlen(s) != json_string_length(v) || !sds_name_valid(s)) {
			api_fail(r, 400, "points[%zu]: bad name (1-64 of [A-Za-z0-9_-])", i);
			return -1;
		}
		for (j = 0; j < (int)i; j++)
			if (!strcmp(p->points[j], s)) {
				api_fail(r, 400, "points[%zu]: '%s' twice", i, s);
				return -1;
			}
		p->points[i] = s;
	}
	p->npoints = (int)json_array_size(a);
	return 0;
}

/* One shadow: "HOST:PORT" or {"addr", "weight" 1..1000}; not resolved here. */
static int shadow_ok(struct api_route *r, json_t *v, size_t i)
{
	json_t *w;
	const char *key;
	json_t *x;

	if (json_is_object(v)) {
		json_object_foreach(v, key, x)
			if (strcmp(key, "addr") && strcmp(key, "weight")) {
				api_fail(r, 400, "shadows[%zu]: unknown field '%.64s'", i, key);
				return -1;
			}
		w = json_object_get(v, "weight");
		if (w && (!json_is_integer(w) || json_integer_value(w) < 1 ||
			  json_integer_value(w) > COPY_WEIGHT_MAX)) {
			api_fail(r, 400, "shadows[%zu].weight must be an integer 1..%d", i,
			     COPY_WEIGHT_MAX);
			return -1;
		}
		v = json_object_get(v, "addr");
	}
	if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v) ||
	    !heartbeat_copy_addr_valid(json_string_value(v))) {
		api_fail(r, 400, "shadows[%zu]: not HOST:PORT or [IPV6]:PORT (port 1..65535)", i);
		return -1;
	}
	return 0;
}

/* "shadows": 1..64 endpoints; *text gets them as JSON (free it). */
static int shadows_field(struct api_route *r, char **text)
{
	json_t *a = json_object_get(r->doc, "shadows"), *v;
	size_t i;

	if (!json_is_array(a) || !json_array_size(a) ||
	    json_array_size(a) > COPY_SHADOWS_MAX) {
		api_fail(r, 400, "shadows must be an array of 1..%d endpoints", COPY_SHADOWS_MAX);
		return -1;
	}
	json_array_foreach(a, i, v)
		if (shadow_ok(r, v, i))
			return -1;
	*text = json_dumps(a, JSON_COMPACT);
	if (!*text) {
		api_fail(r, 500, "out of memory");
		return -1;
	}
	return 0;
}

/* Exactly one of "expires_at" (in the future) and "duration_s". */
static int expiry_field(struct api_route *r, int64_t now, int64_t *out)
{
	json_t *e = json_object_get(r->doc, "expires_at");
	json_t *d = json_object_get(r->doc, "duration_s");
	int64_t x;

	if (!e == !d) {
		api_fail(r, 400, "expiry: give expires_at (Unix seconds) or duration_s: every plan ends");
		return -1;
	}
	if (d)
		return opt_int(r, "duration_s", 1, COPY_DURATION_MAX, 0, &x, "") ? -1 :
		       (*out = now + x, 0);
	if (!json_is_integer(e)) {
		api_fail(r, 400, "expires_at must be an integer (Unix seconds)");
		return -1;
	}
	x = json_integer_value(e);
	if (x <= now) {
		api_fail(r, 400, "expires_at %lld is not in the future (now %lld)",
		     (long long)x, (long long)now);
		return -1;
	}
	if (x > now + COPY_DURATION_MAX) {
		api_fail(r, 400, "expires_at is more than %d days ahead", COPY_DURATION_MAX / 86400);
		return -1;
	}
	*out = x;
	return 0;
}

static const char *const f_plan[] = {
	"name", "points", "sample_pct", "amplification", "shadows", "framing",
	"writes", "rate", "expires_at", "duration_s", "by",
	"diff", "ignore", "ramp", "stop_when", "shadow_app", NULL
};

/* Every setting of a plan from r->doc; *shadows and *opts are allocated. */
static int plan_fields(struct api_route *r, const char *g, struct store_copy_plan *p,
		       char **shadows, char **opts)
{
	int64_t pct, amp, rate;
	char why[64];
	json_t *v;

	*shadows = NULL;
	*opts = NULL;
	if (api_only_fields(r, f_plan) || api_name_field(r, "name", true, &p->name) ||
	    points_field(r, p) || api_text_field(r, "by", &p->by))
		return -1;
	snprintf(why, sizeof(why), " (--copy-max-amplification)");
	if (opt_int(r, "sample_pct", 0, 100, 100, &pct, "") ||
	    opt_int(r, "amplification", 1, r->ad->copy_max_amp, 1, &amp, why) ||
	    opt_int(r, "rate", 0, COPY_RATE_MAX, 0, &rate, " (copies/s, 0: no cap)"))
		return -1;
	p->sample_pct = (uint32_t)pct;
	p->amplification = (int)amp;
	p->rate = rate;
	v = json_object_get(r->doc, "framing");
	p->framing = v ? json_string_value(v) : "raw";
	if (!p->framing || (strcmp(p->framing, "raw") && strcmp(p->framing, "http"))) {
		api_fail(r, 400, "framing must be \"raw\" or \"http\"");
		return -1;
	}
	v = json_object_get(r->doc, "writes");
	if (v && !json_is_boolean(v)) {
		api_fail(r, 400, "writes must be true or false");
		return -1;
	}
	p->writes = json_is_true(v);
	if (api_copy_opts(r, g, p, &amp, opts))
		return -1;
	p->amplification = (int)amp;
	p->opts = *opts;
	if (expiry_field(r, store_now_s(), &p->expires_at))
		return -1;
	if (!p->by || !*p->by || strlen(p->by) > 256) {
		api_fail(r, 400, "by: required, 1-256 bytes (who changes the plan, free text)");
		return -1;
	}
	return shadows_field(r, shadows);
}

static int64_t plan_id(struct api_route *r, const char *ids)
{
	char *end;
	long long id = strtoll(ids, &end, 10);

	if (*end || id < 1) {
		api_fail(r, 404, "no copy plan '%s'", ids);
		return -1;
	}
	return id;
}

static void plan_reply(struct api_route *r, const char *g, const char *a,
		       int64_t id, int status)
{
	struct store *st = r->ad->store;
	json_t *out;

	if (!api_store_rc(r, st->ops->copy_plan_get(st, g, a, id, store_now_s(), &out, r->err)))
		api_reply(r, status, out);
}

void api_route_copy_plans(struct api_route *r, const char *g, const char *a)
{
	struct store *st = r->ad->store;
	struct store_copy_plan p = { 0 };
	char tid[24], *shadows = NULL, *opts = NULL;
	json_t *out;
	int64_t id;

	if (api_is(r, "GET")) {
		if (!api_store_rc(r, st->ops->copy_plan_list(st, g, a, store_now_s(), &out, r->err)))
			api_reply(r, 200, out);
		return;
	}
	if (!api_is(r, "POST"))
		return api_not_allowed(r, "GET, POST");
	if (api_body_object(r) || plan_fields(r, g, &p, &shadows, &opts))
		goto out;
	p.shadows = shadows;
	api_token_id(r, tid);
	p.token_id = tid;
	if (!api_store_rc(r, st->ops->copy_plan_create(st, g, a, &p, store_now_s(), &id, r->err)))
		plan_reply(r, g, a, id, 201);
out:
	free(shadows);
	free(opts);
}

/*
 * PUT keeps what the body does not change, but a ramp and a fixed
 * amplification exclude each other: the one the body gives wins.
 */
static void keep_old(json_t *body, json_t *old)
{
	static const char *const keep[] = {
		"points", "sample_pct", "shadows", "framing", "writes", "rate", "diff", NULL
	};
	static const char *const ramp[] = { "ramp", "stop_when", "shadow_app", NULL };
	bool amp = json_object_get(body, "amplification") != NULL;
	int i;

	for (i = 0; keep[i]; i++)
		if (!json_object_get(body, keep[i]))
			json_object_set(body, keep[i], json_object_get(old, keep[i]));
	if (!json_object_get(body, "ignore") && json_is_true(json_object_get(body, "diff")) &&
	    json_object_get(old, "ignore"))
		json_object_set(body, "ignore", json_object_get(old, "ignore"));
	if (json_object_get(body, "ramp") || (!amp && json_object_get(old, "ramp"))) {
		for (i = 0; ramp[i]; i++)
			if (!json_object_get(body, ramp[i]) && json_object_get(old, ramp[i]))
				json_object_set(body, ramp[i], json_object_get(old, ramp[i]));
	} else if (!amp) {
		json_object_set(body, "amplification", json_object_get(old, "amplification"));
	}
}

/* PUT: the body's settings over the plan's; the name stays. */
static void plan_update(struct api_route *r, const char *g, const char *a, int64_t id)
{
	struct store *st = r->ad->store;
	struct store_copy_plan p = { 0 };
	char tid[24], *shadows = NULL, *opts = NULL;
	json_t *old, *body;

	if (api_body_object(r) || api_store_rc(r, st->ops->copy_plan_get(st, g, a, id, store_now_s(),
								  &old, r->err)))
		return;
	if (json_object_get(r->doc, "name")) {
		json_decref(old);
		api_fail(r, 400, "name: a plan keeps its name (stop it and start another)");
		return;
	}
	body = r->doc;
	keep_old(body, old);
	if (!json_object_get(body, "duration_s") && !json_object_get(body, "expires_at"))
		json_object_set(body, "expires_at", json_object_get(old, "expires_at"));
	json_object_set(body, "name", json_object_get(old, "name"));
	if (plan_fields(r, g, &p, &shadows, &opts))
		goto out;
	p.shadows = shadows;
	api_token_id(r, tid);
	p.token_id = tid;
	if (!api_store_rc(r, st->ops->copy_plan_update(st, g, a, id, &p, store_now_s(), r->err)))
		plan_reply(r, g, a, id, 200);
out:
	json_decref(old);
	free(shadows);
	free(opts);
}

static const char *const f_stop[] = { "by", NULL };

static void plan_stop(struct api_route *r, const char *g, const char *a, int64_t id)
{
	struct store *st = r->ad->store;
	const char *by = NULL;
	char tid[24];

	if (!api_is(r, "POST"))
		return api_not_allowed(r, "POST");
	if (api_body_object(r) || api_only_fields(r, f_stop) || api_text_field(r, "by", &by))
		return;
	if (!by || !*by || strlen(by) > 256) {
		api_fail(r, 400, "by: required, 1-256 bytes (who stops the plan, free text)");
		return;
	}
	api_token_id(r, tid);
	if (!api_store_rc(r, st->ops->copy_plan_stop(st, g, a, id, by, tid, store_now_s(), r->err)))
		plan_reply(r, g, a, id, 200);
}

static void plan_stats(struct api_route *r, const char *g, const char *a, int64_t id)
{
	struct store *st = r->ad->store;
	int64_t now = store_now_s(), from, to;
	json_t *out;

	if (!api_is(r, "GET"))
		return api_not_allowed(r, "GET");
	if (api_query_int(r, "from", now - 3600, &from) || api_query_int(r, "to", now + 1, &to))
		return;
	if (!api_store_rc(r, st->ops->copy_plan_stats(st, g, a, id, from, to, &out, r->err)))
		api_reply(r, 200, json_pack("{s:I, s:I, s:I, s:i, s:o}", "id", (json_int_t)id,
					"from", (json_int_t)from, "to", (json_int_t)to,
					"period_s", SDS_HB_PERIOD_S, "periods", out));
}

void api_route_copy_plan(struct api_route *r, const char *g, const char *a, const char *ids,
	       const char *what)
{
	int64_t id = plan_id(r, ids);

	if (id < 0)
		return;
	if (!what) {
		if (api_is(r, "GET"))
			return plan_reply(r, g, a, id, 200);
		if (api_is(r, "PUT"))
			return plan_update(r, g, a, id);
		return api_not_allowed(r, "GET, PUT");
	}
	if (!strcmp(what, "stop"))
		return plan_stop(r, g, a, id);
	if (!strcmp(what, "stats"))
		return plan_stats(r, g, a, id);
	api_fail(r, 404, "no such resource: /api/v1/%s", r->rq->path);
}
