// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * copytarget - the traffic copy tests' target (tests/capture): a server
 * loop without a network.  Each line "go N SIZE" on stdin makes N calls of
 * handle_request(req, len) with distinct bodies of SIZE bytes,
 *
 *	"req <round>.<i> xxxx...x\n"	(SIZE >= 32; the body ends in '\n'
 *					 and holds no other: raw framing)
 *
 * then prints "done N <max call ns> <total ns>" on stdout.  EOF ends it.
 * handle_request is not inlined, and its arguments are the System V
 * registers 1 (rdi) and 2 (rsi): POINT=handle_request:copy=1,2.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile uint64_t sink;		/* what the handler computes: not optimized away */

__attribute__((noinline)) int handle_request(const char *req, size_t len)
{
	/*
	 * Saves %rbx: the function starts with a push, an emulated probe
	 * site (loader/target/site.c), so attach skips the stepped first second.
	 */
	__asm__ volatile("" ::: "rbx");
	/* Touch the bytes: a real handler reads its request. */
	sink += (unsigned char)req[0] + (unsigned char)req[len - 1] + len;
	__asm__ volatile("" ::: "memory");
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(void)
{
	char line[128];
	long round = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		long n, size, i;
		uint64_t t0, t1, max = 0, start;
		char *body;

		if (sscanf(line, "go %ld %ld", &n, &size) != 2 || n < 0 ||
		    size < 32 || size > (1 << 22))
			return 2;
		body = malloc(size);
		if (!body)
			return 1;
		round++;
		start = now_ns();
		for (i = 0; i < n; i++) {
			int h = snprintf(body, size, "req %ld.%ld ", round, i);

			memset(body + h, 'x', size - h - 1);
			body[size - 1] = '\n';
			t0 = now_ns();
			handle_request(body, size);
			t1 = now_ns();
			if (t1 - t0 > max)
				max = t1 - t0;
		}
		printf("done %ld %llu %llu\n", n, (unsigned long long)max,
		       (unsigned long long)(now_ns() - start));
		free(body);
	}
	return 0;
}
