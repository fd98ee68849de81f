// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of common/strategy.c's hot keys' fields (docs/KEYS.md
 * "Limits"): key_visit_threshold, key_token_rate, key_token_bucket and
 * key_overrides -- accepted, resolved, written back, and each bad value
 * refused with its one line, the output left as it was.
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

static void test_key_fields(void **state)
{
	struct bufs *b = *state;
	const struct sds_strategy *st;
	char err[256] = "";

	assert_int_equal(parse(DOC("{\"key_visit_threshold\": 1000, \"key_token_rate\": 100}"),
			       b->out, err, sizeof(err)), 0);
	st = &b->out->s[0];
	assert_int_equal(st->key_visit_threshold, 1000);
	assert_int_equal(st->key_token_rate, 100);
	assert_int_equal(st->key_token_bucket, 100);	/* the rate's, by default */
	assert_int_equal(st->key_ov_n, 0);
	assert_int_equal(b->out->nkey_ov, 0);
	/* Off by default, and by a negative. */
	assert_int_equal(parse(DOC("{\"key_token_rate\": -1, \"visit_threshold\": 5}"),
			       b->out, err, sizeof(err)), 0);
	st = &b->out->s[0];
	assert_int_equal(st->key_visit_threshold, SDS_OFF);
	assert_int_equal(st->key_token_rate, SDS_OFF);
	assert_int_equal(st->key_token_bucket, SDS_OFF);
	/* The largest values. */
	assert_int_equal(parse(DOC("{\"key_visit_threshold\": " LIMIT_MAX_S
				   ", \"key_token_rate\": 1000000000, \"key_token_bucket\": 1000000000}"),
			       b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->s[0].key_visit_threshold, 1LL << 40);
	assert_int_equal(b->out->s[0].key_token_bucket, 1000000000);
}

static void test_key_overrides(void **state)
{
	struct bufs *b = *state;
	const struct sds_key_override *ov;
	const struct sds_strategy *st;
	int64_t v, r, k;
	char err[256] = "";
	json_t *doc, *back;
	int n;

	assert_int_equal(parse("{\"version\": 2, \"points\": {"
			       "\"b\": {\"key_token_rate\": 100, \"key_overrides\": {"
			       "  \"tenant-big\": {\"key_token_rate\": 1000},"
			       "  \"tenant-small\": {\"key_token_bucket\": 10},"
			       "  \"tenant-free\": {\"key_token_rate\": -1, \"key_visit_threshold\": 50}}},"
			       "\"a\": {\"key_overrides\": {\"7\": {\"key_visit_threshold\": 3}}}}}",
			       b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->nkey_ov, 4);
	/* Sorted by point name: a first; its override is its own. */
	st = &b->out->s[0];
	assert_string_equal(st->point, "a");
	ov = strategy_key_overrides(b->out, st, &n);
	assert_int_equal(n, 1);
	assert_string_equal(ov[0].key, "7");
	strategy_key_override_limits(st, &ov[0], &v, &r, &k);
	assert_int_equal(v, 3);
	assert_int_equal(r, SDS_OFF);
	assert_int_equal(k, SDS_OFF);

	st = &b->out->s[1];
	ov = strategy_key_overrides(b->out, st, &n);
	assert_int_equal(n, 3);
	/* The document's order: big, small, free. */
	assert_string_equal(ov[0].key, "tenant-big");
	strategy_key_override_limits(st, &ov[0], &v, &r, &k);
	assert_int_equal(v, SDS_OFF);
	assert_int_equal(r, 1000);
	assert_int_equal(k, 1000);		/* its own rate's bucket */
	assert_string_equal(ov[1].key, "tenant-small");
	strategy_key_override_limits(st, &ov[1], &v, &r, &k);
	assert_int_equal(r, 100);		/* the point's rate */
	assert_int_equal(k, 10);
	assert_string_equal(ov[2].key, "tenant-free");
	strategy_key_override_limits(st, &ov[2], &v, &r, &k);
	assert_int_equal(v, 50);
	assert_int_equal(r, SDS_OFF);		/* off for this key */
	assert_int_equal(k, SDS_OFF);

	/* Written back whole, and read again the same. */
	doc = strategy_set_to_json(b->out);
	back = json_object_get(json_object_get(json_object_get(doc, "points"), "b"),
			       "key_overrides");
	assert_int_equal(json_object_size(back), 3);
	assert_int_equal(json_integer_value(json_object_get(
		json_object_get(back, "tenant-free"), "key_token_rate")), -1);
	assert_int_equal(strategy_set_from_json(doc, b->ref, err, sizeof(err)), 0);
	json_decref(doc);
	assert_int_equal(b->ref->nkey_ov, 4);
	for (n = 0; n < 2; n++) {
		const struct sds_key_override *x, *y;
		struct sds_strategy s1 = b->out->s[n], s2 = b->ref->s[n];
		int nx, ny;

		x = strategy_key_overrides(b->out, &b->out->s[n], &nx);
		y = strategy_key_overrides(b->ref, &b->ref->s[n], &ny);
		assert_int_equal(nx, ny);
		assert_memory_equal(x, y, nx * sizeof(*x));
		/* Where in the pool differs (the points' order): nothing else. */
		s1.key_ov_first = s2.key_ov_first = 0;
		assert_memory_equal(&s1, &s2, sizeof(s1));
	}
}

/* 64 bytes is a key; 1,024 overrides a point. */
static void test_key_overrides_bounds(void **state)
{
	struct bufs *b = *state;
	char key[SDS_KEY_MAX + 1], err[256] = "", *text, *p;
	size_t cap = 64 * 1024;
	int i;

	memset(key, 'k', SDS_KEY_MAX);
	key[SDS_KEY_MAX] = '\0';
	text = malloc(cap);
	assert_non_null(text);
	snprintf(text, cap, DOC("{\"key_overrides\": {\"%s\": {\"key_visit_threshold\": 1}}}"), key);
	assert_int_equal(parse(text, b->out, err, sizeof(err)), 0);
	assert_string_equal(b->out->key_ov[0].key, key);

	p = text + sprintf(text, "{\"version\": 1, \"points\": {\"order\": {\"key_overrides\": {");
	for (i = 0; i < SDS_KEY_OVERRIDES_MAX; i++)
		p += sprintf(p, "%s\"u%d\": {}", i ? "," : "", i);
	strcpy(p, "}}}}");
	assert_int_equal(parse(text, b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->s[0].key_ov_n, SDS_KEY_OVERRIDES_MAX);
	strcpy(p, ", \"one-more\": {}}}}}");
	expect_invalid(b, text, "point 'order': key_overrides: 1025 keys (at most 1024)");
	free(text);
}

static void test_key_invalid(void **state)
{
	struct bufs *b = *state;
	char text[512], key[SDS_KEY_MAX + 2];

	expect_invalid(b, DOC("{\"key_visit_threshold\": 0}"),
		       "point 'order': key_visit_threshold must be an integer 1.." LIMIT_MAX_S);
	expect_invalid(b, DOC("{\"key_token_rate\": 1000000001}"),
		       "point 'order': key_token_rate must be an integer 1..1000000000");
	expect_invalid(b, DOC("{\"key_token_rate\": \"100\"}"),
		       "point 'order': key_token_rate must be an integer 1..1000000000");
	expect_invalid(b, DOC("{\"key_token_bucket\": 10}"),
		       "point 'order': key_token_bucket needs key_token_rate");
	expect_invalid(b, DOC("{\"key_overrides\": [1]}"),
		       "point 'order': key_overrides must be an object of key -> {key_visit_threshold, key_token_rate, key_token_bucket}");
	expect_invalid(b, DOC("{\"key_overrides\": {\"\": {}}}"),
		       "point 'order': key_overrides: an empty key");
	memset(key, 'x', SDS_KEY_MAX + 1);
	key[SDS_KEY_MAX + 1] = '\0';
	snprintf(text, sizeof(text), DOC("{\"key_overrides\": {\"%s\": {}}}"), key);
	expect_invalid(b, text,
		       "point 'order': key_overrides: key 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' is 65 bytes (at most 64)");
	expect_invalid(b, DOC("{\"key_overrides\": {\"u7\": 5}}"),
		       "point 'order': key_overrides 'u7': expected an object of key_visit_threshold, key_token_rate, key_token_bucket");
	expect_invalid(b, DOC("{\"key_overrides\": {\"u7\": {\"token_rate\": 5}}}"),
		       "point 'order': key_overrides 'u7': unknown field 'token_rate'; an override has key_visit_threshold, key_token_rate, key_token_bucket");
	expect_invalid(b, DOC("{\"key_overrides\": {\"u7\": {\"key_token_rate\": 0}}}"),
		       "point 'order': key_overrides 'u7': key_token_rate must be an integer 1..1000000000 (negative: off for this key)");
	expect_invalid(b, DOC("{\"key_overrides\": {\"u7\": {\"key_token_rate\": 1.5}}}"),
		       "point 'order': key_overrides 'u7': key_token_rate must be an integer 1..1000000000 (negative: off for this key)");
	expect_invalid(b, DOC("{\"key_overrides\": {\"u7\": {\"key_token_bucket\": 5}}}"),
		       "point 'order': key_overrides 'u7': key_token_bucket needs key_token_rate");
	expect_invalid(b, DOC("{\"key_token_rate\": 5, \"key_overrides\": {\"u7\": {\"key_token_rate\": -1, \"key_token_bucket\": 5}}}"),
		       "point 'order': key_overrides 'u7': key_token_bucket needs key_token_rate");
	/* A pressure rule's limits are no point's: no overrides there. */
	expect_invalid(b, "{\"version\": 1, \"points\": {\"order\": {}},"
		       " \"pressure\": [{\"resource\": \"cpu\", \"kind\": \"some\", \"above_pct\": 40,"
		       " \"for_ms\": 1000, \"action\": \"limits\","
		       " \"limits\": {\"order\": {\"key_overrides\": {\"u7\": {}}}}}]}",
		       "pressure rule 0: limits: key_overrides are a point's own, not a rule's");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_key_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_overrides, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_overrides_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_invalid, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
