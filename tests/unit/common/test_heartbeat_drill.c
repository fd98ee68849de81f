// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of common/heartbeat/heartbeat_drill.c: the reply's "drills" as every
 * loader parses them from the admin — each field's bound, an explicit
 * null "errno", the array's size; and errnames.c's list of names.  The
 * round trip and an unknown or misplaced "errno" are in
 * tests/admin/unit/test_heartbeat.c (test_reply_drill_errno).  And the
 * drills' counter: parsed, and a lower one than the list kept refused
 * until the counter has stayed back SDS_HB_DRILLS_STALE_MS.
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

#include "errnames.h"
#include "heartbeat/heartbeat.h"

static struct sds_hb_reply r;
static char err[256];

#define HEAD	"{\"version\": 7, \"changed\": false, \"drills\": "

static int parse(const char *text)
{
	err[0] = '\0';
	return heartbeat_reply_parse(text, strlen(text), &r, err, sizeof(err));
}

static void test_drills_seq(void **state)
{
	assert_int_equal(parse(HEAD "[], \"drills_seq\": 12}"), 0);
	assert_true(r.has_drills_seq);
	assert_int_equal(r.drills_seq, 12);
	assert_int_equal(parse(HEAD "[]}"), 0);
	assert_false(r.has_drills_seq);
	assert_int_equal(parse(HEAD "[], \"drills_seq\": -1}"), -1);
	assert_string_equal(err, "drills_seq must be a non-negative integer");
	assert_int_equal(parse(HEAD "[], \"drills_seq\": \"3\"}"), -1);
	assert_string_equal(err, "drills_seq must be a non-negative integer");

	/* Kept: counter 5, taken at 1,000,000 ms. */
	assert_true(heartbeat_drills_newer(true, 5, 5, 1000000, 1000001));
	assert_true(heartbeat_drills_newer(true, 6, 5, 1000000, 1000001));
	assert_false(heartbeat_drills_newer(true, 4, 5, 1000000, 1000001));
	assert_false(heartbeat_drills_newer(true, 4, 5, 1000000, 1000000 + SDS_HB_DRILLS_STALE_MS - 1));
	assert_true(heartbeat_drills_newer(true, 4, 5, 1000000, 1000000 + SDS_HB_DRILLS_STALE_MS));
	assert_true(heartbeat_drills_newer(false, 0, 5, 1000000, 1000001));
	assert_true(heartbeat_drills_newer(true, 0, 0, 0, 1));
}

static void test_errno(void **state)
{
	assert_int_equal(parse(HEAD "[{\"id\": 3, \"point\": \"pay\", \"kind\": \"error\","
			       " \"ratio\": 40, \"delay_ms\": 0, \"expires_at\": 1700000000,"
			       " \"errno\": \"ETIMEDOUT\"},"
			       " {\"id\": 4, \"point\": \"db\", \"kind\": \"delay\", \"ratio\": 100,"
			       " \"delay_ms\": 250, \"expires_at\": 1700000060, \"errno\": null}]}"), 0);
	assert_int_equal(r.version, 7);
	assert_int_equal(r.ndrills, 2);
	assert_int_equal(r.drills[0].id, 3);
	assert_string_equal(r.drills[0].point, "pay");
	assert_int_equal(r.drills[0].kind, SDS_DRILL_ERROR);
	assert_int_equal(r.drills[0].ratio, 40);
	assert_int_equal(r.drills[0].expires_at, 1700000000);
	assert_int_equal(r.drills[0].err, ETIMEDOUT);
	assert_int_equal(r.drills[1].id, 4);
	assert_int_equal(r.drills[1].kind, SDS_DRILL_DELAY);
	assert_int_equal(r.drills[1].delay_ms, 250);
	assert_int_equal(r.drills[1].err, 0);
}

