// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests of common/copyrec.c: the copy record, hello, file header, reader. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copyrec.h"

static uint8_t big[COPYREC_PAYLOAD_MAX + 1];

static void rec_fill(struct copyrec *r, const char *app, const char *point,
		     const void *data, uint32_t len)
{
	memset(r, 0, sizeof(*r));
	r->ts_ns = 1700000000123456789ULL;
	snprintf(r->app, sizeof(r->app), "%s", app);
	snprintf(r->point, sizeof(r->point), "%s", point);
	r->orig_len = r->cap_len = len;
	r->data = data;
}

static void test_round_trip(void **state)
{
	uint8_t buf[COPYREC_MAX_LEN];
	struct copyrec r, d;
	const char *why = NULL;
	size_t at = 0;
	int n, i;

	rec_fill(&r, "orders", "handle_request", "GET /x\n", 7);
	r.flags = COPYREC_F_WRITE;
	n = copyrec_encode(&r, buf, sizeof(buf));
	assert_int_equal(n, 20 + 6 + 14 + 7);
	assert_int_equal((size_t)n, copyrec_size(&r));
	/* Every strict prefix is "read more", never an error. */
	for (i = 0; i < n; i++)
		assert_int_equal(copyrec_decode(buf, i, &d, &why, &at), 0);
	assert_int_equal(copyrec_decode(buf, n, &d, &why, &at), n);
	assert_true(d.ts_ns == r.ts_ns);
	assert_int_equal(d.orig_len, 7);
	assert_int_equal(d.cap_len, 7);
	assert_int_equal(d.flags, COPYREC_F_WRITE);
	assert_string_equal(d.app, "orders");
	assert_string_equal(d.point, "handle_request");
	assert_memory_equal(d.data, "GET /x\n", 7);

	/* The largest record: 64-character names, 64 KiB, truncated. */
	memset(big, 'b', sizeof(big));
	memset(r.app, 'a', 64);
	r.app[64] = '\0';
	memset(r.point, 'p', 64);
	r.point[64] = '\0';
	r.data = big;
	r.cap_len = COPYREC_PAYLOAD_MAX;
	r.orig_len = 1u << 20;
	r.flags = COPYREC_F_TRUNCATED;
	n = copyrec_encode(&r, buf, sizeof(buf));
	assert_int_equal(n, COPYREC_MAX_LEN - COPYREC_PAIR_LEN);
	assert_int_equal(copyrec_decode(buf, n, &d, &why, &at), n);
	assert_int_equal(d.orig_len, 1u << 20);
	assert_int_equal(d.flags, COPYREC_F_TRUNCATED);
	/* ... and a paired response of it is the longest of all. */
	r.flags = COPYREC_F_TRUNCATED | COPYREC_F_PAIRED | COPYREC_F_RESPONSE;
	r.pair = 0x0102030405060708ULL;
	n = copyrec_encode(&r, buf, sizeof(buf));
	assert_int_equal(n, COPYREC_MAX_LEN);
	assert_int_equal(copyrec_decode(buf, n, &d, &why, &at), n);
	assert_true(d.pair == 0x0102030405060708ULL);
	assert_int_equal(d.data[0], 'b');

	/* An empty request is a record too. */
	rec_fill(&r, "a", "b", NULL, 0);
	n = copyrec_encode(&r, buf, sizeof(buf));
	assert_int_equal(n, 22);
	assert_int_equal(copyrec_decode(buf, n, &d, &why, &at), 22);
	assert_int_equal(d.cap_len, 0);
}

/* A request and its response: the pair id right after the names. */
static void test_pair(void **state)
{
	uint8_t buf[128];
	struct copyrec r, d;
	const char *why = NULL;
	size_t at = 0;
	int n, i;

	rec_fill(&r, "svc", "api", "{\"a\":1}", 7);
	r.flags = COPYREC_F_PAIRED | COPYREC_F_RESPONSE;
	r.pair = 42;
	n = copyrec_encode(&r, buf, sizeof(buf));
	assert_int_equal(n, 20 + 3 + 3 + 8 + 7);
	assert_int_equal((size_t)n, copyrec_size(&r));
	assert_int_equal(buf[26], 42);			/* little-endian, after the names */
	for (i = 0; i < n; i++)
		assert_int_equal(copyrec_decode(buf, i, &d, &why, &at), 0);
	assert_int_equal(copyrec_decode(buf, n, &d, &why, &at), n);
	assert_true(d.pair == 42);
	assert_memory_equal(d.data, "{\"a\":1}", 7);
	/* A response needs a pair id: refused both ways, at the flags. */
	r.flags = COPYREC_F_RESPONSE;
	assert_int_equal(copyrec_encode(&r, buf, sizeof(buf)), -1);
	r.flags = COPYREC_F_PAIRED | COPYREC_F_RESPONSE;
	n = copyrec_encode(&r, buf, sizeof(buf));
	buf[16] = COPYREC_F_RESPONSE;
	assert_int_equal(copyrec_decode(buf, n, &d, &why, &at), -1);
	assert_int_equal(at, 16);
	assert_string_equal(why, "response flag without a pair id");
}

