/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * fnexact - numbered calls of one function point, fn_point(), on a
 * schedule, for the function points' exact trips (tests/exact/fn_run.py).
 *
 *   fnexact FILE COUNT RATE BAD GAP_AT GAP_MS START_NS MODE
 *
 * Makes COUNT calls of fn_point() from one thread, RATE calls/s on an
 * absolute CLOCK_MONOTONIC schedule from START_NS, with GAP_MS ms more
 * before the call of 1-based index GAP_AT (0: none) and again before the
 * next one, so that call stands alone in time.  The first BAD calls
 * are bad: MODE exc, they return -5 (err=neg); slow, they sleep 2 ms
 * first (timeout_ms=1); visit, none are.  Writes to FILE, one line per
 * call, the CLOCK_MONOTONIC ns just before it entered fn_point(), then
 * exits 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int mode;		/* 0 visit, 1 exc, 2 slow */
static uint64_t bad;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_until(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL,
			       .tv_nsec = ns % 1000000000ULL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

/* The point: call @i (0-based). */
__attribute__((noinline, used)) int fn_point(uint64_t i)
{
	/*
	 * Saves %rbx: the function starts with a push, an emulated probe
	 * site (loader/target/site.c), so attach skips the stepped first second.
	 */
	__asm__ volatile("" ::: "rbx");
	if (i >= bad || mode == 0)
		return 0;
	if (mode == 2) {
		sleep_until(mono_ns() + 2000000ULL);
		return 0;
	}
	return -5;
}

int main(int argc, char **argv)
{
	uint64_t count, rate, gap_at, gap_ns, start, step, at, i, *ts;
	volatile int sink = 0;
	FILE *f;

	if (argc != 9) {
		fprintf(stderr, "usage: fnexact FILE COUNT RATE BAD GAP_AT GAP_MS START_NS visit|exc|slow\n");
		return 2;
	}
	count = strtoull(argv[2], NULL, 0);
	rate = strtoull(argv[3], NULL, 0);
	bad = strtoull(argv[4], NULL, 0);
	gap_at = strtoull(argv[5], NULL, 0);
	gap_ns = strtoull(argv[6], NULL, 0) * 1000000ULL;
	start = strtoull(argv[7], NULL, 0);
	mode = !strcmp(argv[8], "exc") ? 1 : !strcmp(argv[8], "slow") ? 2 : 0;
	if (!count || !rate || !(ts = calloc(count, sizeof(*ts)))) {
		fprintf(stderr, "fnexact: bad COUNT or RATE\n");
		return 2;
	}
	step = 1000000000ULL / rate;
	at = start;
	for (i = 0; i < count; i++) {
		if (gap_at && (i + 1 == gap_at || i == gap_at))
			at += gap_ns;
		sleep_until(at);
		at += step;
		ts[i] = mono_ns();
		sink += fn_point(i);
	}
	f = fopen(argv[1], "w");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	for (i = 0; i < count; i++)
		fprintf(f, "%llu\n", (unsigned long long)ts[i]);
	return fclose(f) ? 1 : 0;
}
