// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * backlog_load.c - reading the heartbeat backlog an earlier loader left
 * (backlog.h has the format).  The file is hostile input: bounded in
 * size, every record checked, bad ones skipped and counted, the pending
 * periods handed to uplink.c oldest first, each once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "report/backlog.h"

#define MAGIC		"sds-backlog 1\n"
#define MAGIC_LEN	(sizeof(MAGIC) - 1)

/* One P record as read. */
struct scan_rec {
	int64_t start;			/* its period */
	off_t off;			/* its line's first byte */
	off_t line;			/* its line's bytes, the newline included */
	off_t body;			/* its JSON's first byte */
	size_t len;			/* its JSON's bytes */
};

/* What reading the file found. */
struct scan {
	const char *buf;		/* the file */
	off_t size;			/* its bytes */
	int64_t now;			/* Unix seconds: no period after now + 1 h */
	struct sds_heartbeat *hb;	/* a P record's body, parsed */
	struct scan_rec *ps;		/* the P records, in file order */
	size_t nps, cps;		/* used, room */
	int64_t *xs;			/* the periods of the X records */
	size_t nxs, cxs;		/* used, room */
	int64_t acked;			/* the newest A record's period */
	unsigned int bad;		/* records skipped */
	off_t bad_at;			/* the first one's byte */
	char why[200];			/* what was wrong with it */
};

/* A decimal number of at most 18 digits ending at @stop; *@p moves past it. */
static int parse_num(const char **p, const char *end, char stop, int64_t *v)
{
	const char *s = *p;
	int64_t n = 0;
	int digits = 0;

	while (s < end && *s >= '0' && *s <= '9' && digits < 18) {
		n = n * 10 + (*s++ - '0');
		digits++;
	}
	if (!digits || (stop && (s >= end || *s != stop)) || (!stop && s != end))
		return -1;
	*p = stop ? s + 1 : s;
	*v = n;
	return 0;
}

static bool period_ok(const struct scan *s, int64_t start)
{
	return start % SDS_HB_PERIOD_S == 0 && start >= SDS_HB_TIME_MIN &&
	       start <= s->now + 3600;
}

/* Grow @*arr (elements of @size bytes) to hold one more. */
static int grow(void *arr, size_t *room, size_t used, size_t size)
{
	size_t n = *room ? *room * 2 : 64;
	void *p;

	if (used < *room)
		return 0;
	p = realloc(*(void **)arr, n * size);
	if (!p)
		return -1;
	*(void **)arr = p;
	*room = n;
	return 0;
}

/* "P <start> <len> <crc32> <json>": checked to the last field. */
static const char *scan_period(struct scan *s, const struct backlog *b,
			       const char *p, const char *end, off_t off,
			       int64_t *start)
{
	static char err[160];
	int64_t len, crc;
	char *hex_end;

	if (parse_num(&p, end, ' ', start) || !period_ok(s, *start))
		return "bad period";
	if (parse_num(&p, end, ' ', &len) || len > BACKLOG_REC_MAX)
		return "bad length";
	if (end - p < 9 || p[8] != ' ')
		return "bad crc32";
	crc = strtol(p, &hex_end, 16);
	if (hex_end != p + 8)
		return "bad crc32";
	p += 9;
	if (end - p != len)
		return "length differs";
	if ((uint32_t)crc32(0, (const Bytef *)p, len) != (uint32_t)crc)
		return "crc32 differs";
	if (heartbeat_parse(p, len, s->hb, err, sizeof(err)))
		return err;
	if (strcmp(s->hb->group, b->group) || strcmp(s->hb->app, b->app) ||
	    (strcmp(s->hb->host, b->host) &&
	     (!b->plain_host[0] || strcmp(s->hb->host, b->plain_host))))
		return "another app's or host's heartbeat";
	if (s->hb->period_start != *start)
		return "period differs from its heartbeat's";
	if (grow(&s->ps, &s->cps, s->nps, sizeof(*s->ps)))
		return "out of memory";
	s->ps[s->nps++] = (struct scan_rec){ *start, off, 0, p - s->buf, len };
	return NULL;
}

/* One line [@off, @nl], @nl its newline: NULL, or what is wrong with it. */
static const char *scan_line(struct scan *s, const struct backlog *b,
			     off_t off, const char *nl)
{
	const char *p = s->buf + off;
	int64_t start;

	if (nl - p < 3 || p[1] != ' ')
		return "unknown record";
	switch (p[0]) {
	case 'P':
		return scan_period(s, b, p + 2, nl, off, &start);
	case 'A':
	case 'X':
		p += 2;
		if (parse_num(&p, nl, 0, &start) || !period_ok(s, start))
			return "bad period";
		if (s->buf[off] == 'A') {
			if (start > s->acked)
				s->acked = start;
			return NULL;
		}
		if (grow(&s->xs, &s->cxs, s->nxs, sizeof(*s->xs)))
			return "out of memory";
		s->xs[s->nxs++] = start;
		return NULL;
	}
	return "unknown record";
}

/* Every record after the magic; bad ones counted, the first one's why kept. */
static void scan_records(struct scan *s, const struct backlog *b)
{
	off_t off = MAGIC_LEN;

	while (off < s->size) {
		const char *nl = memchr(s->buf + off, '\n', s->size - off);
		const char *why;

		why = nl ? scan_line(s, b, off, nl) : "truncated";
		if (nl && !why && s->nps && s->ps[s->nps - 1].off == off)
			s->ps[s->nps - 1].line = nl + 1 - (s->buf + off);
		if (why && !s->bad++) {
			s->bad_at = off;
			snprintf(s->why, sizeof(s->why), "%s", why);
		}
		if (!nl)
			break;
		off = nl + 1 - s->buf;
	}
}

