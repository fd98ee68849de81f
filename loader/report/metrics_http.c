// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * metrics_http.c - the --metrics listener and its thread (metrics.h).
 *
 * The thread owns the listening socket and every scrape connection; it
 * reads nothing of the loader but the copy the tick hands it.  Everything
 * a client can make it hold is bounded: METRICS_CLIENTS slots (when they
 * are full, the oldest connection that has not sent a whole request
 * yet makes room: a slowloris loses its slot to a real scraper; failing
 * that, the oldest one being answered: a client that sent its request
 * and never reads, when the answer is more than the socket buffers,
 * would else hold its slot for METRICS_WRITE_NS), METRICS_PEER_CLIENTS
 * of them for one address (its next connection takes its own oldest's
 * slot), a request of METRICS_REQ_MAX bytes, a deadline for each stage.  Only
 * `GET /metrics` is served; each answer closes its connection.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <netinet/in.h>
#include "publish/flags.h"
#include "report/metrics.h"
#include "trust.h"

#define METRICS_CLIENTS		16	/* connections at once; Prometheus needs 1 */
#define METRICS_PEER_CLIENTS	8	/* ... of one address */
#define METRICS_REQ_MAX		4096	/* request line and headers, bytes (Prometheus sends ~300) */
#define METRICS_READ_NS		5000000000ULL	/* the whole request within this of the accept */
#define METRICS_WAIT_NS		5000000000ULL	/* the loop's copy within this past a tick (it comes at the next one) */
#define METRICS_WRITE_NS	10000000000ULL	/* the answer taken whole within this */
#define METRICS_ACCEPT_BURST	64	/* accepts per wakeup */

/* An answer's body, shared by the scrapes of one copy. */
struct mbody {
	int refs;			/* holders (clients, the thread's current) */
	size_t len;			/* bytes in @text */
	char *text;			/* the exposition (malloc'd) */
};

enum mstage { MC_FREE, MC_READ, MC_WAIT, MC_WRITE };

/* One scrape connection. */
struct mclient {
	int fd;				/* -1 when @stage is MC_FREE */
	enum mstage stage;		/* what it waits for */
	uint64_t accepted_ns;		/* when accepted: the eviction order */
	struct sockaddr_storage peer;	/* its address (the port zeroed) */
	uint64_t due_ns;		/* the current stage must end by then */
	char in[METRICS_REQ_MAX + 1];	/* request bytes so far, NUL-terminated */
	size_t in_len;			/* bytes in @in */
	char head[256];			/* status line and headers, or a whole error answer */
	size_t head_len;		/* bytes in @head */
	struct mbody *body;		/* the metrics after @head; NULL: none */
	size_t sent;			/* bytes of head + body sent */
};

struct metrics {
	int lfd;			/* the listening socket */
	int stop_fd;			/* eventfd: metrics__close asks the thread to end */
	int pub_fd;			/* eventfd: the tick published a copy */
	pthread_t thread;		/* serves the clients */
	uint64_t tick_ns;		/* --tick-ms: a copy comes at the next tick */
	bool started;			/* @thread runs */
	atomic_bool want;		/* a scrape waits for a copy */
	pthread_mutex_t lock;		/* guards @shared */
	struct metrics_data shared;	/* the tick copies into it */
	struct metrics_data own;	/* the thread's copy of @shared, rendered unlocked */
	struct mclient c[METRICS_CLIENTS];	/* the connections */
	char *buf;			/* render buffer */
	size_t cap;			/* bytes allocated for @buf */
};

/* ---- the address ------------------------------------------------------- */

/* Split @spec into host and port; -1 with @err on a malformed one. */
static int split_spec(const char *spec, char *host, size_t hlen, long *port,
		      char *err, size_t errlen)
{
	const char *p = spec, *colon;
	char *end;

	if (*p == '[') {
		const char *rb = strchr(p, ']');

		if (!rb || rb[1] != ':' || rb == p + 1 || (size_t)(rb - p - 1) >= hlen)
			goto bad;
		snprintf(host, hlen, "%.*s", (int)(rb - p - 1), p + 1);
		p = rb + 2;
	} else if ((colon = strrchr(p, ':'))) {
		if (strchr(p, ':') != colon || (size_t)(colon - p) >= hlen)
			goto bad;	/* a bare IPv6 address: brackets, please */
		snprintf(host, hlen, "%.*s", (int)(colon - p), p);
		if (!*host)
			snprintf(host, hlen, "%s", METRICS_DEFAULT_HOST);
		p = colon + 1;
	} else {
		snprintf(host, hlen, "%s", METRICS_DEFAULT_HOST);
	}
	errno = 0;
	*port = strtol(p, &end, 10);
	if (!*p || *end || errno || *p == '-' || *p == '+')
		goto bad;
	if (*port < 1 || *port > 65535) {
		snprintf(err, errlen, "bad --metrics '%s': port %ld out of range 1..65535",
			 spec, *port);
		return -1;
	}
	return 0;
bad:
	snprintf(err, errlen, "bad --metrics '%s': expected HOST:PORT, [IPV6]:PORT or PORT",
		 spec);
	return -1;
}

