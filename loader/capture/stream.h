/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * stream.h - one non-blocking TCP stream of copy records to one sds-copy
 * server: the "SDSc" hello, then records back to back from a bounded
 * queue of its own.  copyout.h decides which records a stream carries;
 * a stream only connects, sends, and says when it failed.
 */
#ifndef SDS_CAPTURE_STREAM_H
#define SDS_CAPTURE_STREAM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include "heartbeat/heartbeat.h"
#include "tokfile.h"

/* One server, resolved once when the list is set. */
struct copyout_addr {
	char text[SDS_HB_ADDR_MAX + 1];		/* "HOST:PORT" as given */
	struct sockaddr_storage sa;		/* resolved */
	socklen_t salen;			/* bytes of @sa */
};

/* A record queued: which point (for "sent"), its route key, its bytes. */
struct copyout_ent {
	uint32_t point;		/* point id */
	uint32_t key;		/* the point name's hash (copyout.c routes by it) */
	uint32_t len;		/* encoded bytes */
};

/* The stream to one server. */
struct copy_stream {
	const struct copyout_addr *addr;	/* the server (the set's) */
	int fd;				/* the connection; -1: none */
	bool connected;			/* connect() completed */
	bool down;			/* failed: routed around until it connects again */
	uint64_t connect_due_ns;	/* a pending connect fails at this time */
	uint64_t retry_ns;		/* no connect before this time */
	uint64_t backoff_ns;		/* the next failure's wait */
	uint64_t stalled_ns;		/* the socket took nothing since (0: it takes) */
	int hello_left;			/* hello bytes not sent yet on @fd */
	uint8_t *buf;			/* @cap bytes: queued records */
	size_t cap;			/* bytes @buf holds */
	size_t head;			/* first unsent byte */
	size_t len;			/* bytes queued from @head */
	struct copyout_ent *q;		/* @qcap records in @buf, in order */
	size_t qcap;			/* entries @q holds */
	size_t qh;			/* first queued record */
	size_t qn;			/* records queued */
	size_t partial;			/* bytes of q[qh] already sent */
	uint64_t connects;		/* connections made */
	uint64_t failures;		/* connects or connections that failed */
	uint64_t sent;			/* records written whole */
};

/* A connect that takes longer failed; a socket that takes nothing this long is dead. */
#define COPY_STREAM_CONNECT_NS	5000000000ULL
#define COPY_STREAM_STALL_NS	1000000000ULL
#define COPY_STREAM_BACKOFF_MIN_NS	100000000ULL	/* first retry after a failure */
#define COPY_STREAM_BACKOFF_MAX_NS	2000000000ULL	/* back-off doubles up to this */

/* A stream to @addr with a queue of @cap bytes, @qcap records; -1: no memory. */
int copy_stream__init(struct copy_stream *s, const struct copyout_addr *addr,
		      size_t cap, size_t qcap);
void copy_stream__free(struct copy_stream *s);

/* Queue one record; false when it does not fit. */
bool copy_stream__push(struct copy_stream *s, uint32_t point, uint32_t key,
		       const void *rec, size_t len);

/* The oldest queued record not begun on the wire; false: none. */
bool copy_stream__pop(struct copy_stream *s, struct copyout_ent *e,
		      const uint8_t **rec);

/* The poll entry: fd and events (fd -1: nothing to wait for). */
short copy_stream__events(const struct copy_stream *s, int *fd);

/*
 * Ready (@revents) or time passed: connect when there is something to
 * send or a retry is due (@probe: even with nothing queued, to find a
 * down server back), send what the socket takes.  @sent[point] += records
 * written whole.  Returns -1 when the stream failed now: the record it
 * was inside is counted in @lost, the stream is down with a back-off,
 * and its queue stays for the caller to route elsewhere.
 */
int copy_stream__run(struct copy_stream *s, short revents, uint64_t now_ns,
		     const char *token, size_t token_len, bool probe,
		     uint64_t *sent, uint64_t *lost);

#endif /* SDS_CAPTURE_STREAM_H */
