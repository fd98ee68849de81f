// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * keyguard - keyed guard calls for tests/keys (docs/KEYS.md "Limits"):
 *
 *   keyguard APP SECS   registers with the loader of APP, warms the point
 *                       up (key "warm", 10 calls over 0.5 s: the kernel
 *                       makes its key table at the next tick), then for
 *                       SECS seconds, in rounds of 20 ms, calls
 *                       sds_should_downgrade_key(k, "U") once for each
 *                       user U of 1..100 but 7, and 100 times for user 7:
 *                       users at 50 calls/s, user 7 at 5,000/s.
 *
 * Prints "user U calls C passed P" for each user, "elapsed_ns E" (user
 * 7's first call to its last), then "done".
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sds.h"

#define USERS	100
#define HOT	7
#define HOT_PER_ROUND	100

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static void sleep_until(const struct timespec *t)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR)
		;
}

static void step(struct timespec *t, long ns)
{
	t->tv_nsec += ns;
	while (t->tv_nsec >= 1000000000) {
		t->tv_nsec -= 1000000000;
		t->tv_sec++;
	}
}

static uint64_t calls[USERS + 1], passed[USERS + 1];

static void call(struct sds_point *pt, int u)
{
	char key[8];
	int len = snprintf(key, sizeof(key), "%d", u);

	calls[u]++;
	if (!sds_should_downgrade_key(pt, key, (size_t)len))
		passed[u]++;
	sds_downgrade_finally(pt);
}

int main(int argc, char **argv)
{
	struct sds_client *c;
	struct sds_point *pt;
	struct timespec t;
	uint64_t first = 0, last = 0;
	long secs, r, i;
	int u;

	if (argc != 3) {
		fprintf(stderr, "usage: keyguard APP SECS\n");
		return 2;
	}
	secs = atol(argv[2]);
	c = sds_client_open("default", argv[1]);
	pt = sds_point(c, "k");
	if (!c || !pt) {
		fprintf(stderr, "keyguard: no client or point\n");
		return 1;
	}
	for (i = 0; i < 10; i++) {
		bool down = sds_should_downgrade_key(pt, "warm", 4);

		(void)down;
		sds_downgrade_finally(pt);
		clock_gettime(CLOCK_MONOTONIC, &t);
		step(&t, 50000000);
		sleep_until(&t);
	}
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (r = 0; r < secs * 50; r++) {
		for (u = 1; u <= USERS; u++)
			if (u != HOT)
				call(pt, u);
		for (i = 0; i < HOT_PER_ROUND; i++) {
			if (!first)
				first = now_ns();
			call(pt, HOT);
		}
		last = now_ns();
		step(&t, 20000000);
		sleep_until(&t);
	}
	for (u = 1; u <= USERS; u++)
		printf("user %d calls %llu passed %llu\n", u,
		       (unsigned long long)calls[u], (unsigned long long)passed[u]);
	printf("elapsed_ns %llu\n", (unsigned long long)(last - first));
	printf("done\n");
	sds_client_close(c);
	return 0;
}
