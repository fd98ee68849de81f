/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * copyout.h - where captured requests go (docs/COPY.md, "Capture"): the
 * sds-copy servers (`attach --copy-to`, or the admin's plans) over one
 * non-blocking TCP stream, and recorders (`sds-bpf record`) on their
 * control connections.  Nothing here ever waits: each sink has a bounded
 * buffer, and a record that does not fit is dropped and counted.
 */
#ifndef SDS_COPYOUT_H
#define SDS_COPYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include "heartbeat/heartbeat.h"
#include "tokfile.h"
#include "sds_types.h"

#define COPYOUT_BUF		(4u << 20)	/* bytes queued for the servers */
#define COPYOUT_QUEUE		65536		/* records queued for the servers */
#define COPYOUT_SERVERS		SDS_HB_COPY_SERVERS	/* failover list */
#define COPYOUT_BACKOFF_MIN_NS	100000000ULL	/* first retry after a failure */
#define COPYOUT_BACKOFF_MAX_NS	2000000000ULL	/* back-off doubles up to this */
#define COPYOUT_CONNECT_NS	5000000000ULL	/* a connect that takes longer failed */

/* One server of the list, resolved once when the list is set. */
struct copyout_addr {
	char text[SDS_HB_ADDR_MAX + 1];		/* "HOST:PORT" as given */
	struct sockaddr_storage sa;		/* resolved */
	socklen_t salen;			/* bytes of @sa */
};

/* A record queued: which point (for "sent"), how many bytes. */
struct copyout_ent {
	uint32_t point;		/* point id */
	uint32_t len;		/* encoded bytes */
};

/* The stream to the sds-copy servers. */
struct copyout {
	struct copyout_addr addrs[COPYOUT_SERVERS];	/* failover order */
	int naddrs;			/* servers in @addrs; 0: nowhere to send */
	int cur;			/* the server tried or connected */
	int first;			/* where this host starts in @addrs */
	int fd;				/* the connection; -1: none */
	bool connected;			/* connect() completed */
	uint64_t connect_due_ns;	/* a pending connect fails at this time */
	uint64_t retry_ns;		/* no connect before this time */
	uint64_t backoff_ns;		/* the next failure's wait */
	int hello_left;			/* hello bytes not sent yet on @fd */
	char token[SDS_TOKEN_MAX + 1];	/* --copy-token-file's; "": a version 1 hello */
	size_t token_len;		/* strlen(token) */
	uint8_t *buf;			/* COPYOUT_BUF bytes: queued records */
	size_t head;			/* first unsent byte */
	size_t len;			/* bytes queued from @head */
	struct copyout_ent *q;		/* COPYOUT_QUEUE records in @buf, in order */
	size_t qh;			/* first queued record */
	size_t qn;			/* records queued */
	size_t partial;			/* bytes of q[qh] already sent */
	uint64_t connects;		/* connections made */
	uint64_t failures;		/* connects or connections that failed */
	/* The admin's list as last applied: parsed again only when it changes. */
	char admin_list[COPYOUT_SERVERS * (SDS_HB_ADDR_MAX + 1)];
	bool admin_set;			/* @admin_list was applied */
	uint64_t refused;		/* admin's servers refused: not numeric */
};

int copyout__init(struct copyout *o);
void copyout__free(struct copyout *o);

/*
 * Parse "HOST:PORT[,HOST:PORT...]" (at most COPYOUT_SERVERS; [V6]:PORT)
 * into @addrs; -1 with a one-line message.  @numeric: addresses only, a
 * name is refused (never resolved: what runs on the loop must not wait
 * for a resolver); else names are resolved (--copy-to, before the loop).
 */
int copyout__parse(const char *list, bool numeric, struct copyout_addr *addrs,
		   int *n, char *err, size_t errlen);
/* One numeric "HOST:PORT" (the admin's servers); -1 with a one-line message. */
int copyout__parse_one(const char *s, struct copyout_addr *a, char *err,
		       size_t errlen);

/*
 * Use @addrs from now on (a plan's servers changed).  With @spread (the
 * admin's list) the first server tried is chosen by a stable hash of this
 * host's name (never the list's first: whoever came first would get every
 * loader), else it is the first (--copy-to, the operator's order); then
 * the others in order.  The connection stays when it goes to that server
 * already.
 */
void copyout__set(struct copyout *o, const struct copyout_addr *addrs, int n,
		  bool spread);

/*
 * Queue one encoded record of point @point; false (the caller counts a
 * drop) when it does not fit.
 */
bool copyout__push(struct copyout *o, uint32_t point, const void *rec,
		   size_t len);

/* The poll entry: fd and events (fd -1 when there is nothing to wait for). */
short copyout__events(const struct copyout *o, int *fd);

/*
 * The socket is ready (@revents), or time passed: connect, send, fail
 * over.  @sent[point] += records written whole; @lost[point] += records
 * cut by a failed connection.
 */
void copyout__run(struct copyout *o, short revents, uint64_t now_ns,
		  uint64_t *sent, uint64_t *lost);

#endif /* SDS_COPYOUT_H */
