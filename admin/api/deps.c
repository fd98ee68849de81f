// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/deps.c - each point's dependencies over the app's hosts
 * (docs/DEPS.md): GET {A}/deps and GET {A}/points/{P}/deps.  Each host's
 * heartbeat carries its points' peers counted since its loader attached;
 * the store keeps each host's latest (store/query/deps.c).  Here they
 * are summed over the hosts: one edge per (point, address, port,
 * protocol), with the hosts that reached it.  The class of an edge
 * (strong or weak, a game day's verdict) is "unknown" until something
 * classifies it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"

/* What one read merges at most: hosts × a heartbeat's bound (SDS_HB_MAX_DEPS). */
#define DEPS_HOSTS_MAX	4096

struct edge {
	const char *point, *addr, *proto;	/* the rows' strings: alive with them */
	int64_t port;
	uint64_t connects, connect_errors, sends, send_errors, resets, bytes;
	size_t hosts;
};

static int by_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	int c = strcmp(x->point, y->point);

	if (!c)
		c = strcmp(x->addr, y->addr);
	if (!c && x->port != y->port)
		c = x->port < y->port ? -1 : 1;
	return c ? c : strcmp(x->proto, y->proto);
}

/* By point, then heaviest first (sends + connects), then by peer. */
static int by_weight(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	uint64_t wx = x->sends + x->connects, wy = y->sends + y->connects;
	int c = strcmp(x->point, y->point);

	if (c)
		return c;
	if (wx != wy)
		return wx > wy ? -1 : 1;
	return by_edge(a, b);
}

static uint64_t count(json_t *o, const char *f)
{
	json_int_t v = json_integer_value(json_object_get(o, f));

	return v > 0 ? (uint64_t)v : 0;
}

static json_t *edge_json(const struct edge *e)
{
	return json_pack("{s:s, s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s}",
		"addr", e->addr, "port", (json_int_t)e->port, "proto", e->proto,
		"hosts", (json_int_t)e->hosts,
		"connects", (json_int_t)e->connects,
		"connect_errors", (json_int_t)e->connect_errors,
		"sends", (json_int_t)e->sends, "send_errors", (json_int_t)e->send_errors,
		"resets", (json_int_t)e->resets,
		"errors", (json_int_t)(e->connect_errors + e->send_errors + e->resets),
		"bytes", (json_int_t)e->bytes, "class", "unknown");
}

/*
 * @rows' edges (of point @point only, if not NULL) summed over hosts:
 * [{"point", "deps": [...]}] by point; each row's host into @hosts.
 */
static json_t *merge(json_t *rows, const char *point, json_t *hosts)
{
	struct edge *e = NULL, *m;
	size_t n = 0, cap = 0, i, j, nm = 0;
	json_t *row, *out = NULL, *po = NULL, *arr = NULL;

	json_array_foreach(rows, i, row) {
		json_t *d = json_object_get(row, "deps"), *list, *x;
		const char *name;
		size_t k;

		json_array_append_new(hosts, json_pack("{s:O, s:O, s:O}",
			"host", json_object_get(row, "host"),
			"period_start", json_object_get(row, "period_start"),
			"updated", json_object_get(row, "updated")));
		json_object_foreach(d, name, list) {
			if (point && strcmp(point, name))
				continue;
			json_array_foreach(list, k, x) {
				const char *addr = json_string_value(json_object_get(x, "addr"));
				const char *proto = json_string_value(json_object_get(x, "proto"));

				if (!addr || !proto)
					continue;
				if (n == cap) {
					struct edge *t = realloc(e, (cap ? cap * 2 : 64) * sizeof(*e));

					if (!t)
						goto out;
					e = t;
					cap = cap ? cap * 2 : 64;
				}
				e[n++] = (struct edge){ name, addr, proto,
					json_integer_value(json_object_get(x, "port")),
					count(x, "connects"), count(x, "connect_errors"),
					count(x, "sends"), count(x, "send_errors"),
					count(x, "resets"), count(x, "bytes"), 1 };
			}
		}
	}
	if (n)
		qsort(e, n, sizeof(*e), by_edge);
	/* A host sends an edge once (the codec refuses twice): a run is one edge's hosts. */
	m = e;
	for (i = 0; i < n; i = j) {
		struct edge s = e[i];

		for (j = i + 1; j < n && !by_edge(&e[j], &s); j++) {
			s.connects += e[j].connects;
			s.connect_errors += e[j].connect_errors;
			s.sends += e[j].sends;
			s.send_errors += e[j].send_errors;
			s.resets += e[j].resets;
			s.bytes += e[j].bytes;
			s.hosts++;
		}
		m[nm++] = s;
	}
	if (nm)
		qsort(m, nm, sizeof(*m), by_weight);
	out = json_array();
	for (i = 0; out && i < nm; i++) {
		if (!i || strcmp(m[i].point, m[i - 1].point)) {
			arr = json_array();
			po = json_pack("{s:s, s:o}", "point", m[i].point, "deps", arr);
			json_array_append_new(out, po);
		}
		json_array_append_new(arr, edge_json(&m[i]));
	}
out:
	free(e);
	return out;
}

void api_route_deps(struct api_route *r, const char *g, const char *a,
		    const char *point)
{
	struct store *st = r->ad->store;
	json_t *rows = NULL, *hosts, *pts, *o;

	if (!api_is(r, "GET"))
		return api_not_allowed(r, "GET");
	if (!st->ops->app_deps)
		return api_fail(r, 501, "this store does not keep dependencies (no app_deps)");
	if (api_store_rc(r, st->ops->app_deps(st, g, a, &rows, r->err)))
		return;
	if (json_array_size(rows) > DEPS_HOSTS_MAX) {
		json_decref(rows);
		return api_fail(r, 409, "more than %d hosts with dependencies", DEPS_HOSTS_MAX);
	}
	hosts = json_array();
	pts = hosts ? merge(rows, point, hosts) : NULL;
	if (!pts) {
		json_decref(hosts);
		json_decref(rows);
		return api_fail(r, 500, "out of memory");
	}
	o = json_pack("{s:s, s:s, s:o, s:o}", "group", g, "app", a, "hosts", hosts,
		      "points", pts);
	if (o && point)
		json_object_set_new(o, "point", json_string(point));
	api_reply(r, 200, o);
	json_decref(rows);
}
