// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests of common/heartbeat/heartbeat.c: encode, parse, every validation rule. */
#include <errno.h>
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

#define HDR "\"group\":\"default\",\"app\":\"shop\",\"host\":\"web-1.example\"," \
	    "\"ip\":\"10.0.0.7\",\"period_s\":10,\"version\":3,"

static struct sds_heartbeat *hb;
static char err[512];

static int setup(void **state)
{
	hb = heartbeat_new();
	return hb ? 0 : -1;
}

static int teardown(void **state)
{
	heartbeat_free(hb);
	return 0;
}

static int parse(const char *text)
{
	err[0] = '\0';
	return heartbeat_parse(text, strlen(text), hb, err, sizeof(err));
}

/* Parse a document whose header is HDR and whose tail is @tail. */
static int parse_tail(const char *tail)
{
	/* Room for SDS_HB_MAX_POINTS points (test_limits). */
	static char buf[64 * 1024 + 256];

	snprintf(buf, sizeof(buf), "{" HDR "%s}", tail);
	return parse(buf);
}

static void test_roundtrip(void **state)
{
	struct sds_heartbeat *back = heartbeat_new();
	struct sds_hb_point *p;
	json_t *doc;
	char *text;

	heartbeat_init(hb, "default", "shop", "web-1", "::1", 1700000000, 7);
	p = heartbeat_add_point(hb, "order");
	assert_non_null(p);
	p->visits = 1000;
	p->exceptions = 3;
	p->timeouts = 2;
	p->downgrades = 1;
	p->max_concurrency = 9;
	p->latency_hist[10] = 600;
	p->latency_hist[12] = 400;
	assert_ptr_equal(heartbeat_add_point(hb, "order"), p);
	assert_non_null(heartbeat_add_point(hb, "pay"));
	assert_null(heartbeat_add_point(hb, "bad name"));

	doc = heartbeat_to_json(hb);
	assert_non_null(doc);
	/* The histogram is cut after its last non-zero entry. */
	assert_int_equal(json_array_size(json_object_get(json_object_get(
		json_object_get(doc, "points"), "order"), "latency_hist")), 13);
	assert_int_equal(json_array_size(json_object_get(json_object_get(
		json_object_get(doc, "points"), "pay"), "latency_hist")), 0);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	assert_int_equal(heartbeat_parse(text, strlen(text), back, err, sizeof(err)), 0);
	free(text);
	assert_string_equal(back->group, "default");
	assert_string_equal(back->app, "shop");
	assert_string_equal(back->host, "web-1");
	assert_string_equal(back->ip, "::1");
	assert_int_equal(back->period_start, 1700000000);
	assert_int_equal(back->period_s, 10);
	assert_int_equal(back->version, 7);
	assert_int_equal(back->n, 2);
	p = &back->points[0];
	if (strcmp(p->name, "order"))
		p = &back->points[1];
	assert_string_equal(p->name, "order");
	assert_int_equal(p->visits, 1000);
	assert_int_equal(p->exceptions, 3);
	assert_int_equal(p->timeouts, 2);
	assert_int_equal(p->downgrades, 1);
	assert_int_equal(p->max_concurrency, 9);
	assert_int_equal(p->nhist, 13);
	assert_int_equal(p->latency_hist[10], 600);
	assert_int_equal(p->latency_hist[12], 400);
	heartbeat_free(back);
}

static void test_full_point_set(void **state)
{
	char name[16];
	int i;

	heartbeat_init(hb, "g", "a", "h", "", 1700000000, 0);
	for (i = 0; i < SDS_HB_MAX_POINTS; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		assert_non_null(heartbeat_add_point(hb, name));
	}
	assert_null(heartbeat_add_point(hb, "one-more"));
}

static void test_minimal_ok(void **state)
{
	assert_int_equal(parse_tail("\"period_start\":1700000000,\"points\":{}"), 0);
	assert_int_equal(hb->n, 0);
	/* Missing counts are zero; ip may be absent or empty. */
	assert_int_equal(parse("{\"group\":\"g\",\"app\":\"a\",\"host\":\"h\","
			       "\"period_start\":1700000010,\"period_s\":10,\"version\":0,"
			       "\"points\":{\"x\":{}}}"), 0);
	assert_int_equal(hb->n, 1);
	assert_int_equal(hb->points[0].visits, 0);
	assert_string_equal(hb->ip, "");
}