static void test_encode_refuses(void **state)
{
	uint8_t buf[256];
	struct copyrec r;

	rec_fill(&r, "a.b", "p", "x", 1);
	assert_int_equal(copyrec_encode(&r, buf, sizeof(buf)), -1);
	rec_fill(&r, "a", "", "x", 1);
	assert_int_equal(copyrec_encode(&r, buf, sizeof(buf)), -1);
	rec_fill(&r, "a", "p", "x", 1);
	r.orig_len = 2;			/* shorter than the request, not flagged */
	assert_int_equal(copyrec_encode(&r, buf, sizeof(buf)), -1);
	rec_fill(&r, "a", "p", "x", 1);
	r.flags = 0x80;
	assert_int_equal(copyrec_encode(&r, buf, sizeof(buf)), -1);
	rec_fill(&r, "a", "p", "x", 1);
	assert_int_equal(copyrec_encode(&r, buf, 22), -1);	/* no room */
	assert_int_equal(copyrec_encode(&r, buf, 23), 23);
}

/* Decode @buf (valid record of @n bytes) after @mutate; expect -1 at @at. */
static void bad(uint8_t *buf, size_t n, size_t want_at, const char *want)
{
	struct copyrec d;
	const char *why = NULL;
	size_t at = 999;

	assert_int_equal(copyrec_decode(buf, n, &d, &why, &at), -1);
	assert_int_equal(at, want_at);
	assert_non_null(strstr(why, want));
}

static void test_decode_hostile(void **state)
{
	uint8_t good[64], buf[64];
	struct copyrec r;
	int n;

	rec_fill(&r, "app", "pt", "hello", 5);
	n = copyrec_encode(&r, good, sizeof(good));
	assert_int_equal(n, 30);

	memcpy(buf, good, n);
	buf[12] = 0x01; buf[13] = 0x00; buf[14] = 0x01;	/* cap 65537 */
	bad(buf, n, 12, "above 65536");
	memcpy(buf, good, n);
	buf[15] = 0x80;					/* cap 2^31 + 5 */
	bad(buf, n, 12, "above 65536");
	memcpy(buf, good, n);
	buf[8] = 4;					/* orig 4 < cap 5 */
	bad(buf, n, 12, "above the original");
	memcpy(buf, good, n);
	buf[8] = 9;					/* longer, not flagged */
	bad(buf, n, 16, "truncated flag");
	memcpy(buf, good, n);
	buf[16] = COPYREC_F_TRUNCATED;			/* flagged, not longer */
	bad(buf, n, 16, "truncated flag");
	memcpy(buf, good, n);
	buf[17] = 0x01;					/* flag bit 8 */
	bad(buf, n, 16, "unknown flags");
	memcpy(buf, good, n);
	buf[18] = 0;
	bad(buf, n, 18, "app name length");
	memcpy(buf, good, n);
	buf[18] = 65;
	bad(buf, n, 18, "app name length");
	memcpy(buf, good, n);
	buf[19] = 0;
	bad(buf, n, 19, "point name length");
	memcpy(buf, good, n);
	buf[19] = 200;
	bad(buf, n, 19, "point name length");
	memcpy(buf, good, n);
	buf[21] = '/';					/* "a/p" */
	bad(buf, n, 20, "app name");
	memcpy(buf, good, n);
	buf[21] = '\0';					/* "a\0p" */
	bad(buf, n, 20, "app name");
	memcpy(buf, good, n);
	buf[24] = ' ';					/* "p " */
	bad(buf, n, 23, "point name");
	memcpy(buf, good, n);
	buf[23] = 0xc3;					/* not ASCII */
	bad(buf, n, 23, "point name");
}

