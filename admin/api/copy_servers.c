// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/copy_servers.c - copy servers (sds-copy serve --admin) heartbeat
 * here every 10 s with what each plan did since their last accepted
 * heartbeat; the reply is every active plan, in the plans-file format
 * sds-copy already reads (docs/COPY.md).  Loaders are offered the servers
 * heard within STORE_COPY_LIVE_S.
 *
 *   POST /api/v1/copy-servers/heartbeat
 *   {"name": "copy-1", "addr": "10.0.0.9:7070", "period_start": 1700000000,
 *    "plans": {"x5": {"received": 10, "dispatched": 50, "shadow_errors": 0,
 *                     "dropped": 0}}}
 *   -> {"plans": [{"name", "app", "points", ...}]}
 *
 * Only a copy-server token (--copy-token-file) or an operator's may post
 * it: what a server registers is where every loader streams its captured
 * requests.  A name is bound to the token that registered it (another
 * token's re-point is refused, 403), "addr" is numeric (loaders never
 * resolve it), and the reply carries every app's plans, which is why a
 * loader's heartbeat token is not enough (docs/TRUST.md).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "names.h"

#define COPY_HB_PLANS_MAX	1024	/* plans in one copy server heartbeat */

static const char *const f_hb[] = { "name", "addr", "period_start", "plans", NULL };
static const char *const f_counts[] = {
	"received", "dispatched", "shadow_errors", "dropped", NULL
};
static const char *const f_diff[] = { "unpaired", "skipped", "points", NULL };
static const char *const f_dpoint[] = {
	"pairs", "same", "different", "shadow_errors", "timeouts", "examples", NULL
};
static const char *const f_example[] = { "path", "recorded", "shadow", NULL };

#define DIFF_POINTS_MAX		64	/* points of one plan's diff */
#define DIFF_EXAMPLES_MAX	100	/* examples of one point in one heartbeat */
#define DIFF_TEXT_MAX		256	/* bytes of an example's part */

static bool only_keys(json_t *o, const char *const *ok, const char **bad)
{
	const char *k;
	json_t *v;
	int i;

	json_object_foreach(o, k, v) {
		for (i = 0; ok[i] && strcmp(ok[i], k); i++)
			;
		if (!ok[i]) {
			*bad = k;
			return false;
		}
	}
	return true;
}

static bool count_ok(json_t *v)
{
	return json_is_integer(v) && json_integer_value(v) >= 0 &&
	       json_integer_value(v) <= SDS_HB_COUNT_MAX;
}

/* One point's judged pairs: counts that add up, examples of bounded text. */
static int diff_point_ok(struct api_route *r, const char *plan, const char *pt, json_t *o)
{
	const char *bad = NULL;
	json_t *ex, *e, *v;
	int64_t sum = 0;
	size_t i;
	int k;

	if (!sds_name_valid(pt) || !json_is_object(o) || !only_keys(o, f_dpoint, &bad)) {
		api_fail(r, 400, "plans.%s.diff.points.%.64s: %s%.64s%s", plan, pt,
			 bad ? "unknown field '" : "not a point name with an object of counts",
			 bad ? bad : "", bad ? "'" : "");
		return -1;
	}
	for (k = 0; k < 5; k++) {
		v = json_object_get(o, f_dpoint[k]);
		if (!count_ok(v)) {
			api_fail(r, 400, "plans.%s.diff.points.%s.%s must be an integer 0..%lld",
				 plan, pt, f_dpoint[k], (long long)SDS_HB_COUNT_MAX);
			return -1;
		}
		if (k)
			sum += json_integer_value(v);
	}
	if (sum != json_integer_value(json_object_get(o, "pairs"))) {
		api_fail(r, 400, "plans.%s.diff.points.%s: pairs is not same + different + shadow_errors + timeouts",
			 plan, pt);
		return -1;
	}
	ex = json_object_get(o, "examples");
	if (ex && (!json_is_array(ex) || json_array_size(ex) > DIFF_EXAMPLES_MAX)) {
		api_fail(r, 400, "plans.%s.diff.points.%s.examples must be an array of at most %d",
			 plan, pt, DIFF_EXAMPLES_MAX);
		return -1;
	}
	json_array_foreach(ex, i, e) {
		bad = NULL;
		for (k = 0; json_is_object(e) && only_keys(e, f_example, &bad) && f_example[k]; k++) {
			v = json_object_get(e, f_example[k]);
			if (!json_is_string(v) || json_string_length(v) > DIFF_TEXT_MAX ||
			    strlen(json_string_value(v)) != json_string_length(v))
				break;
		}
		if (!json_is_object(e) || f_example[k]) {
			api_fail(r, 400, "plans.%s.diff.points.%s.examples[%zu] must be {path, recorded, shadow}, strings of at most %d bytes",
				 plan, pt, i, DIFF_TEXT_MAX);
			return -1;
		}
	}
	return 0;
}

