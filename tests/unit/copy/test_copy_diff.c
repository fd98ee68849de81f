// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests of copy/diff/diff.c: --ignore rules and replay --diff's comparison. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "diff.h"

#define RESP "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n" \
	"Date: %s\r\n\r\n%s"

static char a[1024], b[1024];

static size_t http(char *out, const char *date, const char *body)
{
	return (size_t)snprintf(out, 1024, RESP, (int)strlen(body), date, body);
}

/* Compare with rules @specs (NULL-terminated); the verdict, @res set. */
static int cmp(const char *const *specs, const char *x, size_t xl, const char *y,
	       size_t yl, struct diff_result *res)
{
	struct diff_rules r;
	char err[256];
	int rc;

	memset(&r, 0, sizeof(r));
	for (; specs && *specs; specs++)
		if (diff_rules_add(&r, *specs, err, sizeof(err)))
			fail_msg("%s refused: %s", *specs, err);
	rc = diff_compare(&r, (const uint8_t *)x, xl, (const uint8_t *)y, yl, res);
	diff_rules_free(&r);
	return rc;
}

static void test_json_paths(void **state)
{
	static const char *const date[] = { "header:date", NULL };
	static const char *const price[] = { "header:Date", "$.items[1].price", NULL };
	static const char *const any[] = { "header:Date", "items[*].price", NULL };
	struct diff_result res;
	size_t al, bl;

	al = http(a, "Mon", "{\"id\":1,\"items\":[{\"price\":3},{\"price\":4}],\"ts\":10}");
	bl = http(b, "Tue", "{\"ts\":10,\"items\":[{\"price\":3},{\"price\":5}],\"id\":1}");
	/* The Date header differs first. */
	assert_int_equal(cmp(NULL, a, al, b, bl, &res), 1);
	assert_string_equal(res.where, "header Date");
	assert_string_equal(res.recorded, "Mon");
	/* Keys in any order; the first difference by its path. */
	assert_int_equal(cmp(date, a, al, b, bl, &res), 1);
	assert_string_equal(res.where, "$.items[1].price");
	assert_string_equal(res.recorded, "4");
	assert_string_equal(res.shadow, "5");
	assert_int_equal(cmp(price, a, al, b, bl, &res), 0);
	assert_int_equal(cmp(any, a, al, b, bl, &res), 0);
	/* A key only one side has; an array of another length. */
	al = http(a, "d", "{\"a\":{\"b\":1}}");
	bl = http(b, "d", "{\"a\":{\"b\":1,\"c\":2}}");
	assert_int_equal(cmp(NULL, a, al, b, bl, &res), 1);
	assert_string_equal(res.where, "$.a.c");
	assert_string_equal(res.recorded, "(absent)");
	al = http(a, "d", "[1,2]");
	bl = http(b, "d", "[1,2,3]");
	assert_int_equal(cmp(NULL, a, al, b, bl, &res), 1);
	assert_string_equal(res.where, "$[2]");
}

static void test_status_bytes_regex(void **state)
{
	static const char *const ts[] = { "/ts=[0-9]+/", NULL };
	struct diff_result res;
	size_t bl;

	bl = (size_t)snprintf(b, sizeof(b), "HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n");
	http(a, "d", "{}");
	assert_int_equal(cmp(NULL, a, strlen(a), b, bl, &res), 1);
	assert_string_equal(res.where, "status");
	assert_string_equal(res.recorded, "200");
	assert_string_equal(res.shadow, "500");
	/* Not JSON: bytes, from the first that differs; a regex removes. */
	assert_int_equal(cmp(NULL, "ok ts=1 x", 9, "ok ts=22 x", 10, &res), 1);
	assert_string_equal(res.where, "body byte 6");
	assert_int_equal(cmp(ts, "ok ts=1 x", 9, "ok ts=22 x", 10, &res), 0);
	/* A recorded bare body against an HTTP answer: its body. */
	http(b, "d", "pong");
	assert_int_equal(cmp(NULL, "pong", 4, b, strlen(b), &res), 0);
	/* Content-Length is framing: a shorter value, ignored, is the same. */
	{
		static const char *const v[] = { "header:Date", "$.v", NULL };
		size_t al = http(a, "d", "{\"v\":100}"), bl2 = http(b, "d", "{\"v\":1}");

		assert_int_equal(cmp(v, a, al, b, bl2, &res), 0);
	}
}

static void test_rules_refused(void **state)
{
	static const char *const bad[] = {
		"", "$..a", "a[x]", "$.a[", "$.a]", "/abc", "/[/", "header:", "header:a b",
		"$.a b", ".a",
	};
	static const char *const good[] = {
		"$", "$.a", "a", "a.b", "$.a[0].b", "$[*]", "*.x", "/x/", "header:X-Id",
	};
	struct diff_rules r;
	char err[256];
	size_t i;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(diff_rules_add(&r, bad[i], err, sizeof(err)), -1);
		assert_non_null(strstr(err, "--ignore '"));
		assert_null(strchr(err, '\n'));
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(diff_rules_add(&r, good[i], err, sizeof(err)), 0);
	diff_rules_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_paths),
		cmocka_unit_test(test_status_bytes_regex),
		cmocka_unit_test(test_rules_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
