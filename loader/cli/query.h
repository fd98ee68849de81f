/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * query.h - what the query commands (list, stats, top, hist, events:
 * query*.c) share: their options, one request to the loader an app names,
 * and the reply's fields.
 */
#ifndef SDS_QUERY_H
#define SDS_QUERY_H

#include <stdbool.h>
#include <jansson.h>

/* Options shared by the query commands. */
struct query_env {
	const char *cmd;	/* the command's name, for messages */
	const char *group;	/* --group */
	const char *app;	/* --app */
	bool json;		/* --json */
	long interval;		/* --interval S (top, hist) */
	long count;		/* --count N (top, hist, events); 0: forever */
};

/* The options into @q; --help prints @usage and exits 0.  1 on an error
 * (printed). */
int query_parse_options(int argc, char **argv, struct query_env *q,
			const char *usage);
/* Ask the one live loader that @q names; the reply is parsed JSON, NULL on
 * an error (printed). */
json_t *query_ask(const struct query_env *q, const char *req);
/* @req's reply printed as the loader wrote it; 1 on an error. */
int query_ask_print(const struct query_env *q, const char *req);
/* The integer at the dotted @path ("total.visits") of @o, 0 if none. */
long long query_jint(json_t *o, const char *path);
/* The string @key of @o, "" if none. */
const char *query_jstr(json_t *o, const char *key);
/* A build-id, "-" if none. */
const char *query_short_build(const char *id);
/* Sleep @ms milliseconds, signals or not. */
void query_sleep_ms(long ms);
/* "1.2ms"-style latency in at most 7 characters, into @buf: @buf. */
const char *query_fmt_ns(long long ns, char *buf, size_t len);
/*
 * `top`'s next table: after @q's interval, @req's reply (NULL on an error,
 * printed), the screen cleared first on a terminal (@tty) and table @n
 * after the first set apart by a blank line otherwise, then the time the
 * reply was asked at ("12:00:01  ") printed for the table's first line.
 */
json_t *query_top_next(const struct query_env *q, const char *req, long n,
		       bool tty);

/*
 * stats_keys.c: `stats --keys POINT [--top N]` and `top --keys POINT`:
 * a keyed point's @top heaviest keys (docs/KEYS.md); the exit code.
 */
int stats_keys_once(const struct query_env *q, const char *point, long top);
int stats_keys_top(const struct query_env *q, const char *point, long top);

#endif
