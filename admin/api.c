// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api.c - the REST routes of sds-admin under /api/v1/ (admin/API.md).
 *
 * Every path segment that names something is checked against the name
 * charset before the store sees it; every body is parsed strictly (unknown
 * fields refused, types and ranges checked) and errors name the field.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "admin.h"
#include "heartbeat.h"
#include "names.h"
#include "stats.h"
#include "strategy.h"

#define MAX_SEGS	10

struct route {
	const struct api_req *rq;
	struct api_resp *rs;
	struct admin *ad;
	char *seg[MAX_SEGS];
	int nseg;
	json_t *doc;		/* the parsed body, if any */
	char err[STORE_ERR_MAX];
};

static void reply(struct route *r, int status, json_t *body)
{
	r->rs->status = status;
	r->rs->body = body;
}

static void fail(struct route *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct route *r, int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	reply(r, status, json_pack("{s:s}", "error", msg));
}

/* Map a store result to the reply: 0 means "go on". */
static int store_rc(struct route *r, int rc)
{
	switch (rc) {
	case STORE_OK:
		return 0;
	case STORE_NOTFOUND:
		fail(r, 404, "%s", r->err);
		break;
	case STORE_EXISTS:
	case STORE_CONFLICT:
		fail(r, 409, "%s", r->err);
		break;
	default:
		fprintf(stderr, "sds-admin: store: %s\n", r->err);
		fail(r, 500, "storage error");
		break;
	}
	return -1;
}

static bool is(const struct route *r, const char *m)
{
	return !strcmp(r->rq->method, m);
}

static void not_allowed(struct route *r, const char *allow)
{
	r->rs->allow = allow;
	fail(r, 405, "method %s not allowed here (%s)", r->rq->method, allow);
}

/* ---- bodies -------------------------------------------------------------- */

/* Parse the body as a JSON object; on failure the reply is set. */
static int body_object(struct route *r)
{
	json_error_t jerr;

	if (!r->rq->len) {
		r->doc = json_object();
		return 0;
	}
	r->doc = json_loadb(r->rq->body, r->rq->len, JSON_REJECT_DUPLICATES, &jerr);
	if (!r->doc) {
		fail(r, 400, "malformed JSON at line %d column %d: %s", jerr.line,
		     jerr.column, jerr.text);
		return -1;
	}
	if (!json_is_object(r->doc)) {
		fail(r, 400, "body must be a JSON object");
		return -1;
	}
	return 0;
}

/* Refuse fields of the body not in @allowed (NULL-terminated). */
static int only_fields(struct route *r, const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach(r->doc, key, v) {
		const char *const *a;

		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				break;
		if (!*a) {
			fail(r, 400, "unknown field '%.64s'", key);
			return -1;
		}
	}
	return 0;
}

