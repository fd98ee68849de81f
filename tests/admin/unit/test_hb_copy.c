// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of common/heartbeat/heartbeat_copy.c: the points' copy counts and the
 * reply's "copy" (plans and servers), encoded, parsed, every bad input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heartbeat/heartbeat.h"

#define HDR "{\"group\":\"default\",\"app\":\"shop\",\"host\":\"web-1\"," \
	    "\"ip\":\"\",\"period_s\":10,\"version\":0,\"period_start\":1700000000,"
#define REPLY "{\"version\":1,\"changed\":false,\"strategies\":null,\"drills\":[],"

static struct sds_heartbeat *hb;
static struct sds_hb_reply *r;
static char err[512];

static int setup(void **state)
{
	hb = heartbeat_new();
	r = calloc(1, sizeof(*r));
	return hb && r ? 0 : -1;
}

static int teardown(void **state)
{
	heartbeat_free(hb);
	free(r);
	return 0;
}

static int parse_hb(const char *text)
{
	err[0] = '\0';
	return heartbeat_parse(text, strlen(text), hb, err, sizeof(err));
}

static int parse_reply(const char *text)
{
	err[0] = '\0';
	return heartbeat_reply_parse(text, strlen(text), r, err, sizeof(err));
}

/* copy_* are parsed, sent only when non-zero, and bounded like the other counts. */
static void test_point_counts(void **state)
{
	json_t *doc, *o;

	assert_int_equal(parse_hb(HDR "\"points\":{\"a\":{\"visits\":9,\"copy_captured\":7,"
				  "\"copy_dropped\":2,\"copy_truncated\":1099511627776},\"b\":{}}}"), 0);
	assert_int_equal(hb->points[0].copy_captured, 7);
	assert_int_equal(hb->points[0].copy_dropped, 2);
	assert_int_equal(hb->points[0].copy_truncated, 1099511627776ULL);
	assert_int_equal(hb->points[1].copy_captured, 0);
	doc = heartbeat_to_json(hb);
	assert_non_null(doc);
	o = json_object_get(json_object_get(doc, "points"), "a");
	assert_int_equal(json_integer_value(json_object_get(o, "copy_captured")), 7);
	assert_int_equal(json_integer_value(json_object_get(o, "copy_dropped")), 2);
	assert_int_equal(json_integer_value(json_object_get(o, "copy_truncated")), 1099511627776LL);
	/* Zero: not sent, so that an older admin still takes the heartbeat. */
	o = json_object_get(json_object_get(doc, "points"), "b");
	assert_null(json_object_get(o, "copy_captured"));
	assert_null(json_object_get(o, "copy_dropped"));
	assert_null(json_object_get(o, "copy_truncated"));
	json_decref(doc);

	assert_int_equal(parse_hb(HDR "\"points\":{\"a\":{\"copy_captured\":-1}}}"), -1);
	assert_string_equal(err, "points.a.copy_captured must be an integer 0..1099511627776");
	assert_int_equal(parse_hb(HDR "\"points\":{\"a\":{\"copy_dropped\":1099511627777}}}"), -1);
	assert_string_equal(err, "points.a.copy_dropped must be an integer 0..1099511627776");
	assert_int_equal(parse_hb(HDR "\"points\":{\"a\":{\"copy_truncated\":1.5}}}"), -1);
	assert_string_equal(err, "points.a.copy_truncated must be an integer 0..1099511627776");
	assert_int_equal(parse_hb(HDR "\"points\":{\"a\":{\"copy_sent\":1}}}"), -1);
	assert_string_equal(err, "points.a: unknown field 'copy_sent'");
}

static void fill_copy(struct sds_hb_copy *c)
{
	memset(c, 0, sizeof(*c));
	c->nservers = 2;
	strcpy(c->servers[0], "10.0.0.9:7070");
	strcpy(c->servers[1], "[::1]:7071");
	c->nplans = 2;
	c->plans[0].id = 3;
	strcpy(c->plans[0].name, "x5");
	c->plans[0].sample_pct = 30;
	c->plans[0].expires_at = 1700003600;
	c->plans[0].npoints = 2;
	strcpy(c->plans[0].points[0], "order");
	strcpy(c->plans[0].points[1], "pay");
	c->plans[1].id = 4;
	strcpy(c->plans[1].name, "all");
	c->plans[1].sample_pct = 100;
	c->plans[1].expires_at = 1700007200;
	c->plans[1].npoints = 1;
	strcpy(c->plans[1].points[0], "order");
}

