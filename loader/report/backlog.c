// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * backlog.c - the heartbeat backlog on disk: append a closed period, mark
 * it done, rewrite the file (backlog.h has the format; backlog_load.c
 * reads what an earlier loader left).  Pure file I/O: no BPF, no network;
 * uplink.c calls it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "durable.h"
#include "report/backlog.h"

#define MAGIC		"sds-backlog 1\n"
#define MAGIC_LEN	(sizeof(MAGIC) - 1)
#define HEAD_MAX	64	/* "P <start> <len> <crc32> ": bytes at most */

int backlog__init(struct backlog *b, const char *dir, const char *group,
		  const char *app, const char *host, int cap)
{
	memset(b, 0, sizeof(*b));
	b->fd = -1;
	/* Room for ".tmp" too: the rewrite's temp file. */
	if (snprintf(b->path, sizeof(b->path), "%s/%s.%s.backlog", dir, group,
		     app) >= (int)sizeof(b->path) - 4) {
		errno = ENAMETOOLONG;
		return -1;
	}
	snprintf(b->group, sizeof(b->group), "%s", group);
	snprintf(b->app, sizeof(b->app), "%s", app);
	snprintf(b->host, sizeof(b->host), "%s", host);
	b->cap = cap;
	b->recs = calloc(cap, sizeof(*b->recs));
	if (!b->recs) {
		errno = ENOMEM;
		return -1;
	}
	pthread_mutex_init(&b->lock, NULL);
	return 0;
}

void backlog__free(struct backlog *b)
{
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
	free(b->recs);
	b->recs = NULL;
	b->nrecs = 0;
}

/* A write failed: keep why; the caller says it (once: @failed). */
static int write_failed(struct backlog *b, const char *what)
{
	snprintf(b->err, sizeof(b->err), "backlog %s: %s: %s", b->path, what,
		 strerror(errno));
	return -1;
}

/* All of @len bytes at @off, or -1. */
static int pwrite_all(int fd, const char *p, size_t len, off_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= n;
		off += n;
	}
	return 0;
}

/* Copy @len bytes at @from in @in to @to in @out. */
static int copy_range(int in, off_t from, int out, off_t to, off_t len)
{
	char buf[65536];

	while (len > 0) {
		ssize_t n = pread(in, buf, len < (off_t)sizeof(buf) ? len :
				  (off_t)sizeof(buf), from);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!n)
				errno = EIO;
			return -1;
		}
		if (pwrite_all(out, buf, n, to))
			return -1;
		from += n;
		to += n;
		len -= n;
	}
	return 0;
}

/*
 * Write the file anew: the magic, the newest acknowledged period, the
 * pending records copied from the old file; fsynced, renamed into place,
 * the directory fsynced (common/durable.c).  A reader sees the old file
 * or the new one, whole, even after a crash.
 */
int backlog__rewrite(struct backlog *b)
{
	char tmp[PATH_MAX + 8], line[HEAD_MAX];
	off_t at = MAGIC_LEN, first;
	int fd, i, n;

	snprintf(tmp, sizeof(tmp), "%s.tmp", b->path);
	fd = durable_temp_open(tmp);
	if (fd < 0)
		return write_failed(b, "creating its temp file");
	if (pwrite_all(fd, MAGIC, MAGIC_LEN, 0))
		goto fail;
	if (b->acked) {
		n = snprintf(line, sizeof(line), "A %lld\n", (long long)b->acked);
		if (pwrite_all(fd, line, n, at))
			goto fail;
		at += n;
	}
	first = at;
	for (i = 0; i < b->nrecs; i++) {
		if (copy_range(b->fd, b->recs[i].off, fd, at, b->recs[i].line))
			goto fail;
		at += b->recs[i].line;
	}
	if (fsync(fd) || rename(tmp, b->path))
		goto fail;
	/* In place now: the records are where the new file has them. */
	if (b->fd >= 0)
		close(b->fd);
	b->fd = fd;
	b->size = at;
	b->live = at - first;
	for (i = 0; i < b->nrecs; i++) {
		b->recs[i].off = first;
		first += b->recs[i].line;
	}
	if (durable_dir_sync(b->path))
		return write_failed(b, "syncing its directory");
	return 0;
fail:
	/* The old file, if any, is untouched: its records are where they were. */
	write_failed(b, "rewriting it");
	close(fd);
	unlink(tmp);
	return -1;
}

