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

void api_route_groups(struct api_route *r)
{
	struct store *st = r->ad->store;
	const char *name, *desc;
	json_t *out;

	if (api_is(r, "GET")) {
		if (!api_store_rc(r, st->ops->group_list(st, &out, r->err)))
			api_reply(r, 200, out);
		return;
	}
	if (!api_is(r, "POST"))
		return api_not_allowed(r, "GET, POST");
	if (api_body_object(r) || api_only_fields(r, f_create) ||
	    api_name_field(r, "name", true, &name) || api_text_field(r, "description", &desc))
		return;
	if (api_store_rc(r, st->ops->group_create(st, name, desc, r->err)))
		return;
	if (!api_store_rc(r, st->ops->group_get(st, name, &out, r->err)))
		api_reply(r, 201, out);
}

void api_route_group(struct api_route *r)
{
	struct store *st = r->ad->store;
	const char *g = r->seg[1], *desc;
	json_t *out;

	if (api_is(r, "GET")) {
		if (!api_store_rc(r, st->ops->group_get(st, g, &out, r->err)))
			api_reply(r, 200, out);
		return;
	}
	if (api_is(r, "PATCH") || api_is(r, "PUT")) {
		if (api_body_object(r) || api_only_fields(r, f_update) ||
		    api_text_field(r, "description", &desc))
			return;
		if (api_store_rc(r, st->ops->group_update(st, g, desc ? desc : "", r->err)))
			return;
		if (!api_store_rc(r, st->ops->group_get(st, g, &out, r->err)))
			api_reply(r, 200, out);
		return;
	}
	if (api_is(r, "DELETE")) {
		if (!api_store_rc(r, st->ops->group_delete(st, g, r->err)))
			api_reply(r, 200, json_pack("{s:s}", "deleted", g));
		return;
	}
	api_not_allowed(r, "GET, PATCH, PUT, DELETE");
}

/* ---- apps ---------------------------------------------------------------- */

void api_route_apps(struct api_route *r, const char *g)
{
	struct store *st = r->ad->store;
	const char *name, *desc;
	json_t *out;

	if (api_is(r, "GET")) {
		if (!api_store_rc(r, st->ops->app_list(st, g, &out, r->err)))
			api_reply(r, 200, out);
		return;
	}
	if (!g || !api_is(r, "POST"))
		return api_not_allowed(r, g ? "GET, POST" : "GET");
	if (api_body_object(r) || api_only_fields(r, f_create) ||
	    api_name_field(r, "name", true, &name) || api_text_field(r, "description", &desc))
		return;
	if (api_store_rc(r, st->ops->app_create(st, g, name, desc, r->err)))
		return;
	if (!api_store_rc(r, st->ops->app_get(st, g, name, &out, r->err)))
		api_reply(r, 201, out);
}

void api_route_app(struct api_route *r, const char *g, const char *a)
{
	struct store *st = r->ad->store;
	const char *desc;
	json_t *out;

	if (api_is(r, "GET")) {
		if (!api_store_rc(r, st->ops->app_get(st, g, a, &out, r->err)))
			api_reply(r, 200, out);
		return;
	}
	if (api_is(r, "PATCH") || api_is(r, "PUT")) {
		if (api_body_object(r) || api_only_fields(r, f_update) ||
		    api_text_field(r, "description", &desc))
			return;
		if (api_store_rc(r, st->ops->app_update(st, g, a, desc ? desc : "", r->err)))
			return;
		if (!api_store_rc(r, st->ops->app_get(st, g, a, &out, r->err)))
			api_reply(r, 200, out);
		return;
	}
	if (api_is(r, "DELETE")) {
		if (!api_store_rc(r, st->ops->app_delete(st, g, a, r->err)))
			api_reply(r, 200, json_pack("{s:s}", "deleted", a));
		return;
	}
	api_not_allowed(r, "GET, PATCH, PUT, DELETE");
}

/* ---- schemes ------------------------------------------------------------- */

void api_route_schemes(struct api_route *r, const char *g, const char *a)
{
	static const char *const f[] = {
		"name", "description", "clone_from", "comment", NULL,
	};
	struct store *st = r->ad->store;
	const char *name, *desc, *from, *comment;
	json_t *out;

	if (api_is(r, "GET")) {
		if (!api_store_rc(r, st->ops->scheme_list(st, g, a, &out, r->err)))
			api_reply(r, 200, out);
		return;
	}
	if (!api_is(r, "POST"))
		return api_not_allowed(r, "GET, POST");
	if (api_body_object(r) || api_only_fields(r, f) || api_name_field(r, "name", true, &name) ||
	    api_text_field(r, "description", &desc) ||
	    api_name_field(r, "clone_from", false, &from) || api_text_field(r, "comment", &comment))
		return;
	if (api_store_rc(r, st->ops->scheme_create(st, g, a, name, desc, from, comment, r->err)))
		return;
	if (!api_store_rc(r, st->ops->scheme_get(st, g, a, name, &out, r->err)))
		api_reply(r, 201, out);
}

