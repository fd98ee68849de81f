// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The copy-cost benchmark's target (tools/bench/copy/copy_cost.py): calls
 * handle_request(req, len) (copy_fn.c) in a tight loop with requests of
 * SIZE bytes, each call's request distinct (its number in its first 8
 * bytes, from a ring of 64 buffers), and prints the cost of one call.
 *
 *   bench-copy-target CALLS SIZE
 *
 * Prints one line: "ns_per_call=NS calls=CALLS size=SIZE".  A warm-up of
 * CALLS / 10 calls comes first (not timed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RING	64		/* distinct request buffers */
#define SIZE_MAX_	65536	/* the largest request */

int handle_request(const char *req, size_t len, char *out, size_t *outlen);

static volatile int sink;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* @n calls starting at request number @first, on the ring @bufs. */
static void calls(char (*bufs)[SIZE_MAX_], long first, long n, size_t size)
{
	static char out[64];
	size_t outlen;
	long i;

	for (i = first; i < first + n; i++) {
		char *b = bufs[i % RING];

		memcpy(b, &i, sizeof(i));	/* each request distinct */
		sink += handle_request(b, size, out, &outlen);
	}
}

int main(int argc, char **argv)
{
	static char bufs[RING][SIZE_MAX_];
	long n = argc > 2 ? atol(argv[1]) : 0;
	long size = argc > 2 ? atol(argv[2]) : 0;
	double t0, t1;
	int i;

	if (argc != 3 || n <= 0 || size < 8 || size > SIZE_MAX_) {
		fprintf(stderr, "usage: bench-copy-target CALLS SIZE (8..65536)\n");
		return 2;
	}
	for (i = 0; i < RING; i++)
		memset(bufs[i], 'a' + i % 26, sizeof(bufs[i]));
	calls(bufs, 0, n / 10, (size_t)size);
	t0 = now_ns();
	calls(bufs, n / 10, n, (size_t)size);
	t1 = now_ns();
	printf("ns_per_call=%.1f calls=%ld size=%ld\n", (t1 - t0) / n, n, size);
	return 0;
}
