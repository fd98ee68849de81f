// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * demo: a small HTTP service guarded by libsds, for make demo.
 *
 *   demo [--port N] [--port-file FILE] [--fail-pct P] [--sleep-us US]
 *        [--group G] [--app A]
 *
 * Serves HTTP/1.1 (keep-alive) on 127.0.0.1 only, one thread per
 * connection (at most 64):
 *
 *   GET /item/ID     the page of item ID: its stock, asked of the
 *                    inventory service, a dependency guarded by libsds
 *                    (point "inventory").  When sds-bpf downgrades the
 *                    point, the page is served from a fallback (stock
 *                    unknown) without calling the dependency.  Header
 *                    X-Source: live | fallback | failed (the dependency
 *                    failed: 502).
 *   GET /control?fail_pct=P&sleep_us=US
 *                    change how the dependency behaves, at run time (either
 *                    parameter may be left out); replies with the settings
 *   GET /stats       the service's own counters, as text
 *
 * The inventory dependency is simulated by inventory_lookup(): it sleeps
 * about US microseconds (default 2000; 20% of calls much faster, 10%
 * 1.6-3x slower) and fails P percent of the calls (default 2).
 *
 * Beside the guard point, the service has ordinary functions that sds-bpf
 * can attach to as function points, with no code change:
 * handle_request() (returns < 0 when the page failed), parse_header(), and
 * serve_request(conn, req, len), which gets each request's raw bytes, head
 * and blank line, as they came (`serve_request:copy=2,3` copies them for
 * traffic copy: make demo-copy).  Pipelined requests are served in order,
 * so a shadow that gets copies back to back on one connection answers
 * them all.
 *
 * --port 0 (the default) takes any free port; --port-file writes the port
 * to FILE (write + rename) once the service accepts connections.  Runs
 * until SIGINT/SIGTERM, then prints its counters, so that the counts
 * sds-bpf shows can be checked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <sds.h>

#define MAX_CONNS	64
#define REQ_MAX		8192	/* request head, bytes */
#define IDLE_MS		250	/* a connection's reads wake this often */

static unsigned int opt_fail_pct = 2;	/* atomics: /control changes them */
static unsigned int opt_sleep_us = 2000;

static volatile sig_atomic_t stop;
static struct sds_point *inventory;

/* counters (atomic adds) */
static unsigned long n_requests, n_live, n_fallback, n_failed, n_other;
static unsigned long n_dep_calls, n_dep_failures;
static unsigned int n_conns;	/* open connections */

#define ADD(x, v)	__atomic_add_fetch(&(x), (v), __ATOMIC_RELAXED)
#define GET(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)