struct bad {
	const char *doc;	/* whole document */
	const char *field;	/* must appear in the message */
};

static void test_bad_header(void **state)
{
	static const struct bad cases[] = {
		{ "", "bad JSON" },
		{ "{", "bad JSON" },
		{ "[]", "object" },
		{ "{\"group\":\"default\",\"group\":\"x\"}", "bad JSON" },	/* duplicate key */
		{ "{\"app\":\"shop\"}", "group" },
		{ "{\"group\":\"bad name\",\"app\":\"shop\",\"host\":\"h\"}", "group" },
		{ "{\"group\":\"g\",\"app\":\"sh'op\",\"host\":\"h\"}", "app" },
		{ "{\"group\":\"g\",\"app\":7,\"host\":\"h\"}", "app" },
		{ "{\"group\":\"g\",\"app\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\"host\":\"h\"}", "app" },
		{ "{\"group\":\"g\",\"app\":\"a\",\"host\":\"h/1\"}", "host" },
		{ "{\"group\":\"g\",\"app\":\"a\",\"host\":\"\"}", "host" },
		{ "{\"group\":\"g\",\"app\":\"a\",\"host\":\"h\",\"ip\":\"10.0.0.256\"}", "ip" },
		{ "{\"group\":\"g\",\"app\":\"a\",\"host\":\"h\",\"ip\":1}", "ip" },
		{ "{\"group\":\"g\\u0000x\",\"app\":\"a\",\"host\":\"h\"}", "u0000" },
		{ "{\"group\":\"g\",\"app\":\"a\",\"host\":\"h\",\"bogus\":1}", "bogus" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse(cases[i].doc), -1);
		if (!strstr(err, cases[i].field))
			fail_msg("case %zu: '%s' does not name '%s'", i, err, cases[i].field);
	}
}

static void test_bad_body(void **state)
{
	static const struct bad cases[] = {
		{ "\"period_start\":1700000001,\"points\":{}", "multiple of 10" },
		{ "\"period_start\":-10,\"points\":{}", "period_start" },
		{ "\"period_start\":10,\"points\":{}", "period_start" },
		{ "\"period_start\":\"1700000000\",\"points\":{}", "period_start" },
		{ "\"period_start\":1700000000.0,\"points\":{}", "period_start" },
		{ "\"period_start\":1700000000", "points" },
		{ "\"period_start\":1700000000,\"points\":[]", "points" },
		{ "\"period_start\":1700000000,\"points\":{\"bad name\":{}}", "bad point name" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":[]}", "points.o" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":{\"visits\":-1}}", "points.o.visits" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":{\"visits\":1.5}}", "points.o.visits" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":{\"visits\":\"3\"}}", "points.o.visits" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":{\"visits\":null}}", "points.o.visits" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":{\"exceptions\":1099511627777}}", "points.o.exceptions" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":{\"max_concurrency\":true}}", "points.o.max_concurrency" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":{\"vists\":1}}", "vists" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":{\"latency_hist\":{}}}", "latency_hist" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":{\"latency_hist\":[1,-2]}}", "latency_hist[1]" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":{\"suspended\":1}}", "points.o.suspended" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":{\"suspended\":\"true\"}}", "points.o.suspended" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":{\"overhead_pct\":-0.001}}", "points.o.overhead_pct" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":{\"overhead_pct\":100000.5}}", "points.o.overhead_pct" },
		{ "\"period_start\":1700000000,\"points\":{\"o\":{\"overhead_pct\":\"5\"}}", "points.o.overhead_pct" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse_tail(cases[i].doc), -1);
		if (!strstr(err, cases[i].field))
			fail_msg("case %zu: '%s' does not name '%s'", i, err, cases[i].field);
	}
}

