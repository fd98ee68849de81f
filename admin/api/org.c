// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/org.c - the routes of groups, apps, schemes and strategies.
 */
#include "names.h"
#include "strategy.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"

/* ---- groups -------------------------------------------------------------- */

static const char *const f_create[] = { "name", "description", "comment", NULL };
static const char *const f_update[] = { "description", "comment", NULL };

void groups(struct route *r)
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

void group(struct route *r)
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

void apps(struct route *r, const char *g)
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

void app(struct route *r, const char *g, const char *a)
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

void schemes(struct route *r, const char *g, const char *a)
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

void scheme(struct route *r, const char *g, const char *a, const char *s)
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

void active_scheme(struct route *r, const char *g, const char *a)
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
	json_t *o = strategy_set_to_json(s);

	if (scheme)
		json_object_set_new(o, "scheme", json_string(scheme));
	return o;
}

void strategies_all(struct route *r, const char *g, const char *a,
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
	if (strategy_set_from_json(r->doc, ss, r->err, sizeof(r->err))) {
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

void strategy_one(struct route *r, const char *g, const char *a,
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
		one = strategy_set_find(ss, point);
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
	if (!doc || strategy_set_from_json(doc, ss, r->err, sizeof(r->err))) {
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

