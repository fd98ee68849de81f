// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * budget_loop: calls budget_fn (a stepped probe site) and says how fast,
 * for tests/harm/t_budget.py.
 *
 *   budget_loop
 *
 * Every 200 ms it prints "rate R total T": calls per second over those
 * 200 ms, and its calls so far.  Commands on stdin, one a line, obeyed
 * within 200 ms (each answered "ok CMD total T" once in force):
 *   fast       call in a tight loop (the start)
 *   slow N     N calls per second, evenly spaced
 *   pause      no calls
 *   burst N    N calls at once, then pause ("ok burst N total T" after)
 * EOF on stdin ends it.
 */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * budget_fn: its first instruction, a register move, is neither a NOP,
 * push, call nor jump, so a uprobe on it is single-stepped (~20 us a
 * call; docs/DESIGN.md §3), like tools/bench/probe/fn_stepped.S.  In this file, so
 * that the suite's plain *.c rule builds it.
 */
__asm__(".text\n"
	".globl budget_fn\n"
	".type budget_fn, @function\n"
	".p2align 6\n"
	"budget_fn:\n"
	"\tmov %edi, %eax\n"
	"\tadd $1, %eax\n"
	"\tret\n"
	".size budget_fn, .-budget_fn\n");

int budget_fn(int x);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

enum mode { FAST, SLOW, PAUSE };

static enum mode mode = FAST;
static long slow_n;
static uint64_t total;
static volatile int sink;

/* Read one command if there is one; 1 on EOF. */
static int command(void)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	char line[64];
	long n, i;

	if (poll(&pfd, 1, 0) <= 0)
		return 0;
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	line[strcspn(line, "\n")] = '\0';
	if (!strcmp(line, "fast")) {
		mode = FAST;
	} else if (!strcmp(line, "pause")) {
		mode = PAUSE;
	} else if (sscanf(line, "slow %ld", &n) == 1 && n > 0) {
		mode = SLOW;
		slow_n = n;
	} else if (sscanf(line, "burst %ld", &n) == 1 && n > 0) {
		for (i = 0; i < n; i++)
			sink = budget_fn((int)i);
		total += n;
		mode = PAUSE;
	} else {
		printf("bad command '%s'\n", line);
		fflush(stdout);
		return 0;
	}
	printf("ok %s total %llu\n", line, (unsigned long long)total);
	fflush(stdout);
	return 0;
}

int main(void)
{
	uint64_t last = now_ns(), last_total = 0, next_slow = 0, t;
	struct timespec ts;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		if (mode == FAST) {
			for (i = 0; i < 256; i++)
				sink = budget_fn(i);
			total += 256;
		} else {
			t = now_ns();
			if (mode == SLOW && t >= next_slow) {
				sink = budget_fn(1);
				total++;
				next_slow = (next_slow && t - next_slow < 1000000000ULL ?
					     next_slow : t) + 1000000000ULL / slow_n;
			}
			ts.tv_sec = 0;
			ts.tv_nsec = 1000000;	/* 1 ms: enough for slow N <= 1000 */
			nanosleep(&ts, NULL);
		}
		t = now_ns();
		if (t - last >= 200000000ULL) {
			printf("rate %llu total %llu\n",
			       (unsigned long long)((total - last_total) * 1000000000ULL / (t - last)),
			       (unsigned long long)total);
			last = t;
			last_total = total;
			if (command())
				return 0;
		}
	}
}