static void test_limits(void **state)
{
	char *buf = malloc(64 * 1024);
	size_t off;
	int i;

	/* period_s other than 10; version negative. */
	assert_int_equal(parse("{\"group\":\"g\",\"app\":\"a\",\"host\":\"h\","
			       "\"period_start\":1700000000,\"period_s\":60,\"version\":0,\"points\":{}}"), -1);
	assert_non_null(strstr(err, "period_s"));
	assert_int_equal(parse("{\"group\":\"g\",\"app\":\"a\",\"host\":\"h\","
			       "\"period_start\":1700000000,\"period_s\":10,\"version\":-1,\"points\":{}}"), -1);
	assert_non_null(strstr(err, "version"));

	/* 64 histogram entries pass, 65 do not. */
	off = sprintf(buf, "\"period_start\":1700000000,\"points\":{\"o\":{\"latency_hist\":[");
	for (i = 0; i < 64; i++)
		off += sprintf(buf + off, "%s1", i ? "," : "");
	strcpy(buf + off, "]}}");
	assert_int_equal(parse_tail(buf), 0);
	assert_int_equal(hb->points[0].nhist, 64);
	buf[off] = '\0';
	strcat(buf, ",1]}}");
	assert_int_equal(parse_tail(buf), -1);
	assert_non_null(strstr(err, "latency_hist"));

	/* SDS_HB_MAX_POINTS (1,024) points pass, one more does not. */
	off = sprintf(buf, "\"period_start\":1700000000,\"points\":{");
	for (i = 0; i < SDS_HB_MAX_POINTS; i++)
		off += sprintf(buf + off, "%s\"p%d\":{\"visits\":%d}", i ? "," : "", i, i);
	strcpy(buf + off, "}");
	assert_int_equal(parse_tail(buf), 0);
	assert_int_equal(hb->n, SDS_HB_MAX_POINTS);
	strcpy(buf + off, ",\"p99999\":{}}");
	assert_int_equal(parse_tail(buf), -1);
	assert_non_null(strstr(err, "too many"));
	free(buf);
}

/* The budget's optional point fields (issue 9): parsed, and sent only when set. */
static void test_budget_fields(void **state)
{
	json_t *doc, *o;

	assert_int_equal(parse_tail("\"period_start\":1700000000,\"points\":{"
				    "\"a\":{\"visits\":3,\"suspended\":true,\"overhead_pct\":155.632},"
				    "\"b\":{\"suspended\":false,\"overhead_pct\":2},"
				    "\"c\":{}}"), 0);
	assert_int_equal(hb->n, 3);
	assert_true(hb->points[0].suspended);
	assert_int_equal(hb->points[0].overhead_milli, 155632);
	assert_false(hb->points[1].suspended);
	assert_int_equal(hb->points[1].overhead_milli, 2000);
	assert_false(hb->points[2].suspended);
	assert_int_equal(hb->points[2].overhead_milli, 0);
	doc = heartbeat_to_json(hb);
	assert_non_null(doc);
	o = json_object_get(json_object_get(doc, "points"), "a");
	assert_true(json_is_true(json_object_get(o, "suspended")));
	assert_true(json_real_value(json_object_get(o, "overhead_pct")) == 155.632);
	/* Unset: not sent, so that an older admin still takes the heartbeat. */
	o = json_object_get(json_object_get(doc, "points"), "c");
	assert_null(json_object_get(o, "suspended"));
	assert_null(json_object_get(o, "overhead_pct"));
	o = json_object_get(json_object_get(doc, "points"), "b");
	assert_null(json_object_get(o, "suspended"));
	json_decref(doc);
}

/*
 * "max_stuck" (docs/LIMITS.md "Stuck calls"): a count like the others,
 * sent only when non-zero so that an older admin takes the heartbeat.
 */
