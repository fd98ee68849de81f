// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * stream.c - one stream of copy records to one sds-copy server (see
 * stream.h).  A connection that fails loses the record it was in the
 * middle of (a stream cannot resume inside one); the records behind it
 * stay queued, whole, for copyout.c to send elsewhere.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "capture/stream.h"
#include "copyrec.h"

int copy_stream__init(struct copy_stream *s, const struct copyout_addr *addr,
		      size_t cap, size_t qcap)
{
	memset(s, 0, sizeof(*s));
	s->addr = addr;
	s->fd = -1;
	s->backoff_ns = COPY_STREAM_BACKOFF_MIN_NS;
	s->buf = malloc(cap);
	s->q = calloc(qcap, sizeof(*s->q));
	s->cap = cap;
	s->qcap = qcap;
	if (!s->buf || !s->q) {
		copy_stream__free(s);
		return -1;
	}
	return 0;
}

static void stream_close(struct copy_stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->connected = false;
	s->hello_left = 0;
	s->stalled_ns = 0;
}

void copy_stream__free(struct copy_stream *s)
{
	stream_close(s);
	free(s->buf);
	free(s->q);
	s->buf = NULL;
	s->q = NULL;
	s->cap = s->qcap = s->len = s->qn = 0;
}

bool copy_stream__push(struct copy_stream *s, uint32_t point, uint32_t key,
		       const void *rec, size_t len)
{
	size_t tail;

	if (!s->buf || s->qn == s->qcap || s->len + len > s->cap)
		return false;
	tail = s->head + s->len;
	if (tail + len > s->cap) {
		/* Room in all, not at the end: move the queue to the front. */
		memmove(s->buf, s->buf + s->head, s->len);
		s->head = 0;
		tail = s->len;
	}
	memcpy(s->buf + tail, rec, len);
	s->len += len;
	s->q[(s->qh + s->qn) % s->qcap] = (struct copyout_ent){
		.point = point, .key = key, .len = (uint32_t)len };
	s->qn++;
	return true;
}

bool copy_stream__pop(struct copy_stream *s, struct copyout_ent *e,
		      const uint8_t **rec)
{
	if (!s->qn || s->partial)
		return false;
	*e = s->q[s->qh];
	*rec = s->buf + s->head;
	s->head += e->len;
	s->len -= e->len;
	s->qh = (s->qh + 1) % s->qcap;
	s->qn--;
	if (!s->len)
		s->head = 0;
	return true;
}

short copy_stream__events(const struct copy_stream *s, int *fd)
{
	*fd = s->fd;
	if (s->fd < 0)
		return 0;
	if (!s->connected || s->hello_left || s->len)
		return POLLOUT;
	return POLLIN;		/* the server answers nothing: only its close */
}

/* Failed now: the record it was inside is lost; down, with a back-off. */
static int stream_fail(struct copy_stream *s, uint64_t now_ns, uint64_t *lost)
{
	if (s->partial && s->qn) {
		struct copyout_ent *e = &s->q[s->qh];

		lost[e->point]++;
		s->head += e->len - s->partial;
		s->len -= e->len - s->partial;
		s->qh = (s->qh + 1) % s->qcap;
		s->qn--;
		s->partial = 0;
	}
	stream_close(s);
	s->failures++;
	s->down = true;
	s->retry_ns = now_ns + s->backoff_ns;
	s->backoff_ns *= 2;
	if (s->backoff_ns > COPY_STREAM_BACKOFF_MAX_NS)
		s->backoff_ns = COPY_STREAM_BACKOFF_MAX_NS;
	return -1;
}

static int stream_connect(struct copy_stream *s, uint64_t now_ns,
			  size_t token_len, uint64_t *lost)
{
	const struct copyout_addr *a = s->addr;
	int fd;

	fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return stream_fail(s, now_ns, lost);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
	s->fd = fd;
	s->hello_left = COPYREC_HELLO_LEN + (int)token_len;
	s->connect_due_ns = now_ns + COPY_STREAM_CONNECT_NS;
	s->connects++;
	if (connect(fd, (const struct sockaddr *)&a->sa, a->salen) == 0)
		s->connected = true;
	else if (errno != EINPROGRESS)
		return stream_fail(s, now_ns, lost);
	return 0;
}

