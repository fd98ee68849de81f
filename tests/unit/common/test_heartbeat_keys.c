// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of common/heartbeat/heartbeat_keys.c: a keyed point's
 * heaviest keys (docs/KEYS.md) through the heartbeat codec — sent only
 * when the point has some, read back whole, bounded, printable only.
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

static void test_round_trip(void **state)
{
	struct sds_heartbeat *hb = heartbeat_new(), *back = heartbeat_new();
	struct sds_hb_key *k;
	json_t *doc, *ks;

	assert_non_null(hb);
	assert_non_null(back);
	heartbeat_init(hb, "default", "shop", "web-1", "", 1700000000, 3);
	assert_non_null(heartbeat_add_point(hb, "plain"));
	assert_non_null(heartbeat_add_point(hb, "order"));
	k = heartbeat_add_key(hb, 1);
	assert_non_null(k);
	snprintf(k->key, sizeof(k->key), "7");
	snprintf(k->kind, sizeof(k->kind), "int");
	k->calls = 50000;
	k->exceptions = 3;
	k->p99_ns = 2047;
	k = heartbeat_add_key(hb, 1);
	snprintf(k->key, sizeof(k->key), "0x07000000");
	snprintf(k->kind, sizeof(k->kind), "buf");
	k->calls = 500;
	k->downgrades = 2;
	doc = heartbeat_to_json(hb);
	assert_non_null(doc);
	/* A point without keys sends none (older admins refuse the field). */
	assert_null(json_object_get(json_object_get(json_object_get(doc, "points"),
						    "plain"), "keys"));
	ks = json_object_get(json_object_get(json_object_get(doc, "points"), "order"),
			     "keys");
	assert_int_equal(json_array_size(ks), 2);
	/* A key none of whose calls completed in the period sends no p99. */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ks, 0), "p99_ns")),
			 2047);
	assert_null(json_object_get(json_array_get(ks, 1), "p99_ns"));
	assert_int_equal(heartbeat_from_json(doc, back, err, sizeof(err)), 0);
	assert_int_equal(back->nkeys, 2);
	assert_string_equal(back->keys[0].key, "7");
	assert_string_equal(back->keys[0].kind, "int");
	assert_int_equal(back->keys[0].calls, 50000);
	assert_int_equal(back->keys[0].exceptions, 3);
	assert_int_equal(back->keys[0].p99_ns, 2047);
	assert_int_equal(back->keys[1].p99_ns, 0);
	assert_string_equal(back->keys[1].key, "0x07000000");
	assert_int_equal(back->keys[1].downgrades, 2);
	assert_string_equal(back->points[back->keys[0].point].name, "order");
	json_decref(doc);
	heartbeat_free(hb);
	heartbeat_free(back);
}

/* At most SDS_HB_POINT_KEYS a point and SDS_HB_MAX_KEYS in all. */
static void test_add_bounds(void **state)
{
	struct sds_heartbeat *hb = heartbeat_new();
	int i;

	heartbeat_init(hb, "default", "shop", "web-1", "", 1700000000, 3);
	for (i = 0; i < SDS_HB_POINT_KEYS; i++)
		assert_non_null(heartbeat_add_key(hb, 0));
	assert_null(heartbeat_add_key(hb, 0));
	for (i = 1; hb->nkeys < SDS_HB_MAX_KEYS; i++)
		assert_non_null(heartbeat_add_key(hb, i / SDS_HB_POINT_KEYS + 1));
	assert_null(heartbeat_add_key(hb, 999));
	heartbeat_free(hb);
}

static void test_refused(void **state)
{
	static const struct { const char *keys, *msg; } bad[] = {
		{ "{}", "points.order.keys must be an array of at most 10 keys" },
		{ "[1]", "points.order.keys[0] must be an object" },
		{ "[{\"key\": \"7\", \"kind\": \"int\", \"calls\": -1}]",
		  "points.order.keys[0]: calls, exceptions, downgrades and p99_ns must be integers 0..1099511627776" },
		{ "[{\"key\": \"a\\u001bb\", \"kind\": \"str\"}]",
		  "points.order.keys[0].key must be printable text of at most 130 characters" },
		{ "[{\"key\": 7, \"kind\": \"int\"}]",
		  "points.order.keys[0].key must be printable text of at most 130 characters" },
		{ "[{\"key\": \"7\", \"kind\": \"float\"}]",
		  "points.order.keys[0].kind must be \"int\", \"str\", \"buf\" or \"unreadable\"" },
		{ "[{\"key\": \"7\", \"kind\": \"int\", \"rate\": 1}]",
		  "points.order.keys[0]: unknown field 'rate'" },
		{ "[{},{},{},{},{},{},{},{},{},{},{}]",
		  "points.order.keys must be an array of at most 10 keys" },
	};
	struct sds_heartbeat *hb = heartbeat_new();
	char text[1024];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
			 "{\"group\": \"default\", \"app\": \"shop\", \"host\": \"web-1\","
			 " \"ip\": \"\", \"period_start\": 1700000000, \"period_s\": 10,"
			 " \"version\": 3, \"points\": {\"order\": {\"visits\": 1, \"keys\": %s}}}",
			 bad[i].keys);
		err[0] = '\0';
		assert_int_equal(heartbeat_parse(text, strlen(text), hb, err, sizeof(err)), -1);
		assert_string_equal(err, bad[i].msg);
	}
	heartbeat_free(hb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_add_bounds),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
