// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * ctl.c - sds-copy's control socket, with the loader's discipline
 * (loader/serve/ctl.c, docs/TRUST.md): the run dir ($SDS_RUN_DIR, else
 * /run/sds) is created 0755 and used only if it and every parent are
 * root's and not writable by others; one server per name holds
 * "copy-NAME.lock"; the socket "copy-NAME.sock" (0600: stats are for
 * root) is bound under a temp name, checked, chmod'ed, renamed in place.
 * Stems hold no dot, so the loader's query commands never take them for
 * an app's socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "names.h"
#include "serve.h"
#include "trust.h"

#define CTL_DEFAULT_RUN_DIR	"/run/sds"
#define CTL_IO_TIMEOUT_MS	2000	/* the stats client's patience */
#define CTL_SNDBUF		(8 << 20)	/* a whole stats reply, never a wait */

/* One server per process: the paths it must remove on exit. */
static char ctl_sock[PATH_MAX];
static char ctl_lockp[PATH_MAX];

static const char *run_dir(void)
{
	const char *d = getenv("SDS_RUN_DIR");

	return d && *d ? d : CTL_DEFAULT_RUN_DIR;
}

int copy_ctl_path(const char *name, char *sock, char *lock, char *tmp,
		  size_t size)
{
	size_t dl = sds_run_dir_len(run_dir());
	const char *d = run_dir();
	int n;

	if (!sds_name_valid(name))
		return -1;
	n = snprintf(sock, size, "%.*s/copy-%s.sock", (int)dl, d, name);
	if (n < 0 || (size_t)n >= size || n > SDS_SUN_PATH_MAX)
		return -1;
	if (lock)
		snprintf(lock, size, "%.*s/copy-%s.lock", (int)dl, d, name);
	if (tmp)
		snprintf(tmp, size, "%.*s/.copy-%s.new", (int)dl, d, name);
	return 0;
}

struct dir_walk {
	const char *dir;	/* as given, for @err */
	char *err;
	size_t errlen;
};

/* One directory of dir_prepare()'s walk (common/trust.c). */
static int dir_trusted(const char *rp, const struct stat *st, bool parent,
		       void *ctx)
{
	struct dir_walk *w = ctx;

	if (!st || !S_ISDIR(st->st_mode))
		return snprintf(w->err, w->errlen, "run dir %s: %s is not a directory", w->dir, rp), -1;
	if (st->st_uid != 0)
		return snprintf(w->err, w->errlen, "run dir %s: %s is owned by uid %u, not root: chown root it, or choose another with SDS_RUN_DIR",
				w->dir, rp, (unsigned)st->st_uid), -1;
	if ((st->st_mode & 022) && !(parent && (st->st_mode & S_ISVTX)))
		return snprintf(w->err, w->errlen, "run dir %s: %s is writable by group or others (mode %04o): chmod go-w it, or choose another with SDS_RUN_DIR",
				w->dir, rp, (unsigned)(st->st_mode & 07777)), -1;
	return 0;
}

/* Create @dir 0755 if missing, then check it like the loader does. */
static int dir_prepare(const char *dir, char *err, size_t errlen)
{
	struct dir_walk w = { .dir = dir, .err = err, .errlen = errlen };
	char rp[PATH_MAX];
	int fd;

	/* Its mode whatever the umask, through a descriptor: never a link. */
	if (mkdir(dir, 0755) == 0) {
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fchmod(fd, 0755))
			return snprintf(err, errlen, "run dir %s: %s", dir, strerror(errno)), -1;
		close(fd);
	} else if (errno != EEXIST)
		return snprintf(err, errlen, "run dir %s: %s", dir, strerror(errno)), -1;
	if (!realpath(dir, rp))
		return snprintf(err, errlen, "run dir %s: %s", dir, strerror(errno)), -1;
	return sds_trust_walk(rp, dir_trusted, &w);
}

