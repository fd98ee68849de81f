// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/report/metrics_text.c: the Prometheus text of the tick's
 * copy (docs/METRICS.md) — exact le text, cumulative buckets on the log2
 * bounds, +Inf == _count, _sum in exact decimal seconds, no histogram for
 * an entry-only point, every family's HELP and TYPE once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/metrics.h"

static struct metrics_data d;

/* Render @d; the text, NUL-terminated (free it). */
static char *render(void)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;

	assert_int_equal(metrics__render(&d, &buf, &len, &cap), 0);
	assert_true(len < cap);
	buf[len] = '\0';
	return buf;
}

/* Occurrences of @needle in @hay. */
static int count(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/*
 * Exactly one whole line "@fmt..." in @t: anchored at a line start, so a
 * series never passes by matching the tail of another one.
 */
static void assert_line(const char *t, const char *fmt, ...)
{
	char want[512];
	va_list ap;
	int n;

	want[0] = '\n';
	va_start(ap, fmt);
	n = vsnprintf(want + 1, sizeof(want) - 2, fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(want) - 2);
	strcat(want, "\n");
	if (count(t, want) != 1)
		fail_msg("want once: %s", want + 1);
}

#define PAY	"group=\"g\",app=\"a\",point=\"pay\",kind=\"function\""
#define GO	"group=\"g\",app=\"a\",point=\"go_handler\",kind=\"guard\""

static void setup_two_points(void)
{
	memset(&d, 0, sizeof(d));
	strcpy(d.group, "g");
	strcpy(d.app, "a");
	d.npoints = 2;
	strcpy(d.pts[0].name, "pay");
	d.pts[0].latency = true;
	d.pts[0].total = (struct sds_counts){ .visits = 1234, .exceptions = 17,
		.timeouts = 3, .downgrades = 4, .latency_sum = 1500000123ULL };
	d.pts[0].hist[0] = 1;		/* [1, 2) ns */
	d.pts[0].hist[7] = 2;		/* [128, 256) ns: under le=256 ns */
	d.pts[0].hist[8] = 1000;	/* [256, 512) ns */
	d.pts[0].hist[22] = 200;	/* [4.19, 8.39) ms */
	d.pts[0].hist[36] = 20;		/* [68.7, 137) s: only +Inf */
	d.pts[0].hist[63] = 3;
	d.pts[0].concurrency = -2;	/* an int64_t gauge: printed signed */
	strcpy(d.pts[1].name, "go_handler");
	d.pts[1].guard = true;
	d.pts[1].latency = false;	/* as if entry-only: no histogram */
	d.pts[1].downgraded = true;
	d.pts[1].concurrency = 7;
}

static void test_counters_and_gauges(void **state)
{
	char *t;

	setup_two_points();
	t = render();
	assert_line(t, "sds_point_visits_total{" PAY "} 1234");
	assert_line(t, "sds_point_exceptions_total{" PAY "} 17");
	assert_line(t, "sds_point_timeouts_total{" PAY "} 3");
	assert_line(t, "sds_point_downgrades_total{" PAY "} 4");
	assert_line(t, "sds_point_concurrency{" GO "} 7");
	assert_line(t, "sds_point_concurrency{" PAY "} -2");
	assert_line(t, "sds_point_downgraded{" GO "} 1");
	assert_line(t, "sds_point_downgraded{" PAY "} 0");
	/* Seven families, each announced once. */
	assert_int_equal(count(t, "# TYPE "), 7);
	assert_int_equal(count(t, "# HELP "), 7);
	assert_int_equal(count(t, "# TYPE sds_point_visits_total counter\n"), 1);
	assert_int_equal(count(t, "# TYPE sds_point_concurrency gauge\n"), 1);
	assert_int_equal(count(t, "# TYPE sds_point_latency_seconds histogram\n"), 1);
	free(t);
}

static void test_histogram(void **state)
{
	/* Cumulative counts at some bounds: le=2^8 ns holds buckets 0..7 (1 + 2). */
	static const struct { const char *le; int n; } want[] = {
		{ "0.000000256", 3 }, { "0.000000512", 1003 },
		{ "0.004194304", 1003 }, { "0.008388608", 1203 },
		/* Bucket 36 is over 2^36 ns: in +Inf only. */
		{ "68.719476736", 1203 }, { "+Inf", 1226 },
	};
	char *t;
	size_t i;

	setup_two_points();
	t = render();
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_line(t, "sds_point_latency_seconds_bucket{" PAY ",le=\"%s\"} %d",
			    want[i].le, want[i].n);
	assert_line(t, "sds_point_latency_seconds_count{" PAY "} 1226");
	assert_line(t, "sds_point_latency_seconds_sum{" PAY "} 1.500000123");
	/* 29 bounds (2^8 .. 2^36) and +Inf for the timed point; none for the other. */
	assert_int_equal(count(t, "sds_point_latency_seconds_bucket{"), 30);
	assert_int_equal(count(t, "sds_point_latency_seconds_count{"), 1);
	assert_int_equal(count(t, "sds_point_latency_seconds_sum{"), 1);
	free(t);
}

static void test_many_points_grow_the_buffer(void **state)
{
	char *t;
	int i;

	memset(&d, 0, sizeof(d));
	strcpy(d.group, "g");
	strcpy(d.app, "a");
	d.npoints = SDS_MAX_POINTS;
	for (i = 0; i < SDS_MAX_POINTS; i++) {
		snprintf(d.pts[i].name, sizeof(d.pts[i].name), "p%04d_%s", i,
			 "0123456789012345678901234567890123456789012345678");
		d.pts[i].latency = true;
		d.pts[i].total.visits = i;
	}
	t = render();
	assert_int_equal(count(t, "sds_point_visits_total{"), SDS_MAX_POINTS);
	assert_int_equal(count(t, "le=\"+Inf\""), SDS_MAX_POINTS);
	assert_non_null(strstr(t, "point=\"p1023_0123456789012345678901234567890123456789012345678\",kind=\"function\"} 1023\n"));
	free(t);
}

/*
 * Names at their longest (64 bytes each): a histogram's last line holds
 * three label sets, longer than the room kept free before a line, so
 * whether it fits depended on where the buffer happened to be.  Every
 * point count from 1 to 256 renders, with every point's +Inf bucket.
 */
static void test_longest_names_every_count(void **state)
{
	char name[SDS_NAME_MAX + 1], tail[200];
	char *t;
	int n, i;

	memset(&d, 0, sizeof(d));
	memset(d.group, 'g', SDS_NAME_MAX);
	memset(d.app, 'a', SDS_NAME_MAX);
	for (n = 1; n <= 256; n++) {
		d.npoints = n;
		for (i = 0; i < n; i++) {
			memset(name, 'p', SDS_NAME_MAX);
			name[SDS_NAME_MAX] = '\0';
			snprintf(name, sizeof(name), "%04d", i);
			name[4] = 'p';
			memcpy(d.pts[i].name, name, sizeof(name));
			d.pts[i].latency = true;
			d.pts[i].total.visits = i;
		}
		t = render();
		assert_int_equal(count(t, "le=\"+Inf\""), n);
		snprintf(tail, sizeof(tail), "%04dp", n - 1);
		assert_non_null(strstr(t, tail));
		free(t);
	}
}

static void test_no_points(void **state)
{
	char *t;

	memset(&d, 0, sizeof(d));
	t = render();
	/* Families without series are still announced: promtool accepts it. */
	assert_int_equal(count(t, "# TYPE "), 7);
	assert_null(strstr(t, "{"));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counters_and_gauges),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_many_points_grow_the_buffer),
		cmocka_unit_test(test_no_points),
		cmocka_unit_test(test_longest_names_every_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