/* The server closed its end (or the connection broke): nothing to read but EOF. */
static bool peer_closed(int fd)
{
	char b;
	ssize_t n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/*
 * Write what the socket takes: the hello, then records.  With a token the
 * hello is version COPYREC_HELLO_TOKEN: its length in place of the zero,
 * then the token (sds-copy --stream-token-file checks it).  1: the
 * socket took nothing of what was queued.
 */
static int stream_send(struct copy_stream *s, const char *token,
		       size_t token_len, uint64_t *sent)
{
	uint8_t hello[COPYREC_HELLO_LEN + SDS_TOKEN_MAX];
	size_t hlen = COPYREC_HELLO_LEN + token_len;
	ssize_t n;

	if (s->hello_left) {
		copyrec_hello_encode(hello);
		if (token_len) {
			hello[4] = COPYREC_HELLO_TOKEN;
			hello[5] = 0;
			hello[6] = (uint8_t)token_len;
			hello[7] = (uint8_t)(token_len >> 8);
			memcpy(hello + COPYREC_HELLO_LEN, token, token_len);
		}
		n = send(s->fd, hello + hlen - s->hello_left,
			 s->hello_left, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN ? 1 : -1;
		s->hello_left -= (int)n;
		if (s->hello_left)
			return 0;
	}
	/*
	 * A server that closed (killed: its FIN is in) would still take
	 * bytes into the socket and lose them: records counted sent that no
	 * one reads.  So look first, and fail over with them still queued.
	 */
	if (s->len && peer_closed(s->fd))
		return -1;
	while (s->len) {
		n = send(s->fd, s->buf + s->head, s->len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN ? 1 : -1;
		s->head += n;
		s->len -= n;
		s->stalled_ns = 0;
		/* Records written whole are sent. */
		while (s->qn && s->partial + (size_t)n >= s->q[s->qh].len) {
			n -= s->q[s->qh].len - s->partial;
			s->partial = 0;
			sent[s->q[s->qh].point]++;
			s->sent++;
			s->qh = (s->qh + 1) % s->qcap;
			s->qn--;
		}
		s->partial += n;
	}
	s->head = 0;
	return 0;
}

/* Connected: did connect() succeed, did the server close? */
static int stream_check(struct copy_stream *s, short revents)
{
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	char b[256];
	ssize_t n;

	if (!s->connected && (revents & (POLLOUT | POLLERR | POLLHUP))) {
		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr)
			return -1;
		s->connected = true;
	}
	if (revents & POLLIN) {
		n = recv(s->fd, b, sizeof(b), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN))
			return -1;
	}
	if (s->connected && (revents & (POLLERR | POLLHUP)))
		return -1;
	return 0;
}

int copy_stream__run(struct copy_stream *s, short revents, uint64_t now_ns,
		     const char *token, size_t token_len, bool probe,
		     uint64_t *sent, uint64_t *lost)
{
	int r;

	if (s->fd < 0) {
		if ((!s->len && !(probe && s->down)) || now_ns < s->retry_ns)
			return 0;	/* connect when there is something to send */
		if (stream_connect(s, now_ns, token_len, lost))
			return -1;
	}
	if (stream_check(s, revents))
		return stream_fail(s, now_ns, lost);
	if (!s->connected)
		return now_ns >= s->connect_due_ns ? stream_fail(s, now_ns, lost) : 0;
	r = stream_send(s, token, token_len, sent);
	if (r < 0)
		return stream_fail(s, now_ns, lost);
	/* A server that takes nothing for a second is as good as dead. */
	if (r == 1 && s->len) {
		if (!s->stalled_ns)
			s->stalled_ns = now_ns;
		else if (now_ns - s->stalled_ns >= COPY_STREAM_STALL_NS)
			return stream_fail(s, now_ns, lost);
	}
	s->down = false;
	s->backoff_ns = COPY_STREAM_BACKOFF_MIN_NS;
	return 0;
}
