// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/drill_hosts.c - a drill's blast radius (docs/DRILL.md): which of
 * the app's hosts a drill started through the API is handed to.
 *
 *   absent, or "hosts": "all"	every host, as before (stored as NULL)
 *   "hosts": ["web-1", ...]	those, each a host the app has
 *   "hosts_pct": 1..100		that share of the hosts live now, at least one
 *   "hosts_count": N		N of the hosts live now
 *
 * A share or a count picks the hosts with the lowest FNV-1a hash of
 * "GROUP/APP\nPOINT\nKIND\nHOST": the same drill started again (a retry)
 * picks the same hosts, another point or app other ones.  The chosen
 * names are stored with the drill: a host that comes later is not in it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heartbeat/heartbeat.h"
#include "api/api.h"

#define LIVE_S		60	/* a host heard within this is live for a share */
#define HOSTS_MAX	1024	/* names in one "hosts" */

struct pick {
	const char *host;
	uint64_t h;
};

static uint64_t pick_hash(const char *g, const char *a, const char *point,
			  const char *kind, const char *host)
{
	const char *parts[] = { g, "/", a, "\n", point, "\n", kind, "\n", host };
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;
	const char *p;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		for (p = parts[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	return h;
}

static int pick_cmp(const void *x, const void *y)
{
	const struct pick *a = x, *b = y;

	if (a->h != b->h)
		return a->h < b->h ? -1 : 1;
	return strcmp(a->host, b->host);
}

static int name_cmp(const void *x, const void *y)
{
	return strcmp(json_string_value(*(json_t *const *)x),
		      json_string_value(*(json_t *const *)y));
}

/* @a sorted by name, as text; NULL with a 500 out of memory. */
static char *hosts_text(struct api_route *r, json_t *a)
{
	json_t **v = calloc(json_array_size(a) + 1, sizeof(*v)), *s = json_array();
	size_t i, n = json_array_size(a);
	char *out = NULL;

	for (i = 0; v && i < n; i++)
		v[i] = json_array_get(a, i);
	if (v && s) {
		qsort(v, n, sizeof(*v), name_cmp);
		for (i = 0; i < n; i++)
			json_array_append(s, v[i]);
		out = json_dumps(s, JSON_COMPACT);
	}
	free(v);
	json_decref(s);
	if (!out)
		api_fail(r, 500, "out of memory");
	return out;
}

/* "hosts": [names]: each once, each a host of the app. */
static int hosts_named(struct api_route *r, json_t *v, json_t *known, char **out)
{
	size_t i, j, k;
	json_t *x, *h;

	if (!json_array_size(v) || json_array_size(v) > HOSTS_MAX) {
		api_fail(r, 400, "hosts must be \"all\" or an array of 1..%d host names",
			 HOSTS_MAX);
		return -1;
	}
	json_array_foreach(v, i, x) {
		bool have = false;

		if (!json_is_string(x) || !heartbeat_host_valid(json_string_value(x))) {
			api_fail(r, 400, "hosts[%zu]: bad host name (1-253 of [A-Za-z0-9._-])", i);
			return -1;
		}
		for (j = 0; j < i; j++)
			if (json_equal(json_array_get(v, j), x)) {
				api_fail(r, 400, "hosts[%zu]: '%s' named twice", i,
					 json_string_value(x));
				return -1;
			}
		json_array_foreach(known, k, h)
			if (json_equal(json_object_get(h, "host"), x))
				have = true;
		if (!have) {
			api_fail(r, 400, "hosts[%zu]: the app has no host '%.253s' (see GET .../hosts)",
				 i, json_string_value(x));
			return -1;
		}
	}
	*out = hosts_text(r, v);
	return *out ? 0 : -1;
}

/* "hosts_pct" or "hosts_count": the @k of the live hosts that hash lowest. */
static int hosts_picked(struct api_route *r, const char *g, const char *a,
			const char *point, const char *kind, json_t *known,
			int64_t pct, int64_t count, char **out)
{
	struct pick *p = calloc(json_array_size(known) + 1, sizeof(*p));
	int64_t now = store_now_s(), k;
	size_t i, n = 0;
	json_t *h, *chosen;

	if (!p) {
		api_fail(r, 500, "out of memory");
		return -1;
	}
	json_array_foreach(known, i, h)
		if (json_integer_value(json_object_get(h, "last_seen")) >= now - LIVE_S) {
			p[n].host = json_string_value(json_object_get(h, "host"));
			p[n].h = pick_hash(g, a, point, kind, p[n].host);
			n++;
		}
	k = pct ? ((int64_t)n * pct + 99) / 100 : count;
	if (!n || k > (int64_t)n) {
		api_fail(r, 400, "%s %lld: the app has %zu live host%s (heard within %d s)",
			 pct ? "hosts_pct" : "hosts_count",
			 (long long)(pct ? pct : count), n, n == 1 ? "" : "s", LIVE_S);
		free(p);
		return -1;
	}
	qsort(p, n, sizeof(*p), pick_cmp);
	chosen = json_array();
	for (i = 0; chosen && i < (size_t)k; i++)
		json_array_append_new(chosen, json_string(p[i].host));
	*out = chosen ? hosts_text(r, chosen) : NULL;
	if (!chosen)
		api_fail(r, 500, "out of memory");
	json_decref(chosen);
	free(p);
	return *out ? 0 : -1;
}

static int int_field(struct api_route *r, const char *key, int64_t max, int64_t *out)
{
	json_t *v = json_object_get(r->doc, key);

	*out = 0;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > max) {
		api_fail(r, 400, "%s must be an integer 1..%lld", key, (long long)max);
		return -1;
	}
	*out = json_integer_value(v);
	return 0;
}

int api_drill_hosts(struct api_route *r, const char *g, const char *a,
		    const char *point, const char *kind, char **out)
{
	json_t *v = json_object_get(r->doc, "hosts"), *known = NULL;
	struct store *st = r->ad->store;
	int64_t pct, count;
	int ret;

	*out = NULL;
	if (int_field(r, "hosts_pct", 100, &pct) ||
	    int_field(r, "hosts_count", HOSTS_MAX, &count))
		return -1;
	if ((v != NULL) + (pct != 0) + (count != 0) > 1) {
		api_fail(r, 400, "give one of hosts, hosts_pct, hosts_count");
		return -1;
	}
	if (json_is_string(v) && !strcmp(json_string_value(v), "all"))
		v = NULL;
	if (!v && !pct && !count)
		return 0;	/* every host: NULL, as drills before */
	if (v && !json_is_array(v)) {
		api_fail(r, 400, "hosts must be \"all\" or an array of 1..%d host names",
			 HOSTS_MAX);
		return -1;
	}
	if (api_store_rc(r, st->ops->host_list(st, g, a, &known, r->err)))
		return -1;
	ret = v ? hosts_named(r, v, known, out) :
		  hosts_picked(r, g, a, point, kind, known, pct, count, out);
	json_decref(known);
	return ret;
}
