// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * keyrate - keyed calls at fixed rates for tests/keys (docs/KEYS.md "Limits"):
 *
 *   keyrate APP SECS    registers with the loader of APP, warms the point
 *                       up (key "warm", 10 calls over 0.5 s: the kernel
 *                       makes its key table at the next tick), then for
 *                       SECS seconds, in rounds of 20 ms, calls
 *                       sds_should_downgrade_key(k, "U") once for each
 *                       user U of 1..100 but 7, and 100 times for user 7:
 *                       users at 50 calls/s, user 7 at 5,000/s.
 *
 *   keyrate APP SECS unkeyed
 *                       the same rounds through sds_should_downgrade(k):
 *                       no key ever passed, no warm-up (a point whose
 *                       key limits have nothing to block: `stats` warns).
 *
 *   keyrate ff SECS     the same calls through handle_ff(user), each
 *                       connecting a UDP socket to a listener of this
 *                       program's on the loopback: a function point
 *                       (:key=arg1:failfast=connect) whose blocked calls'
 *                       connects fail.  A call passed when its connect did.
 *                       No libsds client.
 *
 * Prints "user U calls C passed P" for each user, "elapsed_ns E" (user
 * 7's first call to its last), then "done".
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
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
static bool unkeyed;
static struct sockaddr_in listener;

/* A :failfast=connect point's call: 0, or -1 when its connect failed. */
__attribute__((noinline)) int handle_ff(long user)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rc = -1;

	if (fd >= 0) {
		rc = connect(fd, (struct sockaddr *)&listener, sizeof(listener));
		close(fd);
	}
	__asm__ volatile("" : : "r"(user) : "memory");
	return rc ? -1 : 0;
}

static void call(struct sds_point *pt, int u)
{
	char key[8];
	int len = snprintf(key, sizeof(key), "%d", u);

	calls[u]++;
	if (!pt) {
		if (!handle_ff(u))
			passed[u]++;
		return;
	}
	if (unkeyed ? !sds_should_downgrade(pt) :
	    !sds_should_downgrade_key(pt, key, (size_t)len))
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

	if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "unkeyed"))) {
		fprintf(stderr, "usage: keyrate APP|ff SECS [unkeyed]\n");
		return 2;
	}
	secs = atol(argv[2]);
	unkeyed = argc == 4;
	if (!strcmp(argv[1], "ff")) {
		socklen_t len = sizeof(listener);
		int fd = socket(AF_INET, SOCK_DGRAM, 0);

		listener.sin_family = AF_INET;
		listener.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fd < 0 || bind(fd, (struct sockaddr *)&listener, sizeof(listener)) ||
		    getsockname(fd, (struct sockaddr *)&listener, &len)) {
			perror("keyrate: listener");
			return 1;
		}
		c = NULL;
		pt = NULL;
		/* The warm-up's key makes the table (it is the point's from attach). */
		handle_ff(1000);
	} else {
		c = sds_client_open("default", argv[1]);
		pt = sds_point(c, "k");
		if (!c || !pt) {
			fprintf(stderr, "keyrate: no client or point\n");
			return 1;
		}
	}
	for (i = 0; pt && !unkeyed && i < 10; i++) {
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
	if (c)
		sds_client_close(c);
	return 0;
}
