// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * recorder.c - the loader's side of `sds-bpf record` (record.c is the
 * client).  The request "record POINT..." (root only: captured requests
 * may hold anything, passwords too) takes the connection over: the loader
 * answers one JSON line, {"recording": [POINT...]}, then streams the
 * points' copy records (common/copyrec.h) back to back.  The client ends
 * it by shutting down its side; the loader then sends the end -- a
 * 20-byte record header of zeros (app_len 0: no record has it) and one
 * JSON line {"records", "bytes", "dropped"} -- and closes.  Each
 * recorder has a bounded buffer: a record that does not fit is dropped
 * and counted, never waited for.
 *
 * Calls go one way, capture -> recorder (recorder.h): capture checks a
 * request's points and re-applies the rates when a recorder says what it
 * records changed; this file only keeps the clients and their bytes.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <jansson.h>
#include "capture/recorder.h"
#include "copyrec.h"
#include "publish/flags.h"
#include "sds_types.h"
#include "serve/serve.h"

#define RECORDER_END_ROOM	256	/* kept free for the end */

static void rec_close(struct recorder *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r->want);
	free(r->buf);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

void recorder__init_all(struct recorder *rec)
{
	int i;

	for (i = 0; i < CAPTURE_RECORDERS; i++)
		rec[i].fd = -1;
}

void recorder__close_all(struct recorder *rec)
{
	int i;

	for (i = 0; i < CAPTURE_RECORDERS; i++)
		rec_close(&rec[i]);
}

static bool rec_put(struct recorder *r, const void *b, size_t n, size_t room)
{
	if (r->len + n > RECORDER_BUF - room)
		return false;
	if (r->head + r->len + n > RECORDER_BUF) {
		memmove(r->buf, r->buf + r->head, r->len);
		r->head = 0;
	}
	memcpy(r->buf + r->head + r->len, b, n);
	r->len += n;
	return true;
}

struct recorder *recorder__new(struct recorder *rec, char **err)
{
	struct recorder *r = NULL;
	int i;

	for (i = 0; i < CAPTURE_RECORDERS && !r; i++)
		if (rec[i].fd < 0)
			r = &rec[i];
	if (!r) {
		*err = conn_io_error("record: %d recorders run already", CAPTURE_RECORDERS);
		return NULL;
	}
	r->want = calloc(SDS_MAX_POINTS, 1);
	r->buf = malloc(RECORDER_BUF);
	if (!r->want || !r->buf) {
		rec_close(r);
		*err = conn_io_error("record: out of memory");
		return NULL;
	}
	return r;
}

void recorder__drop(struct recorder *r)
{
	rec_close(r);
}

char *recorder__start(struct recorder *r, struct pending *p, json_t *names)
{
	char *line = conn_io_reply(json_pack("{s:o}", "recording", names));

	if (!line || !rec_put(r, line, strlen(line), 0) || !rec_put(r, "\n", 1, 0)) {
		free(line);
		rec_close(r);
		return conn_io_error("record: out of memory");
	}
	free(line);
	/* The connection is the recorder's now. */
	r->fd = p->fd;
	conn_io__free(&p->io);
	p->fd = -1;
	p->ready = false;
	return NULL;
}

bool recorder__wants(const struct recorder *rec, int id)
{
	int i;

	for (i = 0; i < CAPTURE_RECORDERS; i++) {
		const struct recorder *r = &rec[i];

		if (r->fd >= 0 && !r->ending && r->want[id])
			return true;
	}
	return false;
}

void recorder__push(struct recorder *rec, uint32_t id, const void *buf,
		    size_t len)
{
	int i;

	for (i = 0; i < CAPTURE_RECORDERS; i++) {
		struct recorder *r = &rec[i];

		if (r->fd < 0 || r->ending || !r->want[id])
			continue;
		if (rec_put(r, buf, len, RECORDER_END_ROOM)) {
			r->records++;
			r->bytes += len;
		} else {
			r->dropped++;
		}
	}
}

short recorder__events(const struct recorder *r, int *fd)
{
	*fd = r->fd;
	if (r->fd < 0)
		return 0;
	return (r->len ? POLLOUT : 0) | (r->ending ? 0 : POLLIN);
}

/* The client is done: queue the end marker and the counts. */
static void rec_end(struct recorder *r)
{
	uint8_t zero[COPYREC_HDR_LEN] = { 0 };
	char line[160];

	r->ending = true;
	r->end_due_ns = flags_now_ns() + RECORDER_END_NS;
	snprintf(line, sizeof(line),
		 "{\"records\":%llu,\"bytes\":%llu,\"dropped\":%llu}\n",
		 (unsigned long long)r->records, (unsigned long long)r->bytes,
		 (unsigned long long)r->dropped);
	rec_put(r, zero, sizeof(zero), 0);
	rec_put(r, line, strlen(line), 0);
}

bool recorder__event(struct recorder *r, short revents)
{
	bool changed = false;
	char b[512];
	ssize_t n;

	if (r->fd < 0)
		return false;
	if (!r->ending && (revents & (POLLIN | POLLHUP | POLLERR))) {
		n = recv(r->fd, b, sizeof(b), MSG_DONTWAIT);
		if (n == 0) {
			rec_end(r);
			changed = true;	/* its points may stop capturing */
		} else if (n < 0 && errno != EAGAIN) {
			goto gone;
		}
	}
	while (r->len) {
		n = send(r->fd, r->buf + r->head, r->len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN)
				break;
			goto gone;
		}
		r->head += n;
		r->len -= n;
	}
	if (!r->len)
		r->head = 0;
	if (r->ending && (!r->len || flags_now_ns() >= r->end_due_ns))
		goto gone;
	return changed;
gone:
	if (!r->ending) {
		rec_close(r);
		return true;
	}
	rec_close(r);
	return changed;
}
