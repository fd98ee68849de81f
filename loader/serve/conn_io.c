// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * conn_io.c - what every connection on the control socket uses (serve.h):
 * its buffers and deadlines, the reply lines, and whether the tick is
 * due (then clients wait).  It calls nothing of the socket's other
 * files, so that they all may call it.
 */
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "serve/serve.h"

char *conn_io_reply(json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return s;
}

char *conn_io_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return conn_io_reply(json_pack("{s:s}", "error", msg));
}

short conn_io__events(const struct conn_io *io)
{
	/* A client that does not read its replies sends nothing more. */
	return io->out ? POLLOUT : POLLIN;
}

/*
 * Queue @reply (malloc'd JSON without its newline, taken; NULL: an
 * internal error) behind what is queued.  The deadline runs from the
 * first reply queued on an empty buffer.
 */
int conn_io__queue(struct conn_io *io, char *reply, uint64_t now_ns)
{
	static const char internal[] = "{\"error\":\"internal error\"}";
	const char *r = reply ? reply : internal;
	size_t n = strlen(r), left = io->out ? io->out_len - io->out_off : 0;
	char *b = malloc(left + n + 1);

	if (!b) {
		free(reply);
		return -1;
	}
	if (left)
		memcpy(b, io->out + io->out_off, left);
	memcpy(b + left, r, n);
	b[left + n] = '\n';
	if (!io->out)
		io->out_due_ns = now_ns + CONN_DEADLINE_NS;
	free(io->out);
	free(reply);
	io->out = b;
	io->out_len = left + n + 1;
	io->out_off = 0;
	return 0;
}

/* Send what the socket takes now: 1 when all is sent, 0 if more is due, -1 on error. */
int conn_io__flush(struct conn_io *io, int fd, const int *fds, int nfds)
{
	ssize_t n;

	if (!io->out)
		return 1;
	n = ctl_send_some(fd, io->out + io->out_off, io->out_len - io->out_off,
			  fds, io->fds_due ? nfds : 0);
	if (n < 0)
		return -1;
	if (n > 0)
		io->fds_due = false;
	io->out_off += n;
	if (io->out_off < io->out_len)
		return 0;
	free(io->out);
	io->out = NULL;
	io->out_len = io->out_off = 0;
	io->out_due_ns = 0;
	return 1;
}

void conn_io__free(struct conn_io *io)
{
	free(io->out);
	memset(io, 0, sizeof(*io));
}

bool conn_io_tick_due(int tick_fd)
{
	struct pollfd pfd = { .fd = tick_fd, .events = POLLIN };

	return tick_fd >= 0 && poll(&pfd, 1, 0) > 0;
}
