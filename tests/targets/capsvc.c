// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * capsvc - the ramp tests' shadow (tests/capture/t_capramp.py): a service
 * of a fixed small capacity, whose latency grows with the load once the
 * load is above it.  Requests are lines ("...\n", raw framing); each is
 * served on a thread of its own inside the guard point "api"
 * (sds_enter() .. sds_downgrade_finally()), where it waits for its turn
 * of a rate limit of RATE requests a second with a burst of BURST
 * (GCRA): below RATE a request hardly waits, above it the queue -- and so
 * every request's latency -- grows for as long as the load stays.
 *
 *	capsvc GROUP APP RATE BURST
 *
 * Listens on 127.0.0.1, an ephemeral port, printed as "port N" on stdout.
 * Answers nothing.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sds.h>

#define THREADS_MAX	4000	/* requests waiting at once; more are dropped */

static struct sds_point *api;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double tat;		/* GCRA's theoretical arrival time, s */
static double interval, tolerance;	/* 1 / RATE, BURST / RATE */
static atomic_int waiting;
static pthread_attr_t attr;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void *request(void *arg)
{
	double now, at;
	struct timespec ts;

	(void)arg;
	sds_enter(api);
	pthread_mutex_lock(&lock);
	now = now_s();
	if (tat < now)
		tat = now;
	at = tat - tolerance;	/* the request's turn */
	tat += interval;
	pthread_mutex_unlock(&lock);
	if (at > now) {
		ts.tv_sec = (time_t)(at - now);
		ts.tv_nsec = (long)((at - now - ts.tv_sec) * 1e9);
		while (nanosleep(&ts, &ts))
			;
	}
	sds_downgrade_finally(api);
	atomic_fetch_sub(&waiting, 1);
	return NULL;
}

static void *conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[65536];
	pthread_t t;
	ssize_t n;
	int i;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++) {
			if (buf[i] != '\n')
				continue;
			if (atomic_fetch_add(&waiting, 1) >= THREADS_MAX ||
			    pthread_create(&t, &attr, request, NULL))
				atomic_fetch_sub(&waiting, 1);
		}
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	struct sds_client *cl;
	double rate, burst;
	int ls, fd, one = 1;
	pthread_t t;

	if (argc != 5 || (rate = atof(argv[3])) <= 0 || (burst = atof(argv[4])) < 1) {
		fprintf(stderr, "usage: capsvc GROUP APP RATE BURST\n");
		return 2;
	}
	interval = 1.0 / rate;
	tolerance = burst / rate;
	cl = sds_client_open(argv[1], argv[2]);
	api = sds_point(cl, "api");
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 1 << 20);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 64) ||
	    getsockname(ls, (struct sockaddr *)&a, &al)) {
		perror("capsvc: listen");
		return 1;
	}
	printf("port %d\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		fd = accept(ls, NULL, NULL);
		if (fd < 0)
			continue;
		if (pthread_create(&t, &attr, conn, (void *)(intptr_t)fd))
			close(fd);
	}
}
