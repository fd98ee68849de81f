// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * register.c - a guarded process's `register`: find the file it runs
 * libsds's probe sites from and attach the guard probes there
 * (docs/PROTOCOL.md, "Guard session"; docs/TRUST.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <jansson.h>
#include "deploy/watch.h"
#include "kernel/probes.h"
#include "publish/flags.h"
#include "serve/register.h"
#include "serve/regproc.h"
#include "serve/serve.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD	77	/* Linux >= 6.5 */
#endif

/* Guard files a uid other than root may bring in (of PROBES_MAX_GUARD_FILES). */
#define REG_UID_FILES	4
/* A libsds file (or a program linked with libsds.a) larger is not parsed. */
#define REG_FILE_MAX	((off_t)256 << 20)
/*
 * New guard files (a parse and four uprobes, maybe an idle file's
 * detach, which takes the kernel a few hundred ms) a uid other than root
 * may bring in: a burst of REG_UID_FILES, then one per REG_NEW_FILE_SEC.
 */
#define REG_NEW_FILE_SEC	10
#define REG_RATE_UIDS		32	/* uids whose bucket is remembered */
/* At most this many refusals logged per minute; the rest are counted. */
#define REG_LOG_BURST	10

int register__peer(int fd, struct reg_peer *peer)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int pidfd;

	peer->pidfd = -1;
	peer->pidfd_errno = 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		return -1;
	peer->pid = cred.pid;
	peer->uid = cred.uid;
	peer->gid = cred.gid;
	len = sizeof(pidfd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len))
		peer->pidfd_errno = errno;
	else
		peer->pidfd = pidfd;
	return 0;
}

/*
 * Why a registration was refused, on the loader's stderr: bounded, as a
 * client can send any number of them.
 */
