// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of common/strategy.c's strategy_set_load_file(): a strategies
 * file read whole, bounded, refused with one line when it is not one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strategy_fixture.h"

/* ---- files ---------------------------------------------------------------- */

static char tmpdir[64];

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int file_setup(void **state)
{
	strcpy(tmpdir, "/tmp/sds-test-strategy-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	return setup(state);
}

static int file_teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		return -1;
	return teardown(state);
}

static void test_load_file(void **state)
{
	struct bufs *b = *state;
	char path[128], err[512] = "";

	snprintf(path, sizeof(path), "%s/ok.json", tmpdir);
	write_file(path, design_example, strlen(design_example));
	poison(b);
	assert_int_equal(strategy_set_load_file(path, b->out, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(b->out->version, 3);
	assert_int_equal(b->out->n, 1);
	assert_fields(&b->out->s[0], "order",
		      1000, SDS_OFF, SDS_OFF, SDS_OFF, 200, 10,
		      SDS_OFF, 40, 20, 100, SDS_OFF, SDS_OFF);
	/* The same as parsing the text. */
	assert_int_equal(parse(design_example, b->ref, err, sizeof(err)), 0);
	assert_memory_equal(b->out, b->ref, sizeof(*b->out));
}

static void test_load_big_file(void **state)
{
	struct bufs *b = *state;
	char path[128], err[512] = "";
	size_t cap = 64 * 1024, len = 0;
	char *text = malloc(cap);
	int i;

	/* Well over the first 4 KiB read buffer, and over 16 KiB. */
	assert_non_null(text);
	len += snprintf(text + len, cap - len, "{\"version\": 11, \"points\": {\n");
	for (i = 0; i < 200; i++)
		len += snprintf(text + len, cap - len,
				"%s  \"point_%03d\": {\"visit_threshold\": %d,"
				" \"timeout_ms\": %d, \"timeout_count_threshold\": 2}\n",
				i ? "," : "", i, i * 10, i + 1);
	len += snprintf(text + len, cap - len, "}}\n");
	assert_true(len > 16384 && len < cap);
	snprintf(path, sizeof(path), "%s/big.json", tmpdir);
	write_file(path, text, len);
	free(text);

	poison(b);
	assert_int_equal(strategy_set_load_file(path, b->out, err, sizeof(err)), 0);
	assert_int_equal(b->out->version, 11);
	assert_int_equal(b->out->n, 200);
	assert_fields(&b->out->s[0], "point_000", 0, SDS_OFF, SDS_OFF, SDS_OFF, 1,
		      2, SDS_OFF, SDS_OFF, SDS_OFF, 100, SDS_OFF, SDS_OFF);
	assert_fields(&b->out->s[199], "point_199", 1990, SDS_OFF, SDS_OFF,
		      SDS_OFF, 200, 2, SDS_OFF, SDS_OFF, SDS_OFF, 100, SDS_OFF,
		      SDS_OFF);
}

static void test_load_file_missing(void **state)
{
	struct bufs *b = *state;
	char path[128], err[512] = "untouched", msg[512];

	snprintf(path, sizeof(path), "%s/no-such-file.json", tmpdir);
	snprintf(msg, sizeof(msg), "%s: %s", path, strerror(ENOENT));
	poison(b);
	assert_int_equal(strategy_set_load_file(path, b->out, err, sizeof(err)), -1);
	assert_string_equal(err, msg);
	assert_memory_equal(b->out, b->ref, sizeof(*b->out));
	/* It is the path, then strerror: */
	snprintf(msg, sizeof(msg), "%s/no-such-file.json: No such file or directory",
		 tmpdir);
	assert_string_equal(err, msg);
}

/* @text in a file must be refused with "<path>: @msg". */
static void expect_invalid_file(struct bufs *b, const char *name,
				const char *text, const char *msg)
{
	char path[128], err[512] = "untouched", want[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	write_file(path, text, strlen(text));
	snprintf(want, sizeof(want), "%s: %s", path, msg);
	poison(b);
	assert_int_equal(strategy_set_load_file(path, b->out, err, sizeof(err)), -1);
	assert_string_equal(err, want);
	assert_memory_equal(b->out, b->ref, sizeof(*b->out));
}

static void test_load_file_invalid(void **state)
{
	struct bufs *b = *state;

	expect_invalid_file(b, "field.json", DOC("{\"exception_rate_threshold\": 101}"),
			    "point 'order': exception_rate_threshold must be an integer 0..100");
	expect_invalid_file(b, "version.json", "{\"version\": -1}",
			    "version must be a non-negative integer");
	expect_invalid_file(b, "syntax.json", "{\"version\": 3,\n \"points\": {\"a\": {\"x\": }}}",
			    "bad JSON at line 2 column 24: unexpected token near '}'");
	expect_invalid_file(b, "empty.json", "",
			    "bad JSON at line 1 column 0: '[' or '{' expected near end of file");
	expect_invalid_file(b, "dup.json", "{\"version\":1,\"version\":2}",
			    "bad JSON at line 1 column 22: duplicate object key near '\"version\"'");
}

static void test_load_file_directory(void **state)
{
	struct bufs *b = *state;
	char err[512] = "untouched", want[512];

	/* fopen() opens a directory; reading it fails. */
	snprintf(want, sizeof(want), "%s: read error", tmpdir);
	poison(b);
	assert_int_equal(strategy_set_load_file(tmpdir, b->out, err, sizeof(err)), -1);
	assert_string_equal(err, want);
	assert_memory_equal(b->out, b->ref, sizeof(*b->out));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_load_file, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(test_load_big_file, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(test_load_file_missing, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(test_load_file_invalid, file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(test_load_file_directory, file_setup, file_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