static void test_bad_fields(void **state)
{
	static const struct { const char *drill, *msg; } bad[] = {
		{ "\"kind\": \"error\", \"ratio\": 1, \"delay_ms\": 0, \"expires_at\": 1, \"errno\": 110",
		  "drills[0].errno must be an errno name (ETIMEDOUT, ...) of an error drill" },
		{ "\"kind\": \"error\", \"ratio\": 101, \"delay_ms\": 0, \"expires_at\": 1",
		  "drills[0].ratio must be an integer 0..100" },
		{ "\"kind\": \"delay\", \"ratio\": 1, \"delay_ms\": 60001, \"expires_at\": 1",
		  "drills[0].delay_ms must be an integer 1..60000" },
		{ "\"kind\": \"delay\", \"ratio\": 1, \"delay_ms\": 0, \"expires_at\": 1",
		  "drills[0].delay_ms must be an integer 1..60000" },
		{ "\"kind\": \"hang\", \"ratio\": 1, \"delay_ms\": 0, \"expires_at\": 1",
		  "drills[0].kind must be \"error\" or \"delay\"" },
		{ "\"kind\": \"error\", \"ratio\": 1, \"delay_ms\": 0, \"expires_at\": -1",
		  "drills[0].expires_at must be Unix seconds" },
	};
	char text[512];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), HEAD "[{\"id\": 1, \"point\": \"pay\", %s}]}",
			 bad[i].drill);
		assert_int_equal(parse(text), -1);
		assert_string_equal(err, bad[i].msg);
	}
	assert_int_equal(parse(HEAD "[{\"id\": 0, \"point\": \"pay\"}]}"), -1);
	assert_string_equal(err, "drills[0].id must be a positive integer");
	assert_int_equal(parse(HEAD "[{\"id\": 1, \"point\": \"a b\"}]}"), -1);
	assert_string_equal(err, "drills[0].point: bad name");
	assert_int_equal(parse(HEAD "{}}"), -1);
	assert_string_equal(err, "drills must be an array");
	assert_int_equal(parse(HEAD "[7]}"), -1);
	assert_string_equal(err, "drills[0] must be an object");
}

/* One drill more than a reply may carry is refused before any is read. */
static void test_too_many(void **state)
{
	size_t cap = (SDS_HB_MAX_DRILLS + 1) * 4 + 64, len;
	char *text = malloc(cap), want[64];
	int i;

	assert_non_null(text);
	len = snprintf(text, cap, HEAD "[");
	for (i = 0; i <= SDS_HB_MAX_DRILLS; i++)
		len += snprintf(text + len, cap - len, "%s7", i ? "," : "");
	snprintf(text + len, cap - len, "]}");
	assert_int_equal(parse(text), -1);
	snprintf(want, sizeof(want), "drills: at most %d", SDS_HB_MAX_DRILLS);
	assert_string_equal(err, want);
	free(text);
}

/* The names the messages list are the table's, in its order, cut to fit. */
static void test_errno_names(void **state)
{
	char all[512], cut[20];

	errnames_list(all, sizeof(all));
	assert_string_equal(all, "ECONNREFUSED, ECONNRESET, ECONNABORTED, ETIMEDOUT, "
			    "EHOSTUNREACH, ENETUNREACH, ENETDOWN, EHOSTDOWN, EPIPE, EIO, "
			    "EACCES, EPERM, ENOENT, ENOSPC, EROFS, EMFILE, ENFILE, ENOMEM, "
			    "EBUSY");
	errnames_list(cut, sizeof(cut));
	assert_string_equal(cut, "ECONNREFUSED, ECONN");
	assert_int_equal(errnames_parse("EBUSY"), EBUSY);
	assert_int_equal(errnames_parse("EINTR"), 0);
	assert_string_equal(errnames_name(EAGAIN), "?");
}