/* A diff plan's "diff" of the period: checked whole, kept in @p. */
static int diff_of(struct api_route *r, const char *name, json_t *d,
		   struct store_copy_hb_plan *p)
{
	const char *bad = NULL, *pt;
	json_t *pts, *v;

	if (!json_is_object(d) || !only_keys(d, f_diff, &bad)) {
		api_fail(r, 400, "plans.%s.diff: %s%.64s%s", name,
			 bad ? "unknown field '" : "must be an object {unpaired, skipped, points}",
			 bad ? bad : "", bad ? "'" : "");
		return -1;
	}
	if ((json_object_get(d, "unpaired") && !count_ok(json_object_get(d, "unpaired"))) ||
	    (json_object_get(d, "skipped") && !count_ok(json_object_get(d, "skipped")))) {
		api_fail(r, 400, "plans.%s.diff.unpaired and .skipped must be integers 0..%lld",
			 name, (long long)SDS_HB_COUNT_MAX);
		return -1;
	}
	pts = json_object_get(d, "points");
	if (!json_is_object(pts) || json_object_size(pts) > DIFF_POINTS_MAX) {
		api_fail(r, 400, "plans.%s.diff.points must be an object of at most %d points",
			 name, DIFF_POINTS_MAX);
		return -1;
	}
	json_object_foreach(pts, pt, v)
		if (diff_point_ok(r, name, pt, v))
			return -1;
	p->unpaired = json_integer_value(json_object_get(d, "unpaired"));
	p->diff_points = pts;
	return 0;
}

static int counts_of(struct api_route *r, const char *name, json_t *o,
		     struct store_copy_hb_plan *p)
{
	int64_t *out[] = { &p->received, &p->dispatched, &p->shadow_errors, &p->dropped };
	const char *key;
	json_t *v;
	int i;

	if (!sds_name_valid(name)) {
		api_fail(r, 400, "plans: bad plan name '%.64s' (1-64 of [A-Za-z0-9_-])", name);
		return -1;
	}
	if (!json_is_object(o)) {
		api_fail(r, 400, "plans.%s must be an object", name);
		return -1;
	}
	json_object_foreach(o, key, v) {
		for (i = 0; f_counts[i]; i++)
			if (!strcmp(key, f_counts[i]))
				break;
		if (!f_counts[i] && !strcmp(key, "diff")) {
			if (diff_of(r, name, v, p))
				return -1;
			continue;
		}
		if (!f_counts[i]) {
			api_fail(r, 400, "plans.%s: unknown field '%.64s'", name, key);
			return -1;
		}
	}
	p->name = name;
	for (i = 0; f_counts[i]; i++) {
		v = json_object_get(o, f_counts[i]);
		*out[i] = 0;
		if (!v)
			continue;
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > SDS_HB_COUNT_MAX) {
			api_fail(r, 400, "plans.%s.%s must be an integer 0..%lld", name,
			     f_counts[i], (long long)SDS_HB_COUNT_MAX);
			return -1;
		}
		*out[i] = json_integer_value(v);
	}
	return 0;
}