static void test_max_stuck(void **state)
{
	json_t *doc, *o;

	assert_int_equal(parse_tail("\"period_start\":1700000000,\"points\":{"
				    "\"a\":{\"visits\":7,\"timeouts\":2,\"max_stuck\":5},"
				    "\"b\":{\"visits\":1}}"), 0);
	assert_int_equal(hb->points[0].max_stuck, 5);
	assert_int_equal(hb->points[1].max_stuck, 0);
	doc = heartbeat_to_json(hb);
	assert_non_null(doc);
	o = json_object_get(json_object_get(doc, "points"), "a");
	assert_int_equal(json_integer_value(json_object_get(o, "max_stuck")), 5);
	o = json_object_get(json_object_get(doc, "points"), "b");
	assert_null(json_object_get(o, "max_stuck"));
	json_decref(doc);
	/* Bounded as every count is: negative or past 2^40 is refused. */
	assert_int_not_equal(parse_tail("\"period_start\":1700000000,\"points\":{"
					"\"a\":{\"max_stuck\":-1}}"), 0);
	assert_int_not_equal(parse_tail("\"period_start\":1700000000,\"points\":{"
					"\"a\":{\"max_stuck\":1099511627777}}"), 0);
}

/*
 * "refused" (issue 36): the admin's strategies a loader refused, one line
 * per point, sent only with some; every bound refused with the field named.
 */
static void test_refused(void **state)
{
	static const char *const bad[][2] = {
		{"[]", "refused must be an array of 1..16 refusals"},
		{"{}", "refused must be an array of 1..16 refusals"},
		{"[1]", "refused[0] must be an object"},
		{"[{\"version\":0,\"reason\":\"x\"}]", "refused[0].version must be an integer 1..1099511627776"},
		{"[{\"reason\":\"x\"}]", "refused[0].version must be an integer 1..1099511627776"},
		{"[{\"version\":2,\"reason\":\"\"}]", "refused[0].reason must be one line of 1..200 bytes without control characters"},
		{"[{\"version\":2,\"reason\":\"a\\nb\"}]", "refused[0].reason must be one line of 1..200 bytes without control characters"},
		{"[{\"version\":2,\"reason\":\"a\\u001fb\"}]", "refused[0].reason must be one line of 1..200 bytes without control characters"},
		{"[{\"version\":2,\"point\":\"a b\",\"reason\":\"x\"}]", "refused[0].point: bad point name (1-64 of [A-Za-z0-9_-])"},
		{"[{\"version\":2,\"reason\":\"x\",\"why\":1}]", "refused[0]: unknown field 'why'"},
		{"[{\"version\":2,\"reason\":\"x\"},{\"version\":3,\"reason\":\"y\"}]", "refused[1]: point '' twice"},
	};
	char text[1024], reason[300];
	json_t *doc, *arr;
	size_t i;

	assert_int_equal(parse_tail("\"period_start\":1700000000,\"points\":{},"
				    "\"refused\":[{\"version\":4,\"point\":\"w\",\"reason\":\"point 'w': no\"},"
				    "{\"version\":4,\"reason\":\"pressure rule 0: no\"}]"), 0);
	assert_int_equal(hb->nrefused, 2);
	assert_int_equal(hb->refused[0].version, 4);
	assert_string_equal(hb->refused[0].point, "w");
	assert_string_equal(hb->refused[0].reason, "point 'w': no");
	assert_string_equal(hb->refused[1].point, "");
	doc = heartbeat_to_json(hb);
	arr = json_object_get(doc, "refused");
	assert_int_equal(json_array_size(arr), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(arr, 0), "point")), "w");
	assert_null(json_object_get(json_array_get(arr, 1), "point"));
	json_decref(doc);
	/* 200 bytes taken, 201 not. */
	memset(reason, 'x', 200);
	reason[200] = '\0';
	snprintf(text, sizeof(text), "\"period_start\":1700000000,\"points\":{},"
		 "\"refused\":[{\"version\":4,\"reason\":\"%s\"}]", reason);
	assert_int_equal(parse_tail(text), 0);
	snprintf(text, sizeof(text), "\"period_start\":1700000000,\"points\":{},"
		 "\"refused\":[{\"version\":4,\"reason\":\"x%s\"}]", reason);
	assert_int_not_equal(parse_tail(text), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "\"period_start\":1700000000,\"points\":{},"
			 "\"refused\":%s", bad[i][0]);
		assert_int_not_equal(parse_tail(text), 0);
		assert_string_equal(err, bad[i][1]);
	}
	/* None: no key, so that an older admin takes the heartbeat. */
	assert_int_equal(parse_tail("\"period_start\":1700000000,\"points\":{}"), 0);
	assert_int_equal(hb->nrefused, 0);
	doc = heartbeat_to_json(hb);
	assert_null(json_object_get(doc, "refused"));
	json_decref(doc);
}

