// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/keys.c - a keyed point's hot keys (docs/KEYS.md):
 * GET {A}/points/{P}/keys?period=S&top=N.  Each host's heartbeat carries
 * the point's heaviest keys over the 10-s window as its period closed
 * (at most 10); the store keeps them per (host, period)
 * (store/query/keys.c).  Here the rows of the last S seconds are merged
 * over hosts and periods: one entry per key (its kind and text), its
 * counts summed, and rates over the periods heard (each 10 s).  A key
 * only some periods or hosts counted among their heaviest is summed
 * over those: the counts are a lower bound, exact for a key every host
 * kept in every period.  A key's "p99_ns" is the highest p99 of the
 * host periods that sent one (each a host's period's own, from its
 * kernel's per-key histogram): no distribution has more than 1 % of its
 * calls above the highest p99 of its parts, so it bounds the merged p99
 * from above; null when no period sent one (no call completed).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"

#define KEYS_PERIOD_MAX	3600	/* s: what one read merges at most */
#define KEYS_TOP_MAX	256
#define KEYS_ROWS_MAX	50000	/* (host, period) rows one read merges */

struct hot {
	const char *key, *kind;	/* the row's strings: alive with the scan */
	uint64_t calls, exceptions, downgrades;
	uint64_t p99_ns;	/* the highest of its host periods' p99; 0: none */
	const char *host;	/* the row's host, to count hosts */
	size_t hosts;		/* merged: the hosts that sent the key */
};

static int hot_by_key(const void *a, const void *b)
{
	const struct hot *x = a, *y = b;
	int c = strcmp(x->kind, y->kind);

	if (!c)
		c = strcmp(x->key, y->key);
	return c ? c : strcmp(x->host, y->host);
}

static int hot_by_calls(const void *a, const void *b)
{
	const struct hot *x = a, *y = b;

	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	if (x->exceptions != y->exceptions)
		return x->exceptions < y->exceptions ? 1 : -1;
	return hot_by_key(a, b);
}

static uint64_t count(json_t *o, const char *f)
{
	json_t *v = json_object_get(o, f);

	return json_is_integer(v) && json_integer_value(v) > 0 ?
	       (uint64_t)json_integer_value(v) : 0;
}

/* @n per second over @secs, to 3 decimals. */
static json_t *rate(uint64_t n, int64_t secs)
{
	return json_real(secs ? round((double)n * 1000.0 / (double)secs) / 1000.0 : 0.0);
}

/*
 * The merge of @rows (the store's, by period then host) into the reply's
 * "keys", at most @top; *@periods: distinct periods heard, *@hosts their
 * hosts.  NULL: out of memory.
 */
static json_t *merge(json_t *rows, int64_t top, int64_t *periods, json_t *hosts)
{
	struct hot *h = NULL, *m;
	size_t n = 0, cap = 0, i, j, nm = 0;
	int64_t last = -1;
	json_t *row, *k, *out = NULL;

	*periods = 0;
	json_array_foreach(rows, i, row) {
		int64_t p = json_integer_value(json_object_get(row, "period_start"));
		const char *host = json_string_value(json_object_get(row, "host"));
		json_t *keys = json_object_get(row, "keys"), *x;
		size_t kk;

		if (!host)
			continue;
		if (p != last) {
			(*periods)++;
			last = p;
		}
		json_array_foreach(hosts, kk, x)
			if (!strcmp(json_string_value(x), host))
				break;
		if (kk == json_array_size(hosts))
			json_array_append_new(hosts, json_string(host));
		json_array_foreach(keys, j, k) {
			const char *key = json_string_value(json_object_get(k, "key"));
			const char *kind = json_string_value(json_object_get(k, "kind"));

			if (!key || !kind)
				continue;
			if (n == cap) {
				struct hot *t = realloc(h, (cap ? cap * 2 : 64) * sizeof(*h));

				if (!t)
					goto out;
				h = t;
				cap = cap ? cap * 2 : 64;
			}
			h[n++] = (struct hot){ key, kind, count(k, "calls"),
				count(k, "exceptions"), count(k, "downgrades"),
				count(k, "p99_ns"), host, 1 };
		}
	}
	if (n)		/* qsort's array may not be NULL, even empty */
		qsort(h, n, sizeof(*h), hot_by_key);
	/* Runs of one key merged in place (by host within a run: each host counted once). */
	m = h;
	for (i = 0; i < n; i = j) {
		struct hot e = h[i];

		for (j = i + 1; j < n && !strcmp(h[j].kind, e.kind) &&
		     !strcmp(h[j].key, e.key); j++) {
			e.calls += h[j].calls;
			e.exceptions += h[j].exceptions;
			e.downgrades += h[j].downgrades;
			if (h[j].p99_ns > e.p99_ns)
				e.p99_ns = h[j].p99_ns;
			e.hosts += strcmp(h[j].host, h[j - 1].host) != 0;
		}
		m[nm++] = e;
	}
	if (nm)
		qsort(m, nm, sizeof(*m), hot_by_calls);
	out = json_array();
	for (i = 0; out && i < nm && (int64_t)i < top; i++) {
		int64_t secs = *periods * 10;

		json_array_append_new(out, json_pack("{s:s, s:s, s:I, s:I, s:I, s:o, s:o, s:o, s:I, s:o}",
			"key", m[i].key, "kind", m[i].kind,
			"calls", (json_int_t)m[i].calls,
			"exceptions", (json_int_t)m[i].exceptions,
			"downgrades", (json_int_t)m[i].downgrades,
			"calls_per_s", rate(m[i].calls, secs),
			"exceptions_per_s", rate(m[i].exceptions, secs),
			"downgrades_per_s", rate(m[i].downgrades, secs),
			"hosts", (json_int_t)m[i].hosts,
			"p99_ns", m[i].p99_ns ? json_integer((json_int_t)m[i].p99_ns) : json_null()));
	}
out:
	free(h);
	return out;
}

void api_route_point_keys(struct api_route *r, const char *g, const char *a,
			  const char *point)
{
	struct store *st = r->ad->store;
	int64_t period, top, to, from, periods;
	json_t *rows = NULL, *keys, *hosts;

	if (!api_is(r, "GET"))
		return api_not_allowed(r, "GET");
	if (api_query_int(r, "period", 60, &period) || api_query_int(r, "top", 20, &top))
		return;
	if (period < 10 || period > KEYS_PERIOD_MAX || period % 10)
		return api_fail(r, 400, "period must be a multiple of 10, 10..%d (seconds)",
				KEYS_PERIOD_MAX);
	if (top < 1 || top > KEYS_TOP_MAX)
		return api_fail(r, 400, "top must be an integer 1..%d", KEYS_TOP_MAX);
	if (!st->ops->point_keys)
		return api_fail(r, 501, "this store does not keep hot keys (no point_keys)");
	/* The periods started in the last @period seconds, the current one included. */
	to = (store_now_s() / 10 + 1) * 10;
	from = to - period;
	if (api_store_rc(r, st->ops->point_keys(st, g, a, point, from, to, &rows, r->err)))
		return;
	if (json_array_size(rows) > KEYS_ROWS_MAX) {
		json_decref(rows);
		return api_fail(r, 409, "more than %d host periods of hot keys: take a shorter period",
				KEYS_ROWS_MAX);
	}
	hosts = json_array();
	keys = hosts ? merge(rows, top, &periods, hosts) : NULL;
	if (!keys) {
		json_decref(hosts);
		json_decref(rows);
		return api_fail(r, 500, "out of memory");
	}
	api_reply(r, 200, json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o}",
		"group", g, "app", a, "point", point, "from", (json_int_t)from,
		"to", (json_int_t)to, "period", (json_int_t)period,
		"periods", (json_int_t)periods, "hosts", hosts, "keys", keys));
	json_decref(rows);
}
