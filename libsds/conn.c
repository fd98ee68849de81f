// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * conn.c - the guard's side of the control socket.  The socket is
 * non-blocking and every wait goes through poll() with a deadline: a
 * loader that hangs must cost the application a bounded delay at
 * registration, never a stuck thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "conn.h"

#define CONN_MAX_FDS	4	/* fds we make room for in one message */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Wait for @events on @fd until @deadline (ms); 0 when ready, -1 on
 * timeout or when @abort_fd (if >= 0) is readable: the client is closing.
 */
static int wait_fd(int fd, short events, int64_t deadline, int abort_fd)
{
	struct pollfd pfd[2] = {
		{ .fd = fd, .events = events },
		{ .fd = abort_fd, .events = POLLIN },
	};
	int64_t left;
	int n;

	for (;;) {
		left = deadline - now_ms();
		if (left <= 0)
			return -1;
		n = poll(pfd, abort_fd >= 0 ? 2 : 1, (int)left);
		if (n > 0)
			return pfd[1].revents ? -1 : 0;
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

/*
 * The uid named by $SDS_LOADER_UID (decimal digits only), in *@uid; false
 * if unset or not a uid.  secure_getenv: a setuid program must not be
 * told to trust its caller's loader.
 */
static bool loader_uid(uid_t *uid)
{
	const char *s = secure_getenv("SDS_LOADER_UID");
	unsigned long long v = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned)(*s - '0');
		if (v >= (uid_t)-1)
			return false;	/* (uid_t)-1 is no uid */
	}
	*uid = (uid_t)v;
	return true;
}

/*
 * The process that listens on @fd's other end may hand us a region we
 * obey: root (the loader runs as root), or the uid $SDS_LOADER_UID names.
 * Anyone else could have bound the name (a run dir it may write) and
 * would downgrade our calls at will or feed us a region it rewrites.
 */
static bool peer_trusted(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	uid_t uid;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) ||
	    len != sizeof(cr))
		return false;
	if (cr.uid == 0)
		return true;
	return loader_uid(&uid) && cr.uid == uid;
}

int sds_conn_open(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	/*
	 * A UNIX stream connect either completes at once or fails: with a
	 * full backlog it says EAGAIN, and we try again next second rather
	 * than wait inside the application's call.
	 */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	/* Before a byte is sent: an impostor learns nothing from us. */
	if (!peer_trusted(fd)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *buf, size_t len, int64_t deadline,
		    int abort_fd)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			buf += n;
			len -= n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
		    !wait_fd(fd, POLLOUT, deadline, abort_fd))
			continue;
		return -1;
	}
	return 0;
}

/* Keep the first CONN_FDS fds passed in @msg in @fd_out[], close the others. */
static void take_fds(struct msghdr *msg, int *fd_out)
{
	struct cmsghdr *cm;
	int fds[CONN_MAX_FDS];
	size_t i, j, n;

	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (n > CONN_MAX_FDS)
			n = CONN_MAX_FDS;
		memcpy(fds, CMSG_DATA(cm), n * sizeof(int));
		for (i = 0; i < n; i++) {
			for (j = 0; fd_out && j < CONN_FDS && fd_out[j] >= 0; j++)
				;
			if (fd_out && j < CONN_FDS)
				fd_out[j] = fds[i];
			else
				close(fds[i]);
		}
	}
}

/*
 * Read up to the reply's newline.  The fd comes with the reply's first
 * byte, so every read is a recvmsg with room for it; MSG_CMSG_CLOEXEC
 * keeps it out of programs the application execs.
 */
static int recv_line(int fd, char *buf, size_t len, int *fd_out,
		     int64_t deadline, int abort_fd)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(CONN_MAX_FDS * sizeof(int))];
	} ctl;
	struct iovec iov;
	struct msghdr msg;
	size_t got = 0;
	char *nl;
	ssize_t n;

	for (;;) {
		if (got + 1 >= len)
			return -1;	/* longer than any reply we know */
		iov.iov_base = buf + got;
		iov.iov_len = len - 1 - got;
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if ((errno == EAGAIN || errno == EWOULDBLOCK) &&
			    !wait_fd(fd, POLLIN, deadline, abort_fd))
				continue;
			return -1;
		}
		if (msg.msg_controllen)
			take_fds(&msg, fd_out);
		if (n == 0)
			return -1;	/* the loader went away */
		got += n;
		buf[got] = '\0';
		nl = memchr(buf, '\n', got);
		if (nl) {
			/* Requests go one at a time: nothing may follow. */
			*nl = '\0';
			return 0;
		}
	}
}

int sds_conn_request(int fd, const char *req, char *reply, size_t len,
		     int *fd_out, int timeout_ms, int abort_fd)
{
	int64_t deadline = now_ms() + timeout_ms;

	int i;

	for (i = 0; fd_out && i < CONN_FDS; i++)
		fd_out[i] = -1;
	if (send_all(fd, req, strlen(req), deadline, abort_fd) ||
	    recv_line(fd, reply, len, fd_out, deadline, abort_fd)) {
		for (i = 0; fd_out && i < CONN_FDS; i++) {
			if (fd_out[i] >= 0)
				close(fd_out[i]);
			fd_out[i] = -1;
		}
		return -1;
	}
	return 0;
}

bool sds_conn_alive(int fd)
{
	char buf[256];
	ssize_t n;

	/* Nothing is due between requests: drop whatever came. */
	for (;;) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
	}
}

int sds_conn_json_u64(const char *s, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);
	const char *p = s;
	char *end;

	/* Our replies are flat objects of numbers: a member is "key": N. */
	for (;;) {
		p = strchr(p, '"');
		if (!p)
			return -1;
		if (!strncmp(p + 1, key, klen) && p[1 + klen] == '"')
			break;
		p++;
	}
	p += klen + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p++ != ':')
		return -1;
	while (*p == ' ' || *p == '\t')
		p++;
	if ((*p < '0' || *p > '9') && *p != '-')
		return -1;
	errno = 0;
	/* A 64-bit key may come as a negative int64 (jansson's integers). */
	if (*p == '-')
		*out = (uint64_t)strtoll(p, &end, 10);
	else
		*out = strtoull(p, &end, 10);
	if (end == p || errno)
		return -1;
	return 0;
}

bool sds_conn_json_error(const char *s)
{
	return strstr(s, "\"error\"") != NULL;
}
