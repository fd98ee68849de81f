// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of common/heartbeat_drill.c: the reply's "drills" as every
 * loader parses them from the admin — each field's bound, the optional
 * "errno" (an error drill's, one of errnames.c's), the array's size, and
 * the round trip of what sds-admin writes; and errnames.c's list of names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errnames.h"
#include "heartbeat.h"

static struct sds_hb_reply r;
static char err[256];

#define HEAD	"{\"version\": 7, \"changed\": false, \"drills\": "

static int parse(const char *text)
{
	err[0] = '\0';
	return heartbeat_reply_parse(text, strlen(text), &r, err, sizeof(err));
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
		{ "\"kind\": \"error\", \"ratio\": 1, \"delay_ms\": 0, \"expires_at\": 1, \"errno\": \"EINTR\"",
		  "drills[0].errno must be an errno name (ETIMEDOUT, ...) of an error drill" },
		{ "\"kind\": \"error\", \"ratio\": 1, \"delay_ms\": 0, \"expires_at\": 1, \"errno\": 110",
		  "drills[0].errno must be an errno name (ETIMEDOUT, ...) of an error drill" },
		{ "\"kind\": \"delay\", \"ratio\": 1, \"delay_ms\": 5, \"expires_at\": 1, \"errno\": \"EIO\"",
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

/* What sds-admin writes, every loader reads back the same. */
static void test_round_trip(void **state)
{
	/* static: zeroed padding, so the structs compare whole */
	static const struct sds_hb_drill d[2] = {
		{ .id = 9, .point = "pay", .kind = SDS_DRILL_ERROR, .ratio = 100,
		  .expires_at = 1800000000, .err = ECONNREFUSED },
		{ .id = 10, .point = "db", .kind = SDS_DRILL_DELAY, .ratio = 5,
		  .delay_ms = 60000, .expires_at = 1800000001 },
	};
	json_t *doc = heartbeat_reply_to_json(8, true, NULL);
	char *text;

	assert_non_null(doc);
	assert_int_equal(json_object_set_new(doc, "drills", heartbeat_drills_to_json(d, 2)), 0);
	text = json_dumps(doc, JSON_COMPACT);
	assert_non_null(text);
	json_decref(doc);
	/* Only the drill with its own errno says so. */
	assert_non_null(strstr(text, "\"errno\":\"ECONNREFUSED\""));
	assert_null(strstr(strstr(text, "\"id\":10"), "errno"));
	assert_int_equal(parse(text), 0);
	free(text);
	assert_int_equal(r.version, 8);
	assert_int_equal(r.ndrills, 2);
	assert_memory_equal(&r.drills[0], &d[0], sizeof(d[0]));
	assert_memory_equal(&r.drills[1], &d[1], sizeof(d[1]));
}

/* The names the messages list are the table's, in its order, cut to fit. */
static void test_errno_names(void **state)
{
	char all[512], cut[20];

	sds_errno_names(all, sizeof(all));
	assert_string_equal(all, "ECONNREFUSED, ECONNRESET, ECONNABORTED, ETIMEDOUT, "
			    "EHOSTUNREACH, ENETUNREACH, ENETDOWN, EHOSTDOWN, EPIPE, EIO, "
			    "EACCES, EPERM, ENOENT, ENOSPC, EROFS, EMFILE, ENFILE, ENOMEM, "
			    "EBUSY");
	sds_errno_names(cut, sizeof(cut));
	assert_string_equal(cut, "ECONNREFUSED, ECONN");
	assert_int_equal(sds_errno_parse("EBUSY"), EBUSY);
	assert_int_equal(sds_errno_parse("EINTR"), 0);
	assert_string_equal(sds_errno_name(EAGAIN), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errno),
		cmocka_unit_test(test_bad_fields),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_errno_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
