/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * uplink_pick.h - which admin gets the next heartbeat post: the balancing
 * policy named by --admin-policy (default least_active) over the --admin
 * URLs, fed by the sender's own measure of each admin (posts in flight,
 * their latency, timeouts), with a down mark and backoff for an admin
 * that failed or hung (docs/EXTENSIONS.md, "The admin policy").
 */
#ifndef SDS_UPLINK_PICK_H
#define SDS_UPLINK_PICK_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "../../libsds/sds_ext.h"

#define UPLINK_POLICY_DEFAULT	"least_active"
#define UPLINK_BACKOFF_MIN_MS	60000	/* a first failure: down a minute */
#define UPLINK_BACKOFF_MAX_MS	600000	/* doubling up to ten minutes */
#define UPLINK_LAT_SHIFT	2	/* latency: mean of weight 1/4 for the newest */

struct uplink;

/* What the sender knows of one admin (the sender writes, stats read). */
struct uplink_admin {
	uint64_t in_flight;	/* posts to it in progress */
	uint64_t latency_ns;	/* recent mean time of a post (timeouts included); 0: none yet */
	uint64_t down_until_ms;	/* monotonic: skipped until then */
	uint64_t backoff_ms;	/* the last down mark's length; 0: answering */
	bool timed_out;		/* its last post timed out: a heartbeat it holds */
	uint64_t posts;		/* posts to it */
	uint64_t stored;	/* of which it stored (HTTP 200) */
	uint64_t failures;	/* of which failed (refused, timed out, not 200) */
};

struct uplink_pick {
	const struct sds_ext_balancer *b;	/* the policy */
	void *state;				/* its state over the URLs */
	char policy[64];			/* its name */
	struct uplink_admin adm[8];		/* per URL, as u->urls */
	struct sds_ext_load load[8];		/* the view each pick gets */
};

/*
 * Set @u's policy @policy (NULL: the default) over its URLs: 0, or -1 with
 * @err (an unknown policy, listing the known ones; a URL given twice).
 */
int uplink_pick__init(struct uplink *u, const char *policy, char *err,
		      size_t errlen);
void uplink_pick__free(struct uplink *u);

/*
 * The URL to post to next, not in @tried (u->nurls flags); -1 when every
 * URL was tried.  A URL that is down is picked only when every untried
 * one is (the one back soonest): a heartbeat is always tried everywhere.
 */
int uplink_pick__next(struct uplink *u, const bool *tried);

/* A post to URL @i starts; it ended (@stored: HTTP 200) after @took_ms. */
void uplink_pick__begin(struct uplink *u, int i);
void uplink_pick__end(struct uplink *u, int i, bool stored, bool timed_out,
		      uint64_t took_ms);
/*
 * The same for a sync's read (uplink_send.c): its time and a failure are
 * measured (a hung admin is as hung for a read), but it is no post:
 * "posts" and "stored" count heartbeats only.
 */
void uplink_pick__read_begin(struct uplink *u, int i);
void uplink_pick__read_end(struct uplink *u, int i, bool ok, bool timed_out,
			   uint64_t took_ms);

/* "admin_policy" and "admins": [{url, posts, stored, failures, ...}] into @o. */
void uplink_pick__json(struct uplink *u, json_t *o);

#endif /* SDS_UPLINK_PICK_H */
