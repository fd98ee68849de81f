/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A target program for tests/failfast's limits (t_fflimit.py, issue 36):
 * an ordinary program, no libsds, whose functions connect to a local
 * server.  Driven line by line on stdin; prints "ready" once, then:
 *
 *   hold PORT N       N threads each call fetch_hold(PORT): it connects,
 *                     then waits inside the function until "release".
 *                     Once all N have connected it prints
 *                     "held OK=a ECONNREFUSED=b" (their connects'
 *                     outcomes); after a "release" line the threads
 *                     return and it prints "done".  A barrier, not a
 *                     sleep: all N are inside fetch_hold() at once
 *                     however slow the machine is.
 *   paced PORT N US   N calls of fetch_conn(PORT), the i-th started at
 *                     t0 + i*US µs (an absolute schedule: a late call
 *                     does not push the others back); prints
 *                     "res OK=a ECONNREFUSED=b span NS", NS from the
 *                     first call's start to the last's
 *   seq PORT N        N calls of fetch_conn(PORT) one after another;
 *                     prints "res OK=a ECONNREFUSED=b first F after A":
 *                     F the 1-based number of the first call that
 *                     failed (0: none), A the calls after it that did not
 *   quit              exit 0
 *
 * fetch_hold() and fetch_conn() return 0 or -errno (err=neg counts the
 * failures).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TARGET_FN __attribute__((noipa, used))
#define MAX_THREADS 64
#define MAX_CALLS 100000

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A connect to 127.0.0.1:@port; the socket into *@fdp. */
static int conn_to(int port, int *fdp)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = -errno;

		close(fd);
		return e;
	}
	*fdp = fd;
	return 0;
}

/* One connection to the server at @port, closed at once. */
TARGET_FN int fetch_conn(int port)
{
	int fd, r = conn_to(port, &fd);

	if (!r)
		close(fd);
	return r;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int connected, ok, refused, released;

/* Connect to @port, then wait inside this call until released. */
TARGET_FN int fetch_hold(int port)
{
	int fd = -1, r = conn_to(port, &fd);

	pthread_mutex_lock(&mu);
	connected++;
	if (!r)
		ok++;
	else if (r == -ECONNREFUSED)
		refused++;
	pthread_cond_broadcast(&cv);
	while (!released)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	if (fd >= 0)
		close(fd);
	return r;
}

static void *hold_thread(void *arg)
{
	fetch_hold((int)(long)arg);
	return NULL;
}

static void cmd_hold(int port, int n)
{
	pthread_t t[MAX_THREADS];
	char line[64];
	int i;

	connected = ok = refused = released = 0;
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, hold_thread, (void *)(long)port);
	pthread_mutex_lock(&mu);
	while (connected < n)
		pthread_cond_wait(&cv, &mu);
	printf("held OK=%d ECONNREFUSED=%d other=%d\n", ok, refused,
	       n - ok - refused);
	pthread_mutex_unlock(&mu);
	/* The test's "release": every thread of every process is inside now. */
	if (!fgets(line, sizeof(line), stdin) || strncmp(line, "release", 7))
		exit(2);
	pthread_mutex_lock(&mu);
	released = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("done\n");
}

static void sleep_until(unsigned long long t)
{
	struct timespec ts = { .tv_sec = t / 1000000000ULL,
			       .tv_nsec = t % 1000000000ULL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void cmd_calls(int port, int n, long gap_us)
{
	unsigned long long t0 = now_ns(), first = 0, last = 0, t;
	int i, r, nok = 0, nref = 0, other = 0, ffail = 0, after = 0;

	for (i = 0; i < n; i++) {
		if (gap_us > 0)
			sleep_until(t0 + (unsigned long long)i * gap_us * 1000ULL);
		t = now_ns();
		if (!i)
			first = t;
		last = t;
		r = fetch_conn(port);
		if (!r)
			nok++;
		else if (r == -ECONNREFUSED)
			nref++;
		else
			other++;
		if (r && !ffail)
			ffail = i + 1;
		else if (!r && ffail)
			after++;
	}
	if (gap_us > 0)
		printf("res OK=%d ECONNREFUSED=%d other=%d span %llu\n", nok, nref,
		       other, last - first);
	else
		printf("res OK=%d ECONNREFUSED=%d other=%d first %d after %d\n",
		       nok, nref, other, ffail, after);
}

int main(void)
{
	char line[256], cmd[16];
	int port, n;
	long us;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "quit", 4))
			return 0;
		us = 0;
		if (sscanf(line, "%15s %d %d %ld", cmd, &port, &n, &us) < 3 ||
		    n < 1 || n > MAX_CALLS) {
			printf("error: %s", line);
			continue;
		}
		if (!strcmp(cmd, "hold") && n <= MAX_THREADS)
			cmd_hold(port, n);
		else if (!strcmp(cmd, "paced") && us > 0)
			cmd_calls(port, n, us);
		else if (!strcmp(cmd, "seq"))
			cmd_calls(port, n, 0);
		else
			printf("error: %s", line);
	}
	return 0;
}
