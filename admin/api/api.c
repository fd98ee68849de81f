// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/api.c - the REST routes of sds-admin under /api/v1/ (admin/API.md).
 *
 * Every path segment that names something is checked against the name
 * charset before the store sees it; every body is parsed strictly (unknown
 * fields refused, types and ranges checked) and errors name the field.
 *
 * This file dispatches and holds the shared reply and body helpers; the
 * resources live in api/org.c, api/stats.c and api/drills.c (api.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "names.h"

void api_reply(struct api_route *r, int status, json_t *body)
{
	r->rs->status = status;
	r->rs->body = body;
}

void api_fail(struct api_route *r, int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	api_reply(r, status, json_pack("{s:s}", "error", msg));
}

/* Map a store result to the reply: 0 means "go on". */
int api_store_rc(struct api_route *r, int rc)
{
	switch (rc) {
	case STORE_OK:
		return 0;
	case STORE_NOTFOUND:
		api_fail(r, 404, "%s", r->err);
		break;
	case STORE_EXISTS:
	case STORE_CONFLICT:
		api_fail(r, 409, "%s", r->err);
		break;
	case STORE_FORBIDDEN:
		api_fail(r, 403, "%s", r->err);
		break;
	default:
		fprintf(stderr, "sds-admin: store: %s\n", r->err);
		api_fail(r, 500, "storage error");
		break;
	}
	return -1;
}

bool api_is(const struct api_route *r, const char *m)
{
	return !strcmp(r->rq->method, m);
}

void api_not_allowed(struct api_route *r, const char *allow)
{
	r->rs->allow = allow;
	api_fail(r, 405, "method %s not allowed here (%s)", r->rq->method, allow);
}

/* ---- bodies -------------------------------------------------------------- */

/* Parse the body as a JSON object; on failure the reply is set. */
int api_body_object(struct api_route *r)
{
	json_error_t jerr;

	if (!r->rq->len) {
		r->doc = json_object();
		return 0;
	}
	r->doc = json_loadb(r->rq->body, r->rq->len, JSON_REJECT_DUPLICATES, &jerr);
	if (!r->doc) {
		api_fail(r, 400, "malformed JSON at line %d column %d: %s", jerr.line,
		     jerr.column, jerr.text);
		return -1;
	}
	if (!json_is_object(r->doc)) {
		api_fail(r, 400, "body must be a JSON object");
		return -1;
	}
	return 0;
}

/* Refuse fields of the body not in @allowed (NULL-terminated). */
int api_only_fields(struct api_route *r, const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(r->doc, key, v) {
		const char *const *a;

		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				break;
		if (!*a) {
			api_fail(r, 400, "unknown field '%.64s'", key);
			return -1;
		}
	}
	return 0;
}

/* A free-text field: optional string, at most ADMIN_TEXT_MAX bytes, no NUL. */
int api_text_field(struct api_route *r, const char *key, const char **out)
{
	json_t *v = json_object_get(r->doc, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		api_fail(r, 400, "%s must be a string", key);
		return -1;
	}
	if (json_string_length(v) > ADMIN_TEXT_MAX ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		api_fail(r, 400, "%s must be at most %d bytes of text", key, ADMIN_TEXT_MAX);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

/* A name field: required string of the name charset. */
int api_name_field(struct api_route *r, const char *key, bool required,
	       const char **out)
{
	json_t *v = json_object_get(r->doc, key);

	*out = NULL;
	if (!v || json_is_null(v)) {
		if (!required)
			return 0;
		api_fail(r, 400, "%s: missing", key);
		return -1;
	}
	if (!json_is_string(v)) {
		api_fail(r, 400, "%s must be a string", key);
		return -1;
	}
	if (!sds_name_valid(json_string_value(v)) ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		api_fail(r, 400, "%s: bad name (1-64 of [A-Za-z0-9_-])", key);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

/* Path segment @i must be a name; @what names it in the error. */
int api_seg_name(struct api_route *r, int i, const char *what)
{
	if (!sds_name_valid(r->seg[i])) {
		api_fail(r, 400, "%s: bad name (1-64 of [A-Za-z0-9_-])", what);
		return -1;
	}
	return 0;
}

/*
 * The bound of an integer query argument: JSON's exact integers.  Every
 * one (times, steps, limits) is far inside it, and the routes add days
 * and steps to what they get (to - 3600, a range rounded up to its step)
 * where a value near INT64_MAX would overflow.
 */
#define QUERY_INT_MAX	9007199254740991LL	/* 2^53 - 1 */

/* An integer query argument, |x| <= QUERY_INT_MAX; @def when absent. */
int api_query_int(struct api_route *r, const char *key, int64_t def, int64_t *out)
{
	const char *v = http_query(r->rq->conn, key);
	char *end;
	long long x;

	if (!v || !*v) {
		*out = def;
		return 0;
	}
	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || *end || end == v || x > QUERY_INT_MAX || x < -QUERY_INT_MAX) {
		api_fail(r, 400, "%s must be an integer, at most 2^53-1 either side of 0", key);
		return -1;
	}
	*out = x;
	return 0;
}

/* ---- dispatch ------------------------------------------------------------ */

/* Split @path into r->seg; false if it has too many or empty segments. */
static bool split(struct api_route *r, char *path)
{
	char *p = path, *slash;

	r->nseg = 0;
	if (!*p)
		return true;
	for (;;) {
		if (r->nseg == MAX_SEGS)
			return false;
		slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		r->seg[r->nseg++] = p;
		if (!slash)
			break;
		p = slash + 1;
		if (!*p)	/* a trailing slash is tolerated */
			break;
	}
	for (int i = 0; i < r->nseg; i++)
		if (!*r->seg[i])
			return false;
	return true;
}

static void app_routes(struct api_route *r)
{
	const char *g = r->seg[1], *a = r->seg[3];
	const char *what = r->nseg > 4 ? r->seg[4] : NULL;

	if (r->nseg == 4)
		return api_route_app(r, g, a);
	if (!strcmp(what, "schemes")) {
		if (r->nseg == 5)
			return api_route_schemes(r, g, a);
		if (api_seg_name(r, 5, "scheme"))
			return;
		if (r->nseg == 6)
			return api_route_scheme(r, g, a, r->seg[5]);
		if (strcmp(r->seg[6], "strategies"))
			goto nf;
		if (r->nseg == 7)
			return api_route_strategies(r, g, a, r->seg[5]);
		if (api_seg_name(r, 7, "point"))
			return;
		if (r->nseg == 8)
			return api_route_strategy(r, g, a, r->seg[5], r->seg[7]);
		goto nf;
	}
	if (!strcmp(what, "drills")) {
		if (r->nseg == 5)
			return api_route_drills(r, g, a);
		if (r->nseg == 7 && !strcmp(r->seg[6], "stop"))
			return api_route_drill_stop(r, g, a, r->seg[5]);
		if (r->nseg == 7 && !strcmp(r->seg[6], "abort"))
			return api_route_drill_abort(r, g, a, r->seg[5]);
		goto nf;
	}
	if (!strcmp(what, "copy-plans")) {
		if (r->nseg == 5)
			return api_route_copy_plans(r, g, a);
		if (r->nseg <= 7)
			return api_route_copy_plan(r, g, a, r->seg[5], r->nseg == 7 ? r->seg[6] : NULL);
		goto nf;
	}
	if (!strcmp(what, "gamedays")) {
		if (r->nseg == 5)
			return api_route_gamedays(r, g, a);
		if (api_seg_name(r, 5, "game day"))
			return;
		if (r->nseg <= 8)
			return api_route_gameday(r, g, a, r->seg[5], r->nseg > 6 ? r->seg[6] : NULL,
						 r->nseg > 7 ? r->seg[7] : NULL);
		goto nf;
	}
	if (!strcmp(what, "points") && r->nseg == 7 && !strcmp(r->seg[6], "deps"))
		return api_seg_name(r, 5, "point") ? (void)0 :
		       api_route_deps(r, g, a, r->seg[5]);
	if (!strcmp(what, "points") && r->nseg == 7 && !strcmp(r->seg[6], "keys"))
		return api_seg_name(r, 5, "point") ? (void)0 :
		       api_route_point_keys(r, g, a, r->seg[5]);
	if (!strcmp(what, "stats") && r->nseg == 6 && !strcmp(r->seg[5], "hosts"))
		return api_route_stats_hosts(r, g, a);
	if (r->nseg != 5)
		goto nf;
	if (!strcmp(what, "strategies"))
		return api_route_strategies(r, g, a, NULL);
	if (!strcmp(what, "active_scheme"))
		return api_route_active_scheme(r, g, a);
	if (!strcmp(what, "stats"))
		return api_route_stats(r, g, a);
	if (!strcmp(what, "refused"))
		return api_route_refused(r, g, a);
	if (!strcmp(what, "deps"))
		return api_route_deps(r, g, a, NULL);
	if (!strcmp(what, "hosts") || !strcmp(what, "points") ||
	    !strcmp(what, "events") || !strcmp(what, "audit"))
		return api_route_listing(r, g, a, what);
nf:
	api_fail(r, 404, "no such resource: /api/v1/%s", r->rq->path);
}

void api_handle(struct admin *ad, const struct api_req *rq, struct api_resp *rs)
{
	struct api_route r = { .rq = rq, .rs = rs, .ad = ad };
	char *path = strdup(rq->path);

	if (!path) {
		api_fail(&r, 500, "out of memory");
		return;
	}
	if (!split(&r, path) || !r.nseg)
		goto nf;
	if (!strcmp(r.seg[0], "heartbeat") && r.nseg == 1) {
		api_route_heartbeat(&r);
	} else if (!strcmp(r.seg[0], "sync") && r.nseg == 1) {
		api_route_sync(&r);
	} else if (!strcmp(r.seg[0], "shares") && r.nseg == 1) {
		api_route_shares(&r);
	} else if (!strcmp(r.seg[0], "copy-servers")) {
		api_route_copy_servers(&r);
	} else if (!strcmp(r.seg[0], "fleet") && r.nseg == 1) {
		api_route_fleet(&r);
	} else if (!strcmp(r.seg[0], "apps") && r.nseg == 1) {
		api_route_apps(&r, NULL);
	} else if (!strcmp(r.seg[0], "groups")) {
		if (r.nseg == 1) {
			api_route_groups(&r);
		} else if (api_seg_name(&r, 1, "group")) {
			;
		} else if (r.nseg == 2) {
			api_route_group(&r);
		} else if (strcmp(r.seg[2], "apps")) {
			goto nf;
		} else if (r.nseg == 3) {
			api_route_apps(&r, r.seg[1]);
		} else if (!api_seg_name(&r, 3, "app")) {
			app_routes(&r);
		}
	} else {
		goto nf;
	}
	goto out;
nf:
	api_fail(&r, 404, "no such resource: /api/v1/%s", rq->path);
out:
	json_decref(r.doc);
	free(path);
}
