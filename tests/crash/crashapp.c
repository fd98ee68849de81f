// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * crashapp: the program tests/crash/run.py kills loaders under.  A
 * thread calls crash_work() (a function point) and then the guard point
 * POINT through sds_should_downgrade() RATE times a second, until stdin
 * says "quit"; "count" asks for the counts so far.  Each answer is one
 * JSON line:
 *
 *   {"calls": C, "down": D, "pass": P}
 *
 * C: crash_work() calls made (all of them: the function point counts
 * them whatever the loader does); D, P: guarded calls downgraded, passed.
 * Usage: crashapp GROUP APP POINT RATE
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sds.h>

static struct sds_point *point;
static long rate;
static volatile int stop;
static unsigned long calls, down, pass;	/* under lock */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) int crash_work(int i)
{
	__asm__ volatile("" ::: "memory");
	return i & 1;
}

static void *caller(void *arg)
{
	struct timespec next;
	long i = 0;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		bool d;

		crash_work(i++);
		d = sds_should_downgrade(point);
		sds_downgrade_finally(point);
		pthread_mutex_lock(&lock);
		calls++;
		if (d)
			down++;
		else
			pass++;
		pthread_mutex_unlock(&lock);
		next.tv_nsec += 1000000000L / rate;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return NULL;
}

static void say(void)
{
	pthread_mutex_lock(&lock);
	printf("{\"calls\": %lu, \"down\": %lu, \"pass\": %lu}\n", calls, down,
	       pass);
	pthread_mutex_unlock(&lock);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct sds_client *c;
	char line[64];
	pthread_t t;

	if (argc != 5 || (rate = atol(argv[4])) <= 0) {
		fprintf(stderr, "usage: crashapp GROUP APP POINT RATE\n");
		return 2;
	}
	c = sds_client_open(argv[1], argv[2]);
	point = sds_point(c, argv[3]);
	if (!c || !point)
		return 1;
	if (pthread_create(&t, NULL, caller, NULL))
		return 1;
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "quit", 4))
			break;
		say();
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	say();
	sds_client_close(c);
	return 0;
}
