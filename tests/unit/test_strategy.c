// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of common/strategy.c: the strategies JSON codec of
 * DESIGN.md §4 — parsing, defaults, validation messages, round trip,
 * and lookup (loading a file: test_strategy_file.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

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
	assert_int_equal(strategies_find(b->out, "w")->copy_write, 1);
	assert_int_equal(strategies_find(b->out, "r")->copy_write, 0);
	assert_int_equal(strategies_find(b->out, "n")->copy_write, 0);
	o = strategy_to_json(strategies_find(b->out, "w"));
	assert_string_equal(json_string_value(json_object_get(o, "copy")), "write");
	json_decref(o);
	o = strategy_to_json(strategies_find(b->out, "r"));
	assert_null(json_object_get(o, "copy"));
	json_decref(o);
	expect_invalid(b, DOC("{\"copy\": \"both\"}"),
		       "point 'order': copy must be \"read\" or \"write\"");
	expect_invalid(b, DOC("{\"copy\": 1}"),
		       "point 'order': copy must be \"read\" or \"write\"");
	expect_invalid(b, DOC("{\"copy\": null}"),
		       "point 'order': copy must be \"read\" or \"write\"");
}

/* ---- invalid documents -------------------------------------------------- */

static void test_invalid_fields(void **state)
{
	struct bufs *b = *state;

	expect_invalid(b, DOC("{\"visits_threshold\": 5}"),
		       "point 'order': unknown field 'visits_threshold'");
	expect_invalid(b, DOC("{\"visit_threshold\": 10, \"Visit_threshold\": 5}"),
		       "point 'order': unknown field 'Visit_threshold'");
	/* Wrong types. */
	expect_invalid(b, DOC("{\"visit_threshold\": \"5\"}"),
		       "point 'order': visit_threshold must be an integer 0.." LIMIT_MAX_S);
	expect_invalid(b, DOC("{\"timeout_ms\": 1.5}"),
		       "point 'order': timeout_ms must be an integer 1..3600000");
	expect_invalid(b, DOC("{\"timeout_ms\": 200.0}"),
		       "point 'order': timeout_ms must be an integer 1..3600000");
	expect_invalid(b, DOC("{\"exception_threshold\": true}"),
		       "point 'order': exception_threshold must be an integer 1.." LIMIT_MAX_S);
	expect_invalid(b, DOC("{\"delay_ms\": false}"),
		       "point 'order': delay_ms must be an integer 0..86400000");
	expect_invalid(b, DOC("{\"concurrent_threshold\": [4]}"),
		       "point 'order': concurrent_threshold must be an integer 0.." LIMIT_MAX_S);
	expect_invalid(b, DOC("{\"token_rate\": {}}"),
		       "point 'order': token_rate must be an integer 1..1000000000");
	/* Out of range. */
	expect_invalid(b, DOC("{\"exception_rate_threshold\": 101}"),
		       "point 'order': exception_rate_threshold must be an integer 0..100");
	expect_invalid(b, DOC("{\"downgrade_rate\": -1}"),
		       "point 'order': downgrade_rate must be an integer 0..100");
	expect_invalid(b, DOC("{\"downgrade_rate\": 101}"),
		       "point 'order': downgrade_rate must be an integer 0..100");
	expect_invalid(b, DOC("{\"timeout_count_threshold\": 0}"),
		       "point 'order': timeout_count_threshold must be an integer 1.." LIMIT_MAX_S);
	expect_invalid(b, DOC("{\"exception_threshold\": 0}"),
		       "point 'order': exception_threshold must be an integer 1.." LIMIT_MAX_S);
	expect_invalid(b, DOC("{\"timeout_ms\": 0}"),
		       "point 'order': timeout_ms must be an integer 1..3600000");
	expect_invalid(b, DOC("{\"timeout_ms\": 3600001}"),
		       "point 'order': timeout_ms must be an integer 1..3600000");
	expect_invalid(b, DOC("{\"token_rate\": 0}"),
		       "point 'order': token_rate must be an integer 1..1000000000");
	expect_invalid(b, DOC("{\"retry_interval_ms\": 0}"),
		       "point 'order': retry_interval_ms must be an integer 1..86400000");
	expect_invalid(b, DOC("{\"delay_ms\": 86400001}"),
		       "point 'order': delay_ms must be an integer 0..86400000");
	expect_invalid(b, DOC("{\"visit_threshold\": 1099511627777}"),
		       "point 'order': visit_threshold must be an integer 0.." LIMIT_MAX_S);
	/* token_bucket without token_rate (missing or disabled). */
	expect_invalid(b, DOC("{\"token_bucket\": 5}"),
		       "point 'order': token_bucket needs token_rate");
	expect_invalid(b, DOC("{\"token_bucket\": 5, \"token_rate\": -1}"),
		       "point 'order': token_bucket needs token_rate");
	expect_invalid(b, DOC("{\"token_bucket\": 5, \"token_rate\": null}"),
		       "point 'order': token_bucket needs token_rate");
}

