// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of common/tokfile.c: token files are read like ssh reads a
 * key.  Runs as root (make unit): the other-owner case chowns to nobody.
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
#include <sys/stat.h>
#include <unistd.h>

#include "tokfile.h"

static char dir[64], path[128];
static char tok[SDS_TOKEN_MAX + 1], err[600];

static void put(const char *text, size_t len, mode_t mode)
{
	FILE *f;

	unlink(path);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static int rd(void)
{
	return tokfile_read_token("--token-file", path, tok, err, sizeof(err));
}

#define T16	"sixteen-byte-t0k"	/* the shortest token taken */

static void test_modes(void **state)
{
	static const mode_t bad[] = { 0644, 0640, 0604, 0660, 0700, 0606, 0000, 04600 };
	char want[200];
	size_t i;

	put("  " T16 "\n", 19, 0600);
	assert_int_equal(rd(), 0);
	assert_string_equal(tok, T16);
	put(T16, 16, 0400);
	assert_int_equal(rd(), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(T16, 16, bad[i]);
		assert_int_equal(rd(), -1);
		snprintf(want, sizeof(want), "--token-file %s: mode %04o is too open: must be 0600 or 0400",
			 path, (unsigned int)bad[i]);
		assert_string_equal(err, want);
	}
}

static void test_owner(void **state)
{
	char want[200];

	if (geteuid() != 0)
		fail_msg("test_owner needs root (chown)");
	put(T16, 16, 0600);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(rd(), -1);
	snprintf(want, sizeof(want), "--token-file %s: owned by uid 65534, not by uid 0 that reads it",
		 path);
	assert_string_equal(err, want);
}

/* The read failed with exactly "--token-file PATH: @why". */
static void refused(const char *why)
{
	char want[300];

	assert_int_equal(rd(), -1);
	snprintf(want, sizeof(want), "--token-file %s: %s", path, why);
	assert_string_equal(err, want);
}

static void test_content(void **state)
{
	char big[SDS_TOKEN_MAX + 80];

	put("\n \t\n", 4, 0600);
	refused("no token in the file");
	put("a b", 3, 0600);
	refused("the token must be printable ASCII without spaces");
	put("t\x7fk", 3, 0600);
	refused("the token must be printable ASCII without spaces");
	/* 16 bytes at least: 15 is refused, 16 taken. */
	put(T16, 15, 0600);
	refused("a token of 15 bytes: at least 16 are needed (e.g. head -c 24 /dev/urandom | base64)");
	put("\n" T16 "\n", 18, 0600);
	assert_int_equal(rd(), 0);
	assert_string_equal(tok, T16);
	/* The longest token, alone or in white space, is taken whole. */
	memset(big, 'x', sizeof(big));
	put(big, SDS_TOKEN_MAX, 0600);
	assert_int_equal(rd(), 0);
	assert_int_equal(strlen(tok), SDS_TOKEN_MAX);
	big[0] = ' ';
	memcpy(big + 1 + SDS_TOKEN_MAX, "\r\n", 2);
	put(big, SDS_TOKEN_MAX + 3, 0600);
	assert_int_equal(rd(), 0);
	assert_int_equal(strlen(tok), SDS_TOKEN_MAX);
	assert_int_equal(tok[0], 'x');
	/* One byte more, or a file longer than any token and its spaces. */
	memset(big, 'x', sizeof(big));
	put(big, SDS_TOKEN_MAX + 1, 0600);
	refused("token longer than 4096 bytes");
	put(big, sizeof(big), 0600);
	refused("token longer than 4096 bytes");
	unlink(path);
	refused("No such file or directory");
	/* A FIFO is never opened for a read that could hang. */
	assert_int_equal(mkfifo(path, 0600), 0);
	refused("not a regular file");
	unlink(path);
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/test_tokfile.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/token", dir);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_owner),
		cmocka_unit_test(test_content),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