/* "stop_when": parsed as every loader reads it, written back the same. */
static void test_stop_when(void **state)
{
	static const struct { const char *stop, *msg; } bad[] = {
		{ "[{\"field\": \"latency\", \"above\": 1, \"window_s\": 2}]",
		  "drills[0].stop_when[0].field: 'latency' is not one of exception_rate, p99_ms, downgrades" },
		{ "[{\"above\": 1, \"window_s\": 2}]",
		  "drills[0].stop_when[0].field: missing is not one of exception_rate, p99_ms, downgrades" },
		{ "[{\"field\": \"exception_rate\", \"above\": 1.01, \"window_s\": 2}]",
		  "drills[0].stop_when[0].above must be a number 0..1 (a share of the calls)" },
		{ "[{\"field\": \"downgrades\", \"above\": -1, \"window_s\": 2}]",
		  "drills[0].stop_when[0].above must be a number 0..2^40" },
		{ "[{\"field\": \"p99_ms\", \"above\": 5, \"window_s\": 0.09}]",
		  "drills[0].stop_when[0].window_s must be a number 0.1..60 (seconds; a tick is 100 ms)" },
		{ "[{\"field\": \"p99_ms\", \"above\": 5, \"window_s\": 61}]",
		  "drills[0].stop_when[0].window_s must be a number 0.1..60 (seconds; a tick is 100 ms)" },
		{ "[{\"field\": \"p99_ms\", \"above\": 5, \"window_s\": 1, \"below\": 1}]",
		  "drills[0].stop_when[0]: unknown field 'below' (field, above, window_s)" },
		{ "{}", "drills[0].stop_when must be an array of at most 4 conditions" },
		{ "[1, 2, 3, 4, 5]", "drills[0].stop_when must be an array of at most 4 conditions" },
		{ "[1]", "drills[0].stop_when[0] must be an object {\"field\", \"above\", \"window_s\"}" },
	};
	char text[1024], *out;
	json_t *a;
	size_t i;

	(void)state;
	assert_int_equal(parse(HEAD "[{\"id\": 3, \"point\": \"pay\", \"kind\": \"error\","
			       " \"ratio\": 40, \"delay_ms\": 0, \"expires_at\": 1700000000,"
			       " \"stop_when\": [{\"field\": \"exception_rate\", \"above\": 0.3,"
			       " \"window_s\": 2}, {\"field\": \"p99_ms\", \"above\": 800,"
			       " \"window_s\": 0.25}]}]}"), 0);
	assert_int_equal(r.drills[0].nstop, 2);
	assert_int_equal(r.drills[0].stop[0].field, SDS_STOP_EXCEPTION_RATE);
	assert_true(r.drills[0].stop[0].above == 0.3);
	assert_int_equal(r.drills[0].stop[0].window_ms, 2000);
	assert_int_equal(r.drills[0].stop[1].field, SDS_STOP_P99_MS);
	assert_int_equal(r.drills[0].stop[1].window_ms, 250);
	a = heartbeat_drills_to_json(r.drills, 1);
	out = json_dumps(json_object_get(json_array_get(a, 0), "stop_when"), JSON_COMPACT);
	assert_string_equal(out, "[{\"field\":\"exception_rate\",\"above\":0.29999999999999999,"
			    "\"window_s\":2.0},{\"field\":\"p99_ms\",\"above\":800.0,\"window_s\":0.25}]");
	free(out);
	json_decref(a);
	/* None: not sent, as older admins never sent it. */
	assert_int_equal(parse(HEAD "[{\"id\": 3, \"point\": \"pay\", \"kind\": \"error\","
			       " \"ratio\": 40, \"delay_ms\": 0, \"expires_at\": 1}]}"), 0);
	assert_int_equal(r.drills[0].nstop, 0);
	a = heartbeat_drills_to_json(r.drills, 1);
	assert_null(json_object_get(json_array_get(a, 0), "stop_when"));
	json_decref(a);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), HEAD "[{\"id\": 3, \"point\": \"pay\", \"kind\":"
			 " \"error\", \"ratio\": 40, \"delay_ms\": 0, \"expires_at\": 1,"
			 " \"stop_when\": %s}]}", bad[i].stop);
		assert_int_equal(parse(text), -1);
		assert_string_equal(err, bad[i].msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errno),
		cmocka_unit_test(test_drills_seq),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_errno_names),
		cmocka_unit_test(test_stop_when),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