/* The reply's "copy": exact text, and parsed back field by field. */
static void test_reply_roundtrip(void **state)
{
	struct sds_hb_copy *c = calloc(1, sizeof(*c));
	json_t *doc, *cj;
	char *text;

	fill_copy(c);
	cj = heartbeat_copy_to_json(c);
	assert_non_null(cj);
	text = json_dumps(cj, JSON_COMPACT);
	assert_string_equal(text, "{\"servers\":[\"10.0.0.9:7070\",\"[::1]:7071\"],\"plans\":["
			    "{\"id\":3,\"name\":\"x5\",\"sample_pct\":30,\"expires_at\":1700003600,"
			    "\"points\":[\"order\",\"pay\"]},"
			    "{\"id\":4,\"name\":\"all\",\"sample_pct\":100,\"expires_at\":1700007200,"
			    "\"points\":[\"order\"]}]}");
	free(text);
	doc = heartbeat_reply_to_json(1, false, NULL);
	json_object_set_new(doc, "copy", cj);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	assert_int_equal(parse_reply(text), 0);
	free(text);
	assert_true(r->has_copy);
	assert_int_equal(r->copy.nservers, 2);
	assert_string_equal(r->copy.servers[1], "[::1]:7071");
	assert_int_equal(r->copy.nplans, 2);
	assert_int_equal(r->copy.plans[0].id, 3);
	assert_string_equal(r->copy.plans[0].name, "x5");
	assert_int_equal(r->copy.plans[0].sample_pct, 30);
	assert_int_equal(r->copy.plans[0].expires_at, 1700003600);
	assert_int_equal(r->copy.plans[0].npoints, 2);
	assert_string_equal(r->copy.plans[0].points[1], "pay");
	assert_int_equal(r->copy.plans[1].npoints, 1);
	assert_memory_equal(&r->copy, c, sizeof(*c));
	free(c);

	/* An older admin: no "copy", has_copy false. */
	assert_int_equal(parse_reply("{\"version\":1,\"changed\":false,\"drills\":[]}"), 0);
	assert_false(r->has_copy);
	assert_int_equal(r->copy.nplans, 0);
	/* Empty: a newer admin with no plans for the app. */
	assert_int_equal(parse_reply(REPLY "\"copy\":{\"servers\":[],\"plans\":[]}}"), 0);
	assert_true(r->has_copy);
	assert_int_equal(r->copy.nplans, 0);
	assert_int_equal(r->copy.nservers, 0);
}

struct bad {
	const char *copy;	/* the "copy" value */
	const char *msg;	/* the exact error */
};

#define PLAN(x) "{\"servers\":[],\"plans\":[" x "]}"
#define GOOD "\"id\":1,\"name\":\"p\",\"sample_pct\":5,\"expires_at\":1700000000"

