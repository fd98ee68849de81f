// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * conn.c - connections on the control socket until they are answered
 * (one-shot queries) or registered (session.c).  Nothing here waits for
 * a client: every socket is non-blocking and sits in the loop's poll()
 * with its own buffers, every request has a total deadline, and what one
 * uid may hold is capped (serve.h, "Limits"; docs/PROTOCOL.md).
 *
 * Calls go one way, conn -> session: a `register` hands the connection
 * to session.c, which never calls back here (its buffers and reply lines
 * are conn_io.c's, and attach sets up and closes both tables), so that a
 * session's life can be read without the pending table's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <jansson.h>
#include "capture/capture.h"
#include "publish/flags.h"
#include "serve/serve.h"

/* ---- the pending table -------------------------------------------------- */

void conn__init_all(struct serve *sv)
{
	int i;

	for (i = 0; i < CONN_PENDING_MAX; i++) {
		memset(&sv->pending[i], 0, sizeof(sv->pending[i]));
		sv->pending[i].fd = -1;
	}
}

void conn__close(struct serve *sv, int i, bool slow)
{
	struct pending *c = &sv->pending[i];

	if (c->fd < 0)
		return;
	if (slow)
		sv->refused.slow++;
	close(c->fd);
	conn_io__free(&c->io);
	if (c->job.o)
		serve__stats_end(&c->job);
	c->fd = -1;
	c->ready = false;
}

void conn__close_all(struct serve *sv)
{
	int i;

	for (i = 0; i < CONN_PENDING_MAX; i++)
		conn__close(sv, i, false);
}

/* NULL if @uid may open one more connection, else why not. */
static const char *pending_cap(struct serve *sv, uid_t uid, int *free_slot)
{
	int i, all = 0, users = 0, mine = 0;

	*free_slot = -1;
	for (i = 0; i < CONN_PENDING_MAX; i++) {
		const struct pending *c = &sv->pending[i];

		if (c->fd < 0) {
			if (*free_slot < 0)
				*free_slot = i;
			continue;
		}
		all++;
		users += c->uid != 0;
		mine += c->uid == uid;
	}
	if (all >= CONN_PENDING_MAX)
		return "too many connections waiting";
	if (uid != 0 && users >= CONN_PENDING_USERS)
		return "too many connections of non-root users waiting";
	if (uid != 0 && mine >= CONN_PENDING_PER_UID)
		return "too many connections of this user waiting";
	return NULL;
}

/* Tell a refused client why in one line; it gets no second chance. */
static void refuse(int fd, const char *why)
{
	char *e = conn_io_error("%s (try again later)", why);

	if (e) {
		size_t n = strlen(e);

		e[n] = '\n';	/* json_dumps' NUL becomes the newline */
		ctl_send_some(fd, e, n + 1, NULL, 0);
		free(e);
	}
	close(fd);
}

static void accept_one(struct serve *sv, int fd)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	const char *why;
	struct pending *c;
	int slot;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen)) {
		close(fd);
		return;
	}
	why = pending_cap(sv, cred.uid, &slot);
	if (why) {
		sv->refused.connections++;
		refuse(fd, why);
		return;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){ CONN_SNDBUF }, sizeof(int));
	c = &sv->pending[slot];
	memset(&c->io, 0, sizeof(c->io));
	c->fd = fd;
	c->pid = cred.pid;
	c->uid = cred.uid;
	c->ready = false;
	c->io.in_due_ns = flags_now_ns() + CONN_DEADLINE_NS;
}

void conn__accept(struct serve *sv, int lfd)
{
	int i, fd;

	for (i = 0; i < CONN_ACCEPT_BURST; i++) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		accept_one(sv, fd);
	}
}

/* Read what came (one buffer's worth); a whole line makes it ready. */
static void pending_input(struct serve *sv, int i)
{
	struct pending *c = &sv->pending[i];
	struct conn_io *io = &c->io;
	ssize_t n;
	char *nl;

	n = ctl_recv_some(c->fd, io->in + io->in_len, CTL_LINE_MAX - io->in_len);
	if (n < 0 && errno == 0 && io->in_len) {
		c->ready = true;	/* EOF ends the line, as a newline would */
		return;
	}
	if (n < 0) {
		conn__close(sv, i, false);
		return;
	}
	io->in_len += n;
	io->in[io->in_len] = '\0';
	nl = memchr(io->in, '\n', io->in_len);
	if (nl) {
		*nl = '\0';
		c->ready = true;
	} else if (io->in_len == CTL_LINE_MAX) {
		conn__close(sv, i, false);	/* longer than any request */
	}
}

