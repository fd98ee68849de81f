// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * number.c - the numbers of a point spec's options: decimal digits only,
 * within bounds (options.h).
 */
#include "pointspec/options.h"

int pointspec_digits_parse(const char *s, size_t len, uint64_t lo, uint64_t hi,
			   uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!len)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > hi)
			return -1;
	}
	if (v < lo)
		return -1;
	*out = v;
	return 0;
}
