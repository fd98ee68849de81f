/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The split suite's target (tests/split/run.py): calls of known time on
 * a CPU, on the run queue and asleep, driven line by line on stdin as
 * tests/targets/target.c is.  Prints "ready", then per line its result
 * and "done" (or "error: ..."):
 *
 *   nap N MS     call nap(MS) N times: each sleeps MS ms (blocked);
 *                "took 0 WALL_NS"
 *   spin N MS    pin this thread and a busy one (spinning all the while)
 *                to one CPU, then call spin(MS) N times: each runs until
 *                this thread has had MS ms of CPU (CLOCK_THREAD_CPUTIME_ID),
 *                sharing the CPU, so it waits on the run queue about as
 *                long again; the busy thread is stopped and the affinity
 *                restored after.  Prints "took CPU_NS WALL_NS": the calls'
 *                CPU time and wall time as the caller measured them
 *   quit         exit 0
 *
 * The counted functions are noipa and hold an empty asm barrier, so the
 * symbol is the code that runs.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TARGET_FN __attribute__((noipa, used))

static long long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

TARGET_FN int nap(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	asm volatile("" ::: "memory");
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
	return 0;
}

TARGET_FN int spin(int ms)
{
	long long end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ms * 1000000LL;

	asm volatile("" ::: "memory");
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		asm volatile("" ::: "memory");
	return 0;
}

static volatile int busy_stop;

static void *busy_main(void *arg)
{
	cpu_set_t *one = arg;

	if (sched_setaffinity(0, sizeof(*one), one))
		return (void *)1;
	while (!busy_stop)
		asm volatile("" ::: "memory");
	return NULL;
}

static int run_spin(long n, int ms)
{
	cpu_set_t old, one;
	pthread_t busy;
	long long c0, w0;
	int cpu;

	if (sched_getaffinity(0, sizeof(old), &old))
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &old); cpu++)
		;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return -1;
	busy_stop = 0;
	if (pthread_create(&busy, NULL, busy_main, &one))
		return -1;
	/* Let the busy thread be running on the CPU before the first call. */
	usleep(20000);
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	w0 = clock_ns(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++)
		spin(ms);
	printf("took %lld %lld\n", clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0,
	       clock_ns(CLOCK_MONOTONIC) - w0);
	busy_stop = 1;
	pthread_join(busy, NULL);
	return sched_setaffinity(0, sizeof(old), &old);
}

int main(void)
{
	char line[256];
	long n;
	int ms;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "nap %ld %d", &n, &ms) == 2) {
			long long w0 = clock_ns(CLOCK_MONOTONIC);

			for (long i = 0; i < n; i++)
				nap(ms);
			printf("took 0 %lld\ndone\n", clock_ns(CLOCK_MONOTONIC) - w0);
		} else if (sscanf(line, "spin %ld %d", &n, &ms) == 2) {
			if (run_spin(n, ms))
				printf("error: %s\n", strerror(errno));
			else
				printf("done\n");
		} else if (!strncmp(line, "quit", 4)) {
			return 0;
		} else {
			printf("error: %s", line);
		}
	}
	return 0;
}
