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
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <jansson.h>
#include "capture/capture.h"
#include "copyrec.h"
#include "daemon/loader.h"

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

void recorder__close_all(struct loader *l)
{
	int i;

	if (!l->capture)
		return;
	for (i = 0; i < CAPTURE_RECORDERS; i++)
		rec_close(&l->capture->rec[i]);
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

/* Parse the points of the request into @want; NULL, or the error reply. */
static char *rec_points(struct loader *l, const char *args, uint8_t *want,
			json_t *names)
{
	char name[SDS_NAME_MAX + 1];
	const char *p = args;
	int id, n = 0;

	while (*p) {
		size_t len = strcspn(p, " ");

		if (!len) {
			p++;
			continue;
		}
		if (len > SDS_NAME_MAX)
			return conn__error("record: bad point name '%.64s...'", p);
		memcpy(name, p, len);
		name[len] = '\0';
		id = probes__find(&l->probes, name);
		if (id < 0)
			return conn__error("record: no point '%s' in app '%s'", name, l->app);
		if (!capture__able(l, id))
			return conn__error("record: point '%s' cannot be copied: give it :copy=BUF,LEN",
					   name);
		want[id] = 1;
		json_array_append_new(names, json_string(name));
		n++;
		p += len;
	}
	if (!n)
		return conn__error("record: name the points to record");
	return NULL;
}

char *recorder__request(struct loader *l, struct pending *c, const char *args)
{
	struct capture *cap = l->capture;
	struct recorder *r = NULL;
	json_t *names;
	char *err, *line;
	int i;

	if (c->uid != 0)
		return conn__error("record: permission denied: recording requests needs root (they may hold anything)");
	if (!cap)
		return conn__error("record: traffic copy is off in this loader (no :copy= point, no libsds copy site)");
	for (i = 0; i < CAPTURE_RECORDERS && !r; i++)
		if (cap->rec[i].fd < 0)
			r = &cap->rec[i];
	if (!r)
		return conn__error("record: %d recorders run already", CAPTURE_RECORDERS);
	r->want = calloc(SDS_MAX_POINTS, 1);
	r->buf = malloc(RECORDER_BUF);
	names = json_array();
	if (!r->want || !r->buf || !names) {
		json_decref(names);
		rec_close(r);
		return conn__error("record: out of memory");
	}
	err = rec_points(l, args, r->want, names);
	if (err) {
		json_decref(names);
		rec_close(r);
		return err;
	}
	line = conn__reply(json_pack("{s:o}", "recording", names));
	if (!line || !rec_put(r, line, strlen(line), 0) || !rec_put(r, "\n", 1, 0)) {
		free(line);
		rec_close(r);
		return conn__error("record: out of memory");
	}
	free(line);
	/* The connection is the recorder's now. */
	r->fd = c->fd;
	conn_io__free(&c->io);
	c->fd = -1;
	c->ready = false;
	capture__tick(l);	/* its points capture from now on */
	return NULL;
}

bool recorder__wants(const struct loader *l, int id)
{
	int i;

	for (i = 0; i < CAPTURE_RECORDERS; i++) {
		const struct recorder *r = &l->capture->rec[i];

		if (r->fd >= 0 && !r->ending && r->want[id])
			return true;
	}
	return false;
}

void recorder__push(struct loader *l, uint32_t id, const void *rec, size_t len)
{
	int i;

	for (i = 0; i < CAPTURE_RECORDERS; i++) {
		struct recorder *r = &l->capture->rec[i];

		if (r->fd < 0 || r->ending || !r->want[id])
			continue;
		if (rec_put(r, rec, len, RECORDER_END_ROOM)) {
			r->records++;
			r->bytes += len;
		} else {
			r->dropped++;
		}
	}
}

short recorder__events(const struct loader *l, int i, int *fd)
{
	const struct recorder *r;

	*fd = -1;
	if (!l->capture)
		return 0;
	r = &l->capture->rec[i];
	*fd = r->fd;
	if (r->fd < 0)
		return 0;
	return (r->len ? POLLOUT : 0) | (r->ending ? 0 : POLLIN);
}

/* The client is done: queue the end marker and the counts. */
static void rec_end(struct loader *l, struct recorder *r)
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
	capture__tick(l);	/* its points may stop capturing */
}

void recorder__event(struct loader *l, int i, short revents)
{
	struct recorder *r = &l->capture->rec[i];
	char b[512];
	ssize_t n;

	if (r->fd < 0)
		return;
	if (!r->ending && (revents & (POLLIN | POLLHUP | POLLERR))) {
		n = recv(r->fd, b, sizeof(b), MSG_DONTWAIT);
		if (n == 0)
			rec_end(l, r);
		else if (n < 0 && errno != EAGAIN)
			goto gone;
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
	return;
gone:
	if (!r->ending) {
		rec_close(r);
		capture__tick(l);
		return;
	}
	rec_close(r);
}