/* "IPV4:PORT" or "[IPV6]:PORT": loaders take numeric addresses only. */
static bool addr_numeric(const char *addr)
{
	const char *colon = strrchr(addr, ':');
	char host[64], buf[sizeof(struct in6_addr)];
	size_t l;

	if (!colon)
		return false;
	l = (size_t)(colon - addr);
	if (l >= 2 && addr[0] == '[' && addr[l - 1] == ']') {
		if (l - 2 >= sizeof(host))
			return false;
		memcpy(host, addr + 1, l - 2);
		host[l - 2] = '\0';
		return inet_pton(AF_INET6, host, buf) == 1;
	}
	if (l >= sizeof(host))
		return false;
	memcpy(host, addr, l);
	host[l] = '\0';
	return inet_pton(AF_INET, host, buf) == 1;
}

static int hb_header(struct api_route *r, struct store_copy_hb *hb)
{
	const char *addr;
	json_t *v;

	if (api_only_fields(r, f_hb) || api_name_field(r, "name", true, &hb->name) ||
	    api_text_field(r, "addr", &addr))
		return -1;
	if (!addr || !heartbeat_copy_addr_valid(addr)) {
		api_fail(r, 400, "addr: not HOST:PORT or [IPV6]:PORT (where loaders reach the server)");
		return -1;
	}
	if (!addr_numeric(addr)) {
		api_fail(r, 400, "addr: '%.80s' is not a numeric IPV4:PORT or [IPV6]:PORT (loaders do not resolve names)",
		     addr);
		return -1;
	}
	hb->addr = addr;
	v = json_object_get(r->doc, "period_start");
	if (!json_is_integer(v) || json_integer_value(v) < SDS_HB_TIME_MIN ||
	    json_integer_value(v) > store_now_s() + 3600 ||
	    json_integer_value(v) % SDS_HB_PERIOD_S) {
		api_fail(r, 400, "period_start must be Unix seconds, a multiple of %d, not in the future",
		     SDS_HB_PERIOD_S);
		return -1;
	}
	hb->period_start = json_integer_value(v);
	return 0;
}

static void server_heartbeat(struct api_route *r)
{
	struct store *st = r->ad->store;
	struct store_copy_hb hb = { 0 };
	struct store_copy_hb_plan *plans = NULL;
	json_t *pl, *v, *out;
	const char *key;

	if (!api_is(r, "POST"))
		return api_not_allowed(r, "POST");
	if (api_body_object(r) || hb_header(r, &hb))
		return;
	/* Every POST under /api/v1/ carries a token (auth.c): its fingerprint owns the name. */
	hb.owner = r->rq->tok ? r->rq->tok->fp : "";
	hb.operator = r->rq->tok && r->rq->tok->role == ADMIN_ROLE_OPERATOR;
	pl = json_object_get(r->doc, "plans");
	if (!json_is_object(pl) || json_object_size(pl) > COPY_HB_PLANS_MAX) {
		api_fail(r, 400, "plans must be an object of plan name -> counts (at most %d)",
		     COPY_HB_PLANS_MAX);
		return;
	}
	plans = calloc(json_object_size(pl) + 1, sizeof(*plans));
	if (!plans) {
		api_fail(r, 500, "out of memory");
		return;
	}
	json_object_foreach(pl, key, v) {
		if (counts_of(r, key, v, &plans[hb.nplans]))
			goto out;
		hb.nplans++;
	}
	hb.plans = plans;
	/* Ramps step before the reply is made: it carries the new amplification. */
	api_copy_ramp_tick(r, store_now_s());
	if (!api_store_rc(r, st->ops->copy_server_heartbeat(st, &hb, store_now_s(), &out, r->err)))
		api_reply(r, 200, json_pack("{s:o}", "plans", out));
out:
	free(plans);
}

void api_route_copy_servers(struct api_route *r)
{
	struct store *st = r->ad->store;
	json_t *out;

	if (r->nseg == 2 && !strcmp(r->seg[1], "heartbeat"))
		return server_heartbeat(r);
	if (r->nseg != 1) {
		api_fail(r, 404, "no such resource: /api/v1/%s", r->rq->path);
		return;
	}
	if (!api_is(r, "GET"))
		return api_not_allowed(r, "GET");
	if (!api_store_rc(r, st->ops->copy_server_list(st, store_now_s(), &out, r->err)))
		api_reply(r, 200, out);
}
