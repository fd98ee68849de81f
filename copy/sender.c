// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * sender.c - the connections loaders push records on.  A sender is
 * untrusted: it gets a bounded buffer, at most --max-senders of them are
 * served at once, and the first bad byte (hello or record) ends its
 * connection (counted), since a stream cannot be resynchronised.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve.h"

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

void copy_sender_accept(struct copy_server *s)
{
	struct copy_sender *snd;
	int fd;

	for (;;) {
		fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (s->nsenders >= s->max_senders) {
			s->refused++;
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
		snd->next = s->senders;
		s->senders = snd;
		s->nsenders++;
	}
}

/* Decode what @snd's buffer holds; -1 when the stream is bad. */
static int sender_parse(struct copy_server *s, struct copy_sender *snd)
{
	struct copyrec r;
	const char *why;
	size_t pos = 0, at;
	int n;

	if (!snd->hello) {
		n = copyrec_hello_decode(snd->buf, snd->len, &why, &at);
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
		copy_dispatch(s, &r);
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
		if (sender_parse(s, snd)) {
			s->bad_streams++;
			sender_close(s, snd);
			break;
		}
	}
	copy_pump_all(s);
}

void copy_senders_free(struct copy_server *s)
{
	while (s->senders)
		sender_close(s, s->senders);
}