static int lock_take(const char *lock, char *err, size_t errlen)
{
	struct stat st;
	char buf[32];
	int fd, len;

	fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0)
		return snprintf(err, errlen, "%s: %s", lock, strerror(errno)), -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_nlink != 1) {
		close(fd);
		return snprintf(err, errlen, "%s: not a regular file of ours (or hard-linked): remove it", lock), -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		len = (int)pread(fd, buf, sizeof(buf) - 1, 0);
		buf[len > 0 ? len : 0] = '\0';
		snprintf(err, errlen, "%s: another sds-copy of this name serves (pid %ld): stop it, or choose another --name",
			 lock, atol(buf));
		close(fd);
		return -1;
	}
	len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) == 0 && pwrite(fd, buf, len, 0) != len) {
		/* the pid is for messages only */
	}
	return fd;
}

static int sun_set(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -1;
	strcpy(sa->sun_path, path);
	return 0;
}

static int sock_listen(const char *sock, const char *tmp, char *err,
		       size_t errlen)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || sun_set(&sa, tmp))
		goto err;
	/* We hold the lock: a temp node there was left by a dead server. */
	unlink(tmp);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto err;
	if (lstat(tmp, &st) || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid() ||
	    fchmodat(AT_FDCWD, tmp, 0600, AT_SYMLINK_NOFOLLOW) ||
	    listen(fd, 16) || rename(tmp, sock)) {
		unlink(tmp);
		goto err;
	}
	return fd;
err:
	snprintf(err, errlen, "control socket %s: %s", sock, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

int copy_ctl_open(struct copy_server *s, const char *name, char *err,
		  size_t errlen)
{
	char tmp[PATH_MAX];

	if (copy_ctl_path(name, ctl_sock, ctl_lockp, tmp, sizeof(ctl_sock)))
		return snprintf(err, errlen, "run dir %s: too long for a socket name",
				run_dir()), -1;
	if (dir_prepare(run_dir(), err, errlen))
		return -1;
	s->ctl_lock = lock_take(ctl_lockp, err, errlen);
	if (s->ctl_lock < 0)
		return -1;
	s->cfd = sock_listen(ctl_sock, tmp, err, errlen);
	if (s->cfd < 0) {
		unlink(ctl_lockp);
		close(s->ctl_lock);
		s->ctl_lock = -1;
		return -1;
	}
	return 0;
}

void copy_ctl_close(struct copy_server *s)
{
	if (s->cfd >= 0) {
		unlink(ctl_sock);
		close(s->cfd);
		s->cfd = -1;
	}
	if (s->ctl_lock >= 0) {
		unlink(ctl_lockp);
		close(s->ctl_lock);
		s->ctl_lock = -1;
	}
}

/*
 * A connection is a stats request: the reply is written at once into a
 * send buffer large enough for it, so the loop never waits on a client.
 */
void copy_ctl_accept(struct copy_server *s)
{
	int fd, sz = CTL_SNDBUF;
	char *json;

	while ((fd = accept4(s->cfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
			setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		json = copy_stats_json(s);
		if (json && send(fd, json, strlen(json), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			/* the client sees a cut reply and says so */
		}
		free(json);
		close(fd);
	}
}

/* The client side: the whole reply of the server @name, or NULL. */
char *copy_ctl_request(const char *name, char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = CTL_IO_TIMEOUT_MS / 1000 };
	char sock[PATH_MAX], *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	struct sockaddr_un sa;
	ssize_t n;
	int fd;

	if (copy_ctl_path(name, sock, NULL, NULL, sizeof(sock)) || sun_set(&sa, sock))
		return snprintf(err, errlen, "run dir %s: too long", run_dir()), NULL;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return snprintf(err, errlen, "socket: %s", strerror(errno)), NULL;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen, "%s: %s (is sds-copy serve --name %s running?)",
			 sock, strerror(errno), name);
		goto out;
	}
	for (;;) {
		if (len + 1 >= cap) {
			cap = cap ? cap * 2 : 65536;
			nb = cap <= CTL_SNDBUF * 2 ? realloc(buf, cap) : NULL;
			if (!nb) {
				snprintf(err, errlen, "%s: reply too large", sock);
				goto fail;
			}
			buf = nb;
		}
		n = recv(fd, buf + len, cap - 1 - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "%s: %s", sock, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	goto out;
fail:
	free(buf);
	buf = NULL;
out:
	close(fd);
	return buf;
}