static int rec_cmp(const void *a, const void *b)
{
	const struct scan_rec *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The pending periods, oldest first, into @s->ps[0..return): not at or
 * before the newest acknowledged one, not dropped, each once (the first
 * record of a period stands: a loader that closed it again after a crash
 * wrote the same period twice).
 */
static size_t scan_pending(struct scan *s)
{
	size_t i, n = 0;
	int64_t prev = 0;

	if (s->nps)
		qsort(s->ps, s->nps, sizeof(*s->ps), rec_cmp);
	if (s->nxs)
		qsort(s->xs, s->nxs, sizeof(*s->xs), i64_cmp);
	for (i = 0; i < s->nps; i++) {
		int64_t start = s->ps[i].start;

		if (start == prev)
			continue;
		prev = start;
		if (start <= s->acked || (s->nxs &&
		    bsearch(&start, s->xs, s->nxs, sizeof(*s->xs), i64_cmp)))
			continue;
		s->ps[n++] = s->ps[i];
	}
	return n;
}

/* The file as a whole, or why it cannot be used at all. */
static const char *file_read(int fd, struct scan *s)
{
	struct stat st;
	char *buf;
	off_t at = 0;

	if (fstat(fd, &st))
		return strerror(errno);
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	if (st.st_uid != geteuid())
		return "not owned by this user";
	if (st.st_mode & 022)
		return "writable by group or others";
	if (st.st_size > BACKLOG_FILE_MAX)
		return "larger than 256 MiB";
	buf = malloc(st.st_size + 1);
	if (!buf)
		return "out of memory";
	s->buf = buf;
	while (at < st.st_size) {
		ssize_t n = pread(fd, buf + at, st.st_size - at, at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? strerror(errno) : "shorter than its size";
		at += n;
	}
	s->size = at;
	if (at < (off_t)MAGIC_LEN || memcmp(buf, MAGIC, MAGIC_LEN))
		return "not a backlog (its first line is not \"sds-backlog 1\")";
	return NULL;
}

/* Hand the pending periods to @each; the index points into the old file. */
static int load_pending(struct backlog *b, struct scan *s, size_t n,
			backlog_each_fn each, void *ctx)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char *body = strndup(s->buf + s->ps[i].body, s->ps[i].len);

		if (!body)
			return -1;
		each(ctx, s->ps[i].start, body);
		b->recs[i].start = s->ps[i].start;
		b->recs[i].off = s->ps[i].off;
		b->recs[i].line = s->ps[i].line;
	}
	b->nrecs = n;
	return 0;
}

/* The one line about a file that was not all well (@msg), or "". */
static void load_msg(struct backlog *b, const struct scan *s, const char *why,
		     size_t n, size_t drop, bool wfail, char *msg, size_t msglen)
{
	char bad[300] = "", over[80] = "";

	if (why) {
		snprintf(msg, msglen, "backlog %s: %s; skipped%s%s", b->path,
			 why, wfail ? "; " : "", wfail ? b->err : "");
		return;
	}
	if (!s->bad && !drop && !wfail)
		return;
	if (s->bad)
		snprintf(bad, sizeof(bad), "%u bad records skipped (the first at byte %lld: %s); ",
			 s->bad, (long long)s->bad_at, s->why);
	if (drop)
		snprintf(over, sizeof(over), "%zu periods over the bound of %d dropped; ",
			 drop, b->cap);
	snprintf(msg, msglen, "backlog %s: %s%s%zu periods restored%s%s", b->path,
		 bad, over, n, wfail ? "; " : "", wfail ? b->err : "");
}

int backlog__load(struct backlog *b, backlog_each_fn each, void *ctx,
		  char *msg, size_t msglen)
{
	struct scan s = { .now = time(NULL) };
	const char *why = NULL;
	size_t n = 0, drop = 0;
	int fd, ret = -1;
	bool wfail;

	msg[0] = '\0';
	fd = open(b->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		why = errno == ELOOP ? "a symlink" : strerror(errno);
	s.hb = heartbeat_new();
	if (!s.hb)
		goto out;
	if (!why)
		why = file_read(fd, &s);
	if (!why) {
		scan_records(&s, b);
		n = scan_pending(&s);
		/* At most the queue's bound, the oldest dropped first. */
		if (n > (size_t)b->cap) {
			drop = n - b->cap;
			memmove(s.ps, s.ps + drop, b->cap * sizeof(*s.ps));
			n = b->cap;
		}
		if (load_pending(b, &s, n, each, ctx))
			goto out;
		b->acked = s.acked;
		b->fd = fd;	/* the rewrite copies the records from it */
		fd = -1;
	}
	/* The file anew, with the pending records only (none if skipped). */
	wfail = backlog__rewrite(b) != 0;
	if (wfail) {
		if (b->fd >= 0)
			close(b->fd);
		b->fd = -1;
		b->nrecs = 0;
		b->live = 0;
	}
	load_msg(b, &s, why, n, drop, wfail, msg, msglen);
	ret = n;
out:
	if (fd >= 0)
		close(fd);
	free((void *)s.buf);
	free(s.ps);
	free(s.xs);
	heartbeat_free(s.hb);
	return ret;
}