/* xorshift64*: a per-thread generator, no locks */
static uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/* uniform in [lo, hi) */
static double rnd_range(uint64_t *s, double lo, double hi)
{
	return lo + (hi - lo) * (double)(rnd_next(s) >> 11) / (double)(1ULL << 53);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * The inventory service: the stock of item @id, or -EIO when it fails.
 * Sleeps about opt_sleep_us, with a spread so that the latency histogram
 * has some shape.
 */
__attribute__((noinline)) int inventory_lookup(unsigned long id, uint64_t *seed)
{
	unsigned int us = GET(opt_sleep_us), fail = GET(opt_fail_pct);
	double f, r = rnd_range(seed, 0, 1);

	if (r < 0.2)
		f = rnd_range(seed, 0.05, 0.3);		/* a cache hit */
	else if (r < 0.9)
		f = rnd_range(seed, 0.6, 1.4);		/* the usual case */
	else
		f = rnd_range(seed, 1.6, 3.0);		/* the slow tail */
	sleep_ns((uint64_t)(f * us * 1000));
	ADD(n_dep_calls, 1);
	if (rnd_range(seed, 0, 100) < fail) {
		ADD(n_dep_failures, 1);
		return -EIO;
	}
	return (int)(id * 7919 % 100);
}

/* The guarded call: a failure of the dependency is an exception. */
static int inventory_call(unsigned long id, uint64_t *seed)
{
	int r = inventory_lookup(id, seed);

	if (r < 0)
		sds_exception_sign(inventory);
	return r;
}

/* What the page shows when the dependency is downgraded. */
#define STOCK_FALLBACK	(-1000)

/*
 * Parse "Name: value" and return the value's length, or -1 without a
 * colon.
 */
__attribute__((noinline)) int parse_header(const char *line)
{
	const char *p = strchr(line, ':');

	if (!p)
		return -1;
	p++;
	while (*p == ' ')
		p++;
	return (int)strlen(p);
}

struct conn {
	int fd;
	uint64_t seed;
	bool keep_alive;
};

/* Send all of @buf; false on error. */
static bool send_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

static bool reply(struct conn *c, int status, const char *source,
		  const char *body)
{
	const char *reason = status == 200 ? "OK" : status == 404 ? "Not Found" :
			     status == 400 ? "Bad Request" : "Bad Gateway";
	char head[512];
	int n;

	n = snprintf(head, sizeof(head),
		     "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
		     "Content-Length: %zu\r\n%s%s%sConnection: %s\r\n\r\n",
		     status, reason, strlen(body),
		     source ? "X-Source: " : "", source ? source : "",
		     source ? "\r\n" : "", c->keep_alive ? "keep-alive" : "close");
	return send_all(c->fd, head, (size_t)n) &&
	       send_all(c->fd, body, strlen(body));
}

/* The value of query parameter @name in @q ("a=1&b=2"), or -1. */
static long query_param(const char *q, const char *name)
{
	size_t len = strlen(name);

	while (q && *q) {
		if (!strncmp(q, name, len) && q[len] == '=')
			return strtol(q + len + 1, NULL, 10);
		q = strchr(q, '&');
		if (q)
			q++;
	}
	return -1;
}

/*
 * Serve one request for @path.  Returns what the client got: 0 a live
 * page, 1 the fallback, 2 another page, -EIO a failed page (502), -EINVAL
 * a bad request; sds-bpf's err=neg on this function counts the failures
 * the users saw.
 */
__attribute__((noinline)) int handle_request(struct conn *c, const char *path)
{
	char body[256];
	int stock;

	if (!strncmp(path, "/item/", 6)) {
		unsigned long id = strtoul(path + 6, NULL, 10);

		ADD(n_requests, 1);
		/* The dependency, guarded: the fallback if downgraded. */
		stock = SDS_INVOKE(inventory, STOCK_FALLBACK,
				   inventory_call(id, &c->seed));
		if (stock == STOCK_FALLBACK) {
			ADD(n_fallback, 1);
			snprintf(body, sizeof(body),
				 "item %lu: stock unknown, try later\n", id);
			return reply(c, 200, "fallback", body) ? 1 : -EPIPE;
		}
		if (stock < 0) {
			ADD(n_failed, 1);
			reply(c, 502, "failed", "inventory unavailable\n");
			return -EIO;
		}
		ADD(n_live, 1);
		snprintf(body, sizeof(body), "item %lu: %d in stock\n", id, stock);
		return reply(c, 200, "live", body) ? 0 : -EPIPE;
	}
	ADD(n_other, 1);
	if (!strncmp(path, "/control", 8) && (!path[8] || path[8] == '?')) {
		const char *q = strchr(path, '?');
		long fail = query_param(q ? q + 1 : NULL, "fail_pct");
		long us = query_param(q ? q + 1 : NULL, "sleep_us");

		if (fail > 100 || us > 10000000) {
			reply(c, 400, NULL, "fail_pct 0..100, sleep_us 0..10000000\n");
			return -EINVAL;
		}
		if (fail >= 0)
			__atomic_store_n(&opt_fail_pct, (unsigned int)fail,
					 __ATOMIC_RELAXED);
		if (us >= 0)
			__atomic_store_n(&opt_sleep_us, (unsigned int)us,
					 __ATOMIC_RELAXED);
		snprintf(body, sizeof(body), "fail_pct=%u sleep_us=%u\n",
			 GET(opt_fail_pct), GET(opt_sleep_us));
		return reply(c, 200, NULL, body) ? 2 : -EPIPE;
	}
	if (!strcmp(path, "/stats")) {
		snprintf(body, sizeof(body),
			 "requests=%lu live=%lu fallback=%lu failed=%lu "
			 "inventory_calls=%lu inventory_failures=%lu\n",
			 GET(n_requests), GET(n_live), GET(n_fallback),
			 GET(n_failed), GET(n_dep_calls), GET(n_dep_failures));
		return reply(c, 200, NULL, body) ? 2 : -EPIPE;
	}
	reply(c, 404, NULL, "not found\n");
	return -EINVAL;
}

/*
 * Parse the request head in @req (NUL-terminated, without the blank
 * line) and serve it.  False: close the connection.
 */
static bool serve_one(struct conn *c, char *req)
{
	char *line, *save = NULL, *ls = NULL, *method, *path, *version;

	line = strtok_r(req, "\r\n", &save);
	if (!line)
		return false;
	method = strtok_r(line, " ", &ls);
	path = strtok_r(NULL, " ", &ls);
	version = strtok_r(NULL, " ", &ls);
	if (!method || !path || !version || strncmp(version, "HTTP/1.", 7)) {
		c->keep_alive = false;
		reply(c, 400, NULL, "bad request\n");
		return false;
	}
	c->keep_alive = strcmp(version, "HTTP/1.0") != 0;
	while ((line = strtok_r(NULL, "\r\n", &save))) {
		if (parse_header(line) < 0)
			continue;
		if (!strncasecmp(line, "Connection:", 11))
			c->keep_alive = strcasestr(line + 11, "close") == NULL;
		if (!strncasecmp(line, "Content-Length:", 15) &&
		    strtol(line + 15, NULL, 10) > 0)
			c->keep_alive = false;	/* GET only: no body read */
	}
	if (strcmp(method, "GET")) {
		c->keep_alive = false;
		reply(c, 400, NULL, "GET only\n");
		return false;
	}
	return handle_request(c, path) != -EPIPE && c->keep_alive;
}

/*
 * One raw request: @req[0..@len) is its head up to and including the
 * blank line, exactly as received (not NUL-terminated; the caller's buffer
 * goes on with the next pipelined request).  A function of its own, not
 * inlined, so that a function point can copy (req, len): arguments 2, 3.
 */
__attribute__((noinline)) bool serve_request(struct conn *c, const char *req,
					     size_t len)
{
	char head[REQ_MAX + 1];

	if (len < 4 || len > REQ_MAX)
		return false;
	/* serve_one() cuts the head up: a copy, without the blank line. */
	memcpy(head, req, len - 4);
	head[len - 4] = 0;
	return serve_one(c, head);
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	char buf[REQ_MAX + 1];
	size_t have = 0;
	char *end;
	ssize_t n;

	for (;;) {
		buf[have] = 0;
		end = strstr(buf, "\r\n\r\n");
		if (end) {
			size_t used = (size_t)(end + 4 - buf);

			if (!serve_request(c, buf, used))
				break;
			memmove(buf, buf + used, have - used);
			have -= used;
			continue;
		}
		if (have == REQ_MAX) {
			c->keep_alive = false;
			reply(c, 400, NULL, "request too long\n");
			break;
		}
		n = recv(c->fd, buf + have, REQ_MAX - have, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (stop)
				break;
			continue;
		}
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	close(c->fd);
	free(c);
	__atomic_sub_fetch(&n_conns, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void on_signal(int sig)
{
	stop = 1;
}

/* Write @port to @path through a temporary file and a rename. */
static int write_port(const char *path, unsigned int port)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -1;
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%u\n", port);
	if (fclose(f) || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
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
	fprintf(f, "usage: demo [--port N] [--port-file FILE] [--fail-pct P] "
		"[--sleep-us US] [--group G] [--app A]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "port-file", required_argument, NULL, 'f' },
		{ "fail-pct", required_argument, NULL, 'e' },
		{ "sleep-us", required_argument, NULL, 's' },
		{ "group", required_argument, NULL, 'g' },
		{ "app", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct sigaction sa = { .sa_handler = on_signal };
	struct sockaddr_in addr = { .sin_family = AF_INET };
	const char *port_file = NULL, *group = "default", *app = "demo";
	unsigned int port = 0;
	struct sds_client *client;
	socklen_t alen = sizeof(addr);
	pthread_attr_t attr;
	int c, err = 0, lfd, one = 1;
	uint64_t seeds = 0x9e3779b97f4a7c15ULL;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			err = parse_uint(optarg, 0, 65535, &port);
			break;
		case 'f':
			port_file = optarg;
			break;
		case 'e':
			err = parse_uint(optarg, 0, 100, &opt_fail_pct);
			break;
		case 's':
			err = parse_uint(optarg, 0, 10000000, &opt_sleep_us);
			break;
		case 'g':
			group = optarg;
			break;
		case 'a':
			app = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (err) {
			fprintf(stderr, "demo: bad value: %s\n", optarg);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}

	/*
	 * The guard: registers with the loader serving default/demo if one
	 * is attached (then every call is counted), else looks for one once
	 * a second in the background.
	 */
	client = sds_client_open(group, app);
	inventory = sds_point(client, "inventory");
	if (!client || !inventory) {
		fprintf(stderr, "demo: sds_client_open: out of memory\n");
		return 1;
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		perror("demo: socket");
		return 1;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);	/* loopback only */
	addr.sin_port = htons((uint16_t)port);
	if (bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(lfd, 128) ||
	    getsockname(lfd, (struct sockaddr *)&addr, &alen)) {
		fprintf(stderr, "demo: listen on 127.0.0.1:%u: %s\n", port,
			strerror(errno));
		return 1;
	}
	port = ntohs(addr.sin_port);
	if (port_file && write_port(port_file, port)) {
		fprintf(stderr, "demo: %s: %s\n", port_file, strerror(errno));
		return 1;
	}
	printf("demo: serving http://127.0.0.1:%u/ (pid %d)\n", port, (int)getpid());
	fflush(stdout);

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	while (!stop) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		struct timeval tv = { 0, IDLE_MS * 1000 };
		struct conn *cn;
		pthread_t tid;
		int fd;

		if (poll(&pfd, 1, IDLE_MS) <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (GET(n_conns) >= MAX_CONNS) {
			close(fd);
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		cn = calloc(1, sizeof(*cn));
		if (!cn) {
			close(fd);
			continue;
		}
		cn->fd = fd;
		cn->seed = (seeds += 0x9e3779b97f4a7c15ULL);
		ADD(n_conns, 1);
		if (pthread_create(&tid, &attr, conn_main, cn)) {
			__atomic_sub_fetch(&n_conns, 1, __ATOMIC_RELAXED);
			close(fd);
			free(cn);
		}
	}
	close(lfd);
	/* The connections see stop within IDLE_MS; then no guarded call is left. */
	while (__atomic_load_n(&n_conns, __ATOMIC_ACQUIRE))
		sleep_ns(10000000);
	sds_client_close(client);
	printf("demo: %lu item requests: %lu live, %lu fallback, %lu failed; "
	       "inventory called %lu times, failed %lu\n",
	       n_requests, n_live, n_fallback, n_failed, n_dep_calls,
	       n_dep_failures);
	return 0;
}
