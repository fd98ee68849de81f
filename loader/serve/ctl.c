// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* ctl.c - the loader's control socket: server side and client side. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "serve/ctl.h"
#include "names.h"
#include "trust.h"

#define CTL_IO_TIMEOUT_MS	2000	/* a client that stalls is dropped */

const char *ctl_run_dir(void)
{
	const char *d = getenv("SDS_RUN_DIR");

	return d && *d ? d : CTL_DEFAULT_RUN_DIR;
}

int ctl_paths_init(struct ctl_paths *p, const char *group, const char *app)
{
	const char *dir = ctl_run_dir();
	size_t dirlen = sds_run_dir_len(dir);
	int n;

	memset(p, 0, sizeof(*p));
	if (dirlen >= sizeof(p->dir) || !sds_name_valid(group) ||
	    !sds_name_valid(app)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(p->dir, dir, dirlen);
	if (!dirlen)
		strcpy(p->dir, "/");	/* "/" stripped of its slash */
	snprintf(p->group, sizeof(p->group), "%s", group);
	snprintf(p->app, sizeof(p->app), "%s", app);
	n = sds_sock_stem(dirlen, group, app, p->stem, sizeof(p->stem));
	if (n < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* Lock and temp names are no longer than the socket's. */
	snprintf(p->sock, sizeof(p->sock), "%.*s/%s.sock", (int)dirlen, dir, p->stem);
	snprintf(p->lock, sizeof(p->lock), "%.*s/%s.lock", (int)dirlen, dir, p->stem);
	snprintf(p->tmp, sizeof(p->tmp), "%.*s/.%s.new", (int)dirlen, dir, p->stem);
	return 0;
}

/*
 * Create @dir and its missing parents 0755 root-owned, whatever the umask.
 * The mode is set through a descriptor opened O_NOFOLLOW: if a parent is
 * writable by someone else, what we made may be swapped for a symlink
 * before we chmod it, and the check that follows refuses such a parent.
 */
static int mkdir_p(const char *dir)
{
	char tmp[PATH_MAX];
	size_t len = strlen(dir), i;
	int fd;

	if (len >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(tmp, dir, len + 1);
	for (i = 1; i <= len; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, 0755) == 0) {
			fd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0 || fchmod(fd, 0755)) {
				if (fd >= 0)
					close(fd);
				return -1;
			}
			close(fd);
		} else if (errno != EEXIST) {
			return -1;
		}
		if (i < len)
			tmp[i] = '/';
	}
	return 0;
}

struct dir_walk {
	const char *what, *dir, *hint;	/* for @err */
	char *err;
	size_t errlen;
};

/* One directory of dir_check_path()'s walk (common/trust.c). */
static int dir_trusted(const char *rp, const struct stat *st, bool parent,
		       void *ctx)
{
	struct dir_walk *w = ctx;

	if (!st)
		return snprintf(w->err, w->errlen, "%s %s: %s: %s", w->what, w->dir, rp,
				strerror(errno)), -1;
	if (!S_ISDIR(st->st_mode))
		return snprintf(w->err, w->errlen, "%s %s: %s is not a directory",
				w->what, w->dir, rp), -1;
	if (st->st_uid != 0)
		return snprintf(w->err, w->errlen, "%s %s: %s is owned by uid %u, not root: chown root it (and chmod go-w), or choose another with %s",
				w->what, w->dir, rp, (unsigned)st->st_uid, w->hint), -1;
	if ((st->st_mode & 022) && !(parent && (st->st_mode & S_ISVTX)))
		return snprintf(w->err, w->errlen, "%s %s: %s is writable by group or others (mode %04o): chmod go-w it, or choose another with %s",
				w->what, w->dir, rp, (unsigned)(st->st_mode & 07777), w->hint), -1;
	return 0;
}

/*
 * sshd's StrictModes for a directory root writes in: it and every parent
 * (of its real path) are directories owned by root and not writable by
 * group or others; a parent may be world-writable if it is sticky and
 * root's (/tmp), since nobody else can then rename what root made in it.
 * Anything else lets a local user swap a file root is about to open.
 */
static int dir_check_path(const char *what, const char *dir, const char *hint,
			  char *err, size_t errlen)
{
	struct dir_walk w = { .what = what, .dir = dir, .hint = hint,
			      .err = err, .errlen = errlen };
	char rp[PATH_MAX];

	if (!realpath(dir, rp))
		return snprintf(err, errlen, "%s %s: %s", what, dir, strerror(errno)), -1;
	return sds_trust_walk(rp, dir_trusted, &w);
}

