/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * copyout.h - where captured requests go (docs/COPY.md, "Capture"): the
 * sds-copy servers (`attach --copy-to`, or the admin's plans), one
 * non-blocking TCP stream to each (stream.h), and recorders (`sds-bpf
 * record`) on their control connections.  Nothing here ever waits: each sink has a bounded
 * buffer, and a record that does not fit is dropped and counted.
 */
#ifndef SDS_COPYOUT_H
#define SDS_COPYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include "capture/stream.h"
#include "heartbeat/heartbeat.h"
#include "tokfile.h"
#include "sds_types.h"

#define COPYOUT_BUF		(4u << 20)	/* bytes queued for the servers, in all */
#define COPYOUT_QUEUE		65536		/* records queued for the servers, in all */
#define COPYOUT_STREAM_MIN	(512u << 10)	/* bytes queued for one server, at least */
#define COPYOUT_SERVERS		SDS_HB_COPY_SERVERS	/* servers in one list */

/*
 * The streams to the sds-copy servers: one per server of the list, each
 * with its share of the queue.  A record goes to the stream its point's
 * name routes to (copyout.c), so one point's records keep their order.
 */
struct copyout {
	struct copyout_addr addrs[COPYOUT_SERVERS];	/* the list, in order */
	uint32_t addr_hash[COPYOUT_SERVERS];	/* FNV-1a of each "HOST:PORT" */
	int naddrs;			/* servers in @addrs; 0: nowhere to send */
	bool spread;			/* the admin's list: by point, over every live server */
	struct copy_stream s[COPYOUT_SERVERS];	/* one per server of @addrs */
	char token[SDS_TOKEN_MAX + 1];	/* --copy-token-file's; "": a version 1 hello */
	size_t token_len;		/* strlen(token) */
	uint64_t *lost;			/* SDS_MAX_POINTS: lost moving queues, not yet told */
	bool lost_any;			/* some of @lost is not 0 */
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
 * Use @addrs from now on (a plan's servers changed; the same list again
 * changes nothing).  With @spread (the admin's list) each point's records
 * go to the live server its name ranks first (rendezvous hashing: every
 * host sends one point to the same server, and a server that dies moves
 * only its own points); else (--copy-to, the operator's failover order)
 * to the first live server of the list.  Records queued for the old list
 * move to the new one.
 */
void copyout__set(struct copyout *o, const struct copyout_addr *addrs, int n,
		  bool spread);

/*
 * Queue one encoded record of point @point, whose name hashes to @key
 * (copyout__key); false (the caller counts a drop) when it does not fit.
 */
bool copyout__push(struct copyout *o, uint32_t point, uint32_t key,
		   const void *rec, size_t len);

/* The route key of point @name. */
uint32_t copyout__key(const char *name);

/* Stream @i's poll entry: fd and events (fd -1: nothing to wait for). */
short copyout__events(const struct copyout *o, int i, int *fd);

/*
 * The sockets are ready (@revents[i] for stream i), or time passed:
 * connect, send, fail over.  @sent[point] += records written whole;
 * @lost[point] += records cut by a failed connection or with nowhere to go.
 */
void copyout__run(struct copyout *o, const short *revents, uint64_t now_ns,
		  uint64_t *sent, uint64_t *lost);

#endif /* SDS_COPYOUT_H */