/*
 * The loader's side: a reason cut to 200 bytes on a UTF-8 boundary,
 * control bytes made blanks, a bad point name dropped.
 */
static void test_refusal_set(void **state)
{
	struct sds_hb_refusal r;
	char reason[300];

	memset(reason, 'x', 199);
	memcpy(reason + 199, "\xc3\xa9tail", 7);	/* é across the limit */
	heartbeat_refusal_set(&r, 7, "w", reason);
	assert_int_equal(r.version, 7);
	assert_string_equal(r.point, "w");
	assert_int_equal(strlen(r.reason), 199);
	heartbeat_refusal_set(&r, 7, "a b", "one\ntwo\tthree");
	assert_string_equal(r.point, "");
	assert_string_equal(r.reason, "one two three");
	heartbeat_refusal_set(&r, 7, NULL, "");
	assert_string_equal(r.reason, "refused");
}

/* The deploy field (docs/DEPLOY.md): "build": {"id", "deploys"}, optional. */
static void test_build_field(void **state)
{
	json_t *doc, *b;

	assert_int_equal(parse_tail("\"period_start\":1700000000,\"points\":{},"
				    "\"build\":{\"id\":\"0a1b2c\",\"deploys\":2}"), 0);
	assert_string_equal(hb->build_id, "0a1b2c");
	assert_int_equal(hb->deploys, 2);
	doc = heartbeat_to_json(hb);
	assert_non_null(doc);
	b = json_object_get(doc, "build");
	assert_string_equal(json_string_value(json_object_get(b, "id")), "0a1b2c");
	assert_int_equal(json_integer_value(json_object_get(b, "deploys")), 2);
	json_decref(doc);
	/* Absent: none, and none sent (an older admin refuses unknown fields). */
	assert_int_equal(parse_tail("\"period_start\":1700000000,\"points\":{}"), 0);
	assert_string_equal(hb->build_id, "");
	doc = heartbeat_to_json(hb);
	assert_null(json_object_get(doc, "build"));
	json_decref(doc);
	/* Each bad one, with its message. */
	assert_int_equal(parse_tail("\"period_start\":1700000000,\"points\":{},"
				    "\"build\":\"x\""), -1);
	assert_string_equal(err, "build must be an object");
	assert_int_equal(parse_tail("\"period_start\":1700000000,\"points\":{},"
				    "\"build\":{\"id\":\"0A\",\"deploys\":0}"), -1);
	assert_string_equal(err, "id: bad build-id (1-64 lowercase hex digits)");
	assert_int_equal(parse_tail("\"period_start\":1700000000,\"points\":{},"
				    "\"build\":{\"id\":\"\",\"deploys\":0}"), -1);
	assert_string_equal(err, "id: bad build-id (1-64 lowercase hex digits)");
	assert_int_equal(parse_tail("\"period_start\":1700000000,\"points\":{},"
				    "\"build\":{\"id\":\"00000000000000000000000000000000000000000000000000000000000000000\",\"deploys\":0}"), -1);
	assert_string_equal(err, "id: bad build-id (1-64 lowercase hex digits)");
	assert_int_equal(parse_tail("\"period_start\":1700000000,\"points\":{},"
				    "\"build\":{\"id\":\"ab\",\"deploys\":-1}"), -1);
	assert_string_equal(err, "build.deploys must be an integer 0..4294967295");
	assert_int_equal(parse_tail("\"period_start\":1700000000,\"points\":{},"
				    "\"build\":{\"id\":\"ab\",\"deploys\":1,\"x\":1}"), -1);
	assert_string_equal(err, "build: unknown field 'x'");
}

