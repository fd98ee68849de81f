// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/report/hostid.c: the heartbeat's "NAME_ID".  The id is
 * read from a machine-id(5) file: exactly 32 hex digits, a newline or the
 * end after them, not all zeros; anything else leaves NAME alone.  The id
 * shown is fixed by the file (FNV-1a 64 of the key and the lowercase id,
 * its top 48 bits): a changed hash would split every host's history.
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

#include "heartbeat/heartbeat.h"
#include "report/hostid.h"

static char dir[64], path[128], host[SDS_HB_HOST_MAX + 1];
static char out[SDS_HB_HOST_MAX + 1], plain[SDS_HB_HOST_MAX + 1];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/sds-hostid-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/machine-id", dir);
	if (gethostname(host, sizeof(host)) || !heartbeat_host_valid(host))
		snprintf(host, sizeof(host), "localhost");
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	return rmdir(dir);
}

/* hostid__name() with @text (NULL: no file) as the machine id. */
static void name_with(const char *text)
{
	FILE *f;

	unlink(path);
	if (text) {
		f = fopen(path, "w");
		assert_non_null(f);
		assert_int_equal(fputs(text, f) >= 0, 1);
		assert_int_equal(fclose(f), 0);
	}
	memset(out, 'x', sizeof(out));
	memset(plain, 'x', sizeof(plain));
	hostid__name(path, out, plain, sizeof(out));
	assert_string_equal(plain, host);
}

static void test_id(void **state)
{
	char want[sizeof(out) + 16];

	snprintf(want, sizeof(want), "%s_1853ff555f53", host);
	name_with("0123456789abcdef0123456789abcdef\n");
	assert_string_equal(out, want);
	/* Upper case is the same id; so is a file without the newline. */
	name_with("0123456789ABCDEF0123456789abcdef");
	assert_string_equal(out, want);
	/* What follows the line is not the id's. */
	name_with("0123456789abcdef0123456789abcdef\nxyz\n");
	assert_string_equal(out, want);
	name_with("fedcba9876543210fedcba9876543210\n");
	assert_int_equal(strlen(out), strlen(host) + 1 + HOSTID_DIGITS);
	assert_string_not_equal(out, want);
}

static void test_no_id(void **state)
{
	static const char *bad[] = {
		"",
		"\n",
		"0123456789abcdef0123456789abcde\n",	/* 31 digits */
		"0123456789abcdef0123456789abcdef0\n",	/* 33 digits */
		"0123456789abcdef0123456789abcdeg\n",	/* not hex */
		" 0123456789abcdef0123456789abcdef\n",
		"00000000000000000000000000000000\n",	/* an image's placeholder */
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		name_with(bad[i]);
		assert_string_equal(out, host);
	}
	name_with(NULL);
	assert_string_equal(out, host);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_id),
		cmocka_unit_test(test_no_id),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