/* A non-blocking listening socket on @spec; -1 with @err. */
static int listen_on(const char *spec, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV | AI_PASSIVE };
	struct addrinfo *res, *ai;
	char host[256], port[8];
	int fd = -1, rc, one = 1, why = 0;
	long pn;

	if (split_spec(spec, host, sizeof(host), &pn, err, errlen))
		return -1;
	snprintf(port, sizeof(port), "%ld", pn);
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "--metrics %s: cannot resolve '%s': %s", spec,
			 host, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			why = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 64))
			break;
		why = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(err, errlen, "--metrics %s: cannot listen: %s%s", spec,
			 strerror(why), why == EADDRINUSE ?
			 " (another process has that port: pick another)" : "");
	return fd;
}

/* ---- bodies and clients ------------------------------------------------ */

static void body_put(struct mbody *b)
{
	if (b && --b->refs == 0) {
		free(b->text);
		free(b);
	}
}

static void client_close(struct mclient *c)
{
	if (c->fd >= 0)
		close(c->fd);
	body_put(c->body);
	c->fd = -1;
	c->body = NULL;
	c->stage = MC_FREE;
}

/* Queue a whole small answer (an error) and close after it. */
static void client_answer(struct mclient *c, int code, const char *reason,
			  const char *text, uint64_t now)
{
	int n = snprintf(c->head, sizeof(c->head),
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
			 code, reason, strlen(text), text);

	c->head_len = n > 0 && (size_t)n < sizeof(c->head) ? (size_t)n : 0;
	c->sent = 0;
	c->stage = MC_WRITE;
	c->due_ns = now + METRICS_WRITE_NS;
}

/*
 * A whole request is in: judge its first line, and only it (the headers
 * are never looked at: a space in one is not the line's).
 */
static void client_request(struct metrics *m, struct mclient *c, uint64_t now)
{
	char *sp1, *sp2, *q;
	size_t plen;

	c->in[strcspn(c->in, "\r\n")] = '\0';
	sp1 = strchr(c->in, ' ');
	if (!sp1 || !(sp2 = strchr(sp1 + 1, ' ')) || strncmp(sp2 + 1, "HTTP/1.", 7)) {
		client_answer(c, 400, "Bad Request", "bad request\n", now);
		return;
	}
	q = memchr(sp1 + 1, '?', sp2 - sp1 - 1);
	plen = (q ? q : sp2) - (sp1 + 1);
	if (plen != 8 || strncmp(sp1 + 1, "/metrics", 8)) {
		client_answer(c, 404, "Not Found", "only /metrics is served here\n", now);
		return;
	}
	if (sp1 - c->in != 3 || strncmp(c->in, "GET", 3)) {
		client_answer(c, 405, "Method Not Allowed", "GET only\n", now);
		return;
	}
	c->stage = MC_WAIT;
	c->due_ns = now + m->tick_ns + METRICS_WAIT_NS;
	atomic_store(&m->want, true);
}

static void client_read(struct metrics *m, struct mclient *c, uint64_t now)
{
	ssize_t n = read(c->fd, c->in + c->in_len, METRICS_REQ_MAX - c->in_len);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		client_close(c);
		return;
	}
	c->in_len += n;
	c->in[c->in_len] = '\0';
	if (strstr(c->in, "\r\n\r\n") || strstr(c->in, "\n\n"))
		client_request(m, c, now);
	else if (c->in_len >= METRICS_REQ_MAX)
		client_answer(c, 431, "Request Header Fields Too Large",
			      "request too large\n", now);
}