static void test_invalid_points(void **state)
{
	struct bufs *b = *state;
	char name65[66], doc[256], msg[256];

	expect_invalid(b, "{\"version\": 1, \"points\": {\"or der\": {}}}",
		       "point 'or der': bad name (1-64 of [A-Za-z0-9_-])");
	expect_invalid(b, "{\"version\": 1, \"points\": {\"\": {}}}",
		       "point '': bad name (1-64 of [A-Za-z0-9_-])");
	expect_invalid(b, "{\"version\": 1, \"points\": {\"a.b\": {}}}",
		       "point 'a.b': bad name (1-64 of [A-Za-z0-9_-])");
	/* A provider "<dep>@<provider>" is a point; two '@' are not. */
	{
		char err[256] = "";

		assert_int_equal(parse("{\"version\": 1, \"points\": {\"pay@p0\": "
				       "{\"visit_threshold\": 5}}}", b->out, err,
				       sizeof(err)), 0);
		assert_string_equal(b->out->s[0].point, "pay@p0");
		assert_int_equal(b->out->s[0].visit_threshold, 5);
	}
	expect_invalid(b, "{\"version\": 1, \"points\": {\"a@b@c\": {}}}",
		       "point 'a@b@c': bad name (1-64 of [A-Za-z0-9_-])");
	expect_invalid(b, "{\"version\": 1, \"points\": {\"pay@\": {}}}",
		       "point 'pay@': bad name (1-64 of [A-Za-z0-9_-])");
	/* 65 characters: too long; the message shows the first 64. */
	memset(name65, 'n', 65);
	name65[65] = '\0';
	snprintf(doc, sizeof(doc), "{\"version\": 1, \"points\": {\"%s\": {}}}", name65);
	snprintf(msg, sizeof(msg), "point '%.64s': bad name (1-64 of [A-Za-z0-9_-])",
		 name65);
	expect_invalid(b, doc, msg);

	expect_invalid(b, DOC("5"), "point 'order': expected an object of limits");
	expect_invalid(b, DOC("[]"), "point 'order': expected an object of limits");
	expect_invalid(b, DOC("null"), "point 'order': expected an object of limits");
	expect_invalid(b, DOC("\"visit_threshold\""),
		       "point 'order': expected an object of limits");

	/* An error in a later point: nothing of the earlier one is written. */
	expect_invalid(b, "{\"version\": 1, \"points\": {\"good\": {\"visit_threshold\": 3},"
		       " \"bad\": {\"downgrade_rate\": 200}}}",
		       "point 'bad': downgrade_rate must be an integer 0..100");
}

static void test_invalid_document(void **state)
{
	struct bufs *b = *state;

	/* version: missing, negative, not an integer. */
	expect_invalid(b, "{\"points\": {}}", "version must be a non-negative integer");
	expect_invalid(b, "{}", "version must be a non-negative integer");
	expect_invalid(b, "{\"version\": -1, \"points\": {}}",
		       "version must be a non-negative integer");
	expect_invalid(b, "{\"version\": 3.0, \"points\": {}}",
		       "version must be a non-negative integer");
	expect_invalid(b, "{\"version\": \"3\", \"points\": {}}",
		       "version must be a non-negative integer");
	expect_invalid(b, "{\"version\": true}", "version must be a non-negative integer");
	expect_invalid(b, "{\"version\": null}", "version must be a non-negative integer");
	/* Unknown top-level field. */
	expect_invalid(b, "{\"version\": 1, \"pointz\": {}}",
		       "unknown field 'pointz' (version, points)");
	expect_invalid(b, "{\"version\": 1, \"points\": {}, \"comment\": \"x\"}",
		       "unknown field 'comment' (version, points)");
	/* points of the wrong type. */
	expect_invalid(b, "{\"version\": 1, \"points\": []}",
		       "points must be an object of point name -> limits");
	expect_invalid(b, "{\"version\": 1, \"points\": null}",
		       "points must be an object of point name -> limits");
	/* Not an object at all. */
	expect_invalid(b, "[]", "expected a JSON object with \"version\" and \"points\"");
	expect_invalid(b, "[{\"version\": 1}]",
		       "expected a JSON object with \"version\" and \"points\"");
}

static void test_invalid_json(void **state)
{
	struct bufs *b = *state;

	/* Duplicate keys: at the top, among points, within a point. */
	expect_invalid(b, "{\"version\":1,\"version\":2}",
		       "bad JSON at line 1 column 22: duplicate object key near '\"version\"'");
	expect_invalid(b, "{\"version\": 1, \"points\": {\"a\": {}, \"a\": {}}}",
		       "bad JSON at line 1 column 38: duplicate object key near '\"a\"'");
	expect_invalid(b, "{\"version\": 1,\n"
		       " \"points\": {\"a\": {\"delay_ms\": 1,\n"
		       "                  \"delay_ms\": 2}}}",
		       "bad JSON at line 3 column 28: duplicate object key near '\"delay_ms\"'");
	/* Malformed, with line and column. */
	expect_invalid(b, "{\"version\": 3,\n \"points\": {\"a\": {\"x\": }}}",
		       "bad JSON at line 2 column 24: unexpected token near '}'");
	expect_invalid(b, "{\"version\": 3,", "bad JSON at line 1 column 14: "
		       "string or '}' expected near end of file");
	expect_invalid(b, "", "bad JSON at line 1 column 0: "
		       "'[' or '{' expected near end of file");
	expect_invalid(b, "{\"version\": 3} x",
		       "bad JSON at line 1 column 16: end of file expected near 'x'");
}