/* Append @len bytes of @iov's lines and fsync; the file is cut back on failure. */
static int append_lines(struct backlog *b, const struct iovec *iov, int niov,
			size_t len)
{
	ssize_t n;

	if (b->size + (off_t)len > BACKLOG_FILE_MAX) {
		errno = EFBIG;
		return write_failed(b, "appending");
	}
	n = pwritev(b->fd, iov, niov, b->size);
	if (n != (ssize_t)len || fsync(b->fd)) {
		if (n >= 0 && n != (ssize_t)len)
			errno = ENOSPC;
		write_failed(b, "appending");
		/* No half record stays behind for the next append to follow. */
		if (ftruncate(b->fd, b->size)) {
			/* the next load skips it as truncated */
		}
		return -1;
	}
	b->size += len;
	return 0;
}

static int rec_find(const struct backlog *b, int64_t start)
{
	int i;

	for (i = 0; i < b->nrecs; i++)
		if (b->recs[i].start == start)
			return i;
	return -1;
}

static bool has_locked(struct backlog *b, int64_t start)
{
	return start <= b->acked || rec_find(b, start) >= 0;
}

bool backlog__has(struct backlog *b, int64_t start)
{
	bool ret;

	pthread_mutex_lock(&b->lock);
	ret = has_locked(b, start);
	pthread_mutex_unlock(&b->lock);
	return ret;
}

/* Write the done record of @start, or the whole file when that is smaller. */
static int done_locked(struct backlog *b, int64_t start, bool acked)
{
	char line[HEAD_MAX];
	struct iovec iov;
	int i = rec_find(b, start);

	if (acked && start > b->acked)
		b->acked = start;
	if (i >= 0) {
		b->live -= b->recs[i].line;
		memmove(&b->recs[i], &b->recs[i + 1],
			(b->nrecs - i - 1) * sizeof(b->recs[0]));
		b->nrecs--;
	}
	if (b->fd < 0 || (i < 0 && !acked))
		return 0;
	/* Nothing pending, or mostly done lines: the short file instead. */
	if (!b->nrecs || b->size - b->live > b->live + BACKLOG_SLACK)
		return backlog__rewrite(b);
	iov.iov_base = line;
	iov.iov_len = snprintf(line, sizeof(line), "%c %lld\n", acked ? 'A' : 'X',
			       (long long)start);
	return append_lines(b, &iov, 1, iov.iov_len);
}

int backlog__done(struct backlog *b, int64_t start, bool acked)
{
	int ret;

	pthread_mutex_lock(&b->lock);
	ret = done_locked(b, start, acked);
	pthread_mutex_unlock(&b->lock);
	return ret;
}

int backlog__append(struct backlog *b, int64_t start, const char *body,
		    size_t len)
{
	char head[HEAD_MAX];
	struct iovec iov[3];
	int ret = -1, i;
	size_t total;

	pthread_mutex_lock(&b->lock);
	if (has_locked(b, start)) {
		ret = 1;
		goto out;
	}
	if (len > BACKLOG_REC_MAX || memchr(body, '\n', len)) {
		errno = EINVAL;
		write_failed(b, "a period's heartbeat too large for it");
		goto out;
	}
	/* The caller drops first; this only keeps the index in bounds. */
	if (b->nrecs == b->cap && done_locked(b, b->recs[0].start, false))
		goto out;
	if (b->fd < 0 && backlog__rewrite(b))
		goto out;
	iov[0].iov_base = head;
	iov[0].iov_len = snprintf(head, sizeof(head), "P %lld %zu %08lx ",
				  (long long)start, len,
				  crc32(0, (const Bytef *)body, len));
	iov[1].iov_base = (void *)body;
	iov[1].iov_len = len;
	iov[2].iov_base = "\n";
	iov[2].iov_len = 1;
	total = iov[0].iov_len + len + 1;
	/* Too many done lines to grow further: the short file first. */
	if (b->size + (off_t)total > BACKLOG_FILE_MAX && backlog__rewrite(b))
		goto out;
	if (append_lines(b, iov, 3, total))
		goto out;
	/* Oldest first: a period older than the newest goes in its place. */
	for (i = b->nrecs; i > 0 && b->recs[i - 1].start > start; i--)
		b->recs[i] = b->recs[i - 1];
	b->recs[i].start = start;
	b->recs[i].off = b->size - total;
	b->recs[i].line = total;
	b->nrecs++;
	b->live += total;
	ret = 0;
out:
	pthread_mutex_unlock(&b->lock);
	return ret;
}
