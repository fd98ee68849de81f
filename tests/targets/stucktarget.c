/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * stucktarget - calls of one function point, stuck_call(), that hang on a
 * pipe until the test lets them go: a dependency that hangs, for the stuck
 * calls of a function point (tests/stuck/run.py).
 *
 * Driven line by line on stdin; prints "ready" once, then for each line
 * its result and "done":
 *
 *   enter N     N threads each call stuck_call(), which blocks reading one
 *               byte of a pipe.  Prints "entered LO HI": CLOCK_MONOTONIC
 *               ns before the first thread was started and the latest
 *               time a call was inside stuck_call() (each call records it
 *               before it blocks), so every entry lies in [LO, HI]
 *   release     writes a byte per held call, joins the threads; prints
 *               "returned N" (the calls that returned 0)
 *   die N       N threads call stuck_call() and exit inside it
 *               (pthread_exit: the call never returns); prints "died N"
 *               once all are joined
 *   quit        exits 0
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXT	64

static int pipefd[2];
static pthread_t th[MAXT];
static int nth;
static uint64_t inside[MAXT];
static int rets[MAXT];
static int die;			/* `die`: calls end their thread inside */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The function point: records that it is inside, then hangs on the pipe. */
__attribute__((noinline)) int stuck_call(int i)
{
	char c;

	__atomic_store_n(&inside[i], mono_ns(), __ATOMIC_RELEASE);
	if (die)
		pthread_exit(NULL);
	return read(pipefd[0], &c, 1) == 1 ? 0 : -1;
}

static void *thread_main(void *arg)
{
	int i = (int)(intptr_t)arg;

	rets[i] = stuck_call(i);
	return NULL;
}

static void do_enter(int n)
{
	uint64_t lo = mono_ns(), hi = 0;
	int i, k;

	for (i = 0; i < n && nth < MAXT; i++, nth++) {
		inside[nth] = 0;
		pthread_create(&th[nth], NULL, thread_main, (void *)(intptr_t)nth);
	}
	/* Wait until every call is inside. */
	for (k = 0; k < nth; k++) {
		while (!__atomic_load_n(&inside[k], __ATOMIC_ACQUIRE))
			usleep(100);
		if (inside[k] > hi)
			hi = inside[k];
	}
	printf("entered %llu %llu\n", (unsigned long long)lo,
	       (unsigned long long)hi);
}

static void do_release(void)
{
	int i, ok = 0;

	for (i = 0; i < nth; i++)
		if (write(pipefd[1], "x", 1) != 1)
			break;
	for (i = 0; i < nth; i++) {
		pthread_join(th[i], NULL);
		ok += rets[i] == 0;
	}
	nth = 0;
	printf("returned %d\n", ok);
}

static void do_die(int n)
{
	int i;

	die = 1;
	for (i = 0; i < n && i < MAXT; i++)
		pthread_create(&th[i], NULL, thread_main, (void *)(intptr_t)i);
	for (i = 0; i < n && i < MAXT; i++)
		pthread_join(th[i], NULL);
	die = 0;
	printf("died %d\n", i);
}

int main(void)
{
	char line[128];
	int n;

	if (pipe(pipefd))
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "enter %d", &n) == 1)
			do_enter(n);
		else if (sscanf(line, "die %d", &n) == 1 && !nth)
			do_die(n);
		else if (!strncmp(line, "release", 7))
			do_release();
		else if (!strncmp(line, "quit", 4))
			return 0;
		else
			printf("error: %s", line);
		printf("done\n");
	}
	return 0;
}