static void client_write(struct mclient *c)
{
	struct iovec iov[2];
	size_t blen = c->body ? c->body->len : 0;
	int n = 0;
	ssize_t w;

	if (c->sent < c->head_len)
		iov[n++] = (struct iovec){ c->head + c->sent, c->head_len - c->sent };
	if (blen && c->sent < c->head_len + blen) {
		size_t off = c->sent > c->head_len ? c->sent - c->head_len : 0;

		iov[n++] = (struct iovec){ c->body->text + off, blen - off };
	}
	if (!n) {
		client_close(c);
		return;
	}
	/* MSG_NOSIGNAL: a client gone meanwhile is an error, not a SIGPIPE. */
	w = sendmsg(c->fd, &(struct msghdr){ .msg_iov = iov, .msg_iovlen = n },
		    MSG_NOSIGNAL);
	if (w < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (w <= 0) {
		client_close(c);
		return;
	}
	c->sent += w;
	if (c->sent >= c->head_len + blen) {
		/* Our half closed first: the client sees the end at once. */
		shutdown(c->fd, SHUT_WR);
		client_close(c);
	}
}

/* The address of @ss without its port: what "one peer" is. */
static void peer_of(struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = 0;
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = 0;
}

/*
 * A slot for a new client of @peer, made free if need be: the oldest of
 * @peer's own when it holds METRICS_PEER_CLIENTS; else a free one; else
 * the oldest still sending its request; else the oldest being answered.
 */
static struct mclient *client_slot(struct metrics *m, const struct sockaddr_storage *peer)
{
	struct mclient *free_c = NULL, *reading = NULL, *any = NULL, *mine = NULL, *c;
	int i, nmine = 0;

	for (i = 0; i < METRICS_CLIENTS; i++) {
		c = &m->c[i];
		if (c->stage == MC_FREE) {
			if (!free_c)
				free_c = c;
			continue;
		}
		/* One family, not IP: one peer (there is no address to tell). */
		if (sds_trust_same_host(&c->peer, peer)) {
			nmine++;
			if (!mine || c->accepted_ns < mine->accepted_ns)
				mine = c;
		}
		if (c->stage == MC_READ && (!reading || c->accepted_ns < reading->accepted_ns))
			reading = c;
		if (!any || c->accepted_ns < any->accepted_ns)
			any = c;
	}
	c = nmine >= METRICS_PEER_CLIENTS ? mine : free_c ? free_c : reading ? reading : any;
	if (c->stage != MC_FREE)
		client_close(c);
	return c;
}

static void accept_all(struct metrics *m, uint64_t now)
{
	int i, fd;

	for (i = 0; i < METRICS_ACCEPT_BURST; i++) {
		struct sockaddr_storage peer = { 0 };
		socklen_t pl = sizeof(peer);
		struct mclient *c;

		fd = accept4(m->lfd, (struct sockaddr *)&peer, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		peer_of(&peer);
		c = client_slot(m, &peer);
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->peer = peer;
		c->stage = MC_READ;
		c->accepted_ns = now;
		c->due_ns = now + METRICS_READ_NS;
		/*
		 * What came with the connection is read now: a scraper's
		 * request is whole before the next accept of the burst
		 * could take its slot.
		 */
		client_read(m, c, now);
	}
}

/* ---- the thread ------------------------------------------------------- */

/* The tick's copy is in: render it once, start every waiting answer. */
static void publish(struct metrics *m, uint64_t now)
{
	struct mbody *b = calloc(1, sizeof(*b));
	size_t len = 0;
	int i, hn;

	pthread_mutex_lock(&m->lock);
	memcpy(&m->own, &m->shared, sizeof(m->own));
	pthread_mutex_unlock(&m->lock);
	if (!b || metrics__render(&m->own, &m->buf, &len, &m->cap) ||
	    !(b->text = malloc(len ? len : 1))) {
		free(b);
		b = NULL;
	} else {
		memcpy(b->text, m->buf, len);
		b->len = len;
		b->refs = 1;
	}
	for (i = 0; i < METRICS_CLIENTS; i++) {
		struct mclient *c = &m->c[i];

		if (c->stage != MC_WAIT)
			continue;
		if (!b) {
			client_answer(c, 500, "Internal Server Error", "out of memory\n", now);
			continue;
		}
		hn = snprintf(c->head, sizeof(c->head),
			      "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
			      "Content-Length: %zu\r\nConnection: close\r\n\r\n", b->len);
		c->head_len = hn;
		c->sent = 0;
		c->body = b;
		b->refs++;
		c->stage = MC_WRITE;
		c->due_ns = now + METRICS_WRITE_NS;
	}
	body_put(b);
}

/* Drop what missed its deadline; ms until the next one, -1: none. */
static int sweep(struct metrics *m, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	int i;

	for (i = 0; i < METRICS_CLIENTS; i++) {
		struct mclient *c = &m->c[i];

		if (c->stage == MC_FREE)
			continue;
		if (c->due_ns <= now) {
			if (c->stage == MC_WAIT) {
				/* The loop did not copy in time: say so, once more chance to write. */
				client_answer(c, 503, "Service Unavailable",
					      "the loader's loop did not answer in time\n", now);
			} else {
				client_close(c);
				continue;
			}
		}
		if (c->due_ns < next)
			next = c->due_ns;
	}
	if (next == UINT64_MAX)
		return -1;
	return (int)((next - now + 999999) / 1000000);
}

static short client_events(const struct mclient *c)
{
	return c->stage == MC_READ ? POLLIN : c->stage == MC_WRITE ? POLLOUT : 0;
}

static void *serve(void *arg)
{
	struct metrics *m = arg;
	struct pollfd pfd[3 + METRICS_CLIENTS];
	sigset_t all;
	int i, timeout = -1;
	uint64_t now, v;

	/* Signals are the loop's (signalfd): never this thread's. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		pfd[0] = (struct pollfd){ .fd = m->stop_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = m->pub_fd, .events = POLLIN };
		pfd[2] = (struct pollfd){ .fd = m->lfd, .events = POLLIN };
		for (i = 0; i < METRICS_CLIENTS; i++)
			pfd[3 + i] = (struct pollfd){ .fd = m->c[i].fd,
				.events = client_events(&m->c[i]) };
		if (poll(pfd, 3 + METRICS_CLIENTS, timeout) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		now = flags_now_ns();
		if ((pfd[1].revents & POLLIN) && read(m->pub_fd, &v, sizeof(v)) > 0)
			publish(m, now);
		for (i = 0; i < METRICS_CLIENTS; i++) {
			struct mclient *c = &m->c[i];
			short re = pfd[3 + i].revents;

			if (c->fd < 0 || c->fd != pfd[3 + i].fd || !re)
				continue;
			if (c->stage == MC_READ)
				client_read(m, c, now);
			else if (c->stage == MC_WRITE)
				client_write(c);
			else if (re & (POLLERR | POLLHUP))
				client_close(c);	/* gone while it waited */
		}
		if (pfd[2].revents & POLLIN)
			accept_all(m, now);
		timeout = sweep(m, flags_now_ns());
	}
	return NULL;
}

