/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * backlog.h - the heartbeat backlog on disk (docs/BACKLOG.md).
 *
 * Every closed period is appended to <state dir>/<group>.<app>.backlog
 * and fsynced before it is queued; a period the admin stored is marked
 * done there (and the newest such period recorded), so that a loader
 * that starts after a SIGTERM or a kill -9 sends what the admin has not
 * acknowledged, oldest first, once.  The file is text, one record a line:
 *
 *   sds-backlog 1                     the first line: magic and version
 *   P <start> <len> <crc32> <json>    a closed period, its heartbeat body
 *   A <start>                         the admin stored period <start>
 *   X <start>                         period <start> dropped (the bound)
 *
 * It is written like the strategies cache: created only as a new temp
 * file (O_EXCL, O_NOFOLLOW, 0600) renamed into place, never through a
 * symlink.  Appends go to the end of the file we made; when most of it is
 * done records it is rewritten with the pending ones only.  Everything in
 * it is read as hostile: bounded, every record checked (crc, length, a
 * heartbeat of this group, app and host for the period it names); what
 * is bad is skipped and said in one line, never fatal.
 */
#ifndef SDS_BACKLOG_H
#define SDS_BACKLOG_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "heartbeat/heartbeat.h"

#define BACKLOG_REC_MAX		(4 << 20)	/* bytes of one period's JSON */
#define BACKLOG_FILE_MAX	((off_t)256 << 20)	/* bytes of the file */
#define BACKLOG_SLACK		(1 << 20)	/* done bytes tolerated before a rewrite */

/* Where a pending period's record is in the file. */
struct backlog_rec {
	int64_t start;			/* the period, Unix seconds */
	off_t off;			/* its line's first byte */
	off_t line;			/* bytes of its line, the newline included */
};

struct backlog {
	pthread_mutex_t lock;		/* the main loop appends, the sender acks */
	char path[PATH_MAX];		/* the file */
	char group[SDS_NAME_MAX + 1];	/* whose periods the file may hold */
	char app[SDS_NAME_MAX + 1];
	char host[SDS_HB_HOST_MAX + 1];
	char plain_host[SDS_HB_HOST_MAX + 1];	/* the host's name before the host id; "" none */
	int fd;				/* the file we wrote, read-write; -1: none yet */
	off_t size;			/* bytes in the file */
	off_t live;			/* bytes of the pending records' lines */
	int64_t acked;			/* newest period the admin stored, 0: none */
	struct backlog_rec *recs;	/* the pending periods, oldest first */
	int nrecs;			/* used in @recs */
	int cap;			/* room in @recs: the queue's bound */
	bool failed;			/* a write failed: said once in @err */
	char err[PATH_MAX + 128];	/* the last write failure, "" if none */
};

/*
 * Set up for <dir>/<group>.<app>.backlog, holding at most @cap pending
 * periods; nothing is opened or written yet.  -1 with errno: ENAMETOOLONG
 * (the path does not fit), ENOMEM.
 */
int backlog__init(struct backlog *b, const char *dir, const char *group,
		  const char *app, const char *host, int cap);
void backlog__free(struct backlog *b);

/*
 * Read the file left by an earlier loader: @each gets every pending
 * period oldest first (@body malloc'ed, the callee owns it), at most
 * @cap of them (the oldest dropped first).  Then the file is rewritten
 * with only those.  Before the sender thread starts (no lock taken).  A missing file is normal (0, @msg ""); anything bad
 * (not a regular file of ours, too large, a bad first line, bad or
 * truncated records) is skipped and said in @msg, one line without the
 * "sds-bpf: " prefix.  Returns the periods restored, -1 on ENOMEM.
 */
typedef void (*backlog_each_fn)(void *ctx, int64_t start, char *body);
int backlog__load(struct backlog *b, backlog_each_fn each, void *ctx,
		  char *msg, size_t msglen);

/*
 * Append closed period @start with heartbeat @body (@len bytes, no
 * newline), fsynced.  1: already pending or not newer than the newest
 * acknowledged period (the caller must not queue it again); 0: written;
 * -1: not written, @b->err says why (the period stays in memory only).
 */
int backlog__append(struct backlog *b, int64_t start, const char *body,
		    size_t len);

/* Is @start pending, or at or before the newest acknowledged period? */
bool backlog__has(struct backlog *b, int64_t start);

/*
 * Period @start is done: the admin stored it (@acked) or the bound
 * dropped it.  Fsynced; the file is rewritten once mostly done records.
 * 0, or -1 with @b->err set.
 */
int backlog__done(struct backlog *b, int64_t start, bool acked);

/*
 * Write the file anew with the pending records (copied from the file
 * @b->fd has open), atomically; for backlog_load.c.  Under @b->lock, or
 * before the sender starts.  0, or -1 with @b->err set.
 */
int backlog__rewrite(struct backlog *b);

#endif /* SDS_BACKLOG_H */
