// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * demo-load: a load generator for the demo service, loopback only and
 * bounded in time.
 *
 *   demo-load --port N [--host ADDR] [--rate R] [--conns C] [--seconds S]
 *   demo-load --port N [--host ADDR] --get PATH
 *
 * The first form sends R requests per second in all (default 200) for S
 * seconds (default 10, at most 600) over C keep-alive connections (default
 * 4), each GET /item/<random id>, at a steady pace (absolute ticks: a slow
 * reply does not make the next ones burst).  Every second it prints one
 * line: requests, how the service answered them (X-Source: live, fallback,
 * failed), connection errors and the p50/p99 latency; at the end a total.
 *
 * The second form sends one GET PATH and prints the reply's body (for
 * /control and /stats); exit status 0 on a 2xx.
 *
 * ADDR must be an IPv4 loopback address (127.0.0.0/8, default 127.0.0.1):
 * this tool never sends anything off the host.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS	32
#define MAX_SECONDS	600
#define BUF_MAX		16384
#define LAT_BUCKETS	1000	/* 100 us each: 0 .. 100 ms, then overflow */
#define LAT_STEP_NS	100000
#define IO_TIMEOUT_S	5

enum { R_LIVE, R_FALLBACK, R_FAILED, R_OTHER, R_ERROR, R_MAX };

static struct sockaddr_in target;
static unsigned int opt_rate = 200, opt_conns = 4, opt_seconds = 10;
static volatile sig_atomic_t stop;

/* The current interval's results, and the totals. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long iv_count[R_MAX], total[R_MAX];
static unsigned long iv_lat[LAT_BUCKETS + 1], iv_nlat;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void record(int kind, uint64_t lat_ns)
{
	unsigned long b = lat_ns / LAT_STEP_NS;

	pthread_mutex_lock(&lock);
	iv_count[kind]++;
	total[kind]++;
	if (kind != R_ERROR) {
		iv_lat[b < LAT_BUCKETS ? b : LAT_BUCKETS]++;
		iv_nlat++;
	}
	pthread_mutex_unlock(&lock);
}

static int conn_open(void)
{
	struct timeval tv = { IO_TIMEOUT_S, 0 };
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&target, sizeof(target))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * One request on @fd: sends GET @path and reads the whole reply.  Returns
 * R_* and, in @body (size @bsize, may be NULL), the reply's body.  After
 * R_ERROR, or a reply that closes the connection, *fd is closed (-1).
 */
