// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests of common/names.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <stdio.h>
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

/* A point may be a provider of a dependency: "<dep>@<provider>". */
static void test_point_name_valid(void **state)
{
	char s[64 + 2];

	(void)state;
	assert_true(sds_point_name_valid("order"));
	assert_true(sds_point_name_valid("pay@p0"));
	assert_true(sds_point_name_valid("a@b"));
	assert_false(sds_name_valid("pay@p0"));		/* apps and groups: no '@' */
	assert_false(sds_point_name_valid(NULL));
	assert_false(sds_point_name_valid(""));
	assert_false(sds_point_name_valid("@"));
	assert_false(sds_point_name_valid("@p0"));
	assert_false(sds_point_name_valid("pay@"));
	assert_false(sds_point_name_valid("a@b@c"));
	assert_false(sds_point_name_valid("a@@b"));
	assert_false(sds_point_name_valid("a@b.c"));
	/* 64 characters in all, the '@' included. */
	memset(s, 'x', 64);
	s[10] = '@';
	s[64] = '\0';
	assert_true(sds_point_name_valid(s));
	s[64] = 'x';
	s[64 + 1] = '\0';
	assert_false(sds_point_name_valid(s));
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

static void fill(char *s, char c, int n)
{
	memset(s, c, n);
	s[n] = '\0';
}

/* The plain name whenever the path fits: what every existing app has. */
static void test_sock_plain(void **state)
{
	char path[128], g[80], a[80];

	assert_int_equal(sds_sock_path("/run/sds", "shop", "frontend", path,
				       sizeof(path)), 0);
	assert_string_equal(path, "/run/sds/shop.frontend.sock");
	/* Trailing slashes do not count. */
	assert_int_equal(sds_sock_path("/run/sds//", "g", "a", path, sizeof(path)), 0);
	assert_string_equal(path, "/run/sds/g.a.sock");
	assert_int_equal(sds_sock_path("/", "g", "a", path, sizeof(path)), 0);
	assert_string_equal(path, "/g.a.sock");
	/* 9 + 1 + 92 + 5 = 107: the longest plain path under /run/sds. */
	fill(g, 'g', 28);
	fill(a, 'a', 64);
	assert_int_equal(sds_sock_path("/run/sds", g, a, path, sizeof(path)), 0);
	assert_int_equal(strlen(path), 107);
	assert_non_null(strstr(path, "/gggggggggggggggggggggggggggg.aaaa"));
}

/* Two 64-character names under /run/sds: hashed, exactly 107 bytes. */
static void test_sock_hashed(void **state)
{
	char path[128], want[256], g[80], a[80];

	fill(g, 'g', 64);
	fill(a, 'a', 64);
	assert_int_equal(sds_sock_path("/run/sds", g, a, path, sizeof(path)), 0);
	assert_int_equal(strlen(path), 107);
	/* room 93 - 18 = 75: the group 37, the app 38. */
	snprintf(want, sizeof(want), "/run/sds/%.37s.%.38s.%016llx.sock", g, a,
		 (unsigned long long)sds_sock_hash(g, a));
	assert_string_equal(path, want);
	/* A short group keeps its whole name, the app takes the rest. */
	fill(g, 'g', 29);
	assert_int_equal(sds_sock_path("/run/sds", g, a, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "/run/sds/%s.%.46s.%016llx.sock", g, a,
		 (unsigned long long)sds_sock_hash(g, a));
	assert_string_equal(path, want);
}

/* FNV-1a of "group\0app": fixed values, the same in loader and libsds. */
static void test_sock_hash(void **state)
{
	assert_int_equal(sds_sock_hash("", ""), 0xaf63bd4c8601b7dfULL);
	assert_true(sds_sock_hash("ab", "c") != sds_sock_hash("a", "bc"));
	assert_true(sds_sock_hash("a", "b") == sds_sock_hash("a", "b"));
}

/*
 * Every directory length and name length: a name fits sun_path whenever
 * it is given, and one is given unless even "g.a.<hash>" cannot fit.
 */
static void test_sock_always_fits(void **state)
{
	char dir[128], path[256], stem[SDS_SOCK_STEM_MAX + 1], g[80], a[80];
	int d, gl, al, dots;
	const char *s;

	for (d = 2; d < 110; d++) {
		dir[0] = '/';
		fill(dir + 1, 'd', d - 1);
		for (gl = 1; gl <= 64; gl += 7) {
			for (al = 1; al <= 64; al += 3) {
				int r;

				fill(g, 'G', gl);
				fill(a, 'A', al);
				r = sds_sock_path(dir, g, a, path, sizeof(path));
				if (d + 1 + gl + 1 + al + 5 <= SDS_SUN_PATH_MAX) {
					assert_int_equal(r, 0);
					assert_int_equal(strlen(path), d + gl + al + 7);
				} else if (d + 1 + SDS_SOCK_STEM_MIN + 5 <= SDS_SUN_PATH_MAX) {
					assert_int_equal(r, 0);
					assert_int_equal(strlen(path), SDS_SUN_PATH_MAX);
					assert_int_equal(sds_sock_stem(d, g, a, stem, sizeof(stem)),
							 SDS_SUN_PATH_MAX - d - 6);
					for (dots = 0, s = stem; (s = strchr(s, '.')); s++)
						dots++;
					assert_int_equal(dots, 2);
					assert_true(stem[0] == 'G' && strstr(stem, ".A"));
				} else {
					assert_int_equal(r, -1);
				}
			}
		}
	}
	/* Invalid names have no socket. */
	assert_int_equal(sds_sock_path("/run/sds", "a.b", "c", path, sizeof(path)), -1);
	assert_int_equal(sds_sock_path("/run/sds", "a", "", path, sizeof(path)), -1);
	/* Nor does a buffer too small. */
	assert_int_equal(sds_sock_path("/run/sds", "g", "a", path, 10), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_valid),
		cmocka_unit_test(test_point_name_valid),
		cmocka_unit_test(test_name_sanitize),
		cmocka_unit_test(test_name_sanitize_small_buffer),
		cmocka_unit_test(test_sock_plain),
		cmocka_unit_test(test_sock_hashed),
		cmocka_unit_test(test_sock_hash),
		cmocka_unit_test(test_sock_always_fits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
