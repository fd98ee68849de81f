// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * pool.c - a shadow endpoint: its bounded queue of copies and its bounded
 * pool of non-blocking connections.  raw copies are written back to back,
 * up to COPY_BATCH per writev; an http copy is one request per connection
 * at a time, and its response is read (status counted) before the next.
 * A copy that was written whole is "dispatched" and never sent again; a
 * connection that fails loses only what it had not finished writing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "frame.h"
#include "live.h"
#include "serve.h"

int copy_endpoint_init(struct copy_endpoint *ep, struct copy_plan *p,
		       const struct copy_shadow_cfg *cfg, uint32_t qcap)
{
	int i;

	memset(ep, 0, sizeof(*ep));
	ep->plan = p;
	ep->cfg = *cfg;
	ep->nconns = p->cfg.pool;
	ep->conns = calloc(ep->nconns, sizeof(*ep->conns));
	ep->q = calloc(qcap, sizeof(*ep->q));
	if (!ep->conns || !ep->q) {
		free(ep->conns);
		free(ep->q);
		return -1;
	}
	ep->qcap = qcap;
	ep->backoff_ms = COPY_RETRY_MIN_MS;
	for (i = 0; i < ep->nconns; i++) {
		ep->conns[i].ev.kind = COPY_EV_CONN;
		ep->conns[i].ep = ep;
		ep->conns[i].fd = -1;
	}
	return 0;
}

bool copy_endpoint_push(struct copy_endpoint *ep, struct copy_body *b)
{
	if (ep->qlen == ep->qcap)
		return false;
	ep->q[(ep->qhead + ep->qlen) % ep->qcap] = b;
	ep->qlen++;
	b->refs++;
	return true;
}

static struct copy_body *queue_pop(struct copy_endpoint *ep)
{
	struct copy_body *b = ep->q[ep->qhead];

	ep->qhead = (ep->qhead + 1) % ep->qcap;
	ep->qlen--;
	return b;
}

static void conn_watch(struct copy_server *s, struct copy_conn *c, bool out)
{
	uint32_t want = EPOLLIN | (out ? EPOLLOUT : 0);

	if (c->fd >= 0 && c->events != want &&
	    copy_ev_mod(s, c->fd, &c->ev, want, EPOLL_CTL_MOD) == 0)
		c->events = want;
}

/* A compared copy's answer is over: judged (live.c), or failed with @outcome. */
static void conn_diff_end(struct copy_server *s, struct copy_conn *c, int outcome)
{
	if (!c->diff_id)
		return;
	if (outcome == TALLY_SAME)
		live_answer(s, c->diff_id, c->abuf, c->alen);
	else
		live_fail(s, c->diff_id, outcome);
	if (outcome != TALLY_SAME)
		free(c->abuf);
	c->abuf = NULL;
	c->diff_id = 0;
	c->alen = c->aneed = 0;
	c->close_after = false;
}

/* Close @c; copies it had not written whole are lost (@err: counted). */
static void conn_close(struct copy_server *s, struct copy_conn *c, bool err)
{
	struct copy_endpoint *ep = c->ep;
	struct copy_plan *p = ep->plan;
	int i;

	/* A shadow that took the copy and never answered in time: a timeout. */
	conn_diff_end(s, c, !err ? -1 : c->waiting && c->deadline_ms &&
			    copy_now_ms() > c->deadline_ms ? TALLY_TIMEOUT : TALLY_ERROR);
	if (c->fd >= 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
	}
	for (i = 0; i < c->nitems; i++)
		copy_body_put(s, c->items[i]);
	p->c.drop_shadow += c->nitems;
	if (err) {
		ep->errors++;
		p->c.shadow_errors++;
		/* Back off: a dead shadow must not cost a connect per copy. */
		ep->retry_at_ms = copy_now_ms() + ep->backoff_ms;
		ep->backoff_ms = ep->backoff_ms * 2 > COPY_RETRY_MAX_MS ?
				 COPY_RETRY_MAX_MS : ep->backoff_ms * 2;
	}
	c->fd = -1;
	c->connecting = c->waiting = false;
	c->events = 0;
	c->nitems = 0;
	c->off = c->total = c->hdr_len = c->rlen = 0;
	c->skip = 0;
	c->deadline_ms = 0;
}

