/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds-admin: the pieces main.c wires together.
 *   http.c  the libmicrohttpd server: auth before the body, size limit,
 *           static files, /healthz, /metrics, dispatch to the API
 *   api.c   the REST routes under /api/v1/ (admin/API.md)
 *   stats.c aggregation of statistics over a range
 *   watch.c the push channel: change sequences, suspended watches
 *   store*  storage
 */
#ifndef SDS_ADMIN_H
#define SDS_ADMIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "auth.h"
#include "cluster.h"
#include "store/store.h"

#define ADMIN_MAX_BODY		(1 << 20)	/* 1 MiB; larger bodies get 413 */
#define ADMIN_TEXT_MAX		4096		/* descriptions, comments: bytes */
#define ADMIN_TOKEN_MAX		SDS_TOKEN_MAX
#define ADMIN_CONNS_PER_CLIENT	64		/* --max-conns-per-client's default */
#define ADMIN_COPY_MAX_AMP	20		/* --copy-max-amplification's default */

struct admin_metrics {
	atomic_ullong requests[6];		/* by status class: [2] = 2xx ... */
	atomic_ullong heartbeats;		/* stored */
	atomic_ullong heartbeat_duplicates;	/* (host, period) seen before */
	atomic_ullong heartbeat_rejected;	/* 4xx */
	atomic_ullong heartbeat_points;		/* points stored */
	atomic_ullong heartbeat_usec;		/* time spent handling heartbeats */
	atomic_ullong unauthorized;		/* 401s */
	atomic_ullong forbidden;		/* 403s: a token of another role */
	atomic_ullong misdirected;		/* 421s: a Host not allowed */
};

struct admin {
	struct store *store;		/* the one --db names, open for the admin's life */
	struct cluster *cluster;	/* the cluster limits' allocator (cluster.h) */
	struct admin_token tokens[ADMIN_TOKENS_MAX];	/* every role's, in option order */
	int ntokens;			/* entries of @tokens */
	char *allow_host[ADMIN_HOSTS_MAX];	/* Host names answered, lowercase */
	int nallow_host;		/* entries of @allow_host */
	unsigned int port;		/* the listening port, for Host's ":PORT" */
	unsigned int conns_per_client;	/* --max-conns-per-client, 0: no cap */
	bool protect_reads;		/* GETs under /api/ need a token too */
	const char *web_dir;		/* the dashboard's files */
	const char *js_dir;		/* Debian's /usr/share/javascript */
	size_t max_body;		/* a longer request body is refused (413): ADMIN_MAX_BODY */
	int copy_max_amp;		/* --copy-max-amplification: a plan's amplification at most */
	int64_t started;		/* Unix seconds at start, for /metrics */
	struct watch *watch;		/* the push channel (watch.h) */
	atomic_int inflight;		/* requests begun and not completed */
	struct admin_metrics m;		/* the counters /metrics reports */
};

/* One API request, body complete. */
struct api_req {
	const char *method;		/* "GET", "POST", ... */
	const char *path;		/* under /api/v1/, no leading '/' */
	const char *body;		/* the request body, NULL if none; not NUL-terminated */
	size_t len;			/* its length */
	void *conn;			/* struct MHD_Connection *, for query args */
	const struct admin_token *tok;	/* the token presented, NULL if none matched */
};

/* What the API answers: status and a JSON body (owned). */
struct api_resp {
	int status;			/* the HTTP status */
	json_t *body;			/* the answer, NULL for none */
	const char *allow;		/* for 405 */
	int retry_after;		/* seconds for a Retry-After header, 0: none */
};

void api_handle(struct admin *ad, const struct api_req *rq, struct api_resp *rs);

/* Query argument @key of the request, or NULL. */
const char *http_query(void *conn, const char *key);

struct watch;
struct MHD_Daemon;
/* Start serving on the listening socket @fd with @threads threads. */
struct MHD_Daemon *http_start(struct admin *ad, int fd, unsigned threads, char *err,
			      size_t errlen);
/* Stop accepting, let requests in flight finish (at most @wait_ms), stop. */
void http_stop(struct admin *ad, struct MHD_Daemon *d, int wait_ms);

#endif /* SDS_ADMIN_H */
