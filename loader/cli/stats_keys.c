// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * cli/stats_keys.c - `stats --keys POINT` (a keyed point's heaviest keys,
 * once) and `top --keys POINT` (their rates, refreshed), over the
 * loader's "keys" reply (docs/KEYS.md).  Keys arrive as text the loader
 * made printable (an integer, printable ASCII or hex); they are printed
 * through a filter all the same, so no byte of a reply can drive the
 * terminal.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "cli/cmd.h"
#include "cli/query.h"
#include "names.h"

/* @s with anything but printable ASCII as '?', cut at @w columns. */
static void put_key(const char *s, int w)
{
	int n = 0;

	for (; *s && n < w; s++, n++)
		putchar((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f ? *s : '?');
	for (; n < w; n++)
		putchar(' ');
}

/* BLOCKED: "yes" when the point's key limits block the key now; "-": no limits. */
static const char *blocked_str(json_t *r, json_t *k)
{
	if (!json_is_true(json_object_get(r, "key_limits")))
		return "-";
	return json_is_true(json_object_get(k, "blocked")) ? "yes" : "no";
}

/* The table's line: capacity, live keys, evictions, (unreadable) calls. */
static void print_head(json_t *r)
{
	printf("point %s (key %s): %lld of %lld keys, %lld inserted, %lld evicted, %lld unreadable, %lld blocked\n",
	       query_jstr(r, "point"), query_jstr(r, "key"), query_jint(r, "live"),
	       query_jint(r, "capacity"), query_jint(r, "inserted"),
	       query_jint(r, "evicted"), query_jint(r, "unreadable"),
	       query_jint(r, "blocked"));
}

int stats_keys_once(const struct query_env *q, const char *point, long top)
{
	char req[128], a[16], b[16];
	json_t *r, *k;
	size_t i;

	if (!sds_point_name_valid(point))
		return cmd_err("stats: bad point name '%s'", point), 1;
	snprintf(req, sizeof(req), "keys %s %ld", point, top);
	if (q->json)
		return query_ask_print(q, req);
	r = query_ask(q, req);
	if (!r)
		return 1;
	print_head(r);
	printf("%-32s %12s %10s %10s %10s %9s %8s %8s %7s\n", "KEY", "CALLS", "ERRORS",
	       "DOWNGR", "WIN-CALLS", "CALLS/s", "MEAN", "P99", "BLOCKED");
	json_array_foreach(json_object_get(r, "top"), i, k) {
		put_key(query_jstr(k, "key"), 32);
		printf(" %12lld %10lld %10lld %10lld %9.1f %8s %8s %7s\n",
		       query_jint(k, "calls"), query_jint(k, "exceptions"),
		       query_jint(k, "downgrades"), query_jint(k, "window_calls"),
		       json_number_value(json_object_get(k, "rate")),
		       query_fmt_ns(query_jint(k, "mean_ns"), a, sizeof(a)),
		       query_fmt_ns(query_jint(k, "p99_ns"), b, sizeof(b)),
		       blocked_str(r, k));
	}
	json_decref(r);
	return 0;
}

/* @key's calls and exceptions in @prev's top, -1 if it was not there. */
static long long prev_of(json_t *prev, json_t *k, const char *field)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(prev, "top"), i, e)
		if (!strcmp(query_jstr(e, "key"), query_jstr(k, "key")) &&
		    !strcmp(query_jstr(e, "kind"), query_jstr(k, "kind")))
			return query_jint(e, field);
	return -1;
}

int stats_keys_top(const struct query_env *q, const char *point, long top)
{
	bool tty = isatty(STDOUT_FILENO);
	char req[128], b[16];
	json_t *prev, *r, *k;
	long n;
	size_t i;

	if (!sds_point_name_valid(point))
		return cmd_err("top: bad point name '%s'", point), 1;
	snprintf(req, sizeof(req), "keys %s %ld", point, top);
	prev = query_ask(q, req);
	if (!prev)
		return 1;
	for (n = 0; !q->count || n < q->count; n++) {
		r = query_top_next(q, req, n, tty);
		if (!r) {
			json_decref(prev);
			return 1;
		}
		print_head(r);
		printf("%-32s %9s %8s %9s %8s %7s\n", "KEY", "CALLS/s", "ERR/s", "WIN-CALLS", "P99",
		       "BLOCKED");
		json_array_foreach(json_object_get(r, "top"), i, k) {
			long long pc = prev_of(prev, k, "calls");
			long long pe = prev_of(prev, k, "exceptions");
			/* A key new in the table: its window's rate. */
			double cr = pc >= 0 ? (double)(query_jint(k, "calls") - pc) / q->interval :
				    json_number_value(json_object_get(k, "rate"));
			double er = pe >= 0 ? (double)(query_jint(k, "exceptions") - pe) / q->interval :
				    (double)query_jint(k, "window_exceptions") / 10;

			put_key(query_jstr(k, "key"), 32);
			printf(" %9.1f %8.1f %9lld %8s %7s\n", cr, er,
			       query_jint(k, "window_calls"),
			       query_fmt_ns(query_jint(k, "p99_ns"), b, sizeof(b)),
			       blocked_str(r, k));
		}
		fflush(stdout);
		json_decref(prev);
		prev = r;
	}
	json_decref(prev);
	return 0;
}
