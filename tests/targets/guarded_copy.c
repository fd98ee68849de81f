// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * guarded_copy.c - the guarded target program's "copy POINT N SIZE"
 * (tests/capture/t_capguard.py): N calls of sds_copy() with distinct
 * bodies of SIZE bytes, the same bodies as tests/targets/copytarget.c's,
 *
 *	"req <round>.<i> xxxx...x\n"	(round: 1 for the first command)
 *
 * so that the capture suite checks both kinds of point one way.  Prints
 * "copied C failed F": sds_copy() returned 0 C times, -1 F times.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "guarded.h"

int guarded_copy(struct sds_point *p, long n, long size)
{
	static long round;
	long i, copied = 0, failed = 0;
	char *body;

	if (n < 0 || size < 32 || size > (1L << 22))
		return -1;
	body = malloc(size);
	if (!body)
		return -1;
	round++;
	for (i = 0; i < n; i++) {
		int h = snprintf(body, size, "req %ld.%ld ", round, i);

		memset(body + h, 'x', size - h - 1);
		body[size - 1] = '\n';
		if (sds_copy(p, body, size))
			failed++;
		else
			copied++;
	}
	free(body);
	printf("copied %ld failed %ld\n", copied, failed);
	return 0;
}
