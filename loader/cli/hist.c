// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * cli/hist.c - `hist`: a point's log2 latency histogram, since attach
 * or per interval.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "cli/cmd.h"
#include "serve/ctl.h"
#include "names.h"
#include "cli/query.h"
#include "window.h"

/* The funclatency layout: "     nsecs  : count  distribution". */
static void print_log2_hist(const long long *v, int n)
{
	long long max = 0;
	int i, last = -1, first = -1, w;

	for (i = 0; i < n; i++) {
		if (v[i] > max)
			max = v[i];
		if (v[i]) {
			last = i;
			if (first < 0)
				first = i;
		}
	}
	printf("%20s : count     distribution\n", "nsecs");
	if (last < 0)
		return;
	for (i = first; i <= last; i++) {
		unsigned long long lo = i ? 1ULL << i : 0;
		unsigned long long hi = (i == 63) ? ~0ULL : (2ULL << i) - 1;
		char range[48];
		int stars = max ? (int)(v[i] * 40 / max) : 0;

		snprintf(range, sizeof(range), "%llu -> %llu", lo, hi);
		printf("%20s : %-9lld |", range, v[i]);
		for (w = 0; w < 40; w++)
			putchar(w < stars ? '*' : ' ');
		puts("|");
	}
}

static const char hist_usage[] =
"Usage: sds-bpf hist [--group G] [--app NAME] POINT [--split] [--interval S] [--count N] [--json]\n"
"\n"
"Log2 latency histogram of POINT's completed calls in nanoseconds: since\n"
"attach, or with --interval the calls of each interval, N times.  With\n"
"--split, three: each call's time on a CPU, waiting on the run queue and\n"
"blocked (docs/SPLIT.md).\n";

/* The three parts of `hist --split`, in the reply's "split" object. */
static const char *const split_parts[3] = { "on_cpu", "runqueue", "blocked" };
static const char *const split_titles[3] = { "on-CPU", "run queue", "blocked" };

/*
 * `hist --split`: the reply's three histograms, since attach or (with
 * @last, the previous round's) the calls between; 1 when the loader has
 * no split for the point (printed: why).
 */
static int hist_split_round(const struct query_env *q, const char *point,
			    json_t *r, long long last[3][SDS_HIST_BUCKETS],
			    bool print, int round)
{
	long long cur[3][SDS_HIST_BUCKETS] = {};
	json_t *s = json_object_get(r, "split"), *v;
	long long calls;
	size_t i;
	int k;

	if (!s)
		return cmd_err("hist: point '%s' has no split: %s", point,
			       query_jstr(r, "split_why")), 1;
	for (k = 0; k < 3; k++)
		json_array_foreach(json_object_get(s, split_parts[k]), i, v) {
			if (i >= SDS_HIST_BUCKETS)
				break;
			cur[k][i] = json_integer_value(v) - last[k][i];
			last[k][i] = json_integer_value(v);
		}
	if (!print)
		return 0;
	calls = 0;
	for (i = 0; i < SDS_HIST_BUCKETS; i++)
		calls += cur[0][i];
	if (q->json) {
		json_t *o = json_object();

		json_object_set_new(o, "point", json_string(point));
		json_object_set_new(o, "unit", json_string("ns"));
		json_object_set_new(o, "calls", json_integer(calls));
		for (k = 0; k < 3; k++) {
			json_t *b = json_array();

			for (i = 0; i < SDS_HIST_BUCKETS; i++)
				json_array_append_new(b, json_integer(cur[k][i]));
			json_object_set_new(o, split_parts[k], b);
		}
		json_dumpf(o, stdout, JSON_COMPACT);
		putchar('\n');
		json_decref(o);
		return 0;
	}
	if (round)
		putchar('\n');
	printf("point %s: %lld calls, where their time went\n", point, calls);
	for (k = 0; k < 3; k++) {
		printf("%s%s\n", k ? "\n" : "", split_titles[k]);
		print_log2_hist(cur[k], SDS_HIST_BUCKETS);
	}
	return 0;
}

