// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of common/pressure.c: the strategies document's "pressure"
 * rules and points' "priority" (docs/PRESSURE.md) — accepted with their
 * defaults, written back as read, and each refusal's one line.
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

#define PTS	"\"points\": {\"bg\": {\"priority\": \"low\"}, \"order\": {}}"
/* A document with @rules (JSON array text) for the points above. */
#define RULES(rules)	"{\"version\": 1, " PTS ", \"pressure\": " rules "}"
#define RULE(extra)	RULES("[{\"resource\": \"cpu\", \"above_pct\": 40, \"for_ms\": 5000, " \
			      "\"action\": \"downgrade\"" extra "}]")

static void test_rules_accepted(void **state)
{
	struct bufs *b = *state;
	const struct sds_pressure_rule *r;
	char err[512];

	assert_int_equal(parse(RULES(
		"[{\"resource\": \"cpu\", \"kind\": \"some\", \"above_pct\": 40, \"for_ms\": 5000,"
		"  \"action\": \"downgrade\", \"priority\": \"low\"},"
		" {\"resource\": \"memory\", \"kind\": \"full\", \"above_pct\": 5, \"below_pct\": 1,"
		"  \"for_ms\": 1000, \"clear_ms\": 3000, \"action\": \"limits\","
		"  \"limits\": {\"order\": {\"token_rate\": 100}, \"bg\": {\"visit_threshold\": 0}}}]"),
		b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->n, 2);
	assert_int_equal(b->out->s[0].priority, SDS_PRIO_LOW);
	assert_int_equal(b->out->s[1].priority, SDS_PRIO_NORMAL);
	assert_int_equal(b->out->pressure.n, 2);
	r = &b->out->pressure.r[0];
	assert_int_equal(r->resource, SDS_PSI_CPU);
	assert_int_equal(r->kind, SDS_PSI_SOME);
	assert_int_equal(r->action, SDS_PRESSURE_DOWNGRADE);
	assert_int_equal(r->priority, SDS_PRIO_LOW);
	assert_int_equal(r->above_pct, 40);
	/* The defaults: 10 points of hysteresis, the clear window the fire one's. */
	assert_int_equal(r->below_pct, 30);
	assert_int_equal(r->for_ms, 5000);
	assert_int_equal(r->clear_ms, 5000);
	r = &b->out->pressure.r[1];
	assert_int_equal(r->resource, SDS_PSI_MEMORY);
	assert_int_equal(r->kind, SDS_PSI_FULL);
	assert_int_equal(r->action, SDS_PRESSURE_LIMITS);
	assert_int_equal(r->below_pct, 1);
	assert_int_equal(r->clear_ms, 3000);
	assert_int_equal(r->nlimits, 2);
	/* Sorted, each a whole strategy. */
	assert_string_equal(r->limits[0].point, "bg");
	assert_int_equal(r->limits[0].visit_threshold, 0);
	assert_string_equal(r->limits[1].point, "order");
	assert_int_equal(r->limits[1].token_rate, 100);
	assert_int_equal(r->limits[1].token_bucket, 100);
	assert_ptr_equal(pressure_rule_limits(r, "order"), &r->limits[1]);
	assert_null(pressure_rule_limits(r, "other"));
	/* below_pct defaults to 0 under a small threshold. */
	assert_int_equal(parse(RULES("[{\"resource\": \"io\", \"above_pct\": 5, \"for_ms\": 500,"
				     " \"action\": \"downgrade\", \"priority\": \"normal\"}]"),
			       b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->pressure.r[0].below_pct, 0);
	assert_int_equal(b->out->pressure.r[0].priority, SDS_PRIO_NORMAL);
}

static void test_rules_round_trip(void **state)
{
	struct bufs *b = *state;
	char err[512], *t1, *t2;
	json_t *doc;

	assert_int_equal(parse(RULES(
		"[{\"resource\": \"io\", \"kind\": \"full\", \"above_pct\": 20, \"for_ms\": 2000,"
		"  \"action\": \"downgrade\", \"priority\": \"high\"},"
		" {\"resource\": \"cpu\", \"above_pct\": 60, \"for_ms\": 10000, \"action\": \"limits\","
		"  \"limits\": {\"order\": {\"concurrent_threshold\": 4}}}]"),
		b->out, err, sizeof(err)), 0);
	doc = strategy_set_to_json(b->out);
	t1 = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(doc);
	assert_string_equal(t1,
		"{\"points\":{\"bg\":{\"downgrade_rate\":100,\"priority\":\"low\"},"
		"\"order\":{\"downgrade_rate\":100}},"
		"\"pressure\":[{\"above_pct\":20,\"action\":\"downgrade\",\"below_pct\":10,"
		"\"clear_ms\":2000,\"for_ms\":2000,\"kind\":\"full\",\"priority\":\"high\","
		"\"resource\":\"io\"},"
		"{\"above_pct\":60,\"action\":\"limits\",\"below_pct\":50,\"clear_ms\":10000,"
		"\"for_ms\":10000,\"kind\":\"some\",\"limits\":{\"order\":{\"concurrent_threshold\":4,"
		"\"downgrade_rate\":100}},\"resource\":\"cpu\"}],\"version\":1}");
	assert_int_equal(parse(t1, b->ref, err, sizeof(err)), 0);
	doc = strategy_set_to_json(b->ref);
	t2 = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(doc);
	assert_string_equal(t1, t2);
	free(t1);
	free(t2);
	/* No rules: no "pressure" written; normal is not written either. */
	assert_int_equal(parse("{\"version\": 2, \"points\": {\"a\": {\"priority\": \"normal\"}}}",
			       b->out, err, sizeof(err)), 0);
	doc = strategy_set_to_json(b->out);
	t1 = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(doc);
	assert_string_equal(t1, "{\"points\":{\"a\":{\"downgrade_rate\":100}},\"version\":2}");
	free(t1);
}

static void test_rules_refused(void **state)
{
	struct bufs *b = *state;

	expect_invalid(b, RULES("[{\"resource\": \"cpu\", \"above_pct\": 150, \"for_ms\": 5000,"
				" \"action\": \"downgrade\"}]"),
		       "pressure rule 0: above_pct must be an integer 0..99");
	expect_invalid(b, RULES("[{\"resource\": \"cpu\", \"above_pct\": 100, \"for_ms\": 5000,"
				" \"action\": \"downgrade\"}]"),
		       "pressure rule 0: above_pct must be an integer 0..99");
	expect_invalid(b, RULES("[{\"resource\": \"cpu\", \"above_pct\": 40.5, \"for_ms\": 5000,"
				" \"action\": \"downgrade\"}]"),
		       "pressure rule 0: above_pct must be an integer 0..99");
	expect_invalid(b, RULE(", \"below_pct\": 41"),
		       "pressure rule 0: below_pct must be an integer 0..40");
	expect_invalid(b, RULES("[{\"resource\": \"cpu\", \"above_pct\": 40, \"for_ms\": 499,"
				" \"action\": \"downgrade\"}]"),
		       "pressure rule 0: for_ms must be an integer 500..10000");
	expect_invalid(b, RULE(", \"clear_ms\": 10001"),
		       "pressure rule 0: clear_ms must be an integer 500..10000");
	expect_invalid(b, RULES("[{\"resource\": \"gpu\", \"above_pct\": 40, \"for_ms\": 5000,"
				" \"action\": \"downgrade\"}]"),
		       "pressure rule 0: resource must be \"cpu\", \"memory\" or \"io\"");
	expect_invalid(b, RULE(", \"kind\": \"all\""),
		       "pressure rule 0: kind must be \"some\" or \"full\"");
	expect_invalid(b, RULE(", \"kind\": \"full\""),
		       "pressure rule 0: cpu full is always 0 host-wide: the rule can never fire");
	expect_invalid(b, RULE(", \"priority\": \"urgent\""),
		       "pressure rule 0: priority must be \"low\", \"normal\" or \"high\"");
	expect_invalid(b, RULE(", \"limits\": {}"),
		       "pressure rule 0: limits go with action \"limits\"");
	expect_invalid(b, RULE(", \"window\": 5"),
		       "pressure rule 0: unknown field 'window'");
	expect_invalid(b, RULES("[{\"resource\": \"cpu\", \"above_pct\": 40, \"for_ms\": 5000,"
				" \"action\": \"shed\"}]"),
		       "pressure rule 0: action must be \"downgrade\" or \"limits\"");
	expect_invalid(b, RULES("[{\"resource\": \"cpu\", \"above_pct\": 40, \"for_ms\": 5000,"
				" \"action\": \"limits\"}]"),
		       "pressure rule 0: limits must be an object of 1..8 point name -> strategy fields");
	expect_invalid(b, RULES("[{\"resource\": \"cpu\", \"above_pct\": 40, \"for_ms\": 5000,"
				" \"action\": \"limits\", \"priority\": \"low\", \"limits\": {\"a\": {}}}]"),
		       "pressure rule 0: priority goes with action \"downgrade\"");
	expect_invalid(b, RULES("[{\"resource\": \"cpu\", \"above_pct\": 40, \"for_ms\": 5000,"
				" \"action\": \"limits\", \"limits\": {\"a\": {\"token_rate\": 0}}}]"),
		       "pressure rule 0: limits: point 'a': token_rate must be an integer 1..1000000000");
	expect_invalid(b, RULES("[{\"resource\": \"cpu\", \"above_pct\": 40, \"for_ms\": 5000,"
				" \"action\": \"limits\", \"limits\": {\"a\": {\"priority\": \"low\"}}}]"),
		       "pressure rule 0: limits of 'a': priority is the point's own, not a limit");
	/* The second rule is named by its index. */
	expect_invalid(b, RULES("[{\"resource\": \"cpu\", \"above_pct\": 40, \"for_ms\": 5000,"
				" \"action\": \"downgrade\"}, 7]"),
		       "pressure rule 1: expected an object");
	expect_invalid(b, RULES("{}"), "pressure must be an array of at most 8 rules");
	expect_invalid(b, RULES("[{},{},{},{},{},{},{},{},{}]"),
		       "pressure must be an array of at most 8 rules");
	/* A low rule with no low point sheds nothing: it can never act. */
	expect_invalid(b, "{\"version\": 1, \"points\": {\"order\": {}}, \"pressure\": "
			  "[{\"resource\": \"cpu\", \"above_pct\": 40, \"for_ms\": 5000,"
			  " \"action\": \"downgrade\"}]}",
		       "pressure rule 0: no point has priority \"low\": the rule would downgrade nothing");
	expect_invalid(b, "{\"version\": 1, \"points\": {\"order\": {\"priority\": 1}}}",
		       "point 'order': priority must be \"low\", \"normal\" or \"high\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rules_accepted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rules_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rules_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