void api_route_scheme(struct api_route *r, const char *g, const char *a, const char *s)
{
	struct store *st = r->ad->store;
	const char *desc, *comment;
	json_t *out;

	if (api_is(r, "GET")) {
		if (!api_store_rc(r, st->ops->scheme_get(st, g, a, s, &out, r->err)))
			api_reply(r, 200, out);
		return;
	}
	if (api_is(r, "PATCH") || api_is(r, "PUT")) {
		static const char *const f[] = { "description", "name", "comment", NULL };
		const char *to = NULL;

		if (api_body_object(r) || api_only_fields(r, f) ||
		    api_text_field(r, "description", &desc) ||
		    api_name_field(r, "name", false, &to) ||
		    api_text_field(r, "comment", &comment))
			return;
		/* A rename first: the description then goes to the new name. */
		if (to && api_store_rc(r, st->ops->scheme_rename(st, g, a, s, to,
								 comment, r->err)))
			return;
		if (to)
			s = to;
		if (desc && api_store_rc(r, st->ops->scheme_update(st, g, a, s, desc, r->err)))
			return;
		if (!api_store_rc(r, st->ops->scheme_get(st, g, a, s, &out, r->err)))
			api_reply(r, 200, out);
		return;
	}
	if (api_is(r, "DELETE")) {
		if (api_body_object(r) || api_only_fields(r, f_update + 1) ||
		    api_text_field(r, "comment", &comment))
			return;
		if (!api_store_rc(r, st->ops->scheme_delete(st, g, a, s, comment, r->err)))
			api_reply(r, 200, json_pack("{s:s}", "deleted", s));
		return;
	}
	api_not_allowed(r, "GET, PATCH, PUT, DELETE");
}

void api_route_active_scheme(struct api_route *r, const char *g, const char *a)
{
	static const char *const f[] = { "scheme", "comment", NULL };
	struct store *st = r->ad->store;
	const char *s, *comment;
	int64_t version;
	json_t *out;

	if (api_is(r, "GET")) {
		if (api_store_rc(r, st->ops->app_get(st, g, a, &out, r->err)))
			return;
		api_reply(r, 200, json_pack("{s:O, s:O}", "scheme",
					json_object_get(out, "active_scheme"),
					"version", json_object_get(out, "version")));
		json_decref(out);
		return;
	}
	if (!api_is(r, "PUT") && !api_is(r, "POST"))
		return api_not_allowed(r, "GET, PUT, POST");
	if (api_body_object(r) || api_only_fields(r, f) || api_name_field(r, "scheme", true, &s) ||
	    api_text_field(r, "comment", &comment))
		return;
	if (!api_store_rc(r, st->ops->scheme_activate(st, g, a, s, comment, &version, r->err)))
		api_reply(r, 200, json_pack("{s:s, s:I}", "scheme", s, "version",
					(json_int_t)version));
}

/* ---- strategies ---------------------------------------------------------- */