static void conn_open(struct copy_server *s, struct copy_conn *c)
{
	struct copy_endpoint *ep = c->ep;
	int fd;

	fd = socket(ep->cfg.addr.sa.ss_family,
		    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	c->fd = fd;
	if (connect(fd, (struct sockaddr *)&ep->cfg.addr.sa, ep->cfg.addr.salen) &&
	    errno != EINPROGRESS)
		goto fail;
	c->connecting = true;
	c->deadline_ms = copy_now_ms() + COPY_TIMEOUT_MS;
	if (copy_ev_mod(s, fd, &c->ev, EPOLLIN | EPOLLOUT, EPOLL_CTL_ADD))
		goto fail;
	c->events = EPOLLIN | EPOLLOUT;
	return;
fail:
	conn_close(s, c, true);
}

/*
 * One copy per connection at a time, its answer read before the next:
 * http framing, and a diff plan's raw copies (each an HTTP request the
 * shadow answers with one HTTP response, or none of its answers could be
 * told from the next).
 */
static bool one_at_a_time(const struct copy_endpoint *ep)
{
	return ep->plan->cfg.framing == COPY_FRAMING_HTTP || ep->plan->cfg.diff;
}

/* Take the next copies off the queue into @c's batch. */
static void conn_fill(struct copy_conn *c)
{
	struct copy_endpoint *ep = c->ep;
	struct copy_body *b;

	c->off = c->total = c->hdr_len = 0;
	if (one_at_a_time(ep)) {
		b = queue_pop(ep);
		c->items[c->nitems++] = b;
		/* One copy of a compared record is the one compared. */
		if (b->diff_id) {
			c->diff_id = b->diff_id;
			b->diff_id = 0;
		}
		/* The head fits: host <= 128, colour <= 129 characters. */
		if (ep->plan->cfg.framing == COPY_FRAMING_HTTP)
			c->hdr_len = frame_http_head(c->hdr, sizeof(c->hdr),
						     ep->cfg.addr.text, b->colour, b->len);
		c->total = c->hdr_len + b->len;
		return;
	}
	while (ep->qlen && c->nitems < COPY_BATCH) {
		b = queue_pop(ep);
		c->items[c->nitems++] = b;
		c->total += b->len;
	}
}

/* The copies of the batch are written whole: dispatched, never resent. */
static void conn_done(struct copy_server *s, struct copy_conn *c)
{
	struct copy_endpoint *ep = c->ep;
	int i;

	ep->dispatched += c->nitems;
	ep->plan->c.dispatched += c->nitems;
	for (i = 0; i < c->nitems; i++)
		copy_body_put(s, c->items[i]);
	if (one_at_a_time(ep)) {
		c->waiting = true;
		c->deadline_ms = copy_now_ms() + COPY_TIMEOUT_MS;
	}
	c->nitems = 0;
	c->off = c->total = 0;
}

/* Write what is left of the batch; 1 when done, 0 when blocked, -1 error. */
static int conn_write(struct copy_server *s, struct copy_conn *c)
{
	struct iovec iov[COPY_BATCH + 1];
	struct msghdr msg = { .msg_iov = iov };
	size_t skip = c->off, len;
	ssize_t n;
	int i, k = 0;

	while (c->off < c->total) {
		skip = c->off;
		k = 0;
		if (skip < c->hdr_len) {
			iov[k].iov_base = c->hdr + skip;
			iov[k++].iov_len = c->hdr_len - skip;
			skip = 0;
		} else {
			skip -= c->hdr_len;
		}
		for (i = 0; i < c->nitems; i++) {
			len = c->items[i]->len;
			if (skip >= len) {
				skip -= len;
				continue;
			}
			iov[k].iov_base = c->items[i]->data + skip;
			iov[k++].iov_len = len - skip;
			skip = 0;
		}
		msg.msg_iovlen = k;
		n = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return -1;
		c->off += n;
	}
	conn_done(s, c);
	return 1;
}

/* Keep @c busy while the queue has copies and the socket takes them. */
static void conn_push(struct copy_server *s, struct copy_conn *c)
{
	int rc;

	for (;;) {
		if (c->fd < 0 || c->connecting || c->waiting)
			return;
		if (!c->nitems) {
			if (!c->ep->qlen) {
				conn_watch(s, c, false);
				return;
			}
			conn_fill(c);
		}
		rc = conn_write(s, c);
		if (rc < 0) {
			conn_close(s, c, true);
			return;
		}
		if (rc == 0) {
			conn_watch(s, c, true);
			return;
		}
	}
}

void copy_endpoint_pump(struct copy_server *s, struct copy_endpoint *ep)
{
	bool idle = false;
	int i;

	for (i = 0; i < ep->nconns && ep->qlen; i++)
		conn_push(s, &ep->conns[i]);
	if (!ep->qlen || copy_now_ms() < ep->retry_at_ms)
		return;
	/* Open one more connection only when every open one is busy. */
	for (i = 0; i < ep->nconns; i++) {
		struct copy_conn *c = &ep->conns[i];

		if (c->fd >= 0 && (c->connecting || (!c->nitems && !c->waiting)))
			idle = true;
	}
	for (i = 0; i < ep->nconns && !idle; i++) {
		if (ep->conns[i].fd < 0) {
			conn_open(s, &ep->conns[i]);
			return;
		}
	}
}

/* The compared copy's whole answer is in: judged; true when the connection ends. */
static bool answer_done(struct copy_server *s, struct copy_conn *c)
{
	bool close_after = c->close_after;

	conn_diff_end(s, c, TALLY_SAME);
	c->waiting = false;
	c->deadline_ms = 0;
	c->rlen = 0;
	return close_after;
}

/*
 * The compared copy's answer head @r is parsed: keep the head and read
 * the body after it.  0 to read on, -1 an error, -2 done and the
 * connection ends (Connection: close).
 */
static int answer_start(struct copy_server *s, struct copy_conn *c,
			const struct copy_http_resp *r)
{
	size_t total = r->head_len + r->body_len;

	if (total > LIVE_ANSWER_MAX || c->rlen > total)
		return -1;	/* longer than any response a loader captures */
	c->abuf = malloc(total);
	if (!c->abuf)
		return -1;
	memcpy(c->abuf, c->rbuf, c->rlen);
	c->alen = c->rlen;
	c->aneed = total;
	c->close_after = r->close;
	if (c->alen < c->aneed)
		return 0;
	return answer_done(s, c) ? -2 : 0;
}

/* http: the response to the copy just written; raw: whatever comes back. */
static int conn_read(struct copy_server *s, struct copy_conn *c)
{
	struct copy_http_resp r;
	char junk[16384];
	ssize_t n;
	int rc;

	for (;;) {
		if (c->aneed) {
			n = recv(c->fd, c->abuf + c->alen, c->aneed - c->alen, MSG_DONTWAIT);
		} else if (!c->waiting || c->skip) {
			n = recv(c->fd, junk, c->skip && c->skip < sizeof(junk) ?
				 c->skip : sizeof(junk), MSG_DONTWAIT);
		} else {
			n = recv(c->fd, c->rbuf + c->rlen, sizeof(c->rbuf) - c->rlen,
				 MSG_DONTWAIT);
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			/* The shadow closed: an error only if a copy was due an answer. */
			return c->waiting || c->nitems ? -1 : -2;
		if (!c->waiting)
			continue;	/* raw: answers are not read */
		if (c->aneed) {
			c->alen += n;
			if (c->alen < c->aneed)
				continue;
			if (answer_done(s, c))
				return -2;
			continue;
		}
		if (c->skip) {
			c->skip -= n;
			if (!c->skip)
				c->waiting = false;
			continue;
		}
		c->rlen += n;
		rc = frame_http_resp_parse(c->rbuf, c->rlen, &r);
		if (rc < 0)
			return -1;
		if (rc == 0)
			continue;
		if (r.status >= 400) {
			c->ep->errors++;
			c->ep->plan->c.shadow_errors++;
		}
		if (c->diff_id) {
			rc = answer_start(s, c, &r);
			if (rc)
				return rc;
			continue;
		}
		if (r.close)
			return -2;
		/* A pipelined extra byte would be a protocol error: none is sent. */
		if (c->rlen - r.head_len > r.body_len)
			return -1;
		c->skip = r.body_len - (c->rlen - r.head_len);
		c->rlen = 0;
		c->deadline_ms = 0;
		if (!c->skip)
			c->waiting = false;
	}
}

void copy_conn_event(struct copy_server *s, struct copy_conn *c,
		     uint32_t events)
{
	struct copy_endpoint *ep = c->ep;
	socklen_t len = sizeof(int);
	int err = 0, rc;

	if (c->connecting) {
		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
			conn_close(s, c, true);
			return;
		}
		c->connecting = false;
		c->deadline_ms = 0;
		ep->backoff_ms = COPY_RETRY_MIN_MS;
	}
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
		rc = conn_read(s, c);
		if (rc < 0) {
			conn_close(s, c, rc == -1);
			copy_endpoint_pump(s, ep);
			return;
		}
	}
	conn_push(s, c);
	copy_endpoint_pump(s, ep);
}

void copy_endpoint_tick(struct copy_server *s, struct copy_endpoint *ep,
			uint64_t now)
{
	int i;

	/* A shadow that takes a connection or a request and never answers. */
	for (i = 0; i < ep->nconns; i++) {
		struct copy_conn *c = &ep->conns[i];

		if (c->fd >= 0 && c->deadline_ms && now > c->deadline_ms)
			conn_close(s, c, true);
	}
	copy_endpoint_pump(s, ep);
}

uint64_t copy_endpoint_free(struct copy_server *s, struct copy_endpoint *ep)
{
	uint64_t lost = ep->qlen;
	int i;

	/* What the connections had not written whole is lost to the reload. */
	for (i = 0; i < ep->nconns; i++) {
		lost += ep->conns[i].nitems;
		ep->plan->c.drop_shadow -= ep->conns[i].nitems;
		conn_close(s, &ep->conns[i], false);
	}
	while (ep->qlen)
		copy_body_put(s, queue_pop(ep));
	free(ep->conns);
	free(ep->q);
	ep->conns = NULL;
	ep->q = NULL;
	return lost;
}