static void test_too_many_points(void **state)
{
	struct bufs *b = *state;
	json_t *doc = json_object(), *pts = json_object();
	char err[256], name[16];
	int i;

	json_object_set_new(doc, "version", json_integer(5));
	json_object_set_new(doc, "points", pts);
	/* Inserted in reverse: the output must come out sorted. */
	for (i = SDS_MAX_STRATEGIES - 1; i >= 0; i--) {
		snprintf(name, sizeof(name), "p%04d", i);
		json_object_set_new(pts, name, json_pack("{s:I}", "visit_threshold",
							 (json_int_t)i));
	}
	poison(b);
	assert_int_equal(strategies_from_json(doc, b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->version, 5);
	assert_int_equal(b->out->n, SDS_MAX_STRATEGIES);
	for (i = 0; i < SDS_MAX_STRATEGIES; i++) {
		snprintf(name, sizeof(name), "p%04d", i);
		assert_string_equal(b->out->s[i].point, name);
		assert_int_equal(b->out->s[i].visit_threshold, i);
	}

	/* One more is refused. */
	json_object_set_new(pts, "p9999", json_object());
	poison(b);
	strcpy(err, "untouched");
	assert_int_equal(strategies_from_json(doc, b->out, err, sizeof(err)), -1);
	assert_string_equal(err, "too many points: 1025 (at most 1024)");
	assert_memory_equal(b->out, b->ref, sizeof(*b->out));
	json_decref(doc);
}

static void test_from_json_not_object(void **state)
{
	struct bufs *b = *state;
	json_t *arr = json_array();
	char err[256] = "untouched";

	poison(b);
	assert_int_equal(strategies_from_json(arr, b->out, err, sizeof(err)), -1);
	assert_string_equal(err, "expected a JSON object with \"version\" and \"points\"");
	strcpy(err, "untouched");
	assert_int_equal(strategies_from_json(NULL, b->out, err, sizeof(err)), -1);
	assert_string_equal(err, "expected a JSON object with \"version\" and \"points\"");
	assert_memory_equal(b->out, b->ref, sizeof(*b->out));
	json_decref(arr);
}

static void test_error_truncated(void **state)
{
	struct bufs *b = *state;
	char err[16];

	poison(b);
	assert_int_equal(parse(DOC("{\"downgrade_rate\": 101}"), b->out, err,
			       sizeof(err)), -1);
	assert_string_equal(err, "point 'order': ");
	assert_memory_equal(b->out, b->ref, sizeof(*b->out));
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

	doc = strategies_to_json(b->out);
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
	assert_int_equal(strategies_from_json(doc, b->ref, err, sizeof(err)), 0);
	assert_memory_equal(b->out, b->ref, sizeof(*b->out));

	/* And its JSON is the same document. */
	doc2 = strategies_to_json(b->ref);
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
	doc = strategies_to_json(b->out);
	text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, "{\"points\":{},\"version\":0}");
	free(text);
	memset(b->ref, 0x3c, sizeof(*b->ref));
	assert_int_equal(strategies_from_json(doc, b->ref, err, sizeof(err)), 0);
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
		assert_ptr_equal(strategies_find(b->out, order[i]), &b->out->s[i]);
	}
	assert_null(strategies_find(b->out, "gamma"));
	assert_null(strategies_find(b->out, "alph"));
	assert_null(strategies_find(b->out, "alphaa"));
	assert_null(strategies_find(b->out, "ALPHA"));
	assert_null(strategies_find(b->out, ""));
	assert_null(strategies_find(b->out, "zzz"));
	assert_null(strategies_find(b->out, "A"));
	assert_null(strategies_find(b->out, NULL));

	/* A longer name never matches the point named by its first 64 chars. */
	memset(name64, 'q', 64);
	name64[64] = '\0';
	memset(name65, 'q', 65);
	name65[65] = '\0';
	snprintf(doc, sizeof(doc), "{\"version\": 1, \"points\": {\"%s\": {}}}", name64);
	assert_int_equal(parse(doc, b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->n, 1);
	assert_ptr_equal(strategies_find(b->out, name64), &b->out->s[0]);
	assert_null(strategies_find(b->out, name65));

	/* No strategies. */
	assert_int_equal(parse("{\"version\": 1}", b->out, err, sizeof(err)), 0);
	assert_null(strategies_find(b->out, "order"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_design_example, setup, teardown),
		cmocka_unit_test(test_strategy_init),
		cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_all_fields_and_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_negative_disables, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_halfopen_slow_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_points, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_document, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_points, setup, teardown),
		cmocka_unit_test_setup_teardown(test_from_json_not_object, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_empty, setup, teardown),
		cmocka_unit_test(test_strategy_to_json_one),
		cmocka_unit_test_setup_teardown(test_copy_field, setup, teardown),
		cmocka_unit_test_setup_teardown(test_find, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
