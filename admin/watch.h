/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * watch.h - the push channel's admin side (issue 32): per-app change
 * sequences and the long-polls of GET /api/v1/watch that wait on them.
 *
 * A loader's watch names an app and the sequence it saw; the admin
 * answers at once when the app's sequence is another, else suspends the
 * connection (libmicrohttpd's suspend/resume: no thread per waiter) until
 * a write of the app bumps the sequence or the wait passes.  The answer
 * only wakes the loader: the state itself it reads by GET /api/v1/sync.
 */
#ifndef SDS_ADMIN_WATCH_H
#define SDS_ADMIN_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define WATCH_MAX_DEFAULT	10000	/* --max-watchers' default */
#define WATCH_MAX_LIMIT		1000000	/* --max-watchers at most */
#define WATCH_OTHER_CONNS	4096	/* connections beside the waiters */
#define WATCH_WAIT_DEFAULT	25	/* wait=, seconds */
#define WATCH_WAIT_MAX		55
#define WATCH_BURST		10	/* watch requests of one address at once */
#define WATCH_REFILL		2	/* ... and a second after */
#define WATCH_RETRY_FULL	10	/* Retry-After of a 503 over --max-watchers */
#define WATCH_RETRY_OFF		60	/* ... with --max-watchers 0 */
#define WATCH_RETRY_RATE	1	/* ... of a 429 */

struct admin;
struct admin_token;
struct api_resp;
struct MHD_Connection;
struct store;
struct watch;
struct watch_waiter;

/*
 * The open-files limit raised to fit @want watchers beside
 * WATCH_OTHER_CONNS connections (soft to hard); what fits, with a line in
 * @msg when less than @want ("" if all of it).
 */
unsigned watch_fit(unsigned want, char *msg, size_t msglen);

/* The table for at most @max waiters (0: every watch is 503); NULL if out of memory. */
struct watch *watch_new(unsigned max);
/* After watch__shutdown() and the store's listener stopped. */
void watch_free(struct watch *w);

/* The waiters it takes (--max-watchers after watch_fit()). */
unsigned watch__max(const struct watch *w);

/*
 * GET /api/v1/watch on @c (the token already checked for its role):
 * either an answer in @rs (true) or the connection suspended, @*wt its
 * waiter (false), to be given to watch__resumed() when libmicrohttpd
 * calls the handler again.
 */
bool watch__serve(struct watch *w, struct admin *ad, struct MHD_Connection *c,
		  const struct admin_token *tok, struct api_resp *rs,
		  struct watch_waiter **wt);

/* The answer of a waiter resumed; @wt is freed. */
void watch__resumed(struct watch *w, struct watch_waiter *wt, struct api_resp *rs);

/* A request that ends with its waiter never resumed (the daemon stopping). */
void watch__forget(struct watch *w, struct watch_waiter *wt);

/* App @g/@a changed: a new sequence, its waiters answered. */
void watch__bump(struct watch *w, const char *g, const char *a);

/*
 * After a 2xx write of @method on API path @path (under /api/v1/): when
 * it names an app (groups/G/apps/A[/...]), bump it and tell the other
 * admins of @st (store_ops.changed).
 */
void watch__wrote(struct watch *w, struct store *st, const char *method,
		  const char *path);

/* Listen for other admins' changes (store_ops.listen), if the store has them. */
int watch__listen(struct watch *w, struct store *st, char *err);

/* The store's listener broke (@why): counted, said once. */
void watch__listener_broke(struct watch *w, const char *why);

/* Every waiter answered with its own sequence, later watches at once. */
void watch__shutdown(struct watch *w);

/* The channel's lines of /metrics. */
void watch__metrics(struct watch *w, FILE *f);

#endif /* SDS_ADMIN_WATCH_H */