/* A free-text field: optional string, at most ADMIN_TEXT_MAX bytes, no NUL. */
static int text_field(struct route *r, const char *key, const char **out)
{
	json_t *v = json_object_get(r->doc, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		fail(r, 400, "%s must be a string", key);
		return -1;
	}
	if (json_string_length(v) > ADMIN_TEXT_MAX ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		fail(r, 400, "%s must be at most %d bytes of text", key, ADMIN_TEXT_MAX);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

/* A name field: required string of the name charset. */
static int name_field(struct route *r, const char *key, bool required,
		      const char **out)
{
	json_t *v = json_object_get(r->doc, key);

	*out = NULL;
	if (!v || json_is_null(v)) {
		if (!required)
			return 0;
		fail(r, 400, "%s: missing", key);
		return -1;
	}
	if (!json_is_string(v)) {
		fail(r, 400, "%s must be a string", key);
		return -1;
	}
	if (!sds_name_valid(json_string_value(v)) ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		fail(r, 400, "%s: bad name (1-64 of [A-Za-z0-9_-])", key);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

/* Path segment @i must be a name; @what names it in the error. */
static int seg_name(struct route *r, int i, const char *what)
{
	if (!sds_name_valid(r->seg[i])) {
		fail(r, 400, "%s: bad name (1-64 of [A-Za-z0-9_-])", what);
		return -1;
	}
	return 0;
}

/* An integer query argument; @def when absent. */
static int query_int(struct route *r, const char *key, int64_t def, int64_t *out)
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
	if (errno || *end || end == v) {
		fail(r, 400, "%s must be an integer", key);
		return -1;
	}
	*out = x;
	return 0;
}

static int64_t now_s(void)
{
	return (int64_t)time(NULL);
}

/* ---- groups -------------------------------------------------------------- */

static const char *const f_create[] = { "name", "description", "comment", NULL };
static const char *const f_update[] = { "description", "comment", NULL };

static void groups(struct route *r)
{
	struct store *st = r->ad->store;
	const char *name, *desc;
	json_t *out;

	if (is(r, "GET")) {
		if (!store_rc(r, st->ops->group_list(st, &out, r->err)))
			reply(r, 200, out);
		return;
	}
	if (!is(r, "POST"))
		return not_allowed(r, "GET, POST");
	if (body_object(r) || only_fields(r, f_create) ||
	    name_field(r, "name", true, &name) || text_field(r, "description", &desc))
		return;
	if (store_rc(r, st->ops->group_create(st, name, desc, r->err)))
		return;
	if (!store_rc(r, st->ops->group_get(st, name, &out, r->err)))
		reply(r, 201, out);
}

static void group(struct route *r)
{
	struct store *st = r->ad->store;
	const char *g = r->seg[1], *desc;
	json_t *out;

	if (is(r, "GET")) {
		if (!store_rc(r, st->ops->group_get(st, g, &out, r->err)))
			reply(r, 200, out);
		return;
	}
	if (is(r, "PATCH") || is(r, "PUT")) {
		if (body_object(r) || only_fields(r, f_update) ||
		    text_field(r, "description", &desc))
			return;
		if (store_rc(r, st->ops->group_update(st, g, desc ? desc : "", r->err)))
			return;
		if (!store_rc(r, st->ops->group_get(st, g, &out, r->err)))
			reply(r, 200, out);
		return;
	}
	if (is(r, "DELETE")) {
		if (!store_rc(r, st->ops->group_delete(st, g, r->err)))
			reply(r, 200, json_pack("{s:s}", "deleted", g));
		return;
	}
	not_allowed(r, "GET, PATCH, PUT, DELETE");
}

/* ---- apps ---------------------------------------------------------------- */

static void apps(struct route *r, const char *g)
{
	struct store *st = r->ad->store;
	const char *name, *desc;
	json_t *out;

	if (is(r, "GET")) {
		if (!store_rc(r, st->ops->app_list(st, g, &out, r->err)))
			reply(r, 200, out);
		return;
	}
	if (!g || !is(r, "POST"))
		return not_allowed(r, g ? "GET, POST" : "GET");
	if (body_object(r) || only_fields(r, f_create) ||
	    name_field(r, "name", true, &name) || text_field(r, "description", &desc))
		return;
	if (store_rc(r, st->ops->app_create(st, g, name, desc, r->err)))
		return;
	if (!store_rc(r, st->ops->app_get(st, g, name, &out, r->err)))
		reply(r, 201, out);
}

static void app(struct route *r, const char *g, const char *a)
{
	struct store *st = r->ad->store;
	const char *desc;
	json_t *out;

	if (is(r, "GET")) {
		if (!store_rc(r, st->ops->app_get(st, g, a, &out, r->err)))
			reply(r, 200, out);
		return;
	}
	if (is(r, "PATCH") || is(r, "PUT")) {
		if (body_object(r) || only_fields(r, f_update) ||
		    text_field(r, "description", &desc))
			return;
		if (store_rc(r, st->ops->app_update(st, g, a, desc ? desc : "", r->err)))
			return;
		if (!store_rc(r, st->ops->app_get(st, g, a, &out, r->err)))
			reply(r, 200, out);
		return;
	}
	if (is(r, "DELETE")) {
		if (!store_rc(r, st->ops->app_delete(st, g, a, r->err)))
			reply(r, 200, json_pack("{s:s}", "deleted", a));
		return;
	}
	not_allowed(r, "GET, PATCH, PUT, DELETE");
}

/* ---- schemes ------------------------------------------------------------- */

static void schemes(struct route *r, const char *g, const char *a)
{
	static const char *const f[] = {
		"name", "description", "clone_from", "comment", NULL,
	};
	struct store *st = r->ad->store;
	const char *name, *desc, *from, *comment;
	json_t *out;

	if (is(r, "GET")) {
		if (!store_rc(r, st->ops->scheme_list(st, g, a, &out, r->err)))
			reply(r, 200, out);
		return;
	}
	if (!is(r, "POST"))
		return not_allowed(r, "GET, POST");
	if (body_object(r) || only_fields(r, f) || name_field(r, "name", true, &name) ||
	    text_field(r, "description", &desc) ||
	    name_field(r, "clone_from", false, &from) || text_field(r, "comment", &comment))
		return;
	if (store_rc(r, st->ops->scheme_create(st, g, a, name, desc, from, comment, r->err)))
		return;
	if (!store_rc(r, st->ops->scheme_get(st, g, a, name, &out, r->err)))
		reply(r, 201, out);
}

static void scheme(struct route *r, const char *g, const char *a, const char *s)
{
	struct store *st = r->ad->store;
	const char *desc, *comment;
	json_t *out;

	if (is(r, "GET")) {
		if (!store_rc(r, st->ops->scheme_get(st, g, a, s, &out, r->err)))
			reply(r, 200, out);
		return;
	}
	if (is(r, "PATCH") || is(r, "PUT")) {
		if (body_object(r) || only_fields(r, f_update) ||
		    text_field(r, "description", &desc))
			return;
		if (store_rc(r, st->ops->scheme_update(st, g, a, s, desc ? desc : "", r->err)))
			return;
		if (!store_rc(r, st->ops->scheme_get(st, g, a, s, &out, r->err)))
			reply(r, 200, out);
		return;
	}
	if (is(r, "DELETE")) {
		if (body_object(r) || only_fields(r, f_update + 1) ||
		    text_field(r, "comment", &comment))
			return;
		if (!store_rc(r, st->ops->scheme_delete(st, g, a, s, comment, r->err)))
			reply(r, 200, json_pack("{s:s}", "deleted", s));
		return;
	}
	not_allowed(r, "GET, PATCH, PUT, DELETE");
}

static void active_scheme(struct route *r, const char *g, const char *a)
{
	static const char *const f[] = { "scheme", "comment", NULL };
	struct store *st = r->ad->store;
	const char *s, *comment;
	int64_t version;
	json_t *out;

	if (is(r, "GET")) {
		if (store_rc(r, st->ops->app_get(st, g, a, &out, r->err)))
			return;
		reply(r, 200, json_pack("{s:O, s:O}", "scheme",
					json_object_get(out, "active_scheme"),
					"version", json_object_get(out, "version")));
		json_decref(out);
		return;
	}
	if (!is(r, "PUT") && !is(r, "POST"))
		return not_allowed(r, "GET, PUT, POST");
	if (body_object(r) || only_fields(r, f) || name_field(r, "scheme", true, &s) ||
	    text_field(r, "comment", &comment))
		return;
	if (!store_rc(r, st->ops->scheme_activate(st, g, a, s, comment, &version, r->err)))
		reply(r, 200, json_pack("{s:s, s:I}", "scheme", s, "version",
					(json_int_t)version));
}

/* ---- strategies ---------------------------------------------------------- */

/* The body's optional "comment" taken out, the rest for the codec. */
static int take_comment(struct route *r, char **comment)
{
	json_t *c = json_object_get(r->doc, "comment");

	*comment = NULL;
	if (!c)
		return 0;
	if (!json_is_string(c) || json_string_length(c) > ADMIN_TEXT_MAX ||
	    strlen(json_string_value(c)) != json_string_length(c)) {
		fail(r, 400, "comment must be at most %d bytes of text", ADMIN_TEXT_MAX);
		return -1;
	}
	*comment = strdup(json_string_value(c));
	json_object_del(r->doc, "comment");
	return 0;
}

static json_t *strategies_doc(const struct sds_strategies *s, const char *scheme)
{
	json_t *o = strategies_to_json(s);

	if (scheme)
		json_object_set_new(o, "scheme", json_string(scheme));
	return o;
}

static void strategies_all(struct route *r, const char *g, const char *a,
			   const char *s)
{
	struct store *st = r->ad->store;
	struct sds_strategies *ss;
	char scheme[SDS_NAME_MAX + 1];
	char *comment = NULL;
	int64_t version;

	ss = calloc(1, sizeof(*ss));
	if (!ss) {
		fail(r, 500, "out of memory");
		return;
	}
	if (is(r, "GET")) {
		if (!store_rc(r, st->ops->strategies_get(st, g, a, s, ss, scheme, r->err)))
			reply(r, 200, strategies_doc(ss, scheme));
		goto out;
	}
	if (!s || !is(r, "PUT")) {
		not_allowed(r, s ? "GET, PUT" : "GET");
		goto out;
	}
	if (body_object(r) || take_comment(r, &comment))
		goto out;
	/* "version" is the admin's to give: optional in a PUT, ignored. */
	json_object_set_new(r->doc, "version", json_integer(0));
	if (!json_object_get(r->doc, "points"))
		json_object_set_new(r->doc, "points", json_object());
	if (strategies_from_json(r->doc, ss, r->err, sizeof(r->err))) {
		fail(r, 400, "%s", r->err);
		goto out;
	}
	if (store_rc(r, st->ops->strategies_put(st, g, a, s, ss, comment, &version, r->err)))
		goto out;
	if (!store_rc(r, st->ops->strategies_get(st, g, a, s, ss, scheme, r->err)))
		reply(r, 200, strategies_doc(ss, scheme));
out:
	free(comment);
	free(ss);
}

static void strategy_one(struct route *r, const char *g, const char *a,
			 const char *s, const char *point)
{
	struct store *st = r->ad->store;
	struct sds_strategies *ss;
	const struct sds_strategy *one;
	char *comment = NULL;
	int64_t version;
	json_t *doc;

	ss = calloc(1, sizeof(*ss));
	if (!ss) {
		fail(r, 500, "out of memory");
		return;
	}
	if (is(r, "GET")) {
		if (store_rc(r, st->ops->strategies_get(st, g, a, s, ss, NULL, r->err)))
			goto out;
		one = strategies_find(ss, point);
		if (!one)
			fail(r, 404, "point '%s' has no strategy in scheme '%s'", point, s);
		else
			reply(r, 200, strategy_to_json(one));
		goto out;
	}
	if (is(r, "DELETE")) {
		if (body_object(r) || take_comment(r, &comment))
			goto out;
		if (json_object_size(r->doc)) {
			fail(r, 400, "unknown field '%.64s'", json_object_iter_key(json_object_iter(r->doc)));
			goto out;
		}
		if (!store_rc(r, st->ops->strategy_delete(st, g, a, s, point, comment,
							  &version, r->err)))
			reply(r, 200, json_pack("{s:s, s:I}", "deleted", point, "version",
						(json_int_t)version));
		goto out;
	}
	if (!is(r, "PUT")) {
		not_allowed(r, "GET, PUT, DELETE");
		goto out;
	}
	if (body_object(r) || take_comment(r, &comment))
		goto out;
	/* Validate with the shared codec: its messages name point and field. */
	doc = json_pack("{s:i, s:{s:O}}", "version", 0, "points", point, r->doc);
	if (!doc || strategies_from_json(doc, ss, r->err, sizeof(r->err))) {
		json_decref(doc);
		fail(r, 400, "%s", doc ? r->err : "out of memory");
		goto out;
	}
	json_decref(doc);
	if (!store_rc(r, st->ops->strategy_put(st, g, a, s, &ss->s[0], comment,
					       &version, r->err))) {
		json_t *o = strategy_to_json(&ss->s[0]);

		reply(r, 200, json_pack("{s:s, s:o, s:I}", "point", point, "strategy", o,
					"version", (json_int_t)version));
	}
out:
	free(comment);
	free(ss);
}

/* ---- statistics, hosts, events ------------------------------------------- */

static void stats(struct route *r, const char *g, const char *a)
{
	int64_t to, from, step;
	const char *point;
	json_t *out;

	if (!is(r, "GET"))
		return not_allowed(r, "GET");
	if (query_int(r, "to", (now_s() / 10 + 1) * 10, &to) ||
	    query_int(r, "from", to - 3600, &from) || query_int(r, "step", 0, &step))
		return;
	point = http_query(r->rq->conn, "point");
	if (point && !sds_name_valid(point)) {
		fail(r, 400, "point: bad name (1-64 of [A-Za-z0-9_-])");
		return;
	}
	if (stats_range(&from, &to, &step, r->err, sizeof(r->err))) {
		fail(r, 400, "%s", r->err);
		return;
	}
	if (!store_rc(r, stats_query(r->ad->store, g, a, point, from, to, step, &out,
				     r->err)))
		reply(r, 200, out);
}

static void listing(struct route *r, const char *g, const char *a, const char *what)
{
	struct store *st = r->ad->store;
	int64_t from, to, limit;
	json_t *out;
	int rc;

	if (!is(r, "GET"))
		return not_allowed(r, "GET");
	if (!strcmp(what, "hosts")) {
		rc = st->ops->host_list(st, g, a, &out, r->err);
	} else if (!strcmp(what, "points")) {
		rc = st->ops->point_list(st, g, a, &out, r->err);
	} else if (!strcmp(what, "events")) {
		if (query_int(r, "to", now_s() + 10, &to) ||
		    query_int(r, "from", to - 86400, &from) ||
		    query_int(r, "limit", 500, &limit))
			return;
		if (limit < 1 || limit > 10000) {
			fail(r, 400, "limit must be an integer 1..10000");
			return;
		}
		rc = st->ops->events(st, g, a, from, to, (int)limit, &out, r->err);
	} else {
		if (query_int(r, "limit", 100, &limit))
			return;
		if (limit < 1 || limit > 10000) {
			fail(r, 400, "limit must be an integer 1..10000");
			return;
		}
		rc = st->ops->audit(st, g, a, (int)limit, &out, r->err);
	}
	if (!store_rc(r, rc))
		reply(r, 200, out);
}

/* ---- drills --------------------------------------------------------------- */

/*
 * Which token wrote: a fingerprint (FNV-1a 64 of it), so the audit log
 * can tell tokens apart across a rotation without holding a secret.
 */
static void token_id(const struct admin *ad, char out[24])
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < ad->token_len; i++)
		h = (h ^ (unsigned char)ad->token[i]) * 0x100000001b3ULL;
	snprintf(out, 24, "fnv:%08llx", (unsigned long long)(h >> 32));
}

static int drill_int(struct route *r, const char *key, int64_t min, int64_t max,
		     int64_t def, int64_t *out)
{
	json_t *v = json_object_get(r->doc, key);

	if (!v) {
		if (def < min) {
			fail(r, 400, "%s: required (an integer %lld..%lld)", key,
			     (long long)min, (long long)max);
			return -1;
		}
		*out = def;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max) {
		fail(r, 400, "%s must be an integer %lld..%lld", key, (long long)min,
		     (long long)max);
		return -1;
	}
	*out = json_integer_value(v);
	return 0;
}

static const char *const f_drill[] = {
	"point", "kind", "ratio", "delay_ms", "duration_s", "by", NULL
};

static void drills(struct route *r, const char *g, const char *a)
{
	struct store *st = r->ad->store;
	struct store_drill d = { 0 };
	const char *kind = NULL;
	int64_t ratio, delay, dur, id;
	char tid[24];
	json_t *out;

	if (is(r, "GET")) {
		if (!store_rc(r, st->ops->drill_list(st, g, a, &out, r->err)))
			reply(r, 200, out);
		return;
	}
	if (!is(r, "POST"))
		return not_allowed(r, "GET, POST");
	if (body_object(r) || only_fields(r, f_drill) ||
	    name_field(r, "point", true, &d.point) || text_field(r, "by", &d.by))
		return;
	kind = json_string_value(json_object_get(r->doc, "kind"));
	if (!kind || (strcmp(kind, "error") && strcmp(kind, "delay"))) {
		fail(r, 400, "kind must be \"error\" or \"delay\"");
		return;
	}
	d.kind = strcmp(kind, "error") ? SDS_DRILL_DELAY : SDS_DRILL_ERROR;
	if (drill_int(r, "ratio", 0, 100, 100, &ratio) ||
	    drill_int(r, "duration_s", 1, 86400, -1, &dur) ||
	    drill_int(r, "delay_ms", d.kind == SDS_DRILL_DELAY ? 1 : 0,
		      SDS_HB_DRILL_DELAY_MAX, d.kind == SDS_DRILL_DELAY ? -1 : 0,
		      &delay))
		return;
	if (!d.by || !*d.by || strlen(d.by) > 256) {
		fail(r, 400, "by: required, 1-256 bytes (who starts the drill, free text)");
		return;
	}
	d.ratio = ratio;
	d.delay_ms = delay;
	d.duration_s = dur;
	token_id(r->ad, tid);
	d.token_id = tid;
	if (store_rc(r, st->ops->drill_create(st, g, a, &d, now_s(), &id, r->err)))
		return;
	reply(r, 201, json_pack("{s:I, s:s, s:s, s:i, s:I, s:I}", "id", (json_int_t)id,
				"point", d.point, "kind", kind, "ratio", (int)ratio,
				"delay_ms", (json_int_t)delay,
				"expires_at", (json_int_t)(now_s() + dur)));
}

static const char *const f_drill_stop[] = { "by", NULL };

static void drill_stop(struct route *r, const char *g, const char *a,
		       const char *ids)
{
	struct store *st = r->ad->store;
	const char *by = NULL;
	char tid[24], *end;
	long long id;

	if (!is(r, "POST"))
		return not_allowed(r, "POST");
	id = strtoll(ids, &end, 10);
	if (*end || id < 1) {
		fail(r, 404, "no drill '%s'", ids);
		return;
	}
	if (body_object(r) || only_fields(r, f_drill_stop) || text_field(r, "by", &by))
		return;
	if (!by || !*by || strlen(by) > 256) {
		fail(r, 400, "by: required, 1-256 bytes (who stops the drill, free text)");
		return;
	}
	token_id(r->ad, tid);
	if (!store_rc(r, st->ops->drill_stop(st, g, a, id, by, tid, now_s(), r->err)))
		reply(r, 200, json_pack("{s:I, s:b}", "id", (json_int_t)id, "stopped", 1));
}

/* ---- the heartbeat ------------------------------------------------------- */

/*
 * Per-thread buffers: a heartbeat struct is ~160 KiB, which malloc would
 * map and unmap (and the kernel fault in) on every request.  Freed when
 * the thread ends.
 */
struct hb_bufs {
	struct sds_heartbeat *hb;
	struct sds_strategies *strategies;
	struct sds_hb_drill drills[SDS_HB_MAX_DRILLS];
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

static void heartbeat(struct route *r)
{
	struct store *st = r->ad->store;
	struct store_hb_result res = { 0 };
	struct sds_heartbeat *hb = NULL;
	struct hb_bufs *bufs;
	struct timespec t0, t1;
	bool changed;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!is(r, "POST"))
		return not_allowed(r, "POST");
	bufs = bufs_get();
	if (!bufs) {
		fail(r, 500, "out of memory");
		goto out;
	}
	hb = bufs->hb;
	res.strategies = bufs->strategies;
	res.drills = bufs->drills;
	if (heartbeat_parse(r->rq->body, r->rq->len, hb, r->err, sizeof(r->err))) {
		atomic_fetch_add(&r->ad->m.heartbeat_rejected, 1);
		fail(r, 400, "%s", r->err);
		goto out;
	}
	if (hb->period_start > now_s() + 3600) {
		atomic_fetch_add(&r->ad->m.heartbeat_rejected, 1);
		fail(r, 400, "period_start is more than an hour in the future");
		goto out;
	}
	if (store_rc(r, st->ops->heartbeat(st, hb, now_s(), &res, r->err)))
		goto out;
	if (res.duplicate) {
		atomic_fetch_add(&r->ad->m.heartbeat_duplicates, 1);
	} else {
		atomic_fetch_add(&r->ad->m.heartbeats, 1);
		atomic_fetch_add(&r->ad->m.heartbeat_points, hb->n);
	}
	changed = hb->version != res.version;
	{
		json_t *doc = heartbeat_reply_to_json(res.version, changed,
						      changed ? res.strategies : NULL);

		/* Every reply lists the drills in force: one missing has stopped. */
		if (doc)
			json_object_set_new(doc, "drills",
					    heartbeat_drills_to_json(res.drills, res.ndrills));
		reply(r, 200, doc);
	}
out:
	clock_gettime(CLOCK_MONOTONIC, &t1);
	atomic_fetch_add(&r->ad->m.heartbeat_usec,
			 (t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000);
}


/* ---- dispatch ------------------------------------------------------------ */

/* Split @path into r->seg; false if it has too many or empty segments. */
static bool split(struct route *r, char *path)
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

static void app_routes(struct route *r)
{
	const char *g = r->seg[1], *a = r->seg[3];
	const char *what = r->nseg > 4 ? r->seg[4] : NULL;

	if (r->nseg == 4)
		return app(r, g, a);
	if (!strcmp(what, "schemes")) {
		if (r->nseg == 5)
			return schemes(r, g, a);
		if (seg_name(r, 5, "scheme"))
			return;
		if (r->nseg == 6)
			return scheme(r, g, a, r->seg[5]);
		if (strcmp(r->seg[6], "strategies"))
			goto nf;
		if (r->nseg == 7)
			return strategies_all(r, g, a, r->seg[5]);
		if (seg_name(r, 7, "point"))
			return;
		if (r->nseg == 8)
			return strategy_one(r, g, a, r->seg[5], r->seg[7]);
		goto nf;
	}
	if (!strcmp(what, "drills")) {
		if (r->nseg == 5)
			return drills(r, g, a);
		if (r->nseg == 7 && !strcmp(r->seg[6], "stop"))
			return drill_stop(r, g, a, r->seg[5]);
		goto nf;
	}
	if (r->nseg != 5)
		goto nf;
	if (!strcmp(what, "strategies"))
		return strategies_all(r, g, a, NULL);
	if (!strcmp(what, "active_scheme"))
		return active_scheme(r, g, a);
	if (!strcmp(what, "stats"))
		return stats(r, g, a);
	if (!strcmp(what, "hosts") || !strcmp(what, "points") ||
	    !strcmp(what, "events") || !strcmp(what, "audit"))
		return listing(r, g, a, what);
nf:
	fail(r, 404, "no such resource: /api/v1/%s", r->rq->path);
}

void api_handle(struct admin *ad, const struct api_req *rq, struct api_resp *rs)
{
	struct route r = { .rq = rq, .rs = rs, .ad = ad };
	char *path = strdup(rq->path);

	if (!path) {
		fail(&r, 500, "out of memory");
		return;
	}
	if (!split(&r, path) || !r.nseg)
		goto nf;
	if (!strcmp(r.seg[0], "heartbeat") && r.nseg == 1) {
		heartbeat(&r);
	} else if (!strcmp(r.seg[0], "apps") && r.nseg == 1) {
		apps(&r, NULL);
	} else if (!strcmp(r.seg[0], "groups")) {
		if (r.nseg == 1) {
			groups(&r);
		} else if (seg_name(&r, 1, "group")) {
			;
		} else if (r.nseg == 2) {
			group(&r);
		} else if (strcmp(r.seg[2], "apps")) {
			goto nf;
		} else if (r.nseg == 3) {
			apps(&r, r.seg[1]);
		} else if (!seg_name(&r, 3, "app")) {
			app_routes(&r);
		}
	} else {
		goto nf;
	}
	goto out;
nf:
	fail(&r, 404, "no such resource: /api/v1/%s", rq->path);
out:
	json_decref(r.doc);
	free(path);
}
