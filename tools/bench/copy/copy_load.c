// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * copy_load - the loads of tools/bench/copy/copy.py (issue 12's benchmark):
 *
 *   copy_load sink PORT SIZE SECS     count SIZE-byte requests arriving on
 *                                     127.0.0.1:PORT for SECS after the first,
 *                                     print that, drain until stdin closes
 *   copy_load direct PORT SIZE CONNS SECS AMP
 *                                     the limit: write the byte stream sds-copy
 *                                     writes (distinct requests, each AMP times)
 *                                     over CONNS pooled connections, batches
 *                                     of 64 per writev (as sds-copy), SECS long
 *   copy_load feed PORT SIZE SECS RATE
 *                                     records of SIZE-byte requests to
 *                                     sds-copy at RATE/s (0: as fast as it
 *                                     takes them), SECS long
 *
 * Each prints one JSON line.  No error handling beyond a message: a
 * benchmark helper, never run on anything but loopback.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "copyrec.h"

#define BATCH	256

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "copy_load: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct sockaddr_in lo(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static int dial(int port)
{
	struct sockaddr_in a = lo(port);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	return fd;
}

static int sink(int port, long size, double secs)
{
	static char buf[1 << 20];
	struct sockaddr_in a = lo(port);
	struct epoll_event ev, evs[64];
	int lfd, ep, n, i, one = 1, done = 0;
	unsigned long long bytes = 0;
	double t0 = 0, t;
	ssize_t r;

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 128))
		die("sink listen");
	ep = epoll_create1(0);
	ev.events = EPOLLIN;
	ev.data.fd = lfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	ev.data.fd = 0;
	epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		t = now_s();
		if (t0 && t - t0 >= secs && !done) {
			done = 1;
			printf("{\"copies\": %llu, \"secs\": %.3f, \"rate\": %.0f}\n",
			       bytes / size, t - t0, bytes / size / (t - t0));
			fflush(stdout);
		}
		n = epoll_wait(ep, evs, 64, 100);
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == 0) {
				if (read(0, buf, sizeof(buf)) <= 0)
					return 0;
				continue;
			}
			if (evs[i].data.fd == lfd) {
				int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);

				ev.events = EPOLLIN;
				ev.data.fd = c;
				if (c >= 0)
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
				continue;
			}
			r = read(evs[i].data.fd, buf, sizeof(buf));
			if (r > 0) {
				if (!t0)
					t0 = now_s();
				if (!done)
					bytes += r;
			} else if (r == 0 || errno != EAGAIN) {
				close(evs[i].data.fd);
			}
		}
	}
}

static void request_fill(char *req, long size, unsigned long i)
{
	memset(req, 'r', size);
	snprintf(req, size, "%lu", i);
	req[strlen(req)] = ' ';
	req[size - 1] = '\n';
}

/*
 * The same byte stream sds-copy writes at xAMP to one endpoint: distinct
 * requests (a ring of DISTINCT, as many bodies as a busy server holds),
 * each AMP times in a row, 64 per writev, round robin over the pool.
 */
#define DISTINCT	8192

static int direct(int port, long size, int conns, double secs, int amp)
{
	char *reqs = malloc((size_t)DISTINCT * size);
	struct iovec iov[BATCH];
	unsigned long long sent = 0;
	double t0 = now_s();
	int fds[64], i, k;

	if (conns > 64)
		conns = 64;
	for (i = 0; i < conns; i++)
		fds[i] = dial(port);
	for (i = 0; i < DISTINCT; i++)
		request_fill(reqs + (size_t)i * size, size, i);
	/* Blocking writes round robin: the pool at full tilt. */
	for (k = 0; now_s() - t0 < secs; k = (k + 1) % conns) {
		ssize_t n, want = size * BATCH, m;
		int j, stop = 0;

		for (j = 0; j < BATCH; j++) {
			iov[j].iov_base = reqs + (size_t)((sent + j) / amp % DISTINCT) * size;
			iov[j].iov_len = size;
		}
		n = writev(fds[k], iov, BATCH);
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
			break;	/* the sink counted its seconds and left */
		if (n < 0)
			die("direct writev");
		while (n < want && !stop) {	/* finish the batch: whole requests */
			const char *p = iov[n / size].iov_base;
			ssize_t off = n % size;

			m = write(fds[k], p + off, size - off);
			if (m <= 0)
				stop = 1;
			else
				n += m;
		}
		if (stop)
			break;
		sent += BATCH;
	}
	printf("{\"sent\": %llu, \"secs\": %.3f}\n", sent, now_s() - t0);
	for (i = 0; i < conns; i++)
		close(fds[i]);
	return 0;
}

static int feed(int port, long size, double secs, double rate)
{
	struct copyrec r = { .flags = 0 };
	static uint8_t out[1 << 20];
	char *req = malloc(size);
	unsigned long long sent = 0;
	double t0 = now_s(), t;
	size_t len;
	int fd = dial(port), n;

	strcpy(r.app, "bench");
	strcpy(r.point, "req");
	r.orig_len = r.cap_len = size;
	r.data = (uint8_t *)req;
	copyrec_hello_encode(out);
	if (write(fd, out, COPYREC_HELLO_LEN) != COPYREC_HELLO_LEN)
		die("feed hello");
	while ((t = now_s()) - t0 < secs) {
		unsigned long long due = rate > 0 ? (unsigned long long)((t - t0) * rate) : sent + 256;

		if (due <= sent) {
			usleep(200);
			continue;
		}
		for (len = 0; sent < due && len + COPYREC_MAX_LEN < sizeof(out); sent++) {
			request_fill(req, size, sent);
			r.ts_ns = sent;
			n = copyrec_encode(&r, out + len, sizeof(out) - len);
			len += n;
		}
		if (write(fd, out, len) != (ssize_t)len)
			die("feed write");
	}
	printf("{\"records\": %llu, \"secs\": %.3f}\n", sent, now_s() - t0);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 5 && !strcmp(argv[1], "sink"))
		return sink(atoi(argv[2]), atol(argv[3]), atof(argv[4]));
	if (argc == 7 && !strcmp(argv[1], "direct"))
		return direct(atoi(argv[2]), atol(argv[3]), atoi(argv[4]), atof(argv[5]),
			      atoi(argv[6]));
	if (argc == 6 && !strcmp(argv[1], "feed"))
		return feed(atoi(argv[2]), atol(argv[3]), atof(argv[4]), atof(argv[5]));
	fprintf(stderr, "usage: copy_load sink PORT SIZE SECS | direct PORT SIZE CONNS SECS AMP | feed PORT SIZE SECS RATE\n");
	return 2;
}
