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
 * The last line, after "quit", adds "periods": {"START": C, ...}, the
 * calls made in each 10-s wall-clock period (the heartbeat's).  No call
 * is made within 50 ms of a period's boundary, so that no clock's
 * rounding can put one in another period than the one it is listed in.
 * Usage: crashapp GROUP APP POINT RATE
 */
#include <pthread.h>
#include <stdbool.h>
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
#define PERIODS		128	/* periods remembered (21 minutes) */
static struct {
	long start;		/* Unix seconds, a multiple of 10; 0: unused */
	unsigned long calls;	/* crash_work() calls in it */
} periods[PERIODS];		/* under lock */

/* Count a call in the period of @t (under lock). */
static void period_count(long t)
{
	long start = t - t % 10;
	int i = (int)(start / 10 % PERIODS);

	if (periods[i].start != start) {
		periods[i].start = start;
		periods[i].calls = 0;
	}
	periods[i].calls++;
}

/* Near a 10-s boundary of the wall clock: within 50 ms of it. */
static bool near_boundary(struct timespec *now)
{
	long ms = (now->tv_sec % 10) * 1000 + now->tv_nsec / 1000000;

	return ms < 50 || ms >= 9950;
}

/*
 * A stepped probe site (a mov first, at -O2), on purpose: at ~20 us
 * a call by design, the totals an adopting loader is handed (thousands of
 * calls) are far over --max-overhead if it takes them for this second's
 * calls, so the exact counts across kill -9 catch that (loader/tick/budget_run.c
 * budget__adopt).  As an emulated site (~1 us) they fit, and that bug
 * passed test_kill9_counts_exact and test_keep_upgrade.
 */
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
		struct timespec wall;
		bool d;

		clock_gettime(CLOCK_REALTIME, &wall);
		if (near_boundary(&wall))
			goto next;
		crash_work(i++);
		d = sds_should_downgrade(point);
		sds_downgrade_finally(point);
		pthread_mutex_lock(&lock);
		calls++;
		period_count(wall.tv_sec);
		if (d)
			down++;
		else
			pass++;
		pthread_mutex_unlock(&lock);
next:
		next.tv_nsec += 1000000000L / rate;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return NULL;
}

static void say(bool last)
{
	const char *sep = "";
	int i;

	pthread_mutex_lock(&lock);
	printf("{\"calls\": %lu, \"down\": %lu, \"pass\": %lu", calls, down,
	       pass);
	if (last) {
		printf(", \"periods\": {");
		for (i = 0; i < PERIODS; i++) {
			if (!periods[i].start)
				continue;
			printf("%s\"%ld\": %lu", sep, periods[i].start,
			       periods[i].calls);
			sep = ", ";
		}
		printf("}");
	}
	printf("}\n");
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
		say(false);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	say(true);
	sds_client_close(c);
	return 0;
}
