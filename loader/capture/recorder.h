/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * recorder.h - the loader's `sds-bpf record` clients (recorder.c), a sink
 * of capture's records like the copy servers' stream (copyout.h).
 *
 * Calls go one way, capture -> recorder: capture owns the ring, the
 * points and their rates, and hands the recorders their records; a
 * recorder knows neither the points nor the rates, and says through its
 * return values when what it wants changed (capture then re-applies the
 * rates), so that it never calls back into capture.
 */
#ifndef SDS_RECORDER_H
#define SDS_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_t;
struct pending;

#define CAPTURE_RECORDERS	8		/* `record` clients at once */
#define RECORDER_BUF		(1u << 20)	/* bytes queued per recorder */
#define RECORDER_END_NS		2000000000ULL	/* the end's bytes go within this */

/* One `sds-bpf record` client (recorder.c). */
struct recorder {
	int fd;				/* its control connection; -1: slot free */
	uint8_t *want;			/* SDS_MAX_POINTS flags: the points it records */
	uint8_t *buf;			/* RECORDER_BUF bytes to send */
	size_t head;			/* first unsent byte */
	size_t len;			/* bytes queued from @head */
	uint64_t records;		/* records queued for it */
	uint64_t bytes;			/* ... their bytes */
	uint64_t dropped;		/* records that did not fit @buf */
	bool ending;			/* the client asked to stop: the end is queued */
	uint64_t end_due_ns;		/* ... and must be sent by then */
};

/* Mark @rec (CAPTURE_RECORDERS of them) free; close every one (at exit). */
void recorder__init_all(struct recorder *rec);
void recorder__close_all(struct recorder *rec);

/*
 * A free recorder of @rec with its buffers, for a `record` request: NULL
 * with the error reply in *@err (all taken, out of memory).  Give it
 * back with recorder__drop() if the request fails after.
 */
struct recorder *recorder__new(struct recorder *rec, char **err);
void recorder__drop(struct recorder *r);
/*
 * Start @r (its r->want filled) on the connection of @p, answering
 * {"recording": @names} (stolen) first: the connection is the
 * recorder's then (p->fd -1).  NULL, or the error reply (@r dropped).
 */
char *recorder__start(struct recorder *r, struct pending *p,
		      struct json_t *names);

/* Does some recorder of @rec record point @id (a recorded point captures)? */
bool recorder__wants(const struct recorder *rec, int id);
/* A record for every recorder of @rec that wants point @id. */
void recorder__push(struct recorder *rec, uint32_t id, const void *buf,
		    size_t len);
/* poll: @r's fd and events. */
short recorder__events(const struct recorder *r, int *fd);
/* @r's fd is ready: true when what it records changed (it ended or went). */
bool recorder__event(struct recorder *r, short revents);

#endif /* SDS_RECORDER_H */
