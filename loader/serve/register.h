/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * register.h - who may register with a loader as a guarded process, and
 * the libsds file whose probe sites it runs (docs/TRUST.md).
 */
#ifndef SDS_REGISTER_H
#define SDS_REGISTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct serve;

/* The process on the other end of a connection, as the kernel says. */
struct reg_peer {
	pid_t pid;		/* SO_PEERCRED */
	uid_t uid;		/* SO_PEERCRED */
	gid_t gid;		/* SO_PEERCRED */
	int pidfd;		/* SO_PEERPIDFD of the connection, or -1 */
	int pidfd_errno;	/* why @pidfd is -1; 0: not asked */
	bool shares;		/* register__attach: it may share the app's cells */
};

/* Most uids, and most groups, --share-uid and --share-gid may name. */
#define REG_SHARE_MAX	16

/* Who may register: fixed when attach starts (attach.c). */
struct reg_policy {
	dev_t target_dev;	/* TARGET's device ... */
	ino_t target_ino;	/* ... and inode: a process must run or map it */
	mode_t sock_mode;	/* --socket-mode: who the socket lets in */
	gid_t sock_gid;		/* the socket's group */
	/*
	 * Who shares the app's cells (docs/TRUST.md, "Shared limits"):
	 * root, and the uids and groups named, or with none named TARGET's
	 * owner; every other uid gets cells of its own.
	 */
	uid_t target_uid;	/* TARGET's owner */
	int nshare_uid;		/* --share-uid */
	uid_t share_uid[REG_SHARE_MAX];
	int nshare_gid;		/* --share-gid */
	gid_t share_gid[REG_SHARE_MAX];
};

/*
 * TARGET is inode @dev/@ino now (a deploy followed, watch.c): its
 * processes may register.
 */
void register__set_target(struct reg_policy *pol, dev_t dev, ino_t ino);

/*
 * Fill @peer from the kernel's view of connection @fd: SO_PEERCRED, and
 * SO_PEERPIDFD when the kernel has it (Linux >= 6.5), which pins the
 * process that connected whatever reuses its pid later.  Returns 0, or -1
 * without credentials.  Close @peer->pidfd (when >= 0) after register.
 */
int register__peer(int fd, struct reg_peer *peer);

/*
 * `register ARG` from @peer: check that @peer may register with this
 * loader, find the file it runs libsds's sites from and attach the guard
 * probes to it if they are not yet, and say in @peer->shares whether it
 * may share the app's cells.  Returns the index of the guard file
 * the process now holds a reference on (give it back with
 * register__release()), or -1 with a one-line reason in @err that is safe
 * to send to the peer.
 */
int register__attach(struct serve *sv, struct reg_peer *peer,
		     const char *arg, char *err, size_t errlen);

/* The session that held guard file @file has ended. */
void register__release(struct serve *sv, int file);

/*
 * The reply line (malloc'd, without the newline) to a register of @peer
 * that got @slot; a peer that may not share the app's cells gets cells
 * of its own first (flags__own_join), or an error and no fds.
 * @sv is the control socket's state (serve.h): what register reads of
 * the loader.
 */
char *register__reply(struct serve *sv, int slot, const struct reg_peer *peer);

#endif /* SDS_REGISTER_H */
