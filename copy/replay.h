/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * replay.h - `sds-copy replay`'s state, shared by replay.c (the file, the
 * targets, the pace) and diff/replay_diff.c (--diff: each answer compared
 * with its recorded response).
 */
#ifndef COPY_REPLAY_H
#define COPY_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "copyrec.h"
#include "diff.h"
#include "plan.h"
#include "tally.h"

#define REPLAY_IO_TIMEOUT_S	5	/* connect, write, HTTP response */
#define REPLAY_ANSWER_MAX	(COPYREC_PAYLOAD_MAX + 8192)	/* an answer kept for --diff */

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
	/* --diff */
	bool diff;			/* compare answers with recorded responses */
	bool json;			/* --json report */
	int examples;			/* --examples, per point */
	int timeout_ms;			/* --timeout: an answer's deadline */
	struct diff_rules rules;	/* --ignore */
	uint64_t requests;		/* request records in the file */
	uint64_t *resp_off;		/* per request: its response's offset; 0: none */
	uint64_t unpaired;		/* requests sent that had no recorded response */
	struct tally tally;		/* what became of the pairs */
	uint8_t *rbuf;			/* a recorded response, read back */
	uint8_t *abuf;			/* the shadow's answer */
};

/* A paired record of the file, for matching responses to requests. */
struct replay_pair {
	uint64_t pair;			/* its pair id */
	uint64_t seq;			/* its place among the file's records */
	uint64_t req;			/* a request: its number among the requests */
	uint64_t off;			/* a response: its file offset */
	bool response;
};

/* replay.c */
int replay_main(int argc, char **argv);
int replay_target_connect(struct replay *rp, int i);
int replay_write_all(int fd, const void *buf, size_t len, bool more);
void replay_raw_finish(int fd);

/* diff/replay_diff.c */
int replay_pairs_match(struct replay *rp, struct replay_pair *e, size_t n);
void replay_diff_one(struct replay *rp, int i, const struct copyrec *r,
		     uint64_t recno, uint64_t roff);
void replay_diff_report(struct replay *rp);

#endif /* COPY_REPLAY_H */