int ctl_dir_prepare(const char *what, const char *dir, const char *hint,
		    char *err, size_t errlen)
{
	if (mkdir_p(dir))
		return snprintf(err, errlen, "%s %s: %s", what, dir, strerror(errno)), -1;
	return dir_check_path(what, dir, hint, err, errlen);
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

/*
 * Open the lock file: never through a symlink (O_NOFOLLOW), never a FIFO
 * or device (O_NONBLOCK, then fstat), only our own regular file.
 */
static int lock_open(const struct ctl_paths *p, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	fd = open(p->lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
		  O_CLOEXEC, 0644);
	if (fd < 0) {
		if (errno == ELOOP)
			snprintf(err, errlen, "%s: a symlink, not a lock file: remove it", p->lock);
		else
			snprintf(err, errlen, "%s: %s", p->lock, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_nlink != 1) {
		snprintf(err, errlen, "%s: not a regular file of ours (or hard-linked): remove it",
			 p->lock);
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

int ctl_lock(const struct ctl_paths *p, pid_t *owner, char *err, size_t errlen)
{
	struct stat a, b;
	char buf[32 + 2 * SDS_NAME_MAX];
	int fd, len;

	/*
	 * Lock, then check that the path still names the file we locked: a
	 * loader that was exiting may have unlinked it under us.
	 */
	for (;;) {
		fd = lock_open(p, err, errlen);
		if (fd < 0)
			return -1;
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			int e = errno;

			if (owner)
				*owner = lock_owner(fd);
			snprintf(err, errlen, "%s: %s", p->lock, strerror(e));
			close(fd);
			errno = e;
			return -1;
		}
		if (fstat(fd, &a) == 0 && lstat(p->lock, &b) == 0 &&
		    a.st_ino == b.st_ino && a.st_dev == b.st_dev)
			break;
		close(fd);
	}
	/* The pid for messages; the names for ctl_find() (a hashed stem). */
	len = snprintf(buf, sizeof(buf), "%d %s %s\n", (int)getpid(), p->group,
		       p->app);
	if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, len, 0) != len) {
		/* only for messages and queries: not worth failing over */
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

/*
 * Bind under p->tmp, set its mode and group, listen, rename over p->sock.
 * The temp name is shorter than the socket's, so a path that fits never
 * fails here after everything is loaded.  bind() makes the node itself
 * (it fails on anything already there, a symlink included) and the run
 * directory passed ctl_dir_prepare(): only root can put anything in it,
 * so the node we chmod is the one we bound; the chmod and chown do not
 * follow a symlink all the same (AT_SYMLINK_NOFOLLOW), and the node is
 * checked to be a socket of ours first.
 */
int ctl_listen(const struct ctl_paths *p, mode_t mode, gid_t gid)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd, err;

	if (sun_set(&sa, p->sock) || sun_set(&sa, p->tmp))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	/* We hold the lock: a temp node there was left by a dead loader. */
	unlink(p->tmp);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto err_close;
	if (lstat(p->tmp, &st))
		goto err_unlink;
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
		errno = EEXIST;
		goto err_unlink;
	}
	if (fchmodat(AT_FDCWD, p->tmp, mode, AT_SYMLINK_NOFOLLOW))
		goto err_unlink;
	if (gid != (gid_t)-1 &&
	    fchownat(AT_FDCWD, p->tmp, (uid_t)-1, gid, AT_SYMLINK_NOFOLLOW))
		goto err_unlink;
	if (listen(fd, 64))
		goto err_unlink;
	/* Whatever socket is at p->sock was left by a dead loader. */
	if (rename(p->tmp, p->sock))
		goto err_unlink;
	return fd;

err_unlink:
	err = errno;
	unlink(p->tmp);
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

/*
 * The names behind a hashed stem, from its lock file ("PID GROUP APP\n",
 * written by ctl_lock()), and only if they give that very stem.  Why the
 * lock file and not the socket's `info`: it needs no connection (a hung
 * loader costs a query nothing, a stale socket is still listed like a
 * plain one) and nothing but root can write it (ctl_dir_prepare()).
 */
static bool lock_names(const char *dir, const char *stem, char *group,
		       char *app)
{
	char path[PATH_MAX], buf[32 + 2 * SDS_NAME_MAX + 8];
	char check[SDS_SOCK_STEM_MAX + 1];
	struct stat st;
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s.lock", dir, stem) >= (int)sizeof(path))
		return false;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0) {
		close(fd);
		return false;
	}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (sscanf(buf, "%*d %64s %64s", group, app) != 2)
		return false;
	return sds_sock_stem(sds_run_dir_len(dir), group, app, check,
			     sizeof(check)) >= 0 && !strcmp(check, stem);
}

/*
 * The names of the socket @name in @dir: "<group>.<app>.sock" (one dot
 * in the stem), or a hashed "<g>.<a>.<hash>.sock" (two) whose lock file
 * names them.  False for any other file.
 */
static bool sock_name_split(const char *dir, const char *name, char *group,
			    char *app)
{
	char stem[SDS_SOCK_STEM_MAX + 1];
	size_t len = strlen(name);
	const char *dot;
	int dots = 0;

	if (len <= 5 || strcmp(name + len - 5, ".sock") || len - 5 > SDS_SOCK_STEM_MAX)
		return false;
	memcpy(stem, name, len - 5);
	stem[len - 5] = '\0';
	for (dot = stem; (dot = strchr(dot, '.')); dot++)
		dots++;
	if (dots == 2)
		return lock_names(dir, stem, group, app);
	if (dots != 1)
		return false;
	dot = strchr(stem, '.');
	if (dot - stem > SDS_NAME_MAX || strlen(dot + 1) > SDS_NAME_MAX)
		return false;
	memcpy(group, stem, dot - stem);
	group[dot - stem] = '\0';
	strcpy(app, dot + 1);
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

		if (!sock_name_split(dir, de->d_name, a->group, a->app))
			continue;
		if (group && strcmp(group, a->group))
			continue;
		if (app && strcmp(app, a->app))
			continue;
		if (snprintf(a->sock, sizeof(a->sock), "%s/%s", dir,
			     de->d_name) >= (int)sizeof(a->sock))
			continue;
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
