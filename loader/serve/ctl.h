/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The control socket of a running `sds-bpf attach` (docs/DESIGN.md §2):
 * $SDS_RUN_DIR/<group>.<app>.sock (a hashed name when that is too long for
 * a UNIX socket: common/names.h), default /run/sds.  One request line per
 * connection ("stats", "hist POINT", "info"), one JSON document back.
 */
#ifndef SDS_CTL_H
#define SDS_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "names.h"
#include "sds_types.h"

#define CTL_DEFAULT_RUN_DIR	"/run/sds"
#define CTL_REQ_MAX		512	/* longest request line */
#define CTL_LINE_MAX		CTL_REQ_MAX

/* Where a loader of @group/@app listens and locks (common/names.h). */
struct ctl_paths {
	char dir[256];				/* the run directory */
	char group[SDS_NAME_MAX + 1];		/* the group's name */
	char app[SDS_NAME_MAX + 1];		/* the app's name */
	char stem[SDS_SOCK_STEM_MAX + 1];	/* <group>.<app> or hashed */
	char sock[384];				/* <dir>/<stem>.sock */
	char lock[384];				/* <dir>/<stem>.lock, held while serving */
	char tmp[384];				/* <dir>/.<stem>.new, bound first */
};

/* The run directory: $SDS_RUN_DIR, else /run/sds. */
const char *ctl_run_dir(void);

/*
 * Fill @p for @group/@app in the run directory.  -1 (ENAMETOOLONG) when
 * no socket name of the app fits under it.
 */
int ctl_paths_init(struct ctl_paths *p, const char *group, const char *app);

/*
 * Create @dir (0755, root's) if missing and check it like sshd's
 * StrictModes: it and every parent root-owned and not writable by group
 * or others (a root-owned sticky parent such as /tmp excepted).  -1 with
 * a one-line message in @err naming @what ("run directory") and @hint
 * (how to choose another one).
 */
int ctl_dir_prepare(const char *what, const char *dir, const char *hint,
		    char *err, size_t errlen);

/*
 * Take the app's lock file (O_NOFOLLOW, a regular file of ours only) and
 * write "PID GROUP APP" in it.  Returns the locked fd, or -1 with errno
 * and a message in @err: EWOULDBLOCK when a live loader holds it (its pid
 * in *@owner when known).
 */
int ctl_lock(const struct ctl_paths *p, pid_t *owner, char *err, size_t errlen);
void ctl_unlock(const struct ctl_paths *p, int fd);

/*
 * Listen on the app's socket with @mode and group @gid (-1: leave it).
 * The socket is bound under a temporary name and renamed into place
 * once it listens, so a client never finds one that refuses it.
 */
int ctl_listen(const struct ctl_paths *p, mode_t mode, gid_t gid);

/* Blocking send of all of @buf, waiting at most the I/O timeout per send (client side). */
int ctl_write_all(int fd, const char *buf, size_t len);

/*
 * The server's I/O never waits: one recv() or sendmsg() with
 * MSG_DONTWAIT, the caller's poll() says when to try again.
 * ctl_recv_some: bytes read into @buf (at most @room), 0 if none now,
 * -1 on EOF (errno 0) or error.  ctl_send_some: bytes of @buf sent, with @nfds
 * (at most CTL_MAX_FDS) fds as SCM_RIGHTS on the first of them; 0 if
 * the socket is full, -1 on error.
 */
#define CTL_MAX_FDS		4
ssize_t ctl_recv_some(int fd, char *buf, size_t room);
ssize_t ctl_send_some(int fd, const char *buf, size_t len, const int *fds, int nfds);

/* A loader found in the run directory. */
struct ctl_app {
	char group[SDS_NAME_MAX + 1];	/* group name, from the socket's or lock's */
	char app[SDS_NAME_MAX + 1];	/* app name, from the socket's or lock's */
	char sock[384];			/* socket path */
};

/*
 * Loaders in the run directory whose sockets match @group and @app (NULL:
 * any), live or not.  Returns how many were written to @out (at most @max).
 */
int ctl_find(const char *group, const char *app, struct ctl_app *out, int max);

/*
 * Send @req to the loader at @sock and return its reply (malloc'd), or
 * NULL with errno (ECONNREFUSED, ENOENT: no live loader there).
 */
char *ctl_request(const char *sock, const char *req);

#endif /* SDS_CTL_H */
