// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * hb_bench - load generator for sds-admin's heartbeat endpoint.
 *
 *   admin-bench --addr 127.0.0.1:PORT [--addr ...] --token-file FILE
 *               [--conns N] [--seconds S] [--points P] [--rate R [--interval S]]
 *
 * N closed-loop keep-alive connections (one thread each) post heartbeats
 * of P points (default 20) built with the shared codec, each from a new
 * (host, period) so that every one is stored, never deduplicated.  Prints
 * heartbeats/s and the latency percentiles of the whole run, one line of
 * "key value" pairs; exits non-zero if any request failed.  With several
 * --addr (admins sharing one database), connection i goes to the
 * (i mod count)-th: the load spread as the loaders spread it.
 *
 * With --rate R the load is open-loop instead (hb_open.c): R heartbeats/s
 * over all connections, each on its own schedule, latency measured from
 * the scheduled send time, and with --interval S one line per S seconds.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "hb_bench.h"

struct worker {
	pthread_t th;
	int id;
	double *lat;		/* ms */
	size_t n, cap;
	unsigned long errors;
};

static struct sockaddr_in addrs[MAX_ADDRS];
static int naddrs;
static char token[512];
static int npoints = 20;
volatile int bench_stop;

double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Connection @id's admin. */
int connect_admin(int id)
{
	const struct sockaddr_in *addr = &addrs[id % naddrs];
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The request with a fixed-width host name at *host_at to rewrite. */
char *build_request(int id, size_t *len, size_t *host_at)
{
	struct sds_heartbeat *hb = heartbeat_new();
	char name[32], *body, *req;
	json_t *doc;
	int i, j;

	heartbeat_init(hb, "bench", "bench", "bench-00-000000000", "127.0.0.1",
		       (time(NULL) / 10 - 1) * 10, 1);
	for (i = 0; i < npoints; i++) {
		struct sds_hb_point *p;

		snprintf(name, sizeof(name), "point-%02d", i);
		p = heartbeat_add_point(hb, name);
		p->visits = 100000 + i;
		p->exceptions = 10 + i;
		p->timeouts = i;
		p->downgrades = i / 2;
		p->max_concurrency = 8;
		for (j = 8; j < 20; j++)
			p->latency_hist[j] = 1000 + j;
	}
	doc = heartbeat_to_json(hb);
	body = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	heartbeat_free(hb);
	if (asprintf(&req, "POST /api/v1/heartbeat HTTP/1.1\r\nHost: localhost\r\n"
		     "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
		     "Content-Length: %zu\r\n\r\n%s", token, strlen(body), body) < 0)
		exit(1);
	free(body);
	*len = strlen(req);
	*host_at = strstr(req, "bench-00-000000000") - req;
	snprintf(name, sizeof(name), "%02d", id % 100);
	memcpy(req + *host_at + 6, name, 2);
	return req;
}

/* Read one response; returns the status or -1. */
int read_response(int fd, char *buf, size_t cap)
{
	size_t have = 0, need = 0;
	char *hdr_end = NULL;
	int status = -1;

	for (;;) {
		ssize_t n = read(fd, buf + have, cap - have - 1);

		if (n <= 0)
			return -1;
		have += n;
		buf[have] = '\0';
		if (!hdr_end) {
			char *cl;

			hdr_end = strstr(buf, "\r\n\r\n");
			if (!hdr_end)
				continue;
			if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
				return -1;
			cl = strcasestr(buf, "\r\nContent-Length:");
			if (!cl || cl > hdr_end)
				return -1;
			need = (hdr_end + 4 - buf) + strtoul(cl + 17, NULL, 10);
			if (need >= cap)
				return -1;
		}
		if (have >= need)
			return status;
	}
}

static void *run(void *arg)
{
	struct worker *w = arg;
	char resp[65536], num[16];
	size_t len, host_at, sent;
	unsigned long seq = 0;
	char *req;
	int fd;

	req = build_request(w->id, &len, &host_at);
	fd = connect_admin(w->id);
	while (!bench_stop && fd >= 0) {
		double t0, t1;

		snprintf(num, sizeof(num), "%09lu", seq++ % 1000000000UL);
		memcpy(req + host_at + 9, num, 9);
		t0 = now_ms();
		for (sent = 0; sent < len;) {
			ssize_t n = write(fd, req + sent, len - sent);

			if (n <= 0)
				break;
			sent += n;
		}
		if (sent < len || read_response(fd, resp, sizeof(resp)) != 200) {
			w->errors++;
			close(fd);
			fd = connect_admin(w->id);
			continue;
		}
		t1 = now_ms();
		if (w->n == w->cap) {
			w->cap = w->cap ? w->cap * 2 : 65536;
			w->lat = realloc(w->lat, w->cap * sizeof(double));
			if (!w->lat)
				exit(1);
		}
		w->lat[w->n++] = t1 - t0;
	}
	if (fd >= 0)
		close(fd);
	else
		w->errors++;
	free(req);
	return NULL;
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "token-file", required_argument, NULL, 't' },
		{ "conns", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 's' },
		{ "points", required_argument, NULL, 'p' },
		{ "rate", required_argument, NULL, 'r' },
		{ "interval", required_argument, NULL, 'i' },
		{ 0 },
	};
	int conns = 8, seconds = 10, interval = 0, c, i;
	double rate = 0;
	const char *a[MAX_ADDRS], *tf = NULL;
	struct worker *w;
	unsigned long errors = 0;
	double t0, el, *all;
	size_t total = 0, k = 0;
	char host[64];
	int port;
	FILE *f;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			if (naddrs == MAX_ADDRS) {
				fprintf(stderr, "admin-bench: at most %d --addr\n", MAX_ADDRS);
				return 2;
			}
			a[naddrs++] = optarg;
			break;
		case 't': tf = optarg; break;
		case 'c': conns = atoi(optarg); break;
		case 's': seconds = atoi(optarg); break;
		case 'p': npoints = atoi(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 'i': interval = atoi(optarg); break;
		default: return 2;
		}
	}
	if (!naddrs || !tf || conns < 1 || conns > 100 || seconds < 1 || npoints < 1 ||
	    npoints > SDS_HB_MAX_POINTS || rate < 0 || rate > 1e6 || interval < 0 ||
	    (interval && !rate)) {
		fprintf(stderr, "usage: admin-bench --addr 127.0.0.1:PORT [--addr ...]"
			" --token-file FILE [--conns N] [--seconds S] [--points P]"
			" [--rate R [--interval S]]\n");
		return 2;
	}
	for (i = 0; i < naddrs; i++) {
		addrs[i].sin_family = AF_INET;
		if (sscanf(a[i], "%63[^:]:%d", host, &port) != 2 ||
		    inet_pton(AF_INET, host, &addrs[i].sin_addr) != 1) {
			fprintf(stderr, "admin-bench: %s: not IPV4:PORT\n", a[i]);
			return 2;
		}
		addrs[i].sin_port = htons(port);
	}
	f = fopen(tf, "r");
	if (!f || !fgets(token, sizeof(token), f)) {
		fprintf(stderr, "admin-bench: %s: cannot read the token\n", tf);
		return 1;
	}
	fclose(f);
	token[strcspn(token, "\r\n")] = '\0';
	if (rate)
		return open_loop(conns, seconds, rate, interval);

	w = calloc(conns, sizeof(*w));
	t0 = now_ms();
	for (i = 0; i < conns; i++) {
		w[i].id = i;
		pthread_create(&w[i].th, NULL, run, &w[i]);
	}
	sleep(seconds);
	bench_stop = 1;
	for (i = 0; i < conns; i++) {
		pthread_join(w[i].th, NULL);
		total += w[i].n;
		errors += w[i].errors;
	}
	el = (now_ms() - t0) / 1e3;
	all = malloc((total + 1) * sizeof(double));
	for (i = 0; i < conns; i++) {
		memcpy(all + k, w[i].lat, w[i].n * sizeof(double));
		k += w[i].n;
		free(w[i].lat);
	}
	qsort(all, total, sizeof(double), cmp_double);
	printf("heartbeats %zu seconds %.1f conns %d points %d heartbeats_per_s %.0f "
	       "p50_ms %.2f p99_ms %.2f max_ms %.2f errors %lu\n",
	       total, el, conns, npoints, total / el,
	       total ? all[total / 2] : 0, total ? all[(size_t)(total * 0.99)] : 0,
	       total ? all[total - 1] : 0, errors);
	free(all);
	free(w);
	return errors || !total ? 1 : 0;
}
