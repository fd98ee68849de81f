// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of common/heartbeat/heartbeat_deps.c: a point's
 * dependencies (docs/DEPS.md) through the heartbeat codec — sent only
 * when the point has some, read back whole with addresses canonical,
 * bounded a point and a heartbeat.  The admin's refusals of hostile
 * fields: tests/admin/t_deps.py.
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

static struct sds_hb_dep *add(struct sds_heartbeat *hb, int point,
			      const char *addr, int port, const char *proto)
{
	struct sds_hb_dep *d = heartbeat_add_dep(hb, point);

	if (d) {
		snprintf(d->addr, sizeof(d->addr), "%s", addr);
		d->port = (uint16_t)port;
		snprintf(d->proto, sizeof(d->proto), "%s", proto);
	}
	return d;
}

static void test_round_trip(void **state)
{
	struct sds_heartbeat *hb = heartbeat_new(), *back = heartbeat_new();
	struct sds_hb_dep *d;
	json_t *doc, *ds;

	assert_non_null(hb);
	assert_non_null(back);
	heartbeat_init(hb, "default", "shop", "web-1", "", 1700000000, 3);
	assert_non_null(heartbeat_add_point(hb, "plain"));
	assert_non_null(heartbeat_add_point(hb, "order"));
	d = add(hb, 1, "10.0.0.5", 5432, "tcp");
	assert_non_null(d);
	d->connects = 3;
	d->sends = 3021;
	d->bytes = 120840;
	d = add(hb, 1, "::1", 53, "udp");
	d->sends = 4;
	d->send_errors = 1;
	d->connect_errors = 2;
	d->resets = 5;
	doc = heartbeat_to_json(hb);
	assert_non_null(doc);
	/* A point without dependencies sends none (older admins refuse the field). */
	assert_null(json_object_get(json_object_get(json_object_get(doc, "points"),
						    "plain"), "deps"));
	ds = json_object_get(json_object_get(json_object_get(doc, "points"), "order"),
			     "deps");
	assert_int_equal(json_array_size(ds), 2);
	assert_int_equal(heartbeat_from_json(doc, back, err, sizeof(err)), 0);
	assert_int_equal(back->ndeps, 2);
	assert_string_equal(back->points[back->deps[0].point].name, "order");
	assert_string_equal(back->deps[0].addr, "10.0.0.5");
	assert_int_equal(back->deps[0].port, 5432);
	assert_string_equal(back->deps[0].proto, "tcp");
	assert_int_equal(back->deps[0].connects, 3);
	assert_int_equal(back->deps[0].sends, 3021);
	assert_int_equal(back->deps[0].bytes, 120840);
	assert_string_equal(back->deps[1].addr, "::1");
	assert_string_equal(back->deps[1].proto, "udp");
	assert_int_equal(back->deps[1].send_errors, 1);
	assert_int_equal(back->deps[1].connect_errors, 2);
	assert_int_equal(back->deps[1].resets, 5);
	json_decref(doc);
	heartbeat_free(hb);
	heartbeat_free(back);
}

static void test_add_bounds(void **state)
{
	struct sds_heartbeat *hb = heartbeat_new();
	char name[16];
	int i, j, n = 0;

	heartbeat_init(hb, "default", "shop", "web-1", "", 1700000000, 3);
	for (i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		assert_non_null(heartbeat_add_point(hb, name));
	}
	/* 32 a point ... */
	for (j = 0; j < SDS_HB_POINT_DEPS; j++)
		assert_non_null(add(hb, 0, "10.0.0.1", 1 + j, "tcp"));
	assert_null(add(hb, 0, "10.0.0.1", 999, "tcp"));
	/* ... and 256 a heartbeat. */
	n = SDS_HB_POINT_DEPS;
	for (i = 1; i < 10; i++)
		for (j = 0; j < SDS_HB_POINT_DEPS; j++)
			n += add(hb, i, "10.0.0.1", 1 + j, "tcp") != NULL;
	assert_int_equal(n, SDS_HB_MAX_DEPS);
	assert_int_equal(hb->ndeps, SDS_HB_MAX_DEPS);
	heartbeat_free(hb);
}

/* The loader sends what the kernel gave; the admin keeps one spelling. */
static void test_canonical(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "0:0:0:0:0:0:0:1", "::1" },
		{ "::FFFF:10.0.0.5", "::ffff:10.0.0.5" },
		{ "2001:DB8::0:1", "2001:db8::1" },
		{ "127.0.0.1", "127.0.0.1" },
	};
	struct sds_heartbeat *hb = heartbeat_new();
	char text[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text),
			 "{\"group\": \"default\", \"app\": \"shop\", \"host\": \"web-1\","
			 " \"ip\": \"\", \"period_start\": 1700000000, \"period_s\": 10,"
			 " \"version\": 3, \"points\": {\"order\": {\"visits\": 1, \"deps\":"
			 " [{\"addr\": \"%s\", \"port\": 80, \"proto\": \"tcp\"}]}}}",
			 cases[i].in);
		err[0] = '\0';
		assert_int_equal(heartbeat_parse(text, strlen(text), hb, err, sizeof(err)), 0);
		assert_int_equal(hb->ndeps, 1);
		assert_string_equal(hb->deps[0].addr, cases[i].out);
		assert_int_equal(hb->deps[0].sends, 0);
	}
	heartbeat_free(hb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_add_bounds),
		cmocka_unit_test(test_canonical),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
