// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of common/strategy.c: the documents it refuses — each with
 * its one-line message, the output left as it was (the codec's accepted
 * documents: test_strategy.c; loading a file: test_strategy_file.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <stdio.h>
#include <string.h>

#include "strategy_fixture.h"

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
		       "unknown field 'pointz' (version, points, pressure)");
	expect_invalid(b, "{\"version\": 1, \"points\": {}, \"comment\": \"x\"}",
		       "unknown field 'comment' (version, points, pressure)");
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
	assert_int_equal(strategy_set_from_json(doc, b->out, err, sizeof(err)), 0);
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
	assert_int_equal(strategy_set_from_json(doc, b->out, err, sizeof(err)), -1);
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
	assert_int_equal(strategy_set_from_json(arr, b->out, err, sizeof(err)), -1);
	assert_string_equal(err, "expected a JSON object with \"version\" and \"points\"");
	strcpy(err, "untouched");
	assert_int_equal(strategy_set_from_json(NULL, b->out, err, sizeof(err)), -1);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_invalid_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_points, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_document, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_points, setup, teardown),
		cmocka_unit_test_setup_teardown(test_from_json_not_object, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_truncated, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
