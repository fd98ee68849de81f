// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * copy.c - copy=, copy_ret=, copy_max= and copy_rate=: which arguments
 * hold a call's request and response, how much of it and how many calls
 * are copied (docs/COPY.md).
 */
#include <stdio.h>
#include <string.h>

#include "pointspec/options.h"

/*
 * BUF,LEN: two argument numbers 1..6 into *@b, *@n.  -1: not that shape;
 * -2: one argument named twice.  x86-64's System V ABI passes the first
 * six integer arguments in registers (rdi, rsi, rdx, rcx, r8, r9); a
 * seventh is on the stack, which the probe does not read.
 */
static int arg_pair_parse(const char *val, size_t vlen, uint64_t *b,
			  uint64_t *n)
{
	const char *comma = memchr(val, ',', vlen);

	if (!comma ||
	    pointspec_digits_parse(val, (size_t)(comma - val), 1, SDS_COPY_ARGS,
				   b) ||
	    pointspec_digits_parse(comma + 1, vlen - (size_t)(comma - val) - 1,
				   1, SDS_COPY_ARGS, n))
		return -1;
	return *b == *n ? -2 : 0;
}

/* copy=BUF,LEN: the request's buffer and its length, read at entry. */
int pointspec_copy_parse(const char *arg, const char *val, size_t vlen,
			 struct point_spec *ps, char *err, size_t errlen)
{
	uint64_t b, n;
	int rc = arg_pair_parse(val, vlen, &b, &n);

	if (rc == -1) {
		snprintf(err, errlen,
			 "bad point '%s': copy= takes two argument numbers BUF,LEN, each 1..6 (x86-64 passes only the first six integer arguments in registers)",
			 arg);
		return -1;
	}
	if (rc == -2) {
		snprintf(err, errlen,
			 "bad point '%s': copy=%u,%u: the buffer and its length are two different arguments",
			 arg, (unsigned int)b, (unsigned int)n);
		return -1;
	}
	ps->copy = true;
	ps->copy_buf_arg = (uint8_t)b;
	ps->copy_len_arg = (uint8_t)n;
	return 0;
}

/*
 * copy_ret=BUF,LEN: the response, read at the function's return -- BUF the
 * argument holding the buffer the function fills, LEN the one holding a
 * size_t * it writes the response's length through.  1..6 each, different.
 */
int pointspec_copy_ret_parse(const char *arg, const char *val, size_t vlen,
			     struct point_spec *ps, char *err, size_t errlen)
{
	uint64_t b, n;
	int rc = arg_pair_parse(val, vlen, &b, &n);

	if (rc == -1) {
		snprintf(err, errlen,
			 "bad point '%s': copy_ret= takes two argument numbers BUF,LEN, each 1..6 (the response buffer and the size_t * the function writes its length to)",
			 arg);
		return -1;
	}
	if (rc == -2) {
		snprintf(err, errlen,
			 "bad point '%s': copy_ret=%u,%u: the response buffer and its length pointer are two different arguments",
			 arg, (unsigned int)b, (unsigned int)n);
		return -1;
	}
	ps->copy_ret_buf_arg = (uint8_t)b;
	ps->copy_ret_len_arg = (uint8_t)n;
	return 0;
}

/* copy_max= and copy_rate=. */
int pointspec_copy_num_parse(const char *arg, int o, const char *val,
			     size_t vlen, struct point_spec *ps, char *err,
			     size_t errlen)
{
	uint64_t v;

	if (o == OPT_COPY_MAX) {
		if (pointspec_digits_parse(val, vlen, 1, SDS_COPY_MAX, &v)) {
			snprintf(err, errlen,
				 "bad point '%s': copy_max must be an integer 1..65536 (bytes; 64 KiB at most)",
				 arg);
			return -1;
		}
		ps->copy_max = (uint32_t)v;
		return 0;
	}
	if (pointspec_digits_parse(val, vlen, 0, 100, &v)) {
		snprintf(err, errlen,
			 "bad point '%s': copy_rate must be an integer 0..100 (percent of calls)",
			 arg);
		return -1;
	}
	ps->copy_rate = (uint32_t)v;
	return 0;
}

