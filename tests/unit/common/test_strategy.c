// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of common/strategy.c: the strategies JSON codec of
 * docs/DESIGN.md §4 — parsing, defaults, round trip and lookup (the documents
 * it refuses: test_strategy_invalid.c; loading a file:
 * test_strategy_file.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strategy_fixture.h"

/* ---- parsing ------------------------------------------------------------ */

static void test_design_example(void **state)
{
	struct bufs *b = *state;
	char err[256] = "";

	poison(b);
	assert_int_equal(parse(design_example, b->out, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(b->out->version, 3);
	assert_int_equal(b->out->n, 1);
	assert_fields(&b->out->s[0], "order",
		      1000, SDS_OFF, SDS_OFF, SDS_OFF, 200, 10,
		      SDS_OFF, 40, 20, 100, SDS_OFF, SDS_OFF);
	assert_int_equal(SDS_OFF, -1);
	/* The rest of the array is zeroed, not left as it was. */
	assert_string_equal(b->out->s[1].point, "");
	assert_int_equal(b->out->s[1].visit_threshold, 0);
}

static void test_strategy_init(void **state)
{
	struct sds_strategy st;

	memset(&st, 0x5a, sizeof(st));
	strategy_init(&st, "order");
	assert_fields(&st, "order", SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF,
		      SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, 100, SDS_OFF, SDS_OFF);
}

static void test_defaults(void **state)
{
	struct bufs *b = *state;
	char err[256] = "";

	/* An empty point: everything off, downgrade_rate 100. */
	assert_int_equal(parse("{\"version\": 0, \"points\": {\"p\": {}}}",
			       b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->version, 0);
	assert_int_equal(b->out->n, 1);
	assert_fields(&b->out->s[0], "p", SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF,
		      SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, 100, SDS_OFF,
		      SDS_OFF);

	/* No "points" at all: no strategies. */
	assert_int_equal(parse("{\"version\": 7}", b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->version, 7);
	assert_int_equal(b->out->n, 0);

	/* token_bucket defaults to token_rate; an explicit one is kept. */
	assert_int_equal(parse("{\"version\": 1, \"points\": {"
			       "\"a\": {\"token_rate\": 50},"
			       "\"b\": {\"token_rate\": 50, \"token_bucket\": 7},"
			       "\"c\": {\"token_rate\": 50, \"token_bucket\": -1}}}",
			       b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->n, 3);
	assert_fields(&b->out->s[0], "a", SDS_OFF, 50, 50, SDS_OFF, SDS_OFF,
		      SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, 100, SDS_OFF, SDS_OFF);
	assert_fields(&b->out->s[1], "b", SDS_OFF, 50, 7, SDS_OFF, SDS_OFF,
		      SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, 100, SDS_OFF, SDS_OFF);
	assert_fields(&b->out->s[2], "c", SDS_OFF, 50, 50, SDS_OFF, SDS_OFF,
		      SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, 100, SDS_OFF, SDS_OFF);

	/* null is "not set": downgrade_rate keeps its default. */
	assert_int_equal(parse("{\"version\": 1, \"points\": {\"p\": "
			       "{\"visit_threshold\": null, \"downgrade_rate\": null}}}",
			       b->out, err, sizeof(err)), 0);
	assert_fields(&b->out->s[0], "p", SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF,
		      SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, 100, SDS_OFF,
		      SDS_OFF);
	assert_string_equal(err, "");
}

static void test_all_fields_and_bounds(void **state)
{
	struct bufs *b = *state;
	char err[256] = "";

	/* Every field at its smallest enabled value... */
	assert_int_equal(parse("{\"version\": 0, \"points\": {\"lo\": {"
			       "\"visit_threshold\": 0, \"token_rate\": 1,"
			       "\"token_bucket\": 1, \"concurrent_threshold\": 0,"
			       "\"timeout_ms\": 1, \"timeout_count_threshold\": 1,"
			       "\"exception_threshold\": 1,"
			       "\"exception_rate_threshold\": 0,"
			       "\"exception_rate_start\": 0, \"downgrade_rate\": 0,"
			       "\"delay_ms\": 0, \"retry_interval_ms\": 1}}}",
			       b->out, err, sizeof(err)), 0);
	assert_fields(&b->out->s[0], "lo", 0, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0, 1);

	/* ...and at its largest. */
	assert_int_equal(parse("{\"version\": 9223372036854775807, \"points\": {\"hi\": {"
			       "\"visit_threshold\": " LIMIT_MAX_S ","
			       "\"token_rate\": 1000000000,"
			       "\"token_bucket\": 1000000000,"
			       "\"concurrent_threshold\": " LIMIT_MAX_S ","
			       "\"timeout_ms\": 3600000,"
			       "\"timeout_count_threshold\": " LIMIT_MAX_S ","
			       "\"exception_threshold\": " LIMIT_MAX_S ","
			       "\"exception_rate_threshold\": 100,"
			       "\"exception_rate_start\": " LIMIT_MAX_S ","
			       "\"downgrade_rate\": 100,"
			       "\"delay_ms\": 86400000, \"retry_interval_ms\": 86400000}}}",
			       b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->version, INT64_MAX);
	assert_fields(&b->out->s[0], "hi", 1LL << 40, 1000000000, 1000000000,
		      1LL << 40, 3600000, 1LL << 40, 1LL << 40, 100, 1LL << 40,
		      100, 86400000, 86400000);
}

static void test_negative_disables(void **state)
{
	struct bufs *b = *state;
	struct sds_strategy off;
	char err[256] = "";

	assert_int_equal(parse("{\"version\": 2, \"points\": {\"neg\": {"
			       "\"visit_threshold\": -1, \"token_rate\": -5,"
			       "\"token_bucket\": -1, \"concurrent_threshold\": -100,"
			       "\"timeout_ms\": -200, \"timeout_count_threshold\": -1,"
			       "\"exception_threshold\": -3,"
			       "\"exception_rate_threshold\": -40,"
			       "\"exception_rate_start\": -20,"
			       "\"delay_ms\": -9223372036854775807,"
			       "\"retry_interval_ms\": -1}}}",
			       b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->n, 1);
	assert_fields(&b->out->s[0], "neg", SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF,
		      SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, 100, SDS_OFF,
		      SDS_OFF);
	/* Byte for byte what strategy_init() gives. */
	strategy_init(&off, "neg");
	assert_memory_equal(&b->out->s[0], &off, sizeof(off));

	/* A negative token_bucket with a rate: the default bucket. */
	assert_int_equal(parse("{\"version\": 2, \"points\": {\"t\": "
			       "{\"token_rate\": 9, \"token_bucket\": -2}}}",
			       b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->s[0].token_rate, 9);
	assert_int_equal(b->out->s[0].token_bucket, 9);
}

/* "copy": "read" | "write" (traffic copy): the records' write flag. */
static void test_copy_field(void **state)
{
	struct bufs *b = *state;
	char err[256];
	json_t *o;

	assert_int_equal(parse("{\"version\": 1, \"points\": {\"w\": {\"copy\": \"write\"},"
			       " \"r\": {\"copy\": \"read\"}, \"n\": {}}}",
			       b->out, err, sizeof(err)), 0);
	assert_int_equal(strategy_set_find(b->out, "w")->copy_write, 1);
	assert_int_equal(strategy_set_find(b->out, "r")->copy_write, 0);
	assert_int_equal(strategy_set_find(b->out, "n")->copy_write, 0);
	o = strategy_to_json(strategy_set_find(b->out, "w"));
	assert_string_equal(json_string_value(json_object_get(o, "copy")), "write");
	json_decref(o);
	o = strategy_to_json(strategy_set_find(b->out, "r"));
	assert_null(json_object_get(o, "copy"));
	json_decref(o);
	expect_invalid(b, DOC("{\"copy\": \"both\"}"),
		       "point 'order': copy must be \"read\" or \"write\"");
	expect_invalid(b, DOC("{\"copy\": 1}"),
		       "point 'order': copy must be \"read\" or \"write\"");
	expect_invalid(b, DOC("{\"copy\": null}"),
		       "point 'order': copy must be \"read\" or \"write\"");
}

/* Adaptive concurrency (docs/ADAPTIVE.md): the fields, their bounds, round trip. */
static void test_adaptive_fields(void **state)
{
	struct bufs *b = *state;
	const struct sds_strategy *st;
	char err[256], *text;
	json_t *o;

	assert_int_equal(parse("{\"version\": 1, \"points\": {"
			       " \"v\": {\"adaptive_limit\": \"vegas\", \"adaptive_min\": 2,"
			       "  \"adaptive_max\": 2147483648, \"adaptive_initial\": 16,"
			       "  \"adaptive_signal\": \"blocked\"},"
			       " \"g\": {\"adaptive_limit\": \"gradient2\", \"adaptive_min\": 1,"
			       "  \"adaptive_max\": 1},"
			       " \"o\": {\"adaptive_limit\": \"off\", \"concurrent_threshold\": 3}}}",
			       b->out, err, sizeof(err)), 0);
	st = strategy_set_find(b->out, "v");
	assert_int_equal(st->adaptive_limit, SDS_ADAPTIVE_VEGAS);
	assert_int_equal(st->adaptive_min, 2);
	assert_int_equal(st->adaptive_max, (int64_t)1 << 31);
	assert_int_equal(st->adaptive_initial, 16);
	assert_int_equal(st->adaptive_signal, SDS_ADAPTIVE_BY_BLOCKED);
	assert_true(strategy_is_adaptive(st));
	o = strategy_to_json(st);
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, "{\"adaptive_initial\":16,\"adaptive_limit\":\"vegas\","
			    "\"adaptive_max\":2147483648,\"adaptive_min\":2,"
			    "\"adaptive_signal\":\"blocked\",\"downgrade_rate\":100}");
	free(text);
	json_decref(o);
	st = strategy_set_find(b->out, "g");
	assert_int_equal(st->adaptive_limit, SDS_ADAPTIVE_GRADIENT2);
	assert_int_equal(st->adaptive_signal, SDS_ADAPTIVE_BY_LATENCY);
	/* "off" is no adaptive limit: a fixed one may stand beside it. */
	st = strategy_set_find(b->out, "o");
	assert_false(strategy_is_adaptive(st));
	assert_int_equal(st->concurrent_threshold, 3);
	o = strategy_to_json(st);
	assert_null(json_object_get(o, "adaptive_limit"));
	json_decref(o);

	expect_invalid(b, DOC("{\"adaptive_limit\": \"bbr\", \"adaptive_min\": 1, \"adaptive_max\": 8}"),
		       "point 'order': adaptive_limit must be \"gradient2\", \"vegas\", \"aimd\" or \"off\"");
	expect_invalid(b, DOC("{\"adaptive_limit\": 3}"),
		       "point 'order': adaptive_limit must be \"gradient2\", \"vegas\", \"aimd\" or \"off\"");
	expect_invalid(b, DOC("{\"adaptive_limit\": \"aimd\"}"),
		       "point 'order': adaptive_limit needs adaptive_min and adaptive_max (the floor and the ceiling)");
	expect_invalid(b, DOC("{\"adaptive_limit\": \"aimd\", \"adaptive_min\": 1}"),
		       "point 'order': adaptive_limit needs adaptive_min and adaptive_max (the floor and the ceiling)");
	expect_invalid(b, DOC("{\"adaptive_limit\": \"aimd\", \"adaptive_min\": 9, \"adaptive_max\": 8}"),
		       "point 'order': adaptive_min 9 is above adaptive_max 8");
	expect_invalid(b, DOC("{\"adaptive_limit\": \"aimd\", \"adaptive_min\": 1, \"adaptive_max\": 2147483649}"),
		       "point 'order': adaptive_max must be an integer 1..2147483648");
	expect_invalid(b, DOC("{\"adaptive_limit\": \"aimd\", \"adaptive_min\": 0, \"adaptive_max\": 8}"),
		       "point 'order': adaptive_min must be an integer 1..2147483648");
	expect_invalid(b, DOC("{\"adaptive_limit\": \"aimd\", \"adaptive_min\": -1, \"adaptive_max\": 8}"),
		       "point 'order': adaptive_min must be an integer 1..2147483648");
	expect_invalid(b, DOC("{\"adaptive_limit\": \"aimd\", \"adaptive_min\": 2, \"adaptive_max\": 8, \"adaptive_initial\": 9}"),
		       "point 'order': adaptive_initial must lie in adaptive_min..adaptive_max");
	expect_invalid(b, DOC("{\"adaptive_limit\": \"aimd\", \"adaptive_min\": 1, \"adaptive_max\": 8, \"concurrent_threshold\": 4}"),
		       "point 'order': adaptive_limit and concurrent_threshold: choose one (adaptive_max is the ceiling)");
	expect_invalid(b, DOC("{\"adaptive_min\": 1, \"adaptive_max\": 8}"),
		       "point 'order': adaptive_min, adaptive_max, adaptive_initial and adaptive_signal need adaptive_limit");
	expect_invalid(b, DOC("{\"adaptive_limit\": \"aimd\", \"adaptive_min\": 1, \"adaptive_max\": 8, \"adaptive_signal\": \"cpu\"}"),
		       "point 'order': adaptive_signal must be \"latency\" or \"blocked\"");
}

/* ---- round trip ----------------------------------------------------------- */

static const char full_doc[] =
	"{\"version\": 42, \"points\": {"
	" \"zeta\": {\"visit_threshold\": 0, \"downgrade_rate\": 0},"
	" \"order\": {\"visit_threshold\": 1000, \"exception_rate_threshold\": 40,"
	"   \"exception_rate_start\": 20, \"timeout_ms\": 200,"
	"   \"timeout_count_threshold\": 10, \"downgrade_rate\": 100},"
	" \"pay-1\": {\"token_rate\": 100, \"token_bucket\": 20,"
	"   \"concurrent_threshold\": 8, \"exception_threshold\": 3,"
	"   \"delay_ms\": 5000, \"retry_interval_ms\": 500, \"downgrade_rate\": 50},"
	" \"Auth_2\": {\"token_rate\": 7},"
	" \"empty\": {}}}";

static void test_round_trip(void **state)
{
	struct bufs *b = *state;
	char err[256] = "";
	json_t *doc, *doc2;
	char *text;

	assert_int_equal(parse(full_doc, b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->n, 5);
	/* Sorted by strcmp: upper case first. */
	assert_fields(&b->out->s[0], "Auth_2", SDS_OFF, 7, 7, SDS_OFF, SDS_OFF,
		      SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, 100, SDS_OFF, SDS_OFF);
	assert_fields(&b->out->s[1], "empty", SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF,
		      SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, 100, SDS_OFF,
		      SDS_OFF);
	assert_fields(&b->out->s[2], "order", 1000, SDS_OFF, SDS_OFF, SDS_OFF, 200,
		      10, SDS_OFF, 40, 20, 100, SDS_OFF, SDS_OFF);
	assert_fields(&b->out->s[3], "pay-1", SDS_OFF, 100, 20, 8, SDS_OFF,
		      SDS_OFF, 3, SDS_OFF, SDS_OFF, 50, 5000, 500);
	assert_fields(&b->out->s[4], "zeta", 0, SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF,
		      SDS_OFF, SDS_OFF, SDS_OFF, SDS_OFF, 0, SDS_OFF, SDS_OFF);

	doc = strategy_set_to_json(b->out);
	assert_non_null(doc);
	text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text,
		"{\"points\":{"
		"\"Auth_2\":{\"downgrade_rate\":100,\"token_bucket\":7,\"token_rate\":7},"
		"\"empty\":{\"downgrade_rate\":100},"
		"\"order\":{\"downgrade_rate\":100,\"exception_rate_start\":20,"
		"\"exception_rate_threshold\":40,\"timeout_count_threshold\":10,"
		"\"timeout_ms\":200,\"visit_threshold\":1000},"
		"\"pay-1\":{\"concurrent_threshold\":8,\"delay_ms\":5000,"
		"\"downgrade_rate\":50,\"exception_threshold\":3,"
		"\"retry_interval_ms\":500,\"token_bucket\":20,\"token_rate\":100},"
		"\"zeta\":{\"downgrade_rate\":0,\"visit_threshold\":0}},"
		"\"version\":42}");
	free(text);

	/* Back again: the very same structure, byte for byte. */
	memset(b->ref, 0x3c, sizeof(*b->ref));
	assert_int_equal(strategy_set_from_json(doc, b->ref, err, sizeof(err)), 0);
	assert_memory_equal(b->out, b->ref, sizeof(*b->out));

	/* And its JSON is the same document. */
	doc2 = strategy_set_to_json(b->ref);
	assert_true(json_equal(doc, doc2));
	json_decref(doc2);
	json_decref(doc);
	assert_string_equal(err, "");
}

static void test_round_trip_empty(void **state)
{
	struct bufs *b = *state;
	char err[256] = "";
	json_t *doc;
	char *text;

	assert_int_equal(parse("{\"version\": 0, \"points\": {}}", b->out, err,
			       sizeof(err)), 0);
	assert_int_equal(b->out->n, 0);
	doc = strategy_set_to_json(b->out);
	text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, "{\"points\":{},\"version\":0}");
	free(text);
	memset(b->ref, 0x3c, sizeof(*b->ref));
	assert_int_equal(strategy_set_from_json(doc, b->ref, err, sizeof(err)), 0);
	assert_memory_equal(b->out, b->ref, sizeof(*b->out));
	json_decref(doc);
}

static void test_strategy_to_json_one(void **state)
{
	struct sds_strategy st;
	json_t *o;
	char *text;

	strategy_init(&st, "x");
	o = strategy_to_json(&st);
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, "{\"downgrade_rate\":100}");
	free(text);
	json_decref(o);

	st.visit_threshold = 0;
	st.exception_rate_threshold = 0;
	st.downgrade_rate = SDS_OFF;	/* off is left out, whichever field */
	o = strategy_to_json(&st);
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, "{\"exception_rate_threshold\":0,\"visit_threshold\":0}");
	free(text);
	json_decref(o);
}

/* ---- half-open and slow rate (issue 14) ---------------------------------- */

static void test_halfopen_slow_fields(void **state)
{
	struct bufs *b = *state;
	char err[256] = "", *text;
	json_t *o;

	/* Absent: off, and the defaults they stand for. */
	assert_int_equal(parse(DOC("{}"), b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->s[0].probe_calls, SDS_OFF);
	assert_int_equal(b->out->s[0].probe_failure_pct, SDS_OFF);
	assert_int_equal(b->out->s[0].slow_rate_threshold, SDS_OFF);
	assert_int_equal(b->out->s[0].slow_rate_start, SDS_OFF);
	assert_int_equal(strategy_probe_calls(&b->out->s[0]), 1);
	assert_int_equal(strategy_probe_calls(NULL), 1);

	/* The bounds, both ends. */
	assert_int_equal(parse(DOC("{\"probe_calls\": 1, \"probe_failure_pct\": 0,"
				   " \"slow_rate_threshold\": 0, \"slow_rate_start\": 0}"),
			       b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->s[0].probe_calls, 1);
	assert_int_equal(b->out->s[0].probe_failure_pct, 0);
	assert_int_equal(b->out->s[0].slow_rate_threshold, 0);
	assert_int_equal(b->out->s[0].slow_rate_start, 0);
	assert_int_equal(parse(DOC("{\"probe_calls\": 1000, \"probe_failure_pct\": 100,"
				   " \"timeout_ms\": 20, \"slow_rate_threshold\": 100,"
				   " \"slow_rate_start\": " LIMIT_MAX_S "}"),
			       b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->s[0].probe_calls, 1000);
	assert_int_equal(strategy_probe_calls(&b->out->s[0]), 1000);
	assert_int_equal(b->out->s[0].probe_failure_pct, 100);
	assert_int_equal(b->out->s[0].slow_rate_threshold, 100);
	assert_int_equal(b->out->s[0].slow_rate_start, 1099511627776LL);
	assert_string_equal(err, "");

	/* JSON both ways: what was set comes back, nothing else. */
	assert_int_equal(parse(DOC("{\"probe_calls\": 5, \"probe_failure_pct\": 20,"
				   " \"timeout_ms\": 20, \"slow_rate_threshold\": 40,"
				   " \"slow_rate_start\": 30}"),
			       b->out, err, sizeof(err)), 0);
	o = strategy_to_json(&b->out->s[0]);
	text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, "{\"downgrade_rate\":100,\"probe_calls\":5,"
			    "\"probe_failure_pct\":20,\"slow_rate_start\":30,"
			    "\"slow_rate_threshold\":40,\"timeout_ms\":20}");
	free(text);
	json_decref(o);

	/* Bad input: one line each, naming point and field. */
	expect_invalid(b, DOC("{\"probe_calls\": 0}"),
		       "point 'order': probe_calls must be an integer 1..1000");
	expect_invalid(b, DOC("{\"probe_calls\": 1001}"),
		       "point 'order': probe_calls must be an integer 1..1000");
	expect_invalid(b, DOC("{\"probe_calls\": -1}"),
		       "point 'order': probe_calls must be an integer 1..1000");
	expect_invalid(b, DOC("{\"probe_failure_pct\": 101}"),
		       "point 'order': probe_failure_pct must be an integer 0..100");
	expect_invalid(b, DOC("{\"probe_failure_pct\": -20}"),
		       "point 'order': probe_failure_pct must be an integer 0..100");
	expect_invalid(b, DOC("{\"slow_rate_threshold\": 40}"),
		       "point 'order': slow_rate_threshold needs timeout_ms");
	expect_invalid(b, DOC("{\"slow_rate_threshold\": 40, \"timeout_ms\": -1}"),
		       "point 'order': slow_rate_threshold needs timeout_ms");
	expect_invalid(b, DOC("{\"slow_rate_threshold\": 101, \"timeout_ms\": 20}"),
		       "point 'order': slow_rate_threshold must be an integer 0..100");
	expect_invalid(b, DOC("{\"slow_rate_threshold\": -1, \"timeout_ms\": 20}"),
		       "point 'order': slow_rate_threshold must be an integer 0..100");
	expect_invalid(b, DOC("{\"slow_rate_start\": -5}"),
		       "point 'order': slow_rate_start must be an integer 0.." LIMIT_MAX_S);
	expect_invalid(b, DOC("{\"probe_calls\": 2.5}"),
		       "point 'order': probe_calls must be an integer 1..1000");
	/* 0 is off: no timeout_ms needed. */
	assert_int_equal(parse(DOC("{\"slow_rate_threshold\": 0}"), b->out, err,
			       sizeof(err)), 0);
}

/* ---- lookup --------------------------------------------------------------- */

static void test_find(void **state)
{
	struct bufs *b = *state;
	char err[256] = "", name64[65], name65[66], doc[512];
	const char *order[] = { "Alpha_1", "alpha", "beta-2", "mid", "zeta" };
	size_t i;

	assert_int_equal(parse("{\"version\": 1, \"points\": {\"zeta\": {},"
			       " \"alpha\": {}, \"mid\": {}, \"beta-2\": {},"
			       " \"Alpha_1\": {}}}", b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->n, 5);
	for (i = 0; i < 5; i++) {
		assert_string_equal(b->out->s[i].point, order[i]);
		assert_ptr_equal(strategy_set_find(b->out, order[i]), &b->out->s[i]);
	}
	assert_null(strategy_set_find(b->out, "gamma"));
	assert_null(strategy_set_find(b->out, "alph"));
	assert_null(strategy_set_find(b->out, "alphaa"));
	assert_null(strategy_set_find(b->out, "ALPHA"));
	assert_null(strategy_set_find(b->out, ""));
	assert_null(strategy_set_find(b->out, "zzz"));
	assert_null(strategy_set_find(b->out, "A"));
	assert_null(strategy_set_find(b->out, NULL));

	/* A longer name never matches the point named by its first 64 chars. */
	memset(name64, 'q', 64);
	name64[64] = '\0';
	memset(name65, 'q', 65);
	name65[65] = '\0';
	snprintf(doc, sizeof(doc), "{\"version\": 1, \"points\": {\"%s\": {}}}", name64);
	assert_int_equal(parse(doc, b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->n, 1);
	assert_ptr_equal(strategy_set_find(b->out, name64), &b->out->s[0]);
	assert_null(strategy_set_find(b->out, name65));

	/* No strategies. */
	assert_int_equal(parse("{\"version\": 1}", b->out, err, sizeof(err)), 0);
	assert_null(strategy_set_find(b->out, "order"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_design_example, setup, teardown),
		cmocka_unit_test(test_strategy_init),
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_all_fields_and_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_negative_disables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_halfopen_slow_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_empty, setup, teardown),
		cmocka_unit_test(test_strategy_to_json_one),
		cmocka_unit_test_setup_teardown(test_copy_field, setup, teardown),
		cmocka_unit_test_setup_teardown(test_adaptive_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