static void test_reply(void **state)
{
	struct sds_strategies *s = calloc(1, sizeof(*s)), *got = calloc(1, sizeof(*got));
	struct sds_hb_reply r = { 0 };
	json_t *doc;
	char *text;

	s->version = 5;
	s->n = 1;
	strategy_init(&s->s[0], "order");
	s->s[0].visit_threshold = 100;
	doc = heartbeat_reply_to_json(5, true, s);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	r.strategies = got;
	assert_int_equal(heartbeat_reply_parse(text, strlen(text), &r, err, sizeof(err)), 0);
	free(text);
	assert_int_equal(r.version, 5);
	assert_true(r.changed);
	assert_true(r.has_strategies);
	assert_ptr_equal(r.strategies, got);
	assert_int_equal(got->n, 1);
	assert_int_equal(got->s[0].visit_threshold, 100);

	doc = heartbeat_reply_to_json(5, false, NULL);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	assert_string_equal(text, "{\"version\":5,\"changed\":false,\"strategies\":null,\"drills\":[]}");
	assert_int_equal(heartbeat_reply_parse(text, strlen(text), &r, err, sizeof(err)), 0);
	free(text);
	assert_false(r.has_strategies);
	assert_false(r.changed);

	/* A reply with a bad strategy is refused whole. */
	text = "{\"version\":6,\"changed\":true,\"drills\":[],"
	       "\"strategies\":{\"version\":6,\"points\":{\"o\":{\"downgrade_rate\":101}}}}";
	assert_int_equal(heartbeat_reply_parse(text, strlen(text), &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "downgrade_rate"));
	text = "{\"version\":6}";
	assert_int_equal(heartbeat_reply_parse(text, strlen(text), &r, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "changed"));
	free(s);
	free(got);
}

/* An error drill's "errno": out only when set, back as the same errno. */
static void test_reply_drill_errno(void **state)
{
	struct sds_hb_drill d[2] = {
		{ .id = 7, .point = "fetch", .kind = SDS_DRILL_ERROR, .ratio = 30,
		  .expires_at = 1700000060, .err = ETIMEDOUT },
		{ .id = 8, .point = "other", .kind = SDS_DRILL_ERROR, .ratio = 100,
		  .expires_at = 1700000060 },
	};
	struct sds_hb_reply r = { 0 };
	json_t *a = heartbeat_drills_to_json(d, 2), *doc;
	const char *bad;
	char *text;

	doc = json_pack("{s:i, s:b, s:n, s:o}", "version", 1, "changed", 0,
			"strategies", "drills", a);
	text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(doc);
	assert_non_null(strstr(text, "\"errno\":\"ETIMEDOUT\""));
	assert_null(strstr(strstr(text, "\"other\""), "errno"));
	assert_int_equal(heartbeat_reply_parse(text, strlen(text), &r, err, sizeof(err)), 0);
	free(text);
	assert_int_equal(r.ndrills, 2);
	assert_int_equal(r.drills[0].err, ETIMEDOUT);
	assert_int_equal(r.drills[1].err, 0);

	bad = "{\"version\":1,\"changed\":false,\"drills\":[{\"id\":1,\"point\":\"p\","
	      "\"kind\":\"error\",\"ratio\":3,\"delay_ms\":0,\"expires_at\":9,\"errno\":\"EINTR\"}]}";
	assert_int_equal(heartbeat_reply_parse(bad, strlen(bad), &r, err, sizeof(err)), -1);
	assert_string_equal(err, "drills[0].errno must be an errno name (ETIMEDOUT, ...) of an error drill");
	bad = "{\"version\":1,\"changed\":false,\"drills\":[{\"id\":1,\"point\":\"p\","
	      "\"kind\":\"delay\",\"ratio\":3,\"delay_ms\":5,\"expires_at\":9,\"errno\":\"EIO\"}]}";
	assert_int_equal(heartbeat_reply_parse(bad, strlen(bad), &r, err, sizeof(err)), -1);
	assert_string_equal(err, "drills[0].errno must be an errno name (ETIMEDOUT, ...) of an error drill");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_full_point_set),
		cmocka_unit_test(test_minimal_ok),
		cmocka_unit_test(test_bad_header),
		cmocka_unit_test(test_bad_body),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_budget_fields),
		cmocka_unit_test(test_build_field),
		cmocka_unit_test(test_max_stuck),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_refusal_set),
		cmocka_unit_test(test_reply),
		cmocka_unit_test(test_reply_drill_errno),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