/* `hist --split`, once or every --interval. */
static int hist_split(const struct query_env *q, const char *point,
		      const char *req, long rounds)
{
	static long long last[3][SDS_HIST_BUCKETS];
	json_t *r;
	long n;
	int rc;

	for (n = 0; n < rounds; n++) {
		if (q->interval && n == 0) {
			r = query_ask(q, req);
			if (!r)
				return 1;
			rc = hist_split_round(q, point, r, last, false, 0);
			json_decref(r);
			if (rc)
				return rc;
		}
		if (q->interval)
			query_sleep_ms(q->interval * 1000L);
		r = query_ask(q, req);
		if (!r)
			return 1;
		rc = hist_split_round(q, point, r, last, true, (int)n);
		json_decref(r);
		if (rc)
			return rc;
		fflush(stdout);
	}
	return 0;
}

int do_hist(int argc, char **argv)
{
	struct query_env q = {};
	long long cur[SDS_HIST_BUCKETS], last[SDS_HIST_BUCKETS] = {};
	char req[CTL_REQ_MAX];
	const char *point;
	long n, rounds;
	json_t *r, *v;
	bool split = false;
	size_t i;
	int k, j;

	/* --split is hist's own: taken out before the shared options. */
	for (k = j = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--split"))
			split = true;
		else
			argv[j++] = argv[k];
	}
	argc = j;
	if (query_parse_options(argc, argv, &q, hist_usage))
		return 1;
	if (optind >= argc)
		return cmd_err("hist: missing POINT (see sds-bpf hist --help)"), 1;
	point = argv[optind++];
	if (optind < argc)
		return cmd_err("hist: unexpected argument '%s'", argv[optind]), 1;
	if (!sds_point_name_valid(point))
		return cmd_err("hist: bad point name '%s'", point), 1;
	snprintf(req, sizeof(req), "hist %s", point);
	rounds = q.interval ? (q.count ? q.count : LONG_MAX) : 1;
	if (split)
		return hist_split(&q, point, req, rounds);

	for (n = 0; n < rounds; n++) {
		if (q.interval) {
			/* First a baseline, then the calls of each interval. */
			if (n == 0) {
				r = query_ask(&q, req);
				if (!r)
					return 1;
				json_array_foreach(json_object_get(r, "buckets"), i, v)
					if (i < SDS_HIST_BUCKETS)
						last[i] = json_integer_value(v);
				json_decref(r);
			}
			query_sleep_ms(q.interval * 1000L);
		}
		r = query_ask(&q, req);
		if (!r)
			return 1;
		if (q.json && !q.interval) {
			json_dumpf(r, stdout, JSON_COMPACT);
			putchar('\n');
			json_decref(r);
			return 0;
		}
		memset(cur, 0, sizeof(cur));
		json_array_foreach(json_object_get(r, "buckets"), i, v) {
			if (i >= SDS_HIST_BUCKETS)
				break;
			cur[i] = json_integer_value(v) - last[i];
			last[i] = json_integer_value(v);
		}
		json_decref(r);
		if (q.json) {
			json_t *o = json_object(), *b = json_array();

			for (i = 0; i < SDS_HIST_BUCKETS; i++)
				json_array_append_new(b, json_integer(cur[i]));
			json_object_set_new(o, "point", json_string(point));
			json_object_set_new(o, "unit", json_string("ns"));
			json_object_set_new(o, "buckets", b);
			json_dumpf(o, stdout, JSON_COMPACT);
			putchar('\n');
			json_decref(o);
		} else {
			if (n)
				putchar('\n');
			printf("point %s\n", point);
			print_log2_hist(cur, SDS_HIST_BUCKETS);
		}
		fflush(stdout);
	}
	return 0;
}
