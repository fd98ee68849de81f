// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of common/heartbeat/heartbeat_split.c: a point's split
 * (docs/SPLIT.md) through the heartbeat codec — sent only when the
 * period has split calls, read back whole, each field bounded, and an
 * admin of this codec taking a heartbeat that has them.
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

static char err[256];

static struct sds_heartbeat *one_point(uint64_t calls)
{
	struct sds_heartbeat *hb = heartbeat_new();
	struct sds_hb_point *p;

	assert_non_null(hb);
	heartbeat_init(hb, "default", "shop", "web-1", "", 1700000000, 3);
	p = heartbeat_add_point(hb, "order");
	assert_non_null(p);
	p->visits = 20;
	p->split_calls = calls;
	p->split_on_cpu_ns = 1200000;
	p->split_runqueue_ns = 340000;
	p->split_blocked_ns = 201000000;
	return hb;
}

static void test_round_trip(void **state)
{
	struct sds_heartbeat *hb = one_point(20), *back = heartbeat_new();
	json_t *doc = heartbeat_to_json(hb), *po;

	assert_non_null(doc);
	assert_non_null(back);
	po = json_object_get(json_object_get(doc, "points"), "order");
	assert_int_equal(json_integer_value(json_object_get(po, "split_calls")), 20);
	assert_int_equal(json_integer_value(json_object_get(po, "split_blocked_ns")), 201000000);
	assert_int_equal(heartbeat_from_json(doc, back, err, sizeof(err)), 0);
	assert_int_equal(back->n, 1);
	assert_int_equal(back->points[0].split_calls, 20);
	assert_int_equal(back->points[0].split_on_cpu_ns, 1200000);
	assert_int_equal(back->points[0].split_runqueue_ns, 340000);
	assert_int_equal(back->points[0].split_blocked_ns, 201000000);
	json_decref(doc);
	heartbeat_free(hb);
	heartbeat_free(back);
}

/* No split calls in the period: none of the fields (older admins). */
static void test_not_sent_without_calls(void **state)
{
	struct sds_heartbeat *hb = one_point(0);
	json_t *doc = heartbeat_to_json(hb), *po;

	po = json_object_get(json_object_get(doc, "points"), "order");
	assert_non_null(po);
	assert_null(json_object_get(po, "split_calls"));
	assert_null(json_object_get(po, "split_on_cpu_ns"));
	assert_null(json_object_get(po, "split_runqueue_ns"));
	assert_null(json_object_get(po, "split_blocked_ns"));
	json_decref(doc);
	heartbeat_free(hb);
}

static void test_bounds(void **state)
{
	static const struct { const char *field, *msg; } bad[] = {
		{ "\"split_calls\": -1",
		  "points.order.split_calls must be an integer 0..1099511627776" },
		{ "\"split_calls\": 1099511627777",
		  "points.order.split_calls must be an integer 0..1099511627776" },
		{ "\"split_blocked_ns\": 9007199254740993",
		  "points.order.split_blocked_ns must be an integer 0..9007199254740992" },
		{ "\"split_runqueue_ns\": \"5\"",
		  "points.order.split_runqueue_ns must be an integer 0..9007199254740992" },
		{ "\"split_on_cpu_ns\": 1.5",
		  "points.order.split_on_cpu_ns must be an integer 0..9007199254740992" },
	};
	struct sds_heartbeat *hb = heartbeat_new();
	char text[512];
	size_t i;

	assert_non_null(hb);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
			 "{\"group\": \"default\", \"app\": \"shop\", \"host\": \"web-1\","
			 " \"ip\": \"\", \"period_start\": 1700000000, \"period_s\": 10,"
			 " \"version\": 3, \"points\": {\"order\": {\"visits\": 1, %s}}}",
			 bad[i].field);
		err[0] = '\0';
		assert_int_equal(heartbeat_parse(text, strlen(text), hb, err, sizeof(err)), -1);
		assert_string_equal(err, bad[i].msg);
	}
	/* At the bound: taken. */
	snprintf(text, sizeof(text),
		 "{\"group\": \"default\", \"app\": \"shop\", \"host\": \"web-1\","
		 " \"ip\": \"\", \"period_start\": 1700000000, \"period_s\": 10,"
		 " \"version\": 3, \"points\": {\"order\": {\"split_calls\": 1,"
		 " \"split_blocked_ns\": 9007199254740992}}}");
	assert_int_equal(heartbeat_parse(text, strlen(text), hb, err, sizeof(err)), 0);
	assert_int_equal(hb->points[0].split_blocked_ns, 9007199254740992ULL);
	heartbeat_free(hb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_not_sent_without_calls),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
