// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * svc.c - the service the deploy tests replace under a loader
 * (tests/deploy/run.py).  Each line N on stdin calls work() (and other(),
 * where the build has it) N times, then prints "done".  Builds:
 *   VARIANT 0  svc      work and other
 *   VARIANT 1  svc.v1   code placed before work: its offset differs
 *   VARIANT 2  svc.v2   no other(): a point's symbol vanished
 *   VARIANT 3  svc.v3   more code before work: another offset, build-id
 */
#include <stdio.h>
#include <stdlib.h>

#ifndef VARIANT
#define VARIANT 0
#endif

static volatile unsigned long sink;

#if VARIANT == 1 || VARIANT == 3
/* Placed before work(), so that work() starts at another offset. */
__attribute__((noinline)) void pad(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink = sink * 31 + i;
#if VARIANT == 3
	for (i = 0; i < n; i++)
		sink = sink * 17 + (i ^ sink) + (sink >> 3);
	for (i = 0; i < n; i++)
		sink ^= sink << 7 | i;
#endif
}
#endif

__attribute__((noinline)) int work(int x)
{
	/*
	 * Saves %rbx: the function starts with a push, an emulated probe
	 * site (loader/target/site.c), so attach skips the stepped first second.
	 */
	__asm__ volatile("" ::: "rbx");
	sink += x;
	__asm__ volatile("" ::: "memory");
	return 0;
}

#if VARIANT != 2
__attribute__((noinline)) int other(int x)
{
	/* As work(): a push first. */
	__asm__ volatile("" ::: "rbx");
	sink -= x;
	__asm__ volatile("" ::: "memory");
	return 0;
}
#endif

int main(void)
{
	char line[64];
	long n, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
#if VARIANT == 1 || VARIANT == 3
	pad(0);
#endif
	puts("ready");
	while (fgets(line, sizeof(line), stdin)) {
		n = strtol(line, NULL, 10);
		for (i = 0; i < n; i++) {
			work((int)i);
#if VARIANT != 2
			other((int)i);
#endif
		}
		puts("done");
	}
	return 0;
}
