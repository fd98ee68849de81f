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