void conn__event(struct serve *sv, int i, short revents)
{
	struct pending *c = &sv->pending[i];
	int r;

	if (c->fd < 0 || !revents)
		return;
	if (c->io.out) {
		r = conn_io__flush(&c->io, c->fd, NULL, 0);
		if (r != 0)
			conn__close(sv, i, false);	/* answered, or gone */
		return;
	}
	if (!c->ready)
		pending_input(sv, i);
}

/* Drills change what the app's calls do: root only, whoever may query. */
static char *drill_request(struct serve *sv, const struct pending *c, const char *args)
{
	if (c->uid != 0)
		return conn_io_error("drill: permission denied: starting or stopping a drill needs root");
	return sv->ops->drill(sv->ctx, args);
}

/* Send what goes now of the queued reply; one request per connection. */
static void pending_send(struct serve *sv, int i)
{
	struct pending *c = &sv->pending[i];

	c->ready = false;
	c->io.in_len = 0;	/* the rest of the input is ignored */
	c->io.in_due_ns = 0;
	if (conn_io__flush(&c->io, c->fd, NULL, 0) != 0)
		conn__close(sv, i, false);	/* all sent (or gone): done */
}

static void pending_reply(struct serve *sv, int i, char *reply)
{
	if (conn_io__queue(&sv->pending[i].io, reply, flags_now_ns())) {
		conn__close(sv, i, false);
		return;
	}
	pending_send(sv, i);
}

/* One turn of pending connection @i: its request, or a slice of its stats. */
static void pending_answer(struct serve *sv, int i, int tick_fd)
{
	struct pending *c = &sv->pending[i];
	const char *req = c->io.in;
	char *reply;

	if (!c->job.o && !strcmp(req, "stats"))
		serve__stats_begin(sv, &c->job);
	if (c->job.o) {
		if (serve__stats_step(sv, &c->job, &reply, tick_fd))
			pending_reply(sv, i, reply);
		return;		/* still ready: the next slice comes next time */
	}
	if (!strncmp(req, "register ", 9)) {
		/* On success the session owns the connection: c->fd is -1. */
		session__register(sv, c, req + 9);
		if (c->fd < 0)
			return;
		pending_send(sv, i);	/* refused: the error is queued */
		return;
	}
	if (!strncmp(req, "record ", 7)) {
		/* On success the recorder owns the connection: c->fd is -1. */
		reply = capture__record(*sv->capture, c, req + 7);
		if (c->fd < 0)
			return;
		pending_reply(sv, i, reply);
		return;
	}
	if (!strncmp(req, "drill ", 6))
		reply = drill_request(sv, c, req + 6);
	else if (!strncmp(req, "keys-block ", 11))
		reply = c->uid != 0 ?
			conn_io_error("keys-block: permission denied: blocking a key needs root") :
			conn_io_reply(serve__keys_block(sv, req + 11));
	else
		reply = serve__request(sv, req);
	pending_reply(sv, i, reply);
}

bool conn__serve(struct serve *sv, int tick_fd)
{
	int i, k, done = 0;

	for (k = 0; k < CONN_PENDING_MAX; k++) {
		i = (sv->pending_next + k) % CONN_PENDING_MAX;
		if (sv->pending[i].fd < 0 || !sv->pending[i].ready)
			continue;
		if (done == CONN_QUERY_BURST || (done && conn_io_tick_due(tick_fd))) {
			sv->pending_next = i;	/* its turn comes first next time */
			return true;
		}
		pending_answer(sv, i, tick_fd);
		done++;
	}
	/* A stats job that is not finished is still ready: it wants a turn. */
	for (i = 0; i < CONN_PENDING_MAX; i++)
		if (sv->pending[i].fd >= 0 && sv->pending[i].ready)
			return true;
	return false;
}

static void due_min(uint64_t due, uint64_t *next_ns)
{
	if (due && due < *next_ns)
		*next_ns = due;
}

void conn__sweep(struct serve *sv, uint64_t now_ns, uint64_t *next_ns)
{
	int i;

	for (i = 0; i < CONN_PENDING_MAX; i++) {
		struct pending *c = &sv->pending[i];
		uint64_t due;

		if (c->fd < 0 || c->ready)
			continue;	/* a ready one waits for us, not we for it */
		due = c->io.out ? c->io.out_due_ns : c->io.in_due_ns;
		if (due && now_ns >= due) {
			conn__close(sv, i, true);
			continue;
		}
		due_min(due, next_ns);
	}
}