/* ---- the loop's side --------------------------------------------------- */

bool metrics__waiting(const struct metrics *m)
{
	return atomic_load(&m->want);
}

struct metrics_data *metrics__want(struct metrics *m)
{
	if (!atomic_load(&m->want))
		return NULL;
	/* The thread holds the lock only for a copy: never wait for it. */
	if (pthread_mutex_trylock(&m->lock))
		return NULL;
	return &m->shared;
}

void metrics__published(struct metrics *m)
{
	uint64_t one = 1;

	m->shared.gen++;
	atomic_store(&m->want, false);
	pthread_mutex_unlock(&m->lock);
	if (write(m->pub_fd, &one, sizeof(one)) < 0) {
		/* The counter is full only if the thread is gone: nothing to tell. */
	}
}

int metrics__open(struct metrics **out, const char *spec, char *err, size_t errlen)
{
	struct metrics *m;
	int i;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "--metrics: out of memory");
		return -1;
	}
	m->stop_fd = m->pub_fd = -1;
	for (i = 0; i < METRICS_CLIENTS; i++)
		m->c[i].fd = -1;
	pthread_mutex_init(&m->lock, NULL);
	m->lfd = listen_on(spec, err, errlen);
	if (m->lfd < 0) {
		metrics__close(m);
		return -1;
	}
	m->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	m->pub_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (m->stop_fd < 0 || m->pub_fd < 0) {
		snprintf(err, errlen, "--metrics: eventfd: %s", strerror(errno));
		metrics__close(m);
		return -1;
	}
	*out = m;
	return 0;
}

int metrics__start(struct metrics *m, uint64_t tick_ns, char *err, size_t errlen)
{
	int rc;

	m->tick_ns = tick_ns;
	rc = pthread_create(&m->thread, NULL, serve, m);

	if (rc) {
		snprintf(err, errlen, "--metrics: starting its thread: %s", strerror(rc));
		return -1;
	}
	m->started = true;
	return 0;
}

void metrics__close(struct metrics *m)
{
	uint64_t one = 1;
	int i;

	if (!m)
		return;
	if (m->started) {
		/* An eventfd's write fails only on overflow: not on a fresh one. */
		if (write(m->stop_fd, &one, sizeof(one)) != sizeof(one))
			fprintf(stderr, "sds-bpf: --metrics: stopping its thread: %s\n",
				strerror(errno));
		pthread_join(m->thread, NULL);
	}
	for (i = 0; i < METRICS_CLIENTS; i++)
		client_close(&m->c[i]);
	if (m->lfd >= 0)
		close(m->lfd);
	if (m->stop_fd >= 0)
		close(m->stop_fd);
	if (m->pub_fd >= 0)
		close(m->pub_fd);
	pthread_mutex_destroy(&m->lock);
	free(m->buf);
	free(m);
}
