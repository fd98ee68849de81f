// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests of common/names.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "names.h"

static void test_name_valid(void **state)
{
	char s[80];

	assert_true(sds_name_valid("a"));
	assert_true(sds_name_valid("order"));
	assert_true(sds_name_valid("Order_2-x"));
	assert_true(sds_name_valid("-_-"));
	assert_true(sds_name_valid("0123456789"));
	assert_true(sds_name_valid("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"));

	assert_false(sds_name_valid(NULL));
	assert_false(sds_name_valid(""));
	assert_false(sds_name_valid("a.b"));
	assert_false(sds_name_valid("a b"));
	assert_false(sds_name_valid("a/b"));
	assert_false(sds_name_valid("a=b"));
	assert_false(sds_name_valid("a:b"));
	assert_false(sds_name_valid("tab\t"));
	assert_false(sds_name_valid("\xc3\xa9t\xc3\xa9"));	/* UTF-8 "été" */

	memset(s, 'x', 64);
	s[64] = '\0';
	assert_true(sds_name_valid(s));
	s[64] = 'x';
	s[65] = '\0';
	assert_false(sds_name_valid(s));
}

static void test_name_sanitize(void **state)
{
	char out[80], in[100];

	assert_string_equal(sds_name_sanitize("myapp", out, sizeof(out)), "myapp");
	assert_ptr_equal(sds_name_sanitize("x", out, sizeof(out)), out);
	assert_string_equal(sds_name_sanitize("my.app", out, sizeof(out)), "my_app");
	assert_string_equal(sds_name_sanitize("libfoo.so.1", out, sizeof(out)), "libfoo_so_1");
	assert_string_equal(sds_name_sanitize("a b/c:d", out, sizeof(out)), "a_b_c_d");
	/* Each byte of a multi-byte character becomes one '_'. */
	assert_string_equal(sds_name_sanitize("\xc3\xa9", out, sizeof(out)), "__");
	assert_string_equal(sds_name_sanitize("", out, sizeof(out)), "app");
	assert_string_equal(sds_name_sanitize(NULL, out, sizeof(out)), "app");
	assert_true(sds_name_valid(sds_name_sanitize("..", out, sizeof(out))));

	/* Cut to 64 characters. */
	memset(in, 'a', 99);
	in[99] = '\0';
	sds_name_sanitize(in, out, sizeof(out));
	assert_int_equal(strlen(out), 64);
	assert_true(sds_name_valid(out));
}

static void test_name_sanitize_small_buffer(void **state)
{
	char out[8];

	memset(out, '#', sizeof(out));
	assert_string_equal(sds_name_sanitize("abcdefgh", out, 5), "abcd");
	assert_int_equal(out[5], '#');
	assert_string_equal(sds_name_sanitize("abc", out, 1), "");
	/* Nothing can be written into no room at all. */
	out[0] = '#';
	assert_ptr_equal(sds_name_sanitize("abc", out, 0), out);
	assert_int_equal(out[0], '#');
	assert_string_equal(sds_name_sanitize("", out, 3), "ap");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_valid),
		cmocka_unit_test(test_name_sanitize),
		cmocka_unit_test(test_name_sanitize_small_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
