// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * session.c - guarded processes on the control socket.  A `register`
 * (taken from conn.c's pending table) turns its connection into a session
 * that lives as long as the process (docs/PROTOCOL.md): its close gives
 * back the permits the process held.  A session sends `point NAME` lines;
 * like every connection it is non-blocking, in the poll set with its own
 * buffers, and dropped when a partial line or an unread reply outlives
 * its deadline (CONN_DEADLINE_NS).
 *
 * Calls go one way, conn -> session: conn.c hands a pending connection
 * over with session__register(); nothing here calls conn.c (the buffers
 * and reply lines are conn_io.c's, the tables' setup attach's), so that
 * the pending table and the sessions can be read apart.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <jansson.h>
#include "kernel/probes.h"
#include "names.h"
#include "publish/flags.h"
#include "serve/register.h"
#include "serve/serve.h"

void session__init_all(struct serve *sv)
{
	int i;

	for (i = 0; i < SDS_MAX_PROCS; i++) {
		memset(&sv->sessions[i], 0, sizeof(sv->sessions[i]));
		sv->sessions[i].fd = -1;
		sv->sessions[i].file = -1;
	}
}

/* A free slot for a session of @uid; -1: the table is full, -2: @uid's share is. */
static int session_slot(struct serve *sv, uid_t uid)
{
	int i, slot = -1, mine = 0;

	for (i = 0; i < SDS_MAX_PROCS; i++) {
		if (sv->sessions[i].fd < 0) {
			if (slot < 0)
				slot = i;
		} else if (sv->sessions[i].uid == uid) {
			mine++;
		}
	}
	if (uid != 0 && mine >= SESSIONS_PER_UID)
		return -2;
	return slot;
}

/* The pending connection @c becomes session @slot, holding guard file @file. */
static void session_take(struct serve *sv, struct pending *c, int slot, int file,
			 char *reply)
{
	struct session *s = &sv->sessions[slot];
	char *rest = c->io.in + strlen(c->io.in) + 1;
	size_t left = c->io.in_len > (size_t)(rest - c->io.in) ?
		      c->io.in_len - (rest - c->io.in) : 0;
	uint64_t now = flags_now_ns();

	memset(&s->io, 0, sizeof(s->io));
	/* Lines a client sent before the reply are served after it. */
	memcpy(s->io.in, rest, left);
	s->io.in_len = left;
	s->io.in[left] = '\0';
	s->io.in_due_ns = left ? now + CONN_DEADLINE_NS : 0;
	s->fd = c->fd;
	s->pid = c->pid;
	s->uid = c->uid;
	s->file = file;
	s->io.fds_due = true;		/* the region's fds go with the first byte */
	conn_io__free(&c->io);
	c->fd = -1;
	c->ready = false;
	if (conn_io__queue(&s->io, reply, now)) {
		session__close(sv, slot, false);
		return;
	}
	session__event(sv, slot, POLLOUT);
}

void session__register(struct serve *sv, struct pending *c, const char *arg)
{
	struct reg_peer peer = { .pidfd = -1 };
	char err[600];
	int slot, file;

	/* SO_PEERCRED, pinned by SO_PEERPIDFD: the process that connected. */
	if (register__peer(c->fd, &peer)) {
		conn_io__queue(&c->io, conn_io_error("register: no peer credentials"),
			       flags_now_ns());
		return;
	}
	slot = session_slot(sv, peer.uid);
	if (slot < 0) {
		sv->refused.sessions++;
		conn_io__queue(&c->io, slot == -1 ?
			conn_io_error("register: %d processes already registered",
				    SDS_MAX_PROCS) :
			conn_io_error("register: uid %u has %d processes registered already",
				    (unsigned)peer.uid, SESSIONS_PER_UID), flags_now_ns());
		goto out;
	}
	/* Probes first, reply after: counting is exact from the first call. */
	file = register__attach(sv, &peer, arg, err, sizeof(err));
	if (file < 0) {
		conn_io__queue(&c->io, conn_io_error("register: %s", err), flags_now_ns());
		goto out;
	}
	/* A permit row left by an earlier holder of the slot is stale. */
	flags__release_slot(sv->flags, slot);
	session_take(sv, c, slot, file, register__reply(sv, slot, &peer));
out:
	if (peer.pidfd >= 0)
		close(peer.pidfd);
}

/* Point ids that @uid created with `point NAME`. */
static int points_of(const struct serve *sv, uid_t uid)
{
	int i, n = 0;

	for (i = 0; i < sv->probes->npoints; i++)
		n += sv->point_uid[i] == uid;
	return n;
}

static char *session_point(struct serve *sv, struct session *s, const char *name)
{
	int id = probes__find(sv->probes, name);

	if (id < 0) {
		if (s->uid != 0 && points_of(sv, s->uid) >= POINTS_PER_UID) {
			sv->refused.points++;
			return conn_io_error("point '%s': this user created %d points already",
					   name, POINTS_PER_UID);
		}
		id = sv->ops->point(sv->ctx, name);
		if (id < 0) {
			sv->refused.points++;
			return conn_io_error("no room for point '%s' (at most %d points)",
					   name, sv->probes->cap);
		}
		sv->point_uid[id] = s->uid;
	}
	if (probes__kind(sv->probes, id) != POINT_GUARD)
		return conn_io_error("'%s' is a function point of this loader", name);
	return conn_io_reply(json_pack("{s:i}", "id", id));
}

static char *session_request(struct serve *sv, struct session *s, const char *req)
{
	if (strncmp(req, "point ", 6))
		return conn_io_error("unknown session request '%.64s'", req);
	if (!sds_point_name_valid(req + 6))
		return conn_io_error("bad point name '%.64s' (1-64 of [A-Za-z0-9_-])",
				   req + 6);
	return session_point(sv, s, req + 6);
}

/* Read one buffer's worth and answer the whole lines in it; -1: drop. */
static int session_input(struct serve *sv, struct session *s)
{
	struct conn_io *io = &s->io;
	uint64_t now = flags_now_ns();
	char *nl;
	ssize_t n;

	n = ctl_recv_some(s->fd, io->in + io->in_len, CTL_LINE_MAX - io->in_len);
	if (n < 0)
		return -1;
	io->in_len += n;
	io->in[io->in_len] = '\0';
	while ((nl = memchr(io->in, '\n', io->in_len))) {
		*nl = '\0';
		if (conn_io__queue(io, session_request(sv, s, io->in), now))
			return -1;
		io->in_len -= nl + 1 - io->in;
		memmove(io->in, nl + 1, io->in_len + 1);
		io->in_due_ns = 0;
	}
	if (io->in_len == CTL_LINE_MAX)
		return -1;	/* a line too long: not libsds */
	if (io->in_len && !io->in_due_ns)
		io->in_due_ns = now + CONN_DEADLINE_NS;
	return 0;
}

void session__event(struct serve *sv, int slot, short revents)
{
	struct session *s = &sv->sessions[slot];
	int fds[FLAGS_CLIENT_FDS], nfds;

	if (s->fd < 0 || !revents)
		return;
	if (!s->io.out && session_input(sv, s)) {
		session__close(sv, slot, false);
		return;
	}
	if (!s->io.out)
		return;
	nfds = s->io.fds_due ? flags__client_fds(sv->flags, slot, fds) : 0;
	if (conn_io__flush(&s->io, s->fd, fds, nfds) < 0)
		session__close(sv, slot, false);
}

void session__close(struct serve *sv, int slot, bool slow)
{
	struct session *s = &sv->sessions[slot];

	if (s->fd < 0)
		return;
	if (slow)
		sv->refused.slow++;
	close(s->fd);
	s->fd = -1;
	s->pid = 0;
	conn_io__free(&s->io);
	flags__release_slot(sv->flags, slot);
	register__release(sv, s->file);
	s->file = -1;
}

void session__close_all(struct serve *sv)
{
	int i;

	for (i = 0; i < SDS_MAX_PROCS; i++)
		session__close(sv, i, false);
}

void session__sweep(struct serve *sv, uint64_t now_ns, uint64_t *next_ns)
{
	int i;

	for (i = 0; i < SDS_MAX_PROCS; i++) {
		struct session *s = &sv->sessions[i];
		uint64_t due;

		if (s->fd < 0)
			continue;
		/* Replies first: a client that does not read them is dropped. */
		due = s->io.out ? s->io.out_due_ns : s->io.in_due_ns;
		if (due && now_ns >= due) {
			session__close(sv, i, true);
			continue;
		}
		if (due && due < *next_ns)
			*next_ns = due;
	}
}
