// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/refused.c - the admin's strategies the app's hosts refused (a field
 * a point cannot enforce, as each loader's heartbeat said), gathered per
 * refusal: GET {A}/refused, and the fleet's "refused" beside each app.
 * A host's refusals are its last heartbeat's (store: hosts.refused), so a
 * later version it accepts clears them.
 */
#include <stdio.h>
#include <string.h>
#include "api/api.h"

/* The entry of @out for (@point, @version, @reason), or NULL. */
static json_t *entry_find(json_t *out, json_t *point, json_t *version, json_t *reason)
{
	json_t *e;
	size_t i;

	json_array_foreach(out, i, e)
		if (json_equal(json_object_get(e, "point"), point) &&
		    json_equal(json_object_get(e, "version"), version) &&
		    json_equal(json_object_get(e, "reason"), reason))
			return e;
	return NULL;
}

/* "refused on 2 hosts: REASON" of entry @e, its hosts counted. */
static void entry_text(json_t *e)
{
	size_t n = json_array_size(json_object_get(e, "hosts"));
	char text[SDS_HB_REASON_MAX + 64];

	snprintf(text, sizeof(text), "refused on %zu host%s: %s", n, n == 1 ? "" : "s",
		 json_string_value(json_object_get(e, "reason")));
	json_object_set_new(e, "text", json_string(text));
}

json_t *api_refused(json_t *hosts)
{
	json_t *out = json_array(), *h, *x, *e;
	size_t i, j;

	if (!out)
		return NULL;
	json_array_foreach(hosts, i, h) {
		json_array_foreach(json_object_get(h, "refused"), j, x) {
			json_t *point = json_object_get(x, "point");
			json_t *pt = point ? point : json_null();

			e = entry_find(out, pt, json_object_get(x, "version"),
				       json_object_get(x, "reason"));
			if (!e) {
				e = json_pack("{s:O, s:O, s:O, s:[]}", "point", pt,
					      "version", json_object_get(x, "version"),
					      "reason", json_object_get(x, "reason"), "hosts");
				if (!e || json_array_append_new(out, e))
					continue;
			}
			json_array_append(json_object_get(e, "hosts"), json_object_get(h, "host"));
		}
	}
	json_array_foreach(out, i, e)
		entry_text(e);
	return out;
}

void api_route_refused(struct api_route *r, const char *g, const char *a)
{
	struct store *st = r->ad->store;
	json_t *hosts = NULL, *out;

	if (!api_is(r, "GET"))
		return api_not_allowed(r, "GET");
	if (api_store_rc(r, st->ops->host_list(st, g, a, &hosts, r->err)))
		return;
	out = api_refused(hosts);
	json_decref(hosts);
	if (!out) {
		api_fail(r, 500, "out of memory");
		return;
	}
	api_reply(r, 200, out);
}
