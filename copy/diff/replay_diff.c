// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * replay_diff.c - `sds-copy replay --diff`: each response of the file
 * paired with its request, each request's answer read from the target
 * and compared with the recorded response (diff.c), the outcome tallied
 * per point (tally.c) and reported.  replay.c sends and paces.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "frame.h"
#include "replay.h"

static int pair_cmp(const void *a, const void *b)
{
	const struct replay_pair *x = a, *y = b;

	if (x->pair != y->pair)
		return x->pair < y->pair ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * --diff: each response to the request of its pair id it follows (the
 * latest one not answered yet; a thread's requests of one id are one at a
 * time).  Sorted by (pair, file order), then one walk per id.
 */
int replay_pairs_match(struct replay *rp, struct replay_pair *e, size_t n)
{
	size_t i, j, open;

	rp->resp_off = calloc(rp->requests ? rp->requests : 1, sizeof(*rp->resp_off));
	if (!rp->resp_off)
		return -1;
	if (n)
		qsort(e, n, sizeof(*e), pair_cmp);
	for (i = 0; i < n; i = j) {
		for (open = n, j = i; j < n && e[j].pair == e[i].pair; j++) {
			if (!e[j].response)
				open = j;
			else if (open < n && !rp->resp_off[e[open].req])
				rp->resp_off[e[open].req] = e[j].off;
		}
	}
	return 0;
}

/* The recorded response at file offset @off, decoded into @r. */
static int recorded_read(struct replay *rp, uint64_t off, struct copyrec *r)
{
	const char *why;
	size_t at;
	ssize_t n;

	n = pread(fileno(rp->f), rp->rbuf, COPYREC_MAX_LEN, (off_t)off);
	if (n <= 0 || copyrec_decode(rp->rbuf, (size_t)n, r, &why, &at) <= 0)
		return -1;
	return 0;
}

/*
 * One answer into rp->abuf: an HTTP response (head and Content-Length
 * body; a body without length, or Connection: close, runs to the close)
 * when @http, else @want bytes.  The length, -1 on an error, -2 on the
 * --timeout.  @closed: the target closed (the connection is done).
 */
static ssize_t answer_read(struct replay *rp, int fd, bool http, size_t want,
			   bool *closed)
{
	struct copy_http_resp h;
	size_t len = 0, need = http ? 0 : want;
	bool to_close = false;
	ssize_t n;
	int rc;

	*closed = false;
	if (need > REPLAY_ANSWER_MAX)
		need = REPLAY_ANSWER_MAX;
	for (;;) {
		if (need && len >= need)
			return len;
		if (!http && !need)
			return 0;
		if (len == REPLAY_ANSWER_MAX)
			return -1;		/* longer than any recorded response */
		n = recv(fd, rp->abuf + len, REPLAY_ANSWER_MAX - len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? -2 : -1;
		if (n == 0) {
			*closed = true;
			return to_close ? (ssize_t)len : -1;
		}
		len += n;
		if (!http || need || to_close)
			continue;
		rc = frame_http_resp_parse((const char *)rp->abuf, len, &h);
		if (rc < 0)
			return -1;
		if (rc == 0)
			continue;
		if (h.close && !h.body_len)
			to_close = true;
		else if (h.head_len + h.body_len > REPLAY_ANSWER_MAX)
			return -1;
		else
			need = h.head_len + h.body_len;
		if (h.close)
			*closed = true;	/* whatever follows, the connection ends */
	}
}

/*
 * --diff: send request @r (record @recno) to target @i, read the answer,
 * compare it with the recorded response at @roff (0: none recorded, the
 * answer is read and not compared).  A failed or late answer leaves the
 * connection out of step: it is closed and opened again for the next.
 */
void replay_diff_one(struct replay *rp, int i, const struct copyrec *r,
		     uint64_t recno, uint64_t roff)
{
	char head[COPY_ADDR_MAX * 4], colour[2 * SDS_NAME_MAX + 2];
	struct diff_result res;
	struct copyrec want;
	bool http, closed = false;
	ssize_t n = -1;
	enum tally_outcome out;
	int hl;

	if (roff && recorded_read(rp, roff, &want))
		roff = 0;
	if (!roff)
		rp->unpaired++;
	http = rp->framing == COPY_FRAMING_HTTP ||
	       (roff && want.cap_len >= 5 && !memcmp(want.data, "HTTP/", 5));
	if (rp->fds[i] < 0 && replay_target_connect(rp, i))
		goto failed;
	if (rp->framing == COPY_FRAMING_HTTP) {
		snprintf(colour, sizeof(colour), "%s/%s", r->app, r->point);
		hl = frame_http_head(head, sizeof(head), rp->to[i].text, colour, r->cap_len);
		if (hl < 0 || replay_write_all(rp->fds[i], head, hl, true))
			goto failed;
	}
	if (replay_write_all(rp->fds[i], r->data, r->cap_len, false))
		goto failed;
	rp->sent++;
	/*
	 * Without a recorded response, a raw answer has no known end: the
	 * connection is finished (write side shut, the answer drained to the
	 * target's close, as at the end of a raw replay) so that it is never
	 * taken for the next request's.
	 */
	if (!roff && !http) {
		replay_raw_finish(rp->fds[i]);
		close(rp->fds[i]);
		rp->fds[i] = -1;
		return;
	}
	n = answer_read(rp, rp->fds[i], http, roff ? want.cap_len : 0, &closed);
	/*
	 * A recorded response cut at copy_max is compared with as many of
	 * the answer's first bytes; the rest of a raw answer is unread, so
	 * the connection is not used again.
	 */
	if (n >= 0 && roff && (want.flags & COPYREC_F_TRUNCATED)) {
		if ((size_t)n > want.cap_len)
			n = want.cap_len;
		closed = closed || !http;
	}
failed:
	if (n < 0 || closed) {
		if (rp->fds[i] >= 0)
			close(rp->fds[i]);
		rp->fds[i] = -1;
	}
	if (!roff)
		return;
	if (n == -2)
		out = TALLY_TIMEOUT;
	else if (n < 0)
		out = TALLY_ERROR;
	else
		out = diff_compare(&rp->rules, want.data, want.cap_len,
				   rp->abuf, (size_t)n, &res) ? TALLY_DIFFERENT : TALLY_SAME;
	tally_add(&rp->tally, r->app, r->point, out, recno, &res);
}

void replay_diff_report(struct replay *rp)
{
	const struct tally_count *t = &rp->tally.total;
	json_t *doc;

	if (rp->json) {
		doc = tally_count_json(t);
		json_object_set_new(doc, "sent", json_integer((json_int_t)rp->sent));
		json_object_set_new(doc, "unpaired", json_integer((json_int_t)rp->unpaired));
		json_object_set_new(doc, "points", tally_points_json(&rp->tally, true));
		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(doc);
		return;
	}
	printf("%" PRIu64 " pairs: %" PRIu64 " same, %" PRIu64 " different, %" PRIu64
	       " shadow errors, %" PRIu64 " timeouts (%" PRIu64 " requests sent, %" PRIu64
	       " without a recorded response)\n", t->pairs, t->same, t->different,
	       t->shadow_errors, t->timeouts, rp->sent, rp->unpaired);
	tally_print_points(&rp->tally, stdout);
}
