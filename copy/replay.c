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

#include <jansson.h>

#include "frame.h"
#include "replay.h"

#define REPLAY_EXAMPLES_MAX	TALLY_EXAMPLES_MAX	/* --examples */

static const char replay_usage[] =
	"usage: sds-copy replay FILE --to HOST:PORT[,...] [--times N] [--speed X]\n"
	"                       [--framing raw|http] [--diff [--ignore RULE]... [--json]\n"
	"                       [--examples N] [--timeout MS]]\n"
	"  Send the requests of a recording (docs/COPY.md) again, in file order,\n"
	"  round robin over the targets, at X times the recorded pace (default 1),\n"
	"  the whole file N times (default 1).  raw writes each request as it is;\n"
	"  http POSTs it with X-SDS-Copy: APP/POINT.  The file is checked whole\n"
	"  first: a corrupt or truncated one sends nothing.\n"
	"  --diff compares each answer with the response recorded with its request\n"
	"  and reports same / different / shadow errors / timeouts per point, with the\n"
	"  first N differences (default 5); --ignore $.json.path | a.b | /REGEX/ |\n"
	"  header:NAME leaves that part out (repeatable).  Exit 1 when any differs.\n";

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
		{ "diff", no_argument, NULL, 'd' },
		{ "ignore", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "examples", required_argument, NULL, 'e' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end, err[512];
	bool ignores = false, diff_opts = false;
	int c, fr;
	long v;

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
		case 'd':
			rp->diff = true;
			break;
		case 'i':
			if (diff_rules_add(&rp->rules, optarg, err, sizeof(err))) {
				fprintf(stderr, "sds-copy: replay: %s\n", err);
				return 2;
			}
			ignores = true;
			break;
		case 'j':
			rp->json = true;
			diff_opts = true;
			break;
		case 'e':
		case 'T':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (c == 'e' ? errno || !*optarg || *end || v < 0 || v > REPLAY_EXAMPLES_MAX :
			    errno || !*optarg || *end || v < 1 || v > 600000) {
				fprintf(stderr, "sds-copy: replay: --%s %s: not an integer in %s\n",
					c == 'e' ? "examples" : "timeout", optarg,
					c == 'e' ? "0..100" : "1..600000 (ms)");
				return 2;
			}
			if (c == 'e')
				rp->examples = (int)v;
			else
				rp->timeout_ms = (int)v;
			diff_opts = true;
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
	if ((ignores || diff_opts) && !rp->diff) {
		fprintf(stderr, "sds-copy: replay: %s needs --diff\n",
			ignores ? "--ignore" : "--json, --examples and --timeout");
		return 2;
	}
	rp->path = argv[optind];
	return -1;
}

/* Pass over the whole file: count its records, or name the bad offset. */
static int replay_check(struct replay *rp)
{
	struct replay_pair *e = NULL, *ne;
	size_t n = 0, cap = 0;
	struct copyrec_reader rd;
	struct copyrec r;
	char err[256];
	int rc;

	if (copyrec_reader_init(&rd, rp->f))
		return fprintf(stderr, "sds-copy: replay: out of memory\n"), -1;
	while ((rc = copyrec_reader_next(&rd, &r, err, sizeof(err))) == 1) {
		rp->records++;
		if (!(r.flags & COPYREC_F_RESPONSE))
			rp->requests++;
		if (!rp->diff || !(r.flags & COPYREC_F_PAIRED))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			ne = realloc(e, cap * sizeof(*e));
			if (!ne) {
				rc = -2;
				break;
			}
			e = ne;
		}
		e[n++] = (struct replay_pair){
			.pair = r.pair, .seq = rp->records,
			.req = rp->requests - 1, .off = rd.rec_off,
			.response = r.flags & COPYREC_F_RESPONSE,
		};
	}
	copyrec_reader_free(&rd);
	if (rc == -1) {
		fprintf(stderr, "sds-copy: replay: %s: %s; nothing sent\n", rp->path, err);
		free(e);
		return -1;
	}
	if (rc == -2 || (rp->diff && replay_pairs_match(rp, e, n))) {
		fprintf(stderr, "sds-copy: replay: out of memory\n");
		free(e);
		return -1;
	}
	free(e);
	return 0;
}

