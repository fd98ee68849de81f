// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * copyout.c - the stream of copy records to the sds-copy servers (see
 * copyout.h): one non-blocking connection, the "SDSc" hello, then records
 * back to back from a bounded buffer.  A connection that fails loses the
 * record it was in the middle of (a stream cannot resume inside one) and
 * the next server of the list is tried, after a back-off once the whole
 * list failed; records queued meanwhile wait in the buffer.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "capture/copyout.h"
#include "copyrec.h"

int copyout__init(struct copyout *o)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->backoff_ns = COPYOUT_BACKOFF_MIN_NS;
	o->buf = malloc(COPYOUT_BUF);
	o->q = calloc(COPYOUT_QUEUE, sizeof(*o->q));
	if (!o->buf || !o->q) {
		copyout__free(o);
		return -1;
	}
	return 0;
}

static void copyout_close(struct copyout *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	o->connected = false;
	o->hello_left = 0;
}

void copyout__free(struct copyout *o)
{
	copyout_close(o);
	free(o->buf);
	free(o->q);
	o->buf = NULL;
	o->q = NULL;
}

/*
 * One "HOST:PORT" or "[V6]:PORT" of @len bytes at @s.  @numeric: a name
 * is refused, not resolved (AI_NUMERICHOST never asks a resolver, so it
 * cannot block the loop).
 */
static int addr_parse(const char *s, size_t len, bool numeric,
		      struct copyout_addr *a, char *err, size_t errlen)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = numeric ? AI_NUMERICHOST | AI_NUMERICSERV : 0,
	}, *res;
	char host[SDS_HB_ADDR_MAX + 1];
	const char *colon, *h = s;
	size_t hlen;
	int e;

	if (!len || len > SDS_HB_ADDR_MAX)
		goto bad;
	memcpy(a->text, s, len);
	a->text[len] = '\0';
	colon = strrchr(a->text, ':');
	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1))
		goto bad;
	hlen = (size_t)(colon - a->text);
	h = a->text;
	if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
		h++;
		hlen -= 2;
	}
	if (!hlen)
		goto bad;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	e = getaddrinfo(host, colon + 1, &hints, &res);
	if (e == EAI_NONAME && numeric) {
		snprintf(err, errlen, "copy server '%s': not a numeric address (names are not resolved here)",
			 a->text);
		return -1;
	}
	if (e) {
		snprintf(err, errlen, "copy server '%s': %s", a->text,
			 gai_strerror(e));
		return -1;
	}
	memcpy(&a->sa, res->ai_addr, res->ai_addrlen);
	a->salen = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
bad:
	snprintf(err, errlen, "bad copy server '%.*s': expected HOST:PORT",
		 (int)(len > 80 ? 80 : len), s);
	return -1;
}

