// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * ff_connect.c - what fail-fast's cgroup programs cost a connect(2)
 * outside every point (tools/bench/failfast/ff_connect.py, docs/FAILFAST.md).
 *
 *   bench-ff-connect N
 *
 * N times: a TCP socket connects to a listener of its own on 127.0.0.1,
 * the connection is accepted and both ends are closed.  Only connect()
 * is timed (the cgroup connect4 hook runs inside it).  Prints
 * "connect N med MED_NS mean MEAN_NS".
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	unsigned long long *took, sum = 0;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int n = argc > 1 ? atoi(argv[1]) : 0, i, lfd, one = 1;

	if (n < 1 || n > 10000000) {
		fprintf(stderr, "usage: bench-ff-connect N (1..10000000)\n");
		return 2;
	}
	took = calloc(n, sizeof(*took));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!took || lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 64) ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen)) {
		perror("bench-ff-connect: listener");
		return 1;
	}
	for (i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c;
		unsigned long long t0;

		if (fd < 0) {
			perror("bench-ff-connect: socket");
			return 1;
		}
		t0 = now_ns();
		if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
			perror("bench-ff-connect: connect");
			return 1;
		}
		took[i] = now_ns() - t0;
		sum += took[i];
		/* Reset, not FIN: no TIME_WAIT piling up over the rounds. */
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		c = accept(lfd, NULL, NULL);
		if (c >= 0)
			close(c);
		close(fd);
	}
	qsort(took, n, sizeof(*took), cmp_ull);
	printf("connect %d med %llu mean %llu\n", n, took[n / 2], sum / n);
	return 0;
}
