// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * session.c - connections on the control socket.  One-shot queries are
 * answered and closed; a guarded process's `register` turns its
 * connection into a session that lives as long as the process
 * (docs/PROTOCOL.md): its close gives back the permits the process held.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <jansson.h>
#include "loader.h"
#include "names.h"
#include "register.h"

void session__init_all(struct loader *l)
{
	int i;

	for (i = 0; i < SDS_MAX_PROCS; i++) {
		l->sessions[i].fd = -1;
		l->sessions[i].file = -1;
	}
}

static char *error_reply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *error_reply(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	json_t *o;
	char *s;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o = json_pack("{s:s}", "error", msg);
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

/* Reply to `register` with the region's fds attached (SCM_RIGHTS). */
static int send_with_fds(int fd, const char *msg, const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(FLAGS_CLIENT_FDS * sizeof(int))];
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = strlen(msg) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = CMSG_SPACE(nfds * sizeof(int)),
	};
	struct cmsghdr *cm;
	ssize_t n;

	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	do {
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	/* The rest of a short write goes without the fds. */
	return ctl_write_all(fd, msg + n, strlen(msg) - n);
}

static void do_register(struct loader *l, int fd, const char *arg)
{
	struct reg_peer peer = { .pidfd = -1 };
	int fds[FLAGS_CLIENT_FDS], nfds;
	char err[600], *reply, *line;
	int slot, file;
	size_t n;

	if (register__peer(fd, &peer)) {
		ctl_reply(fd, error_reply("register: no peer credentials"));
		goto drop;
	}
	for (slot = 0; slot < SDS_MAX_PROCS; slot++)
		if (l->sessions[slot].fd < 0)
			break;
	if (slot == SDS_MAX_PROCS) {
		ctl_reply(fd, error_reply("register: %d processes already registered",
					  SDS_MAX_PROCS));
		goto drop;
	}
	/* Probes first, reply after: counting is exact from the first call. */
	file = register__attach(l, &peer, arg, err, sizeof(err));
	if (peer.pidfd >= 0)
		close(peer.pidfd);
	if (file < 0) {
		ctl_reply(fd, error_reply("register: %s", err));
		goto drop;
	}
	reply = register__reply(l, slot);
	n = reply ? strlen(reply) : 0;
	line = reply ? realloc(reply, n + 2) : NULL;
	if (!line) {
		free(reply);
		goto release;
	}
	memcpy(line + n, "\n", 2);
	/* A permit row left by an earlier holder of the slot is stale. */
	flags__release_slot(&l->flags, slot);
	nfds = flags__client_fds(&l->flags, fds);
	if (send_with_fds(fd, line, fds, nfds)) {
		free(line);
		goto release;
	}
	free(line);
	l->sessions[slot].fd = fd;
	l->sessions[slot].pid = peer.pid;
	l->sessions[slot].uid = peer.uid;
	l->sessions[slot].file = file;
	l->sessions[slot].len = 0;
	return;
release:
	register__release(l, file);
drop:
	close(fd);
}

/* Drills change what the app's calls do: root only, whoever may query. */
static char *drill_request(struct loader *l, int fd, const char *args)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen))
		return error_reply("drill: no peer credentials");
	if (cred.uid != 0)
		return error_reply("drill: permission denied: starting or stopping a drill needs root");
	return drill__request(l, args);
}

void session__accept(struct loader *l, int lfd)
{
	char req[CTL_REQ_MAX + 1];
	int fd;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (ctl_read_line(fd, req, sizeof(req))) {
		close(fd);
		return;
	}
	if (!strncmp(req, "register ", 9)) {
		do_register(l, fd, req + 9);
		return;
	}
	if (!strncmp(req, "drill ", 6)) {
		ctl_reply(fd, drill_request(l, fd, req + 6));
		close(fd);
		return;
	}
	ctl_reply(fd, serve_request(req, l));
	close(fd);
}

static char *session_request(struct loader *l, const char *req)
{
	int id;

	if (strncmp(req, "point ", 6))
		return error_reply("unknown session request '%.64s'", req);
	if (!sds_name_valid(req + 6))
		return error_reply("bad point name '%.64s' (1-64 of [A-Za-z0-9_-])",
				   req + 6);
	id = engine__point(l, req + 6);
	if (id < 0)
		return error_reply("no room for point '%s' (at most %d points)",
				   req + 6, SDS_MAX_POINTS);
	if (l->probes.pts[id].kind != POINT_GUARD)
		return error_reply("'%s' is a function point of this loader",
				   req + 6);
	return json_dumps(json_pack("{s:i}", "id", id), JSON_COMPACT);
}

void session__input(struct loader *l, int slot)
{
	struct session *s = &l->sessions[slot];
	char *nl;
	ssize_t n;

	n = recv(s->fd, s->buf + s->len, sizeof(s->buf) - 1 - s->len, 0);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		session__close(l, slot);
		return;
	}
	if (n < 0)
		return;
	s->len += n;
	s->buf[s->len] = '\0';
	while ((nl = strchr(s->buf, '\n'))) {
		*nl = '\0';
		ctl_reply(s->fd, session_request(l, s->buf));
		s->len -= nl + 1 - s->buf;
		memmove(s->buf, nl + 1, s->len + 1);
	}
	if (s->len == sizeof(s->buf) - 1)
		session__close(l, slot);	/* a line too long: not libsds */
}

void session__close(struct loader *l, int slot)
{
	struct session *s = &l->sessions[slot];

	if (s->fd < 0)
		return;
	close(s->fd);
	s->fd = -1;
	s->pid = 0;
	s->len = 0;
	flags__release_slot(&l->flags, slot);
	register__release(l, s->file);
	s->file = -1;
}

void session__close_all(struct loader *l)
{
	int i;

	for (i = 0; i < SDS_MAX_PROCS; i++)
		session__close(l, i);
}