int copyout__parse(const char *list, bool numeric, struct copyout_addr *addrs,
		   int *n, char *err, size_t errlen)
{
	const char *p = list;

	*n = 0;
	for (;;) {
		size_t len = strcspn(p, ",");

		if (*n == COPYOUT_SERVERS) {
			snprintf(err, errlen, "too many copy servers (at most %d)",
				 COPYOUT_SERVERS);
			return -1;
		}
		if (addr_parse(p, len, numeric, &addrs[*n], err, errlen))
			return -1;
		(*n)++;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

int copyout__parse_one(const char *s, struct copyout_addr *a, char *err,
		       size_t errlen)
{
	return addr_parse(s, strlen(s), true, a, err, errlen);
}

/* FNV-1a 32 of @s: the same host starts at the same server every time. */
static uint32_t fnv32(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

void copyout__set(struct copyout *o, const struct copyout_addr *addrs, int n,
		  bool spread)
{
	char host[256] = "";
	int first = 0;
	bool same;

	/*
	 * The admin's list (@spread): not its first, or whoever came first
	 * would get every loader.  A stable hash of this host spreads the
	 * loaders over the servers; failover goes on in the order given from
	 * there.  --copy-to is the operator's failover order: its first.
	 */
	if (spread && n > 0) {
		gethostname(host, sizeof(host) - 1);
		first = (int)(fnv32(host) % (uint32_t)n);
	}
	same = n > 0 && o->naddrs > 0 && o->cur < o->naddrs &&
	       !strcmp(addrs[first].text, o->addrs[o->cur].text);
	memcpy(o->addrs, addrs, n * sizeof(addrs[0]));
	o->naddrs = n;
	o->first = first;
	if (same) {
		o->cur = first;
		return;
	}
	/* Another server to start at: start over with it. */
	if (o->fd >= 0)
		copyout_close(o);
	o->cur = first;
	o->retry_ns = 0;
	o->backoff_ns = COPYOUT_BACKOFF_MIN_NS;
}

bool copyout__push(struct copyout *o, uint32_t point, const void *rec,
		   size_t len)
{
	size_t tail;

	if (!o->naddrs || o->qn == COPYOUT_QUEUE || o->len + len > COPYOUT_BUF)
		return false;
	tail = o->head + o->len;
	if (tail + len > COPYOUT_BUF) {
		/* Room in all, not at the end: move the queue to the front. */
		memmove(o->buf, o->buf + o->head, o->len);
		o->head = 0;
		tail = o->len;
	}
	memcpy(o->buf + tail, rec, len);
	o->len += len;
	o->q[(o->qh + o->qn) % COPYOUT_QUEUE] = (struct copyout_ent){
		.point = point, .len = (uint32_t)len };
	o->qn++;
	return true;
}

short copyout__events(const struct copyout *o, int *fd)
{
	*fd = o->fd;
	if (o->fd < 0)
		return 0;
	if (!o->connected || o->hello_left || o->len)
		return POLLOUT;
	return POLLIN;		/* the server answers nothing: only its close */
}

/* The connection failed: the record it was inside is lost; next server. */
static void copyout_fail(struct copyout *o, uint64_t now_ns, uint64_t *lost)
{
	if (o->partial && o->qn) {
		struct copyout_ent *e = &o->q[o->qh];

		lost[e->point]++;
		o->head += e->len - o->partial;
		o->len -= e->len - o->partial;
		o->qh = (o->qh + 1) % COPYOUT_QUEUE;
		o->qn--;
		o->partial = 0;
	}
	copyout_close(o);
	o->failures++;
	o->cur = (o->cur + 1) % (o->naddrs ? o->naddrs : 1);
	if (o->cur == o->first) {
		/* The whole list failed: wait before going round again. */
		o->retry_ns = now_ns + o->backoff_ns;
		o->backoff_ns *= 2;
		if (o->backoff_ns > COPYOUT_BACKOFF_MAX_NS)
			o->backoff_ns = COPYOUT_BACKOFF_MAX_NS;
	}
}

static void copyout_connect(struct copyout *o, uint64_t now_ns, uint64_t *lost)
{
	const struct copyout_addr *a = &o->addrs[o->cur];
	int fd;

	fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		copyout_fail(o, now_ns, lost);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	o->fd = fd;
	o->hello_left = COPYREC_HELLO_LEN + (int)o->token_len;
	o->connect_due_ns = now_ns + COPYOUT_CONNECT_NS;
	if (connect(fd, (const struct sockaddr *)&a->sa, a->salen) == 0) {
		o->connected = true;
	} else if (errno != EINPROGRESS) {
		copyout_fail(o, now_ns, lost);
		return;
	}
	o->connects++;
}

/*
 * Write what the socket takes: the hello, then records.  With a token the
 * hello is version COPYREC_HELLO_TOKEN: its length in place of the zero,
 * then the token (sds-copy --stream-token-file checks it).
 */
static int copyout_send(struct copyout *o, uint64_t *sent)
{
	uint8_t hello[COPYREC_HELLO_LEN + SDS_TOKEN_MAX];
	size_t hlen = COPYREC_HELLO_LEN + o->token_len;
	ssize_t n;

	if (o->hello_left) {
		copyrec_hello_encode(hello);
		if (o->token_len) {
			hello[4] = COPYREC_HELLO_TOKEN;
			hello[5] = 0;
			hello[6] = (uint8_t)o->token_len;
			hello[7] = (uint8_t)(o->token_len >> 8);
			memcpy(hello + COPYREC_HELLO_LEN, o->token, o->token_len);
		}
		n = send(o->fd, hello + hlen - o->hello_left,
			 o->hello_left, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		o->hello_left -= (int)n;
		if (o->hello_left)
			return 0;
	}
	while (o->len) {
		n = send(o->fd, o->buf + o->head, o->len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		o->head += n;
		o->len -= n;
		/* Records written whole are sent. */
		while (o->qn && o->partial + (size_t)n >= o->q[o->qh].len) {
			n -= o->q[o->qh].len - o->partial;
			o->partial = 0;
			sent[o->q[o->qh].point]++;
			o->qh = (o->qh + 1) % COPYOUT_QUEUE;
			o->qn--;
		}
		o->partial += n;
	}
	o->head = 0;
	return 0;
}

/* Connected: did connect() succeed, did the server close? */
static int copyout_check(struct copyout *o, short revents)
{
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	char b[256];
	ssize_t n;

	if (!o->connected && (revents & (POLLOUT | POLLERR | POLLHUP))) {
		if (getsockopt(o->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr)
			return -1;
		o->connected = true;
	}
	if (revents & POLLIN) {
		n = recv(o->fd, b, sizeof(b), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN))
			return -1;
	}
	if (o->connected && (revents & (POLLERR | POLLHUP)))
		return -1;
	return 0;
}

void copyout__run(struct copyout *o, short revents, uint64_t now_ns,
		  uint64_t *sent, uint64_t *lost)
{
	if (!o->naddrs)
		return;
	if (o->fd < 0) {
		if (!o->len || now_ns < o->retry_ns)
			return;		/* connect when there is something to send */
		copyout_connect(o, now_ns, lost);
		if (o->fd < 0)
			return;
	}
	if (copyout_check(o, revents)) {
		copyout_fail(o, now_ns, lost);
		return;
	}
	if (!o->connected) {
		if (now_ns >= o->connect_due_ns)
			copyout_fail(o, now_ns, lost);
		return;
	}
	if (copyout_send(o, sent)) {
		copyout_fail(o, now_ns, lost);
		return;
	}
	o->backoff_ns = COPYOUT_BACKOFF_MIN_NS;
}
