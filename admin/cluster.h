/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * cluster.h - the admin's allocator of cluster-wide limits (docs/CLUSTER.md):
 * per (app, point) the hosts that report their use (POST /api/v1/shares,
 * every 500 ms), and the share of the app's cluster_visit_threshold,
 * cluster_token_rate and cluster_token_bucket each is granted.
 *
 * Two layers.  The arithmetic (cluster_fill, cluster_grant, ...) is pure:
 * numbers in, numbers out, so the unit test drives it exactly.  struct
 * cluster is the state of one admin, in memory, behind one mutex: every
 * call takes the time (CLOCK_MONOTONIC milliseconds) as an argument, for
 * the same reason.
 */
#ifndef SDS_ADMIN_CLUSTER_H
#define SDS_ADMIN_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "strategy.h"

#define CLUSTER_LEASE_MS	1500	/* a host not heard within this is not live */
#define CLUSTER_WINDOW_MS	10000	/* the visits window: grants are remembered this long */
#define CLUSTER_CACHE_MS	1000	/* an app's limits are read at most this often */
#define CLUSTER_MAX_HOSTS	4096	/* hosts of one (app, point) */
#define CLUSTER_MAX_ENTRIES	4096	/* (app, point) entries, and apps cached */
#define CLUSTER_MAX_RECORDS	262144	/* host records over every entry */
#define CLUSTER_MAX_POINTS	256	/* points of one report */
#define CLUSTER_HOST_LIVE_S	30	/* a strategy PUT wants a heartbeat this recent */

/* ---- the arithmetic --------------------------------------------------- */

/* What a host asking for @wants is allotted to fill: headroom to grow on. */
int64_t cluster_demand(int64_t wants);

/*
 * Max-min fair targets of @limit over @n demands (water-filling): hosts
 * demanding less than an equal share get their demand, the others split
 * what is left equally; when every demand fits, what no host demands is
 * split equally too.  The targets sum to @limit exactly: a remainder of
 * the division goes one each to the first hosts (by index) of those
 * sharing it.  @scratch holds @n ints.
 */
void cluster_fill(const int64_t *demand, int n, int64_t limit, int64_t *target,
		  int *scratch);

/*
 * The grant of a host whose fair target is @target, when the other live
 * hosts have @taken_others of @limit taken and it has @used passes done
 * in its window: min(target, limit - taken_others), never below @used
 * (those passes are done), never above @limit.
 */
int64_t cluster_grant(int64_t limit, int64_t target, int64_t taken_others,
		      int64_t used);

/* A host's bucket for a rate share @g of @rate: @bucket * g / rate, >= 1 if g > 0. */
int64_t cluster_bucket(int64_t bucket, int64_t rate, int64_t g);

/* ---- the state ---------------------------------------------------------- */

/* One point of a host's report, and the grants the report gets. */
struct cluster_point {
	const char *point;		/* its name (valid) */
	int64_t used;			/* passes in the host's window now */
	int64_t wants;			/* calls tried in its window */
	int64_t ack;			/* its visit share in force, -1: none yet */
	int64_t rate_wants;		/* calls tried in its last second */
	int64_t rate_ack;		/* its token-rate share in force, -1: none yet */
	/* out: SDS_OFF where the point has no such cluster limit now */
	int64_t visits;			/* its new visit share */
	int64_t token_rate;		/* its new token-rate share */
	int64_t token_bucket;		/* its new bucket */
};

struct cluster;

/* A new, empty allocator; NULL when out of memory. */
struct cluster *cluster_open(void);
void cluster_close(struct cluster *c);

/*
 * Were the cluster limits of app @g/@a read from the store within
 * CLUSTER_CACHE_MS of @now_ms?  When not, the caller reads the active
 * strategies and hands them to cluster__limits_set (or, the app gone,
 * cluster__limits_drop).
 */
bool cluster__limits_fresh(struct cluster *c, const char *g, const char *a,
			   int64_t now_ms);
/* The cluster fields of @ss as app @g/@a's limits, read at @now_ms; -1 when out of memory. */
int cluster__limits_set(struct cluster *c, const char *g, const char *a,
			const struct sds_strategies *ss, int64_t now_ms);
void cluster__limits_drop(struct cluster *c, const char *g, const char *a);

/*
 * Host @host of app @g/@a reports @n points at @now_ms: each point's
 * grants are written into it (SDS_OFF where the app's cached limits have
 * no cluster field for it), and *hosts gets the live hosts of the app
 * (the most over its reported points with a limit, at least 1).  All or
 * nothing: -ENOSPC (nothing recorded) when a bound would be passed,
 * -ENOMEM likewise.
 */
int cluster__report(struct cluster *c, const char *g, const char *a,
		    const char *host, int64_t now_ms, struct cluster_point *pts,
		    int n, int *hosts);

/*
 * The shares granted to app @g/@a's hosts, as `GET {A}/hosts` shows them:
 * {HOST: {POINT: {"visits", "token_rate" (-1: none), "live"}}}; NULL
 * when out of memory.
 */
struct json_t;
struct json_t *cluster__shares_json(struct cluster *c, const char *g, const char *a,
				    int64_t now_ms);

/* /metrics' lines: reports answered, live hosts over every point. */
void cluster__metrics_write(struct cluster *c, int64_t now_ms, FILE *f);

/* CLOCK_MONOTONIC in milliseconds: the clock the route hands in. */
int64_t cluster_now_ms(void);

#endif /* SDS_ADMIN_CLUSTER_H */