static void reg_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void reg_log(const char *fmt, ...)
{
	static time_t window;
	static unsigned int n, dropped;
	struct timespec ts;
	va_list ap;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (ts.tv_sec - window >= 60) {
		if (dropped)
			fprintf(stderr, "sds-bpf: register: %u more refusals not logged\n",
				dropped);
		window = ts.tv_sec;
		n = dropped = 0;
	}
	if (n++ >= REG_LOG_BURST) {
		dropped++;
		return;
	}
	fprintf(stderr, "sds-bpf: register: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* One uid's bucket of new guard files. */
struct file_bucket {
	uid_t uid;		/* whose */
	double tokens;		/* new files it may bring in now */
	double stamp;		/* when @tokens was computed (s, monotonic) */
};

/*
 * Take (@n 1) or give back (@n -1) a token of @uid's bucket: false when
 * there is none to take.
 */
static bool new_file_token(uid_t uid, int n)
{
	static struct file_bucket b[REG_RATE_UIDS];
	struct file_bucket *e = NULL, *old = &b[0];
	struct timespec ts;
	double now;
	int i;

	if (uid == 0)
		return true;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec + ts.tv_nsec / 1e9;
	for (i = 0; i < REG_RATE_UIDS; i++) {
		if (b[i].stamp && b[i].uid == uid)
			e = &b[i];
		if (b[i].stamp < old->stamp)
			old = &b[i];
	}
	if (!e) {
		/* A forgotten uid starts full: at most one burst per eviction. */
		e = old;
		e->uid = uid;
		e->tokens = REG_UID_FILES;
	} else {
		e->tokens += (now - e->stamp) / REG_NEW_FILE_SEC;
	}
	e->stamp = now;
	if (e->tokens < n)
		return false;
	e->tokens -= n;
	if (e->tokens > REG_UID_FILES)
		e->tokens = REG_UID_FILES;
	return true;
}

/* May uid @peer connect through a socket of @pol's mode and group? */
static bool uid_allowed(const struct reg_policy *pol,
			const struct reg_peer *peer, const struct regproc *rp)
{
	if (peer->uid == 0 || (pol->sock_mode & 0002))
		return true;
	if (!(pol->sock_mode & 0020))
		return false;
	return peer->gid == pol->sock_gid || regproc__in_group(rp, pol->sock_gid);
}

/*
 * May @peer share the app's cells (docs/TRUST.md, "Shared limits")?
 * Root may: it can write any process's memory anyway.  Then the uids and
 * groups (its egid or a supplementary one) of --share-uid/--share-gid;
 * with none named, TARGET's owner, who decides what TARGET runs.
 */
static bool may_share(const struct reg_policy *pol,
		      const struct reg_peer *peer, const struct regproc *rp)
{
	int i;

	if (peer->uid == 0)
		return true;
	if (!pol->nshare_uid && !pol->nshare_gid)
		return peer->uid == pol->target_uid;
	for (i = 0; i < pol->nshare_uid; i++)
		if (peer->uid == pol->share_uid[i])
			return true;
	for (i = 0; i < pol->nshare_gid; i++)
		if (peer->gid == pol->share_gid[i] ||
		    regproc__in_group(rp, pol->share_gid[i]) == 1)
			return true;
	return false;
}

/*
 * The file @rp maps at @addr, by inode: parse it unless attached already,
 * attach its sites for @uid.  Returns the guard file index, or -1 with
 * @err set for the client.
 */
static int attach_file(struct serve *sv, const struct regproc *rp, uid_t uid,
		       const struct regmap *m, uint64_t addr,
		       char *err, size_t errlen)
{
	char path[64], why[300];
	struct sds_sites sites;
	struct elf_file *ef;
	const char *reason;
	struct stat st;
	int fd, i, r;
	bool took;

	fd = regproc__open_map(rp, m, REG_FILE_MAX, &st, &reason);
	if (fd < 0)
		goto unusable;
	i = probes__guard_get(sv->probes, st.st_dev, st.st_ino);
	if (i >= 0) {
		close(fd);
		return i;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	/* The elf_file owns a dup: @fd stays open for the attach. */
	r = dup(fd);
	ef = r < 0 ? NULL : elf_file__open_fd(r, path, why, sizeof(why));
	r = ef ? elf_file__sds_sites(ef, &sites) : -2;
	elf_file__close(ef);
	if (r != 1) {
		close(fd);
		reason = r == -2 ? "not an x86-64 ELF file" : "no complete set of libsds sites";
		goto unusable;
	}
	if (sites.layout != SDS_FLAGS_LAYOUT) {
		close(fd);
		sv->refused.denied++;
		snprintf(err, errlen, "libsds layout %u at 0x%" PRIx64
			 ", this loader speaks %u", sites.layout, addr,
			 SDS_FLAGS_LAYOUT);
		return -1;
	}
	/* Over its cap, probes__guard_add refuses; else it needs a token. */
	took = uid != 0 && probes__guard_held(sv->probes, uid) < REG_UID_FILES;
	if (took && !new_file_token(uid, 1)) {
		close(fd);
		sv->refused.files++;
		snprintf(err, errlen, "uid %u brings in new libsds files too fast (one per %d s)",
			 (unsigned int)uid, REG_NEW_FILE_SEC);
		return -1;
	}
	/*
	 * The uprobes go on the inode we parsed, through its fd's magic
	 * link: no name in between that anyone could swap.
	 */
	i = probes__guard_add(sv->probes, path, st.st_dev, st.st_ino, &sites,
			      uid, REG_UID_FILES, why, sizeof(why));
	close(fd);
	if (i < 0) {
		r = errno;
		if (took)
			new_file_token(uid, -1);	/* nothing was attached */
		if (r == EDQUOT || r == ENOSPC) {
			sv->refused.files++;
			snprintf(err, errlen, "%s", why);
		} else {
			reg_log("pid %d: %s", (int)rp->pid, why);
			snprintf(err, errlen, "attaching libsds sites failed");
		}
	}
	return i;
unusable:
	sv->refused.denied++;
	reg_log("pid %d uid %u: 0x%" PRIx64 ": %s", (int)rp->pid,
		(unsigned int)uid, addr, reason);
	snprintf(err, errlen, "no usable libsds file mapped at 0x%" PRIx64, addr);
	return -1;
}

/* Does @rp's process run an old build of TARGET that a deploy left probed? */
static bool runs_old_build(const struct serve *sv, const struct regproc *rp)
{
	dev_t dev;
	ino_t ino;
	int i;

	for (i = 0; i < WATCH_BUILDS_MAX; i++)
		if (watch__held(sv->watch, i, &dev, &ino) && regproc__runs(rp, dev, ino) == 1)
			return true;
	return false;
}

/* Does @rp's process run TARGET (or map it)?  And what does it map at @addr? */
static int check_process(struct serve *sv, const struct reg_peer *peer,
			 const struct regproc *rp, uint64_t addr,
			 struct regmap *m, char *err, size_t errlen)
{
	const struct reg_policy *pol = sv->reg;
	bool maps_target;

	if (!uid_allowed(pol, peer, rp)) {
		snprintf(err, errlen, "permission denied: uid %u may not register with this loader",
			 (unsigned int)peer->uid);
		return -1;
	}
	if (regproc__maps(rp, pol->target_dev, pol->target_ino, addr, m,
			  &maps_target)) {
		snprintf(err, errlen, "permission denied: cannot read the maps of pid %d",
			 (int)peer->pid);
		return -1;
	}
	if (!maps_target && !regproc__runs(rp, pol->target_dev, pol->target_ino) &&
	    !runs_old_build(sv, rp)) {
		snprintf(err, errlen, "permission denied: pid %d does not run %s",
			 (int)peer->pid, sv->target);
		return -1;
	}
	return 0;
}

/* The peer's pidfd: its connection's, or (kernel < 6.5) one opened now. */
static int peer_pidfd(const struct reg_peer *peer, bool *own)
{
	*own = false;
	if (peer->pidfd >= 0)
		return peer->pidfd;
	/* The kernel has SO_PEERPIDFD and would not give one: the peer is gone. */
	if (peer->pidfd_errno && peer->pidfd_errno != ENOPROTOOPT)
		return -1;
	*own = true;
	return regproc__pidfd_open(peer->pid);
}

/* "0x" and hex digits, nothing else. */
static int parse_addr(const char *arg, uint64_t *addr)
{
	char *end;

	if (strncmp(arg, "0x", 2) || !arg[2])
		return -1;
	errno = 0;
	*addr = strtoull(arg + 2, &end, 16);
	return errno || *end || arg[2] == '-' || arg[2] == '+' ? -1 : 0;
}

int register__attach(struct serve *sv, struct reg_peer *peer,
		     const char *arg, char *err, size_t errlen)
{
	struct regproc rp = { .dir = -1 };
	struct regmap m;
	int pidfd, file = -1;
	uint64_t addr;
	bool own;

	if (parse_addr(arg, &addr)) {
		snprintf(err, errlen, "expected 'register 0xADDR'");
		return -1;
	}
	pidfd = peer_pidfd(peer, &own);
	if (pidfd < 0 || regproc__open(&rp, peer->pid, pidfd)) {
		snprintf(err, errlen, "permission denied: pid %d has exited",
			 (int)peer->pid);
		sv->refused.denied++;
		goto out;
	}
	if (check_process(sv, peer, &rp, addr, &m, err, errlen)) {
		reg_log("pid %d uid %u: %s", (int)peer->pid,
			(unsigned int)peer->uid, err);
		sv->refused.denied++;
		goto out;
	}
	peer->shares = may_share(sv->reg, peer, &rp);
	file = attach_file(sv, &rp, peer->uid, &m, addr, err, errlen);
	/* Still the process that connected, whose maps we read. */
	if (file >= 0 && regproc__alive(&rp)) {
		register__release(sv, file);
		file = -1;
		snprintf(err, errlen, "permission denied: pid %d has exited",
			 (int)peer->pid);
		sv->refused.denied++;
	}
out:
	regproc__close(&rp);
	if (own && pidfd >= 0)
		close(pidfd);
	return file;
}

void register__release(struct serve *sv, int file)
{
	probes__guard_put(sv->probes, file);
}

char *register__reply(struct serve *sv, int slot, const struct reg_peer *peer)
{
	json_t *o;

	/* Fail open for the app (its calls pass), closed for the cells. */
	if (!peer->shares && flags__own_join(sv->flags, slot, peer->uid)) {
		reg_log("pid %d uid %u: no cells of its own: %s", (int)peer->pid,
			(unsigned int)peer->uid, strerror(errno));
		return conn_io_error("register: no cells of its own for uid %u",
				   (unsigned int)peer->uid);
	}

	/* The fds follow in this order: flags (read-only), cells. */
	o = json_pack("{s:i, s:I, s:I, s:i, s:I, s:I}", "slot", slot,
		      "key", (json_int_t)sv->key, "epoch", (json_int_t)sv->epoch,
		      "layout", SDS_FLAGS_LAYOUT, "size", (json_int_t)sv->flags->size,
		      "cells_size", (json_int_t)sv->flags->cells_size);
	return conn_io_reply(o);
}

void register__set_target(struct reg_policy *pol, dev_t dev, ino_t ino)
{
	pol->target_dev = dev;
	pol->target_ino = ino;
}
