// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * diff_bench - how fast `sds-copy replay --diff` compares (issue 37):
 * diff_compare() (copy/diff/diff.c) over N request-response pairs shaped like
 * tests/targets/httpsvc.c's -- an HTTP/1.1 head and a JSON body of ~110
 * bytes, one pair in ten differing in one field -- under six rule sets:
 * none, a JSON path ($.price), a /REGEX/, every pair differing in an
 * ignored "ts" (so every pair is parsed: the worst case), that and a
 * regex, and a non-JSON body (bytes).  Most pairs of a real replay are the
 * same bytes, which diff_compare() sees without parsing.
 * Prints pairs/s (the median of ROUNDS) per rule set and whether it meets
 * the target; exits 0 (a benchmark, not a test).
 *
 *	diff_bench [PAIRS [ROUNDS]]	(default 200000, 5)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diff.h"

#define TARGET_PAIRS_S	50000.0

struct msg {
	char *p;
	size_t len;
};

static void gen(struct msg *m, long id, long price, long ts, bool json)
{
	char body[256];
	int bl;

	if (json)
		bl = snprintf(body, sizeof(body),
			      "{\"id\":%ld,\"name\":\"item-%ld\",\"price\":%ld,\"tags\":[\"a\",\"b\"],\"stock\":{\"n\":%ld,\"where\":\"depot-3\"},\"ts\":%ld}",
			      id, id, price, id % 97, ts);
	else
		bl = snprintf(body, sizeof(body), "id=%ld name=item-%ld price=%ld stock=%ld\n",
			      id, id, price, id % 97);
	m->p = malloc(512);
	m->len = snprintf(m->p, 512, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			  "Content-Length: %d\r\nX-Build: 1\r\n\r\n%s", bl, body);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	/* @ts: every pair's "ts" differs (ignored): no pair is the same bytes. */
	static const struct { const char *name, *rule, *rule2; bool json, ts; } sets[] = {
		{ "JSON, no rule", NULL, NULL, true, false },
		{ "JSON, --ignore $.price", "$.price", NULL, true, false },
		{ "JSON, --ignore /\"price\":[0-9]+/", "/\"price\":[0-9]+/", NULL, true, false },
		{ "JSON, every pair parsed ($.ts)", "$.ts", NULL, true, true },
		{ "JSON, every pair parsed, + /item-/", "$.ts", "/item-/", true, true },
		{ "bytes (not JSON), no rule", NULL, NULL, false, false },
	};
	long n = argc > 1 ? atol(argv[1]) : 200000, i;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, r, s, ok = 1;
	struct msg *rec, *got;
	struct diff_result res;
	char err[512];
	double *rate;

	if (n < 1 || rounds < 1)
		return fprintf(stderr, "usage: diff_bench [PAIRS [ROUNDS]]\n"), 2;
	rec = calloc(n, sizeof(*rec));
	got = calloc(n, sizeof(*got));
	rate = calloc(rounds, sizeof(*rate));
	if (!rec || !got || !rate)
		return 1;
	printf("sds-copy replay --diff: diff_compare() of %ld pairs (HTTP + JSON body, 1 in 10 differs), median of %d rounds\n",
	       n, rounds);
	printf("%-38s %12s %12s  %s\n", "rules", "pairs/s", "different", "target >= 50000");
	for (s = 0; s < (int)(sizeof(sets) / sizeof(sets[0])); s++) {
		struct diff_rules rules;
		long diff = 0;

		memset(&rules, 0, sizeof(rules));
		if ((sets[s].rule && diff_rules_add(&rules, sets[s].rule, err, sizeof(err))) ||
		    (sets[s].rule2 && diff_rules_add(&rules, sets[s].rule2, err, sizeof(err))))
			return fprintf(stderr, "diff_bench: %s\n", err), 1;
		for (i = 0; i < n; i++) {
			gen(&rec[i], i, 3 * i, 1000, sets[s].json);
			gen(&got[i], i, 3 * i + (i % 10 == 0), 1000 + sets[s].ts, sets[s].json);
		}
		for (r = 0; r < rounds; r++) {
			double t0 = now_s();

			for (diff = 0, i = 0; i < n; i++)
				diff += diff_compare(&rules, (const uint8_t *)rec[i].p, rec[i].len,
						     (const uint8_t *)got[i].p, got[i].len, &res);
			rate[r] = n / (now_s() - t0);
		}
		qsort(rate, rounds, sizeof(*rate), dcmp);
		printf("%-38s %12.0f %12ld  %s\n", sets[s].name, rate[rounds / 2], diff,
		       rate[rounds / 2] >= TARGET_PAIRS_S ? "yes" : "NO");
		ok &= rate[rounds / 2] >= TARGET_PAIRS_S;
		for (i = 0; i < n; i++) {
			free(rec[i].p);
			free(got[i].p);
		}
		diff_rules_free(&rules);
	}
	free(rec);
	free(got);
	free(rate);
	/* A benchmark, not a test: the table says whether the target is met. */
	(void)ok;
	return 0;
}