static int request(int *fd, const char *path, char *body, size_t bsize)
{
	char buf[BUF_MAX + 1], req[512];
	size_t have = 0, head, clen = 0;
	int status, kind, len;
	bool close_after;
	char *end, *h;
	ssize_t n;

	len = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		       "User-Agent: demo-load\r\n\r\n", path);
	if (len <= 0 || (size_t)len >= sizeof(req))
		return R_ERROR;
	if (send(*fd, req, (size_t)len, MSG_NOSIGNAL) != len)
		goto fail;
	for (;;) {
		n = recv(*fd, buf + have, BUF_MAX - have, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		have += (size_t)n;
		buf[have] = 0;
		end = strstr(buf, "\r\n\r\n");
		if (end)
			break;
		if (have == BUF_MAX)
			goto fail;
	}
	head = (size_t)(end + 4 - buf);
	*end = 0;
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		goto fail;
	kind = R_OTHER;
	close_after = false;
	for (h = strstr(buf, "\r\n"); h; h = strstr(h + 2, "\r\n")) {
		if (!strncasecmp(h + 2, "Content-Length:", 15))
			clen = strtoul(h + 17, NULL, 10);
		else if (!strncasecmp(h + 2, "X-Source: ", 10)) {
			if (!strncmp(h + 12, "live", 4))
				kind = R_LIVE;
			else if (!strncmp(h + 12, "fallback", 8))
				kind = R_FALLBACK;
			else if (!strncmp(h + 12, "failed", 6))
				kind = R_FAILED;
		} else if (!strncasecmp(h + 2, "Connection: close", 17))
			close_after = true;
	}
	if (clen > BUF_MAX - head)
		goto fail;
	while (have < head + clen) {
		n = recv(*fd, buf + have, head + clen - have, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		have += (size_t)n;
	}
	if (body && bsize) {
		size_t m = clen < bsize - 1 ? clen : bsize - 1;

		memcpy(body, buf + head, m);
		body[m] = 0;
	}
	if (close_after) {
		close(*fd);
		*fd = -1;
	}
	if (kind == R_OTHER && (status < 200 || status > 299))
		return R_ERROR;
	return kind;
fail:
	close(*fd);
	*fd = -1;
	return R_ERROR;
}

static void *worker(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL * ((uintptr_t)arg + 1);
	uint64_t period = 1000000000ULL * opt_conns / opt_rate;
	uint64_t next = now_ns(), t0;
	char path[64];
	int fd = -1, kind;

	/* spread the connections' ticks over one period */
	next += period * (uintptr_t)arg / opt_conns;
	while (!stop) {
		struct timespec ts = { next / 1000000000, next % 1000000000 };

		while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
						&ts, NULL) == EINTR)
			;
		if (stop)
			break;
		seed ^= seed >> 12;
		seed ^= seed << 25;
		seed ^= seed >> 27;
		snprintf(path, sizeof(path), "/item/%llu",
			 (unsigned long long)((seed * 2685821657736338717ULL) >> 54));
		t0 = now_ns();
		if (fd < 0)
			fd = conn_open();
		kind = fd < 0 ? R_ERROR : request(&fd, path, NULL, 0);
		record(kind, now_ns() - t0);
		next += period;
		if (next < now_ns())
			next = now_ns();	/* overloaded: do not burst */
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* The @q quantile of the interval's latencies, in ms (lock held). */
static double quantile(double q)
{
	unsigned long want = (unsigned long)(q * iv_nlat), seen = 0;
	int b;

	if (!iv_nlat)
		return 0;
	if (want >= iv_nlat)
		want = iv_nlat - 1;
	for (b = 0; b <= LAT_BUCKETS; b++) {
		seen += iv_lat[b];
		if (seen > want)
			break;
	}
	/* the bucket's middle */
	return (b + 0.5) * LAT_STEP_NS / 1e6;
}

static void on_signal(int sig)
{
	stop = 1;
}

static int parse_uint(const char *s, unsigned int lo, unsigned int hi,
		      unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: demo-load --port N [--host ADDR] [--rate R] [--conns C] "
		"[--seconds S]\n"
		"       demo-load --port N [--host ADDR] --get PATH\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "host", required_argument, NULL, 'H' },
		{ "rate", required_argument, NULL, 'r' },
		{ "conns", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 's' },
		{ "get", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct sigaction sa = { .sa_handler = on_signal };
	const char *host = "127.0.0.1", *get = NULL;
	unsigned int port = 0, i, sec;
	pthread_t tid[MAX_CONNS];
	uint64_t start, next;
	int c, err = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			err = parse_uint(optarg, 1, 65535, &port);
			break;
		case 'H':
			host = optarg;
			break;
		case 'r':
			err = parse_uint(optarg, 1, 100000, &opt_rate);
			break;
		case 'c':
			err = parse_uint(optarg, 1, MAX_CONNS, &opt_conns);
			break;
		case 's':
			err = parse_uint(optarg, 1, MAX_SECONDS, &opt_seconds);
			break;
		case 'g':
			get = optarg;
			err = get[0] != '/' || strpbrk(get, " \r\n") ? -1 : 0;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (err) {
			fprintf(stderr, "demo-load: bad value: %s\n", optarg);
			return 2;
		}
	}
	if (optind < argc || !port) {
		usage(stderr);
		return 2;
	}
	target.sin_family = AF_INET;
	target.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &target.sin_addr) != 1 ||
	    (ntohl(target.sin_addr.s_addr) >> 24) != 127) {
		fprintf(stderr, "demo-load: %s: not an IPv4 loopback address "
			"(127.0.0.0/8); this tool only talks to this host\n", host);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);

	if (get) {
		char body[BUF_MAX];
		int fd = conn_open(), kind;

		if (fd < 0) {
			fprintf(stderr, "demo-load: connect to %s:%u: %s\n", host,
				port, strerror(errno));
			return 1;
		}
		kind = request(&fd, get, body, sizeof(body));
		if (fd >= 0)
			close(fd);
		if (kind == R_ERROR) {
			fprintf(stderr, "demo-load: GET %s failed\n", get);
			return 1;
		}
		fputs(body, stdout);
		return 0;
	}

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (i = 0; i < opt_conns; i++) {
		if (pthread_create(&tid[i], NULL, worker, (void *)(uintptr_t)i)) {
			fprintf(stderr, "demo-load: pthread_create failed\n");
			stop = 1;
			break;
		}
	}
	start = now_ns();
	next = start;
	for (sec = 1; sec <= opt_seconds && !stop; sec++) {
		unsigned long cnt[R_MAX], n;
		double p50, p99;
		struct timespec ts;

		next += 1000000000ULL;
		ts.tv_sec = next / 1000000000;
		ts.tv_nsec = next % 1000000000;
		while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
						&ts, NULL) == EINTR)
			;
		pthread_mutex_lock(&lock);
		memcpy(cnt, iv_count, sizeof(cnt));
		p50 = quantile(0.50);
		p99 = quantile(0.99);
		memset(iv_count, 0, sizeof(iv_count));
		memset(iv_lat, 0, sizeof(iv_lat));
		iv_nlat = 0;
		pthread_mutex_unlock(&lock);
		for (n = 0, c = 0; c < R_MAX; c++)
			n += cnt[c];
		printf("%3us %5lu req  live %4lu  fallback %4lu  failed %4lu  "
		       "conn-err %lu  p50 %5.1f ms  p99 %5.1f ms\n", sec, n,
		       cnt[R_LIVE], cnt[R_FALLBACK], cnt[R_FAILED], cnt[R_ERROR],
		       p50, p99);
	}
	stop = 1;
	while (i > 0)
		pthread_join(tid[--i], NULL);
	printf("demo-load: %lu requests in %.1f s: %lu live, %lu fallback, "
	       "%lu failed, %lu other, %lu connection errors\n",
	       total[R_LIVE] + total[R_FALLBACK] + total[R_FAILED] +
	       total[R_OTHER] + total[R_ERROR], (now_ns() - start) / 1e9,
	       total[R_LIVE], total[R_FALLBACK], total[R_FAILED],
	       total[R_OTHER], total[R_ERROR]);
	return 0;
}
