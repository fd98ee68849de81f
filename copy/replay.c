// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * replay.c - `sds-copy replay`: a recording sent again at X times its
 * recorded pace, N times, in file order, round robin over the targets.
 * The whole file is checked before the first byte is sent, so a corrupt
 * or truncated file sends nothing; nothing is ever retried, so nothing
 * is sent twice within a pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "copyrec.h"
#include "frame.h"
#include "plan.h"

#define REPLAY_IO_TIMEOUT_S	5	/* connect, write, HTTP response */

struct replay {
	const char *path;		/* the recording */
	FILE *f;			/* it, open */
	struct copy_addr to[COPY_SHADOWS_MAX];	/* --to */
	int fds[COPY_SHADOWS_MAX];	/* a connection to each */
	int nto;			/* entries of @to */
	long times;			/* --times */
	double speed;			/* --speed */
	enum copy_framing framing;	/* --framing */
	uint64_t records;		/* records in the file */
	uint64_t sent;			/* requests written whole */
	uint64_t http_errors;		/* responses >= 400 */
};

static const char replay_usage[] =
	"usage: sds-copy replay FILE --to HOST:PORT[,...] [--times N] [--speed X]\n"
	"                       [--framing raw|http]\n"
	"  Send the requests of a recording (docs/COPY.md) again, in file order,\n"
	"  round robin over the targets, at X times the recorded pace (default 1),\n"
	"  the whole file N times (default 1).  raw writes each request as it is;\n"
	"  http POSTs it with X-SDS-Copy: APP/POINT.  The file is checked whole\n"
	"  first: a corrupt or truncated one sends nothing.\n";

static int to_parse(struct replay *rp, char *list)
{
	char err[256], *tok, *save = NULL;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (rp->nto == COPY_SHADOWS_MAX) {
			fprintf(stderr, "sds-copy: replay: --to: more than %d targets\n",
				COPY_SHADOWS_MAX);
			return -1;
		}
		if (addr_parse(tok, &rp->to[rp->nto], err, sizeof(err))) {
			fprintf(stderr, "sds-copy: replay: --to %s\n", err);
			return -1;
		}
		rp->fds[rp->nto++] = -1;
	}
	if (!rp->nto) {
		fprintf(stderr, "sds-copy: replay: --to: no target\n");
		return -1;
	}
	return 0;
}

static int replay_args(struct replay *rp, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "times", required_argument, NULL, 'n' },
		{ "speed", required_argument, NULL, 's' },
		{ "framing", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	int c, fr;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (to_parse(rp, optarg))
				return 2;
			break;
		case 'n':
			errno = 0;
			rp->times = strtol(optarg, &end, 10);
			if (errno || !*optarg || *end || rp->times < 1 || rp->times > 1000000) {
				fprintf(stderr, "sds-copy: replay: --times %s: not an integer in 1..1000000\n", optarg);
				return 2;
			}
			break;
		case 's':
			rp->speed = strtod(optarg, &end);
			if (!*optarg || *end || !(rp->speed >= 0.001 && rp->speed <= 1000000)) {
				fprintf(stderr, "sds-copy: replay: --speed %s: not a number in 0.001..1000000\n", optarg);
				return 2;
			}
			break;
		case 'f':
			fr = plan_framing_parse(optarg);
			if (fr < 0) {
				fprintf(stderr, "sds-copy: replay: --framing %s: unknown framing (raw or http)\n", optarg);
				return 2;
			}
			rp->framing = fr;
			break;
		case 'h': fputs(replay_usage, stdout); return 0;
		default: fputs(replay_usage, stderr); return 2;
		}
	}
	if (optind + 1 != argc || !rp->nto) {
		fprintf(stderr, "sds-copy: replay: %s\n", optind + 1 != argc ?
			"one recording FILE expected" : "--to HOST:PORT[,...] is required");
		return 2;
	}
	rp->path = argv[optind];
	return -1;
}

/* Pass over the whole file: count its records, or name the bad offset. */
static int replay_check(struct replay *rp)
{
	struct copyrec_reader rd;
	struct copyrec r;
	char err[256];
	int rc;

	if (copyrec_reader_init(&rd, rp->f))
		return fprintf(stderr, "sds-copy: replay: out of memory\n"), -1;
	while ((rc = copyrec_reader_next(&rd, &r, err, sizeof(err))) == 1)
		rp->records++;
	copyrec_reader_free(&rd);
	if (rc < 0) {
		fprintf(stderr, "sds-copy: replay: %s: %s; nothing sent\n", rp->path, err);
		return -1;
	}
	return 0;
}

