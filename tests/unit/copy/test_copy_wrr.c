// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests of copy/wrr.c (smooth WRR) and copy/frame.c (HTTP framing). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <stdio.h>
#include <string.h>

#include "frame.h"
#include "wrr.h"

/* Every cycle of sum(weights) picks gives each endpoint its weight. */
static void cycles_exact(const int *w, int n, int cycles)
{
	struct copy_wrr r;
	int got[8] = { 0 }, total = 0, i, c;

	for (i = 0; i < n; i++)
		total += w[i];
	assert_int_equal(copy_wrr__init(&r, w, n), 0);
	for (c = 0; c < cycles; c++) {
		memset(got, 0, sizeof(got));
		for (i = 0; i < total; i++)
			got[copy_wrr__next(&r)]++;
		for (i = 0; i < n; i++)
			assert_int_equal(got[i], w[i]);
	}
	copy_wrr__free(&r);
}

static void test_wrr(void **state)
{
	static const int a[] = { 1, 3 }, b[] = { 5, 1, 1 }, c[] = { 1 },
		d[] = { 1000, 1, 999, 7 }, e[] = { 2, 2, 2 };
	struct copy_wrr r;
	int seq[4], i;

	cycles_exact(a, 2, 50);
	cycles_exact(b, 3, 50);
	cycles_exact(c, 1, 5);
	cycles_exact(d, 4, 3);
	cycles_exact(e, 3, 10);
	/* Interleaved, not bunched: 1:3 is B A B B. */
	assert_int_equal(copy_wrr__init(&r, a, 2), 0);
	for (i = 0; i < 4; i++)
		seq[i] = copy_wrr__next(&r);
	assert_int_equal(seq[0], 1);
	assert_int_equal(seq[1], 0);
	assert_int_equal(seq[2], 1);
	assert_int_equal(seq[3], 1);
	copy_wrr__free(&r);
}

static void test_http_head(void **state)
{
	char buf[512];
	int n;

	n = frame_http_head(buf, sizeof(buf), "10.0.0.7:80", "orders/handle", 5);
	assert_int_equal(n, (int)strlen(buf));
	assert_string_equal(buf, "POST / HTTP/1.1\r\nHost: 10.0.0.7:80\r\n"
			    "Content-Type: application/octet-stream\r\n"
			    "Content-Length: 5\r\nX-SDS-Copy: orders/handle\r\n\r\n");
	assert_int_equal(frame_http_head(buf, 40, "h:1", "a/p", 5), -1);
}

static int parse(const char *s, struct copy_http_resp *r)
{
	return frame_http_resp_parse(s, strlen(s), r);
}

static void test_http_resp(void **state)
{
	struct copy_http_resp r;
	char big[5000];

	assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", &r), 1);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, 2);
	assert_int_equal(r.head_len, 38);
	assert_false(r.close);
	assert_int_equal(parse("HTTP/1.1 503 X\r\ncontent-length:0\r\nConnection: close\r\n\r\n", &r), 1);
	assert_int_equal(r.status, 503);
	assert_true(r.close);
	assert_int_equal(parse("HTTP/1.1 204 No\r\n\r\n", &r), 1);
	assert_false(r.close);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\n\r\n", &r), 1);
	assert_true(r.close);			/* a body to the close */
	assert_int_equal(parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", &r), 1);
	assert_true(r.close);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Len", &r), 0);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", &r), -1);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n", &r), -1);
	assert_int_equal(parse("HTTP/1.1 2000 OK\r\n\r\n", &r), -1);
	assert_int_equal(parse("HTTP/1.1 099 OK\r\n\r\n", &r), -1);
	assert_int_equal(parse("SSH-2.0-x\r\n\r\n", &r), -1);
	memset(big, 'a', sizeof(big));
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 21);
	assert_int_equal(frame_http_resp_parse(big, sizeof(big), &r), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrr),
		cmocka_unit_test(test_http_head),
		cmocka_unit_test(test_http_resp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
