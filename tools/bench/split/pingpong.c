/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * pingpong - what a context switch costs (tools/bench/split): two
 * threads pinned to one CPU pass a byte back and forth over two pipes,
 * so the CPU runs A B A B ...: every pass is a wakeup and a switch.
 *
 *   pingpong N [inside]   N round trips (2N switches); prints
 *                         "ns_per_switch X switches S"
 *
 * With `inside` each thread makes its whole loop one call of
 * pp_inside(), which the benchmark makes a function point: the threads
 * are then inside a point, as a blocked call's are.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static long rounds;
static cpu_set_t one;

static void pass(int in, int out, long n, int first)
{
	char c = 0;

	for (long i = 0; i < n; i++) {
		if (first && write(out, &c, 1) != 1)
			exit(1);
		if (read(in, &c, 1) != 1)
			exit(1);
		if (!first && write(out, &c, 1) != 1)
			exit(1);
	}
}

/* The point of `inside`: one call that holds the thread's whole loop. */
__attribute__((noipa, used)) int pp_inside(int in, int out, long n, int first)
{
	asm volatile("" ::: "memory");
	pass(in, out, n, first);
	return 0;
}

static int inside;

static void *b_main(void *unused)
{
	if (sched_setaffinity(0, sizeof(one), &one))
		exit(1);
	if (inside)
		pp_inside(ab[0], ba[1], rounds, 0);
	else
		pass(ab[0], ba[1], rounds, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	pthread_t b;
	double ns;
	int cpu;

	if (argc < 2 || (rounds = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: pingpong N [inside]\n");
		return 2;
	}
	inside = argc > 2 && !strcmp(argv[2], "inside");
	if (sched_getaffinity(0, sizeof(one), &one))
		return 1;
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &one); cpu++)
		;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) || pipe(ab) || pipe(ba) ||
	    pthread_create(&b, NULL, b_main, NULL))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (inside)
		pp_inside(ba[0], ab[1], rounds, 1);
	else
		pass(ba[0], ab[1], rounds, 1);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(b, NULL);
	ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	printf("ns_per_switch %.1f switches %ld\n", ns / (2.0 * rounds), 2 * rounds);
	return 0;
}
