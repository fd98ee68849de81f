// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/host/psi.c: PSI's text parsed as hostile input,
 * and the files read through fds opened once (a directory of this test's
 * own stands for /proc/pressure).
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
#include <unistd.h>

#include "host/psi.h"

#define GOOD	"some avg10=1.50 avg60=0.20 avg300=0.03 total=123456\n" \
		"full avg10=0.00 avg60=0.00 avg300=0.00 total=789\n"

static int parse(const char *text, uint64_t *some, uint64_t *full)
{
	return psi_parse(text, strlen(text), some, full);
}

static void test_parse_good(void **state)
{
	uint64_t some = 1, full = 1;

	(void)state;
	assert_int_equal(parse(GOOD, &some, &full), 0);
	assert_int_equal(some, 123456);
	assert_int_equal(full, 789);
	/* A kernel before 5.13 has no cpu "full" line: 0. */
	assert_int_equal(parse("some avg10=100.00 avg60=99.99 avg300=0.00 total=18446744073709551\n",
			       &some, &full), 0);
	assert_int_equal(some, 18446744073709551ULL);
	assert_int_equal(full, 0);
}

static void test_parse_hostile(void **state)
{
	static const char *const bad[] = {
		"",
		"\n",
		"some avg10=1.50 avg60=0.20 avg300=0.03 total=123456",		/* no newline */
		"some avg10=1.50 avg60=0.20 avg300=0.03 total=\n",
		"some avg10=1.50 avg60=0.20 avg300=0.03 total=-5\n",
		"some avg10=1.50 avg60=0.20 avg300=0.03 total=12345678901234567890\n",	/* 20 digits */
		"some avg10=1.5 avg60=0.20 avg300=0.03 total=1\n",
		"some avg10=12345.00 avg60=0.20 avg300=0.03 total=1\n",
		"some  avg10=1.50 avg60=0.20 avg300=0.03 total=1\n",
		"some avg60=0.20 avg10=1.50 avg300=0.03 total=1\n",
		"full avg10=1.50 avg60=0.20 avg300=0.03 total=1\n",		/* some first */
		GOOD "full avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",	/* a third line */
		"some avg10=1.50 avg60=0.20 avg300=0.03 total=1\nsome avg10=1.50 avg60=0.20 avg300=0.03 total=1\n",
		"some avg10=1.50 avg60=0.20 avg300=0.03 total=1 \n",
		"some avg10=1.50 avg60=0.20 avg300=0.03 total=1\nfull",
	};
	uint64_t some = 7, full = 8;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], &some, &full) != -1)
			fail_msg("accepted %zu: %s", i, bad[i]);
		assert_int_equal(some, 7);
		assert_int_equal(full, 8);
	}
	/* A NUL inside is no digit. */
	assert_int_equal(psi_parse("some avg10=1.50 avg60=0.20 avg300=0.03 total=1\0\n", 49,
				   &some, &full), -1);
}

static void test_open_and_read(void **state)
{
	char dir[] = "/tmp/sds-psi-XXXXXX", path[64], err[128];
	uint64_t some, full;
	struct psi p;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cpu", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(GOOD, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/io", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	/* Larger than any PSI text: refused, never cut to a prefix that parses. */
	fputs(GOOD, f);
	for (int i = 0; i < 300; i++)
		fputc(' ', f);
	fclose(f);
	/* memory: a symlink, which the loader never follows. */
	snprintf(path, sizeof(path), "%s/memory", dir);
	assert_int_equal(symlink("/proc/pressure/memory", path), 0);

	assert_int_equal(psi__open(&p, dir, err, sizeof(err)), 0);
	assert_string_equal(p.dir, dir);
	assert_true(psi__has(&p, SDS_PSI_CPU));
	assert_false(psi__has(&p, SDS_PSI_MEMORY));
	assert_true(psi__has(&p, SDS_PSI_IO));
	assert_false(psi__has(&p, SDS_PSI_NRES));
	assert_int_equal(psi__read(&p, SDS_PSI_CPU, &some, &full), 0);
	assert_int_equal(some, 123456);
	assert_int_equal(full, 789);
	/* pread at 0: a second read sees the file again, not its end. */
	assert_int_equal(psi__read(&p, SDS_PSI_CPU, &some, &full), 0);
	assert_int_equal(psi__read(&p, SDS_PSI_IO, &some, &full), -1);
	assert_int_equal(psi__read(&p, SDS_PSI_MEMORY, &some, &full), -1);
	psi__close(&p);
	assert_false(psi__has(&p, SDS_PSI_CPU));
	unlink(path);
	snprintf(path, sizeof(path), "%s/io", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/cpu", dir);
	unlink(path);
	rmdir(dir);
}

static void test_open_dir_too_long(void **state)
{
	char dir[300], err[128];
	struct psi p;

	(void)state;
	memset(dir, 'a', sizeof(dir) - 1);
	dir[0] = '/';
	dir[sizeof(dir) - 1] = '\0';
	assert_int_equal(psi__open(&p, dir, err, sizeof(err)), -1);
	assert_string_equal(err, "pressure directory /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...: too long");
	assert_false(psi__has(&p, SDS_PSI_CPU));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_hostile),
		cmocka_unit_test(test_open_and_read),
		cmocka_unit_test(test_open_dir_too_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