/* A connection to target @i in rp->fds[i]: 0, or -1 (errno). */
int replay_target_connect(struct replay *rp, int i)
{
	struct timeval tv = { .tv_sec = REPLAY_IO_TIMEOUT_S };
	int fd;

	if (rp->diff && rp->timeout_ms) {
		tv.tv_sec = rp->timeout_ms / 1000;
		tv.tv_usec = (rp->timeout_ms % 1000) * 1000;
	}
	fd = socket(rp->to[i].sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	rp->fds[i] = fd;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return connect(fd, (struct sockaddr *)&rp->to[i].sa, rp->to[i].salen);
}

static int targets_connect(struct replay *rp)
{
	int i;

	for (i = 0; i < rp->nto; i++) {
		if (replay_target_connect(rp, i)) {
			fprintf(stderr, "sds-copy: replay: %s: %s; nothing sent\n",
				rp->to[i].text, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* @more: the head of a request, its body follows (one segment, no Nagle wait). */
int replay_write_all(int fd, const void *buf, size_t len, bool more)
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
		if (replay_write_all(fd, r->data, r->cap_len, false))
			return -1;
		/* What a raw target answers is not read, only drained. */
		while (recv(fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
			;
		rp->sent++;
		return 0;
	}
	snprintf(colour, sizeof(colour), "%s/%s", r->app, r->point);
	hl = frame_http_head(head, sizeof(head), rp->to[i].text, colour, r->cap_len);
	if (hl < 0 || replay_write_all(fd, head, hl, true) ||
	    replay_write_all(fd, r->data, r->cap_len, false))
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
	uint64_t ts0 = 0, i = 0, k = 0;
	char err[256];
	int rc;

	rewind(rp->f);
	if (copyrec_reader_init(&rd, rp->f))
		return fprintf(stderr, "sds-copy: replay: out of memory\n"), -1;
	clock_gettime(CLOCK_MONOTONIC, &start);
	while ((rc = copyrec_reader_next(&rd, &r, err, sizeof(err))) == 1) {
		i++;
		/* Responses are what --diff compares with, never sent. */
		if (r.flags & COPYREC_F_RESPONSE)
			continue;
		if (!k++)
			ts0 = r.ts_ns;
		/* Captures from several CPUs may be out of order: never wait back. */
		if (r.ts_ns > ts0)
			sleep_until(&start, (uint64_t)((r.ts_ns - ts0) / rp->speed));
		errno = 0;
		if (rp->diff) {
			replay_diff_one(rp, *next, &r, i, rp->resp_off[k - 1]);
		} else if (send_one(rp, *next, &r)) {
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

void replay_raw_finish(int fd)
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
	struct replay rp = { .times = 1, .speed = 1.0, .examples = 5 };
	struct stat st;
	int rc, i, next = 0;
	long pass;

	rc = replay_args(&rp, argc, argv);
	if (rc >= 0) {
		diff_rules_free(&rp.rules);
		return rc;
	}
	tally_init(&rp.tally, rp.examples);
	rc = 1;
	rp.f = fopen(rp.path, "re");
	if (!rp.f || fstat(fileno(rp.f), &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "sds-copy: replay: %s: %s\n", rp.path,
			rp.f ? "not a regular file" : strerror(errno));
		goto out;
	}
	if (rp.diff) {
		rp.rbuf = malloc(COPYREC_MAX_LEN);
		rp.abuf = malloc(REPLAY_ANSWER_MAX);
		if (!rp.rbuf || !rp.abuf) {
			fprintf(stderr, "sds-copy: replay: out of memory\n");
			goto out;
		}
	}
	if (replay_check(&rp) || targets_connect(&rp))
		goto out;
	for (pass = 1; pass <= rp.times; pass++)
		if (replay_pass(&rp, pass, &next))
			goto out;
	if (rp.diff) {
		replay_diff_report(&rp);
		if (!rp.tally.total.pairs)
			fprintf(stderr, "sds-copy: replay: %s: no request has a recorded response (recorded without sds_copy_response() or :copy_ret=): nothing compared\n",
				rp.path);
		else
			rc = rp.tally.total.same != rp.tally.total.pairs;
		goto finish;
	}
	if (rp.http_errors) {
		fprintf(stderr, "sds-copy: replay: %" PRIu64 " of %" PRIu64 " requests answered with status >= 400\n",
			rp.http_errors, rp.sent);
		goto out;
	}
	rc = 0;
finish:
	if (rp.framing == COPY_FRAMING_RAW)
		for (i = 0; i < rp.nto; i++)
			if (rp.fds[i] >= 0)
				replay_raw_finish(rp.fds[i]);
out:
	for (i = 0; i < rp.nto; i++)
		if (rp.fds[i] >= 0)
			close(rp.fds[i]);
	if (rp.f)
		fclose(rp.f);
	tally_free(&rp.tally);
	diff_rules_free(&rp.rules);
	free(rp.resp_off);
	free(rp.rbuf);
	free(rp.abuf);
	return rc;
}
