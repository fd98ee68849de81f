// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libsds with no loader (the whole library, real probe sites, built with
 * ASan and UBSan): a usable client, points, never a downgrade, NULL
 * accepted everywhere, and nothing left behind by close.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sds.h"

static char run_dir[] = "/tmp/sds-noloader-XXXXXX";

/* Entries of a /proc/self directory: open fds, threads. */
static int count_dir(const char *path)
{
	struct dirent *d;
	DIR *dir = opendir(path);
	int n = 0;

	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

static int setup(void **state)
{
	/* An empty run directory: no loader can be there. */
	if (!mkdtemp(run_dir))
		return -1;
	return setenv("SDS_RUN_DIR", run_dir, 1);
}

static int teardown(void **state)
{
	rmdir(run_dir);
	return 0;
}

static void test_detached_never_downgrades(void **state)
{
	struct sds_client *c = sds_client_open("grp", "app");
	struct sds_point *p, *q;
	int i, down = 0;

	assert_non_null(c);
	p = sds_point(c, "order");
	assert_non_null(p);
	/* The same name is the same point. */
	assert_ptr_equal(sds_point(c, "order"), p);
	q = sds_point(c, "stock");
	assert_non_null(q);
	assert_ptr_not_equal(p, q);

	for (i = 0; i < 1000000; i++) {
		down += sds_should_downgrade(p);
		if (i % 7 == 0)
			sds_exception_sign(p);
		sds_downgrade_finally(p);
	}
	assert_int_equal(down, 0);
	/* Unbalanced use does no harm either. */
	sds_downgrade_finally(p);
	sds_exception_sign(q);
	for (i = 0; i < 1000; i++)
		assert_false(sds_should_downgrade(q));
	for (i = 0; i < 1000; i++)
		sds_downgrade_finally(q);
	sds_client_close(c);
}

static int calls;	/* evaluations of expr() */
static int fallbacks;	/* evaluations of fallback() */

static int expr(int v)
{
	calls++;
	return v;
}

static int fallback(void)
{
	fallbacks++;
	return -1;
}

static void test_invoke(void **state)
{
	struct sds_client *c = sds_client_open("grp", "app");
	struct sds_point *p = sds_point(c, "invoke");
	const char *s;
	int r, i;

	calls = fallbacks = 0;
	r = SDS_INVOKE(p, fallback(), expr(42));
	assert_int_equal(r, 42);
	assert_int_equal(calls, 1);
	assert_int_equal(fallbacks, 0);
	for (i = 0; i < 1000; i++)
		assert_int_equal(SDS_INVOKE(p, fallback(), expr(i)), i);
	assert_int_equal(calls, 1001);
	assert_int_equal(fallbacks, 0);
	/* Mixed types take the common type; NULL points pass too. */
	s = SDS_INVOKE(p, NULL, "ok");
	assert_string_equal(s, "ok");
	assert_int_equal(SDS_INVOKE((struct sds_point *)NULL, 0, expr(7)), 7);
	assert_true(SDS_INVOKE(p, 0.5, 2) == 2.0);
	sds_client_close(c);
}

static void test_null_everywhere(void **state)
{
	struct sds_client *c;
	struct sds_point *p;

	assert_null(sds_point(NULL, "x"));
	assert_false(sds_should_downgrade(NULL));
	sds_exception_sign(NULL);
	sds_downgrade_finally(NULL);
	sds_client_close(NULL);

	/* Invalid names: a client and points that stay detached. */
	c = sds_client_open(NULL, NULL);
	assert_non_null(c);
	p = sds_point(c, "x");
	assert_non_null(p);
	assert_false(sds_should_downgrade(p));
	sds_downgrade_finally(p);
	sds_client_close(c);

	c = sds_client_open("a.b", "app");
	assert_non_null(c);
	sds_client_close(c);
	c = sds_client_open("grp", "");
	assert_non_null(c);
	sds_client_close(c);

	c = sds_client_open("grp", "app");
	p = sds_point(c, NULL);
	assert_non_null(p);
	assert_false(sds_should_downgrade(p));
	sds_exception_sign(p);
	sds_downgrade_finally(p);
	assert_non_null(sds_point(c, "with space"));
	assert_non_null(sds_point(c, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	sds_client_close(c);
}

static void test_long_run_dir(void **state)
{
	char dir[300];
	struct sds_client *c;

	/* Longer than a socket path can be: detached, not a failure. */
	memset(dir, 'd', sizeof(dir) - 1);
	dir[0] = '/';
	dir[sizeof(dir) - 1] = '\0';
	setenv("SDS_RUN_DIR", dir, 1);
	c = sds_client_open("grp", "app");
	assert_non_null(c);
	assert_false(sds_should_downgrade(sds_point(c, "p")));
	sds_client_close(c);
	setenv("SDS_RUN_DIR", run_dir, 1);
}

static void test_no_leaks(void **state)
{
	struct sds_client *c[8];
	int fds, tasks, i, j;

	fds = count_dir("/proc/self/fd");
	tasks = count_dir("/proc/self/task");
	for (j = 0; j < 3; j++) {
		for (i = 0; i < 8; i++) {
			c[i] = sds_client_open("grp", "app");
			assert_non_null(sds_point(c[i], "a"));
		}
		/* One thread per client while open. */
		assert_int_equal(count_dir("/proc/self/task"), tasks + 8);
		for (i = 0; i < 8; i++)
			sds_client_close(c[i]);
		assert_int_equal(count_dir("/proc/self/fd"), fds);
		assert_int_equal(count_dir("/proc/self/task"), tasks);
	}
	/* Clients with invalid names start no thread and open nothing. */
	c[0] = sds_client_open("bad.name", "app");
	assert_int_equal(count_dir("/proc/self/task"), tasks);
	assert_int_equal(count_dir("/proc/self/fd"), fds);
	sds_client_close(c[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detached_never_downgrades),
		cmocka_unit_test(test_invoke),
		cmocka_unit_test(test_null_everywhere),
		cmocka_unit_test(test_long_run_dir),
		cmocka_unit_test(test_no_leaks),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
