// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of common/heartbeat/heartbeat_pressure.c: the heartbeat's
 * host pressure parts (docs/PRESSURE.md) — each rule's state and a
 * point's "overload" written and read back, sent only when there is
 * something to say, and each refusal's line.
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

#include "heartbeat/heartbeat.h"

static struct sds_heartbeat *hb, *back;
static char err[256];

#define HEAD	"{\"group\": \"g\", \"app\": \"a\", \"host\": \"h\", \"period_start\": 1700000000," \
		" \"period_s\": 10, \"version\": 1, "

static int setup(void **state)
{
	(void)state;
	hb = heartbeat_new();
	back = heartbeat_new();
	return hb && back ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	heartbeat_free(hb);
	heartbeat_free(back);
	return 0;
}

static int parse(const char *text)
{
	err[0] = '\0';
	return heartbeat_parse(text, strlen(text), back, err, sizeof(err));
}

static void test_round_trip(void **state)
{
	struct sds_hb_point *p;
	json_t *doc;
	char *text;

	(void)state;
	heartbeat_init(hb, "g", "a", "h", "", 1700000000, 3);
	hb->nrules = 2;
	hb->rules[0] = (struct sds_hb_rule){ .firing = true, .fired = 4 };
	hb->rules[1] = (struct sds_hb_rule){ .firing = false, .fired = 0 };
	p = heartbeat_add_point(hb, "low");
	p->visits = 9;
	p->downgrades = 9;
	p->overload = true;
	heartbeat_add_point(hb, "norm")->visits = 3;
	doc = heartbeat_to_json(hb);
	assert_non_null(doc);
	text = json_dumps(json_object_get(doc, "pressure"), JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, "[{\"fired\":4,\"firing\":true},{\"fired\":0,\"firing\":false}]");
	free(text);
	assert_true(json_is_true(json_object_get(json_object_get(json_object_get(doc, "points"),
								 "low"), "overload")));
	/* Only when set: an older admin refuses fields it does not know. */
	assert_null(json_object_get(json_object_get(json_object_get(doc, "points"), "norm"),
				    "overload"));
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	assert_int_equal(parse(text), 0);
	free(text);
	assert_int_equal(back->nrules, 2);
	assert_true(back->rules[0].firing);
	assert_int_equal(back->rules[0].fired, 4);
	assert_false(back->rules[1].firing);
	assert_int_equal(back->n, 2);
	assert_true(back->points[0].overload);
	assert_false(back->points[1].overload);
	/* No rules: no "pressure". */
	heartbeat_init(hb, "g", "a", "h", "", 1700000000, 3);
	doc = heartbeat_to_json(hb);
	assert_null(json_object_get(doc, "pressure"));
	json_decref(doc);
}

static void test_refused(void **state)
{
	static const struct { const char *text, *msg; } bad[] = {
		{ HEAD "\"points\": {}, \"pressure\": []}",
		  "pressure must be an array of 1..8 rules" },
		{ HEAD "\"points\": {}, \"pressure\": {}}",
		  "pressure must be an array of 1..8 rules" },
		{ HEAD "\"points\": {}, \"pressure\": [{\"firing\": true, \"fired\": 1},"
		  " {}, {}, {}, {}, {}, {}, {}, {}]}",
		  "pressure must be an array of 1..8 rules" },
		{ HEAD "\"points\": {}, \"pressure\": [7]}", "pressure[0] must be an object" },
		{ HEAD "\"points\": {}, \"pressure\": [{\"firing\": 1, \"fired\": 1}]}",
		  "pressure[0].firing must be true or false" },
		{ HEAD "\"points\": {}, \"pressure\": [{\"firing\": true, \"fired\": -1}]}",
		  "pressure[0].fired must be an integer 0..1099511627776" },
		{ HEAD "\"points\": {}, \"pressure\": [{\"firing\": true}]}",
		  "pressure[0].fired must be an integer 0..1099511627776" },
		{ HEAD "\"points\": {}, \"pressure\": [{\"firing\": true, \"fired\": 0, \"pct\": 5}]}",
		  "pressure[0]: unknown field 'pct'" },
		{ HEAD "\"points\": {\"p\": {\"overload\": \"yes\"}}}",
		  "points.p.overload must be true or false" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i].text) != -1)
			fail_msg("accepted %zu: %s", i, bad[i].text);
		assert_string_equal(err, bad[i].msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