static int targets_connect(struct replay *rp)
{
	struct timeval tv = { .tv_sec = REPLAY_IO_TIMEOUT_S };
	int i, fd;

	for (i = 0; i < rp->nto; i++) {
		fd = socket(rp->to[i].sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return fprintf(stderr, "sds-copy: replay: socket: %s\n", strerror(errno)), -1;
		rp->fds[i] = fd;
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (connect(fd, (struct sockaddr *)&rp->to[i].sa, rp->to[i].salen)) {
			fprintf(stderr, "sds-copy: replay: %s: %s; nothing sent\n",
				rp->to[i].text, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* @more: the head of a request, its body follows (one segment, no Nagle wait). */
static int write_all(int fd, const void *buf, size_t len, bool more)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* The response to the request just sent; its status, or -1. */
static int http_response(int fd)
{
	struct copy_http_resp r;
	char buf[COPY_ADDR_MAX * 32];
	size_t len = 0;
	uint64_t left;
	ssize_t n;
	int rc;

	for (;;) {
		n = recv(fd, buf + len, sizeof(buf) - len, 0);
		if (n <= 0)
			return -1;
		len += n;
		rc = frame_http_resp_parse(buf, len, &r);
		if (rc < 0)
			return -1;
		if (rc > 0)
			break;
	}
	if (r.close || len - r.head_len > r.body_len)
		return -1;
	for (left = r.body_len - (len - r.head_len); left; left -= n) {
		n = recv(fd, buf, left < sizeof(buf) ? left : sizeof(buf), 0);
		if (n <= 0)
			return -1;
	}
	return r.status;
}

static int send_one(struct replay *rp, int i, const struct copyrec *r)
{
	char head[COPY_ADDR_MAX * 4], colour[2 * SDS_NAME_MAX + 2], junk[4096];
	int fd = rp->fds[i], hl, st;

	if (rp->framing == COPY_FRAMING_RAW) {
		if (write_all(fd, r->data, r->cap_len, false))
			return -1;
		/* What a raw target answers is not read, only drained. */
		while (recv(fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
			;
		rp->sent++;
		return 0;
	}
	snprintf(colour, sizeof(colour), "%s/%s", r->app, r->point);
	hl = frame_http_head(head, sizeof(head), rp->to[i].text, colour, r->cap_len);
	if (hl < 0 || write_all(fd, head, hl, true) ||
	    write_all(fd, r->data, r->cap_len, false))
		return -1;
	rp->sent++;
	st = http_response(fd);
	if (st < 0)
		return -1;
	if (st >= 400)
		rp->http_errors++;
	return 0;
}

static void sleep_until(const struct timespec *start, uint64_t off_ns)
{
	struct timespec t = *start;

	t.tv_sec += off_ns / 1000000000ULL;
	t.tv_nsec += off_ns % 1000000000ULL;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

/* One pass over the file: each record once, at its recorded offset / X. */
static int replay_pass(struct replay *rp, long pass, int *next)
{
	struct copyrec_reader rd;
	struct timespec start;
	struct copyrec r;
	uint64_t ts0 = 0, i = 0;
	char err[256];
	int rc;

	rewind(rp->f);
	if (copyrec_reader_init(&rd, rp->f))
		return fprintf(stderr, "sds-copy: replay: out of memory\n"), -1;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while ((rc = copyrec_reader_next(&rd, &r, err, sizeof(err))) == 1) {
		if (!i++)
			ts0 = r.ts_ns;
		/* Captures from several CPUs may be out of order: never wait back. */
		if (r.ts_ns > ts0)
			sleep_until(&start, (uint64_t)((r.ts_ns - ts0) / rp->speed));
		errno = 0;
		if (send_one(rp, *next, &r)) {
			fprintf(stderr, "sds-copy: replay: %s: %s during pass %ld, record %" PRIu64 "; %" PRIu64 " requests sent, none resent\n",
				rp->to[*next].text, errno ? strerror(errno) : "bad response",
				pass, i, rp->sent);
			rc = -2;
			break;
		}
		*next = (*next + 1) % rp->nto;
	}
	copyrec_reader_free(&rd);
	if (rc == -1)	/* the file changed since it was checked */
		fprintf(stderr, "sds-copy: replay: %s: %s (changed during the replay); %" PRIu64 " requests sent\n",
			rp->path, err, rp->sent);
	return rc < 0 ? -1 : 0;
}

/*
 * The end of a raw target's connection.  Closing a socket with answers
 * still unread makes the kernel send a reset, and a reset makes the
 * target's kernel discard the requests it has not read yet: the last few
 * would be lost.  So the write side is shut (the target reads every
 * request, then its end of file) and its answers are drained until it
 * closes, for at most REPLAY_LINGER_MS.
 */
#define REPLAY_LINGER_MS	2000

static void raw_finish(int fd)
{
	struct timespec t0, t;
	char junk[4096];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	long left;
	ssize_t n;

	if (shutdown(fd, SHUT_WR))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = REPLAY_LINGER_MS - ((t.tv_sec - t0.tv_sec) * 1000 +
					   (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return;
		n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return;
	}
}

int replay_main(int argc, char **argv)
{
	struct replay rp = { .times = 1, .speed = 1.0 };
	struct stat st;
	int rc, i, next = 0;
	long pass;

	rc = replay_args(&rp, argc, argv);
	if (rc >= 0)
		return rc;
	rc = 1;
	rp.f = fopen(rp.path, "re");
	if (!rp.f || fstat(fileno(rp.f), &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "sds-copy: replay: %s: %s\n", rp.path,
			rp.f ? "not a regular file" : strerror(errno));
		goto out;
	}
	if (replay_check(&rp) || targets_connect(&rp))
		goto out;
	for (pass = 1; pass <= rp.times; pass++)
		if (replay_pass(&rp, pass, &next))
			goto out;
	if (rp.http_errors) {
		fprintf(stderr, "sds-copy: replay: %" PRIu64 " of %" PRIu64 " requests answered with status >= 400\n",
			rp.http_errors, rp.sent);
		goto out;
	}
	rc = 0;
	if (rp.framing == COPY_FRAMING_RAW)
		for (i = 0; i < rp.nto; i++)
			if (rp.fds[i] >= 0)
				raw_finish(rp.fds[i]);
out:
	for (i = 0; i < rp.nto; i++)
		if (rp.fds[i] >= 0)
			close(rp.fds[i]);
	if (rp.f)
		fclose(rp.f);
	return rc;
}