static void test_hello_and_header(void **state)
{
	uint8_t h[COPYREC_FILEHDR_LEN];
	const char *why = NULL;
	uint64_t created = 0;
	size_t at = 0;

	copyrec_hello_encode(h);
	assert_int_equal(copyrec_hello_decode(h, 3, &why, &at), 0);
	assert_int_equal(copyrec_hello_decode(h, 8, &why, &at), 8);
	h[1] = 'X';
	assert_int_equal(copyrec_hello_decode(h, 2, &why, &at), -1);
	assert_string_equal(why, "bad magic");
	copyrec_hello_encode(h);
	h[4] = 2;
	assert_int_equal(copyrec_hello_decode(h, 8, &why, &at), -1);
	assert_int_equal(at, 4);
	assert_non_null(strstr(why, "version"));
	copyrec_hello_encode(h);
	h[7] = 1;
	assert_int_equal(copyrec_hello_decode(h, 8, &why, &at), -1);
	assert_int_equal(at, 6);

	copyrec_filehdr_encode(h, 42);
	assert_int_equal(copyrec_filehdr_decode(h, 15, &created, &why, &at), 0);
	assert_int_equal(copyrec_filehdr_decode(h, 16, &created, &why, &at), 16);
	assert_int_equal(created, 42);
	/* A stream's hello is not a file's header, nor the other way. */
	copyrec_hello_encode(h);
	assert_int_equal(copyrec_filehdr_decode(h, 16, &created, &why, &at), -1);
	assert_string_equal(why, "bad magic");
	copyrec_filehdr_encode(h, 42);
	assert_int_equal(copyrec_hello_decode(h, 8, &why, &at), -1);
	h[4] = 0;
	h[0] = 'S';
	assert_int_equal(copyrec_filehdr_decode(h, 16, &created, &why, &at), -1);
	assert_int_equal(at, 4);
}

/* A file of a header and three records; returns its length. */
static size_t file_make(uint8_t *f)
{
	struct copyrec r;
	size_t len = COPYREC_FILEHDR_LEN;
	char body[24];
	int i;

	copyrec_filehdr_encode(f, 7);
	for (i = 0; i < 3; i++) {
		snprintf(body, sizeof(body), "body-%d", i);
		rec_fill(&r, "app", "pt", body, strlen(body));
		r.ts_ns = 1000 + i;
		len += copyrec_encode(&r, f + len, 256);
	}
	return len;
}

/* Read @len bytes of @f through the reader: records read, -1 on error. */
static int file_read(uint8_t *f, size_t len, char *err, size_t errlen)
{
	struct copyrec_reader rd;
	struct copyrec r;
	FILE *fp = fmemopen(f, len, "r");
	int n = 0, rc;

	if (!len)
		fp = fopen("/dev/null", "r");
	assert_non_null(fp);
	assert_int_equal(copyrec_reader_init(&rd, fp), 0);
	while ((rc = copyrec_reader_next(&rd, &r, err, errlen)) == 1) {
		assert_true(r.ts_ns == (uint64_t)(1000 + n));
		n++;
	}
	copyrec_reader_free(&rd);
	fclose(fp);
	return rc < 0 ? -1 : n;
}

static void test_reader(void **state)
{
	uint8_t f[1024];
	char err[128];
	size_t len = file_make(f), cut;

	assert_int_equal(len, 16 + 3 * 31);
	assert_int_equal(file_read(f, len, err, sizeof(err)), 3);
	assert_int_equal(file_read(f, 16, err, sizeof(err)), 0);

	assert_int_equal(file_read(f, 0, err, sizeof(err)), -1);
	assert_string_equal(err, "offset 0: truncated file header (0 of its bytes in the file)");
	assert_int_equal(file_read(f, 10, err, sizeof(err)), -1);
	assert_string_equal(err, "offset 0: truncated file header (10 of its bytes in the file)");
	/* Cut inside the second record's header, then inside its body. */
	cut = 16 + 31 + 5;
	assert_int_equal(file_read(f, cut, err, sizeof(err)), -1);
	assert_string_equal(err, "offset 47: truncated record (5 of its bytes in the file)");
	cut = 16 + 31 + 30;
	assert_int_equal(file_read(f, cut, err, sizeof(err)), -1);
	assert_string_equal(err, "offset 47: truncated record (30 of its bytes in the file)");

	/* Corrupt the third record's point name: the offset is the name's. */
	f[16 + 2 * 31 + 23] = '.';
	assert_int_equal(file_read(f, len, err, sizeof(err)), -1);
	assert_string_equal(err, "offset 101: point name not of [A-Za-z0-9_-]");
	f[0] = 'X';
	assert_int_equal(file_read(f, len, err, sizeof(err)), -1);
	assert_string_equal(err, "offset 0: bad magic");
	f[0] = 'S';
	f[4] = 9;
	assert_int_equal(file_read(f, len, err, sizeof(err)), -1);
	assert_string_equal(err, "offset 4: unsupported version (this is version 1)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_pair),
		cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_decode_hostile),
		cmocka_unit_test(test_hello_and_header),
		cmocka_unit_test(test_reader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
