// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* ctl.c - the loader's control socket: server side and client side. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include "ctl.h"
#include "names.h"

#define CTL_IO_TIMEOUT_MS	2000	/* a client that stalls is dropped */

const char *ctl_run_dir(void)
{
	const char *d = getenv("SDS_RUN_DIR");

	return d && *d ? d : CTL_DEFAULT_RUN_DIR;
}

void ctl_paths_init(struct ctl_paths *p, const char *group, const char *app)
{
	snprintf(p->dir, sizeof(p->dir), "%s", ctl_run_dir());
	snprintf(p->sock, sizeof(p->sock), "%s/%s.%s.sock", p->dir, group, app);
	snprintf(p->lock, sizeof(p->lock), "%s/%s.%s.lock", p->dir, group, app);
}

static int mkdir_p(const char *dir, mode_t mode)
{
	char tmp[256];
	char *s;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(tmp, mode) && errno != EEXIST)
			return -1;
		*s = '/';
	}
	if (mkdir(tmp, mode) && errno != EEXIST)
		return -1;
	return 0;
}

static pid_t lock_owner(int fd)
{
	char buf[32];
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (pid_t)atol(buf);
}

int ctl_lock(const struct ctl_paths *p, pid_t *owner)
{
	struct stat a, b;
	char buf[32];
	int fd, len;

	if (mkdir_p(p->dir, 0755))
		return -1;
	/*
	 * Lock, then check that the path still names the file we locked: a
	 * loader that was exiting may have unlinked it under us.
	 */
	for (;;) {
		fd = open(p->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return -1;
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			int err = errno;

			if (owner)
				*owner = lock_owner(fd);
			close(fd);
			errno = err;
			return -1;
		}
		if (fstat(fd, &a) == 0 && stat(p->lock, &b) == 0 &&
		    a.st_ino == b.st_ino && a.st_dev == b.st_dev)
			break;
		close(fd);
	}
	len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, len, 0) != len) {
		/* the pid is only for messages: not worth failing over */
	}
	return fd;
}

void ctl_unlock(const struct ctl_paths *p, int fd)
{
	if (fd < 0)
		return;
	unlink(p->lock);
	close(fd);
}

static int sun_set(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa->sun_path, path);
	return 0;
}

int ctl_listen(const struct ctl_paths *p, mode_t mode, gid_t gid)
{
	struct sockaddr_un sa;
	char tmp[400];
	int fd, err;

	snprintf(tmp, sizeof(tmp), "%s/.sds-bpf.%d.tmp", p->dir, (int)getpid());
	if (sun_set(&sa, tmp))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	unlink(tmp);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto err_close;
	if (chmod(tmp, mode))
		goto err_unlink;
	if (gid != (gid_t)-1 && chown(tmp, (uid_t)-1, gid))
		goto err_unlink;
	if (listen(fd, 64))
		goto err_unlink;
	/* We hold the lock: whatever socket is there was left by a dead loader. */
	if (rename(tmp, p->sock))
		goto err_unlink;
	return fd;

err_unlink:
	err = errno;
	unlink(tmp);
	errno = err;
err_close:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

static int wait_fd(int fd, short events)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int r;

	do {
		r = poll(&pfd, 1, CTL_IO_TIMEOUT_MS);
	} while (r < 0 && errno == EINTR);
	if (r == 0)
		errno = ETIMEDOUT;
	return r > 0 ? 0 : -1;
}

int ctl_write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && wait_fd(fd, POLLOUT) == 0)
				continue;
			return -1;
		}
		buf += n;
		len -= n;
	}
	return 0;
}

ssize_t ctl_recv_some(int fd, char *buf, size_t room)
{
	ssize_t n;

	do {
		n = recv(fd, buf, room, MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n == 0)
		errno = 0;	/* EOF */
	return n > 0 ? n : -1;
}

ssize_t ctl_send_some(int fd, const char *buf, size_t len, const int *fds, int nfds)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(CTL_MAX_FDS * sizeof(int))];
	} cbuf;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;

	if (nfds > CTL_MAX_FDS) {
		errno = EINVAL;
		return -1;
	}
	if (nfds > 0) {
		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	}
	do {
		n = sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	return n;
}

/* Split "<group>.<app>.sock" into its names; false for any other file. */
static bool sock_name_split(const char *name, char *group, char *app)
{
	const char *dot, *end;
	size_t glen, alen;

	end = strstr(name, ".sock");
	if (!end || end[5] != '\0')
		return false;
	dot = strchr(name, '.');
	if (!dot || dot >= end)
		return false;
	glen = dot - name;
	alen = end - dot - 1;
	if (glen == 0 || glen > SDS_NAME_MAX || alen == 0 || alen > SDS_NAME_MAX)
		return false;
	memcpy(group, name, glen);
	group[glen] = '\0';
	memcpy(app, dot + 1, alen);
	app[alen] = '\0';
	return sds_name_valid(group) && sds_name_valid(app);
}

static int ctl_app_cmp(const void *a, const void *b)
{
	const struct ctl_app *x = a, *y = b;
	int r = strcmp(x->group, y->group);

	return r ? r : strcmp(x->app, y->app);
}

int ctl_find(const char *group, const char *app, struct ctl_app *out, int max)
{
	const char *dir = ctl_run_dir();
	struct dirent *de;
	DIR *d;
	int n = 0;

	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		struct ctl_app *a = &out[n];

		if (!sock_name_split(de->d_name, a->group, a->app))
			continue;
		if (group && strcmp(group, a->group))
			continue;
		if (app && strcmp(app, a->app))
			continue;
		snprintf(a->sock, sizeof(a->sock), "%s/%s", dir, de->d_name);
		n++;
	}
	closedir(d);
	qsort(out, n, sizeof(*out), ctl_app_cmp);
	return n;
}

char *ctl_request(const char *sock, const char *req)
{
	struct sockaddr_un sa;
	size_t len = 0, cap = 8192;
	char *buf = NULL;
	int fd, err;

	if (sun_set(&sa, sock))
		return NULL;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	{
		struct timeval tv = { .tv_sec = CTL_IO_TIMEOUT_MS / 1000 };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto err;
	if (ctl_write_all(fd, req, strlen(req)) || ctl_write_all(fd, "\n", 1))
		goto err;
	buf = malloc(cap);
	if (!buf)
		goto err;
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				goto err;
			buf = nb;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - 1 - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto err;
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	close(fd);
	return buf;
err:
	err = errno;
	free(buf);
	close(fd);
	errno = err;
	return NULL;
}
