// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/gamedays.c - the routes of game days (docs/GAMEDAY.md, admin/API.md
 * "Game days"): define, list, show and delete them, run one now, abort
 * it, and the reports of its kept runs.  The scheduler that runs them is
 * admin/gameday/run.c; a definition's checks are api/gameday_plan.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gameday/gameday.h"
#include "api/api.h"

/* "BY (token ID)": who, for the rows and the audit log. */
static int who(struct api_route *r, char out[ADMIN_WHO_MAX])
{
	const char *by = NULL;
	char tid[24];

	if (api_text_field(r, "by", &by))
		return -1;
	if (by && (!*by || strlen(by) > 256)) {
		api_fail(r, 400, "by: 1-256 bytes (who, free text)");
		return -1;
	}
	api_token_id(r, tid);
	snprintf(out, ADMIN_WHO_MAX, "%s (token %s)", by ? by : "api", tid);
	return 0;
}

static bool have_store(struct api_route *r)
{
	if (r->ad->store->ops->gameday_create)
		return true;
	api_fail(r, 501, "this store keeps no game days");
	return false;
}

void api_route_gamedays(struct api_route *r, const char *g, const char *a)
{
	struct store *st = r->ad->store;
	struct store_gameday gd = { 0 };
	char w[ADMIN_WHO_MAX], *text;
	json_t *body, *out;
	int64_t id;
	int rc;

	if (!have_store(r))
		return;
	if (api_is(r, "GET")) {
		if (!api_store_rc(r, st->ops->gameday_list(st, g, a, &out, r->err)))
			api_reply(r, 200, out);
		return;
	}
	if (!api_is(r, "POST"))
		return api_not_allowed(r, "GET, POST");
	if (api_body_object(r) || who(r, w) ||
	    api_gameday_plan(r, g, a, &body, &gd.every_s, &gd.next_run, &gd.keep))
		return;
	gd.name = json_string_value(json_object_get(r->doc, "name"));
	gd.who = w;
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (!text)
		return api_fail(r, 500, "out of memory");
	gd.body = text;
	rc = st->ops->gameday_create(st, g, a, &gd, store_now_s(), &id, r->err);
	free(text);
	if (api_store_rc(r, rc))
		return;
	if (!api_store_rc(r, st->ops->gameday_get(st, g, a, gd.name, &out, r->err)))
		api_reply(r, 201, out);
}

/* The reports of @gd's runs (gameday_get's "runs"), newest first; @run > 0: that one's. */
static void reports(struct api_route *r, const char *g, const char *a, json_t *gd,
		    int64_t run)
{
	json_t *runs = json_object_get(gd, "runs"), *v, *out = json_array(), *rep;
	size_t i;

	json_array_foreach(runs, i, v) {
		if (run && json_integer_value(json_object_get(v, "run")) != run)
			continue;
		json_object_set(v, "gameday", json_object_get(gd, "name"));
		rep = gameday_report(r->ad->store, g, a, v, r->err);
		if (!rep) {
			json_decref(out);
			api_store_rc(r, STORE_ERROR);
			return;
		}
		if (run) {
			json_decref(out);
			return api_reply(r, 200, rep);
		}
		json_array_append_new(out, rep);
	}
	if (run) {
		json_decref(out);
		return api_fail(r, 404, "game day '%s' keeps no run %lld",
				json_string_value(json_object_get(gd, "name")), (long long)run);
	}
	api_reply(r, 200, out);
}

void api_route_gameday(struct api_route *r, const char *g, const char *a, const char *name,
		       const char *what, const char *run)
{
	static const char *const f_by[] = { "by", NULL };
	struct store *st = r->ad->store;
	char w[ADMIN_WHO_MAX], *end;
	int64_t id;
	json_t *out;
	int rc;

	if (!have_store(r))
		return;
	if (!what) {
		if (api_is(r, "GET")) {
			if (!api_store_rc(r, st->ops->gameday_get(st, g, a, name, &out, r->err)))
				api_reply(r, 200, out);
			return;
		}
		if (!api_is(r, "DELETE"))
			return api_not_allowed(r, "GET, DELETE");
		if (api_body_object(r) || api_only_fields(r, f_by) || who(r, w))
			return;
		if (!api_store_rc(r, st->ops->gameday_delete(st, g, a, name, w, r->err)))
			api_reply(r, 200, json_pack("{s:s, s:b}", "name", name, "deleted", 1));
		return;
	}
	if (!strcmp(what, "reports")) {
		long long n = 0;

		if (!api_is(r, "GET"))
			return api_not_allowed(r, "GET");
		if (run) {
			n = strtoll(run, &end, 10);
			if (*end || n < 1)
				return api_fail(r, 404, "no run '%s'", run);
		}
		if (api_store_rc(r, st->ops->gameday_get(st, g, a, name, &out, r->err)))
			return;
		reports(r, g, a, out, n);
		json_decref(out);
		return;
	}
	if (run || (strcmp(what, "run") && strcmp(what, "abort")))
		return api_fail(r, 404, "no such resource: /api/v1/%s", r->rq->path);
	if (!api_is(r, "POST"))
		return api_not_allowed(r, "POST");
	if (api_body_object(r) || api_only_fields(r, f_by) || who(r, w))
		return;
	if (!strcmp(what, "abort")) {
		if (!api_store_rc(r, st->ops->gameday_abort(st, g, a, name, w, r->err)))
			api_reply(r, 200, json_pack("{s:s, s:b}", "name", name, "aborting", 1));
		return;
	}
	rc = st->ops->gameday_run(st, g, a, name, w, "{}", store_now_s(), &id, r->err);
	/* Two game days on one app at once: bad input, as docs/GAMEDAY.md says. */
	if (rc == STORE_CONFLICT)
		return api_fail(r, 400, "%s", r->err);
	if (!api_store_rc(r, rc))
		api_reply(r, 201, json_pack("{s:s, s:I}", "name", name, "run", (json_int_t)id));
}
