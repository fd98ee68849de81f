// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * sender.c - the connections loaders push records on.  A sender is
 * untrusted: it gets a bounded buffer, at most --max-senders of them are
 * served at once and --max-senders-per-addr of one address, its hello is
 * due within --hello-timeout and a sender silent for --idle-timeout is
 * closed (else idle connections would hold every slot and lock the
 * loaders out), with --stream-token-file its hello must carry the token,
 * and the first bad byte (hello or record) ends its connection
 * (counted), since a stream cannot be resynchronised.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve.h"
#include "trust.h"

static void sender_close(struct copy_server *s, struct copy_sender *snd)
{
	struct copy_sender **pp;

	for (pp = &s->senders; *pp; pp = &(*pp)->next) {
		if (*pp == snd) {
			*pp = snd->next;
			break;
		}
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, snd->fd, NULL);
	close(snd->fd);
	free(snd->buf);
	free(snd);
	s->nsenders--;
}

/* Same host: the address without the port. */
static int senders_of(const struct copy_server *s, const struct sockaddr_storage *peer)
{
	const struct copy_sender *x;
	int n = 0;

	for (x = s->senders; x; x = x->next)
		n += sds_trust_same_host(&x->peer, peer) == 1;
	return n;
}

void copy_sender_accept(struct copy_server *s)
{
	struct copy_sender *snd;
	struct sockaddr_storage peer;
	socklen_t pl;
	int fd;

	for (;;) {
		pl = sizeof(peer);
		memset(&peer, 0, sizeof(peer));
		fd = accept4(s->lfd, (struct sockaddr *)&peer, &pl,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (s->nsenders >= s->max_senders) {
			s->refused++;
			close(fd);
			continue;
		}
		if (senders_of(s, &peer) >= s->max_per_addr) {
			s->refused++;
			s->refused_addr++;
			close(fd);
			continue;
		}
		snd = calloc(1, sizeof(*snd));
		if (snd)
			snd->buf = malloc(COPY_SENDER_BUF);
		if (!snd || !snd->buf ||
		    copy_ev_mod(s, fd, &snd->ev, EPOLLIN, EPOLL_CTL_ADD)) {
			if (snd)
				free(snd->buf);
			free(snd);
			close(fd);
			continue;
		}
		snd->ev.kind = COPY_EV_SENDER;
		snd->fd = fd;
		snd->peer = peer;
		snd->accepted_ms = snd->last_ms = copy_now_ms();
		snd->next = s->senders;
		s->senders = snd;
		s->nsenders++;
		snd->serial = ++s->sender_serial;
	}
}

/* Same work whatever the input: length and content compared together. */
/*
 * The hello: version 1 ("SDSc" 1 0), or with a token ("SDSc" 2 LEN, the
 * token).  With --stream-token-file only the token's own hello is let in
 * (-2: counted as auth_failed); without, a token is read and ignored.
 * Bytes of the hello, 0 (need more), -1 (bad), -2 (wrong token).
 */
static int hello_parse(struct copy_server *s, struct copy_sender *snd)
{
	const uint8_t *p = snd->buf;
	const char *why;
	size_t at, tl;
	int n;

	if (snd->len >= 6 && !memcmp(p, "SDSc", 4) &&
	    (p[4] | p[5] << 8) == COPYREC_HELLO_TOKEN) {
		if (snd->len < COPYREC_HELLO_LEN)
			return 0;
		tl = p[6] | p[7] << 8;
		if (!tl || tl > SDS_TOKEN_MAX)
			return -1;
		if (snd->len < COPYREC_HELLO_LEN + tl)
			return 0;
		if (s->stream_token_len && !sds_trust_same_bytes(s->stream_token, s->stream_token_len,
							       p + COPYREC_HELLO_LEN, tl))
			return -2;
		return (int)(COPYREC_HELLO_LEN + tl);
	}
	n = copyrec_hello_decode(snd->buf, snd->len, &why, &at);
	if (n > 0 && s->stream_token_len)
		return -2;		/* no token where one is needed */
	return n;
}

/* Decode what @snd's buffer holds; -1 when the stream is bad, -2 unauthenticated. */
static int sender_parse(struct copy_server *s, struct copy_sender *snd)
{
	struct copyrec r;
	const char *why;
	size_t pos = 0, at;
	int n;

	if (!snd->hello) {
		n = hello_parse(s, snd);
		if (n <= 0)
			return n;
		snd->hello = true;
		pos = n;
	}
	for (;;) {
		n = copyrec_decode(snd->buf + pos, snd->len - pos, &r, &why, &at);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		copy_dispatch(s, snd->serial, &r);
		pos += n;
	}
	memmove(snd->buf, snd->buf + pos, snd->len - pos);
	snd->len -= pos;
	snd->off += pos;
	return 0;
}

void copy_sender_event(struct copy_server *s, struct copy_sender *snd)
{
	ssize_t n;
	int rounds;

	/* A few buffers per wakeup: one busy sender must not starve the rest. */
	for (rounds = 0; rounds < 4; rounds++) {
		n = recv(snd->fd, snd->buf + snd->len, COPY_SENDER_BUF - snd->len,
			 MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			/* A stream cut inside a record is a bad stream too. */
			if (n == 0 && snd->len)
				s->bad_streams++;
			sender_close(s, snd);
			copy_pump_all(s);
			return;
		}
		snd->len += n;
		snd->last_ms = copy_now_ms();
		n = sender_parse(s, snd);
		if (n) {
			if (n == -2)
				s->auth_failed++;
			else
				s->bad_streams++;
			sender_close(s, snd);
			break;
		}
	}
	copy_pump_all(s);
}

void copy_senders_tick(struct copy_server *s, uint64_t now_ms)
{
	struct copy_sender *x = s->senders, *next;

	for (; x; x = next) {
		next = x->next;
		if ((!x->hello && now_ms >= x->accepted_ms + (uint64_t)s->hello_ms) ||
		    (s->idle_s && now_ms >= x->last_ms + (uint64_t)s->idle_s * 1000)) {
			s->timed_out++;
			sender_close(s, x);
		}
	}
}

void copy_senders_free(struct copy_server *s)
{
	while (s->senders)
		sender_close(s, s->senders);
}