/* The body's optional "comment" taken out, the rest for the codec. */
static int take_comment(struct api_route *r, char **comment)
{
	json_t *c = json_object_get(r->doc, "comment");

	*comment = NULL;
	if (!c)
		return 0;
	if (!json_is_string(c) || json_string_length(c) > ADMIN_TEXT_MAX ||
	    strlen(json_string_value(c)) != json_string_length(c)) {
		api_fail(r, 400, "comment must be at most %d bytes of text", ADMIN_TEXT_MAX);
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

void api_route_strategies(struct api_route *r, const char *g, const char *a,
		    const char *s)
{
	struct store *st = r->ad->store;
	struct sds_strategies *ss;
	char scheme[SDS_NAME_MAX + 1];
	char *comment = NULL;
	int64_t version;

	ss = calloc(1, sizeof(*ss));
	if (!ss) {
		api_fail(r, 500, "out of memory");
		return;
	}
	if (api_is(r, "GET")) {
		if (!api_store_rc(r, st->ops->strategies_get(st, g, a, s, ss, scheme, r->err)))
			api_reply(r, 200, strategies_doc(ss, scheme));
		goto out;
	}
	if (!s || !api_is(r, "PUT")) {
		api_not_allowed(r, s ? "GET, PUT" : "GET");
		goto out;
	}
	if (api_body_object(r) || take_comment(r, &comment))
		goto out;
	/* "version" is the admin's to give: optional in a PUT, ignored. */
	json_object_set_new(r->doc, "version", json_integer(0));
	if (!json_object_get(r->doc, "points"))
		json_object_set_new(r->doc, "points", json_object());
	if (strategy_set_from_json(r->doc, ss, r->err, sizeof(r->err))) {
		api_fail(r, 400, "%s", r->err);
		goto out;
	}
	if (api_cluster_check_hosts(r, g, a, ss))
		goto out;
	if (api_store_rc(r, st->ops->strategies_put(st, g, a, s, ss, comment, &version, r->err)))
		goto out;
	if (!api_store_rc(r, st->ops->strategies_get(st, g, a, s, ss, scheme, r->err)))
		api_reply(r, 200, strategies_doc(ss, scheme));
out:
	free(comment);
	free(ss);
}

/*
 * A point's strategy put (@put, the one point of document @pdoc) or
 * deleted (@del) must leave the scheme's document valid: its host
 * pressure rules (docs/PRESSURE.md: a rule shedding "low" points needs
 * one), and its key_overrides at most SDS_KEY_OVERRIDES_ALL in all
 * points (docs/KEYS.md).  The whole document after the change, validated
 * by the codec.  0: valid (or nothing to check); else the reply is sent.
 */
static int doc_still_valid(struct api_route *r, const char *g, const char *a,
			   const char *s, const struct sds_strategies *pdoc,
			   const struct sds_strategy *put, const char *del)
{
	struct store *st = r->ad->store;
	struct sds_strategies *cur = malloc(sizeof(*cur));
	json_t *doc = NULL, *pts;
	int ret = -1;

	if (!cur) {
		api_fail(r, 500, "out of memory");
		return -1;
	}
	if (api_store_rc(r, st->ops->strategies_get(st, g, a, s, cur, NULL, r->err)))
		goto out;
	ret = 0;
	if (!cur->pressure.n && !(put && put->key_ov_n))
		goto out;
	doc = strategy_set_to_json(cur);
	pts = json_object_get(doc, "points");
	if (put)
		json_object_set_new(pts, put->point, strategy_to_json_in(pdoc, put));
	if (del)
		json_object_del(pts, del);
	if (strategy_set_from_json(doc, cur, r->err, sizeof(r->err))) {
		api_fail(r, 400, "%s", r->err);
		ret = -1;
	}
out:
	json_decref(doc);
	free(cur);
	return ret;
}

void api_route_strategy(struct api_route *r, const char *g, const char *a,
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
		api_fail(r, 500, "out of memory");
		return;
	}
	if (api_is(r, "GET")) {
		if (api_store_rc(r, st->ops->strategies_get(st, g, a, s, ss, NULL, r->err)))
			goto out;
		one = strategy_set_find(ss, point);
		if (!one)
			api_fail(r, 404, "point '%s' has no strategy in scheme '%s'", point, s);
		else
			api_reply(r, 200, strategy_to_json_in(ss, one));
		goto out;
	}
	if (api_is(r, "DELETE")) {
		if (api_body_object(r) || take_comment(r, &comment))
			goto out;
		if (json_object_size(r->doc)) {
			api_fail(r, 400, "unknown field '%.64s'", json_object_iter_key(json_object_iter(r->doc)));
			goto out;
		}
		if (doc_still_valid(r, g, a, s, NULL, NULL, point))
			goto out;
		if (!api_store_rc(r, st->ops->strategy_delete(st, g, a, s, point, comment,
							  &version, r->err)))
			api_reply(r, 200, json_pack("{s:s, s:I}", "deleted", point, "version",
						(json_int_t)version));
		goto out;
	}
	if (!api_is(r, "PUT")) {
		api_not_allowed(r, "GET, PUT, DELETE");
		goto out;
	}
	if (api_body_object(r) || take_comment(r, &comment))
		goto out;
	/* Validate with the shared codec: its messages name point and field. */
	doc = json_pack("{s:i, s:{s:O}}", "version", 0, "points", point, r->doc);
	if (!doc || strategy_set_from_json(doc, ss, r->err, sizeof(r->err))) {
		json_decref(doc);
		api_fail(r, 400, "%s", doc ? r->err : "out of memory");
		goto out;
	}
	json_decref(doc);
	if (api_cluster_check_hosts(r, g, a, ss))
		goto out;
	if (doc_still_valid(r, g, a, s, ss, &ss->s[0], NULL))
		goto out;
	if (!api_store_rc(r, st->ops->strategy_put(st, g, a, s, ss, comment,
					       &version, r->err))) {
		json_t *o = strategy_to_json_in(ss, &ss->s[0]);

		api_reply(r, 200, json_pack("{s:s, s:o, s:I}", "point", point, "strategy", o,
					"version", (json_int_t)version));
	}
out:
	free(comment);
	free(ss);
}