static const struct bad bads[] = {
	{ "[]", "copy must be an object" },
	{ "{\"servers\":[],\"plans\":[],\"x\":1}", "copy: unknown field 'x'" },
	{ "{\"plans\":[]}", "copy.servers must be an array of at most 8 addresses" },
	{ "{\"servers\":[\"a:1\",\"a:1\",\"a:1\",\"a:1\",\"a:1\",\"a:1\",\"a:1\",\"a:1\",\"a:1\"],"
	  "\"plans\":[]}", "copy.servers must be an array of at most 8 addresses" },
	{ "{\"servers\":[\"host\"],\"plans\":[]}", "copy.servers[0]: not HOST:PORT" },
	{ "{\"servers\":[\"h:0\"],\"plans\":[]}", "copy.servers[0]: not HOST:PORT" },
	{ "{\"servers\":[\"h:65536\"],\"plans\":[]}", "copy.servers[0]: not HOST:PORT" },
	{ "{\"servers\":[\"a:1\",\"h h:80\"],\"plans\":[]}", "copy.servers[1]: not HOST:PORT" },
	{ "{\"servers\":[\"[zz]:80\"],\"plans\":[]}", "copy.servers[0]: not HOST:PORT" },
	{ "{\"servers\":[7],\"plans\":[]}", "copy.servers[0]: not HOST:PORT" },
	{ "{\"servers\":[]}", "copy.plans must be an array of at most 64 plans" },
	{ PLAN("1"), "copy.plans[0] must be an object" },
	{ PLAN("{" GOOD ",\"points\":[\"a\"],\"y\":2}"), "copy.plans[0]: unknown field 'y'" },
	{ PLAN("{\"id\":0,\"name\":\"p\",\"sample_pct\":5,\"expires_at\":1,\"points\":[\"a\"]}"),
	  "copy.plans[0].id must be a positive integer" },
	{ PLAN("{\"id\":1,\"name\":\"p q\",\"sample_pct\":5,\"expires_at\":1,\"points\":[\"a\"]}"),
	  "copy.plans[0].name: bad name (1-64 of [A-Za-z0-9_-])" },
	{ PLAN("{\"id\":1,\"name\":\"p\",\"sample_pct\":101,\"expires_at\":1,\"points\":[\"a\"]}"),
	  "copy.plans[0].sample_pct must be an integer 0..100" },
	{ PLAN("{\"id\":1,\"name\":\"p\",\"sample_pct\":-1,\"expires_at\":1,\"points\":[\"a\"]}"),
	  "copy.plans[0].sample_pct must be an integer 0..100" },
	{ PLAN("{\"id\":1,\"name\":\"p\",\"sample_pct\":1,\"expires_at\":-1,\"points\":[\"a\"]}"),
	  "copy.plans[0].expires_at must be Unix seconds" },
	{ PLAN("{" GOOD "}"), "copy.plans[0].points must be an array of 1..64 names" },
	{ PLAN("{" GOOD ",\"points\":[]}"), "copy.plans[0].points must be an array of 1..64 names" },
	{ PLAN("{" GOOD ",\"points\":[\"a\"]},{" GOOD ",\"points\":[\"a\",\"\"]}"),
	  "copy.plans[1].points[1]: bad name (1-64 of [A-Za-z0-9_-])" },
};

/* Each bad "copy" refuses the reply whole, with a message naming the field. */
static void test_reply_bad(void **state)
{
	char text[1024];
	size_t i;

	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		snprintf(text, sizeof(text), REPLY "\"copy\":%s}", bads[i].copy);
		assert_int_equal(parse_reply(text), -1);
		if (strcmp(err, bads[i].msg))
			fail_msg("case %zu: '%s' != '%s'", i, err, bads[i].msg);
	}
}

/* The limits: 64 plans of 64 points each parse; 65 do not. */
static void test_reply_limits(void **state)
{
	struct sds_hb_copy *c = calloc(1, sizeof(*c));
	json_t *cj, *doc;
	char *text;
	int i, j;

	c->nservers = SDS_HB_COPY_SERVERS;
	for (i = 0; i < c->nservers; i++)
		snprintf(c->servers[i], sizeof(c->servers[i]), "copy-%d.example:%d", i, 7000 + i);
	c->nplans = SDS_HB_COPY_PLANS;
	for (i = 0; i < c->nplans; i++) {
		c->plans[i].id = i + 1;
		snprintf(c->plans[i].name, sizeof(c->plans[i].name), "plan-%d", i);
		c->plans[i].npoints = SDS_HB_COPY_POINTS;
		for (j = 0; j < SDS_HB_COPY_POINTS; j++)
			snprintf(c->plans[i].points[j], sizeof(c->plans[i].points[j]), "p%d", j);
	}
	cj = heartbeat_copy_to_json(c);
	doc = heartbeat_reply_to_json(1, false, NULL);
	json_object_set_new(doc, "copy", cj);
	text = json_dumps(doc, JSON_COMPACT);
	assert_int_equal(parse_reply(text), 0);
	assert_int_equal(r->copy.nplans, SDS_HB_COPY_PLANS);
	assert_memory_equal(&r->copy, c, sizeof(*c));
	free(text);
	json_array_append_new(json_object_get(cj, "plans"),
			      json_deep_copy(json_array_get(json_object_get(cj, "plans"), 0)));
	text = json_dumps(doc, JSON_COMPACT);
	assert_int_equal(parse_reply(text), -1);
	assert_string_equal(err, "copy.plans must be an array of at most 64 plans");
	free(text);
	json_decref(doc);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_point_counts),
		cmocka_unit_test(test_reply_roundtrip),
		cmocka_unit_test(test_reply_bad),
		cmocka_unit_test(test_reply_limits),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
