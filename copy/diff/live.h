/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * live.h - a live copy plan's diff (`"diff": true`, docs/COPY.md "Live
 * diff"): the first copy of each paired request is compared with the
 * production response the loader streams after it, under the plan's
 * "ignore" rules, and the outcome tallied per point for the admin.
 *
 * The two sides arrive in either order: a request opens a pending entry
 * (keyed by the sender, the pair id and the point), the copy's answer and
 * the production response each fill their half, and the entry is judged
 * when both are in.  Entries are bounded (LIVE_PENDING_MAX) and live at
 * most LIVE_WAIT_MS: a request whose production response never came is
 * counted "unpaired", never "same".
 */
#ifndef COPY_DIFF_LIVE_H
#define COPY_DIFF_LIVE_H

#include <stdint.h>
#include <jansson.h>

#include "copyrec.h"
#include "diff.h"
#include "tally.h"

#define LIVE_PENDING_MAX	4096	/* requests waiting for their two sides */
#define LIVE_WAIT_MS		10000	/* ... at most this long */
#define LIVE_ANSWER_MAX		(COPYREC_PAYLOAD_MAX + 8192)	/* an answer kept */
#define LIVE_EXAMPLES		5	/* first differences kept per point and period */

struct copy_server;
struct copy_plan;
struct copy_plan_cfg;

/* A diff plan's state, carried across reloads by the plan's name. */
struct live_plan {
	struct diff_rules rules;	/* the plan's "ignore", compiled */
	struct tally total;		/* since the plan came (sds-copy stats) */
	struct tally cur;		/* since the last heartbeat was built */
	struct tally out;		/* in the heartbeat out, or not taken yet */
	uint64_t unpaired[3];		/* total, cur, out: no production response */
	uint64_t skipped[3];		/* ... compared nothing: no room, copy not sent */
};

/* Make or refresh @p->live for @p->cfg (its rules compiled again); -1: memory. */
int live_plan_set(struct copy_plan *p);
void live_plan_free(struct live_plan *lp);

int live_init(struct copy_server *s);
void live_free(struct copy_server *s);

/* A paired request of diff plan @p from sender @serial: its entry's id, 0: none. */
uint64_t live_open(struct copy_server *s, struct copy_plan *p, uint64_t serial,
		   const struct copyrec *r);
/* A response record from sender @serial. */
void live_response(struct copy_server *s, uint64_t serial, const struct copyrec *r);
/* Entry @id's copy was answered: @len bytes at @buf (taken, freed here). */
void live_answer(struct copy_server *s, uint64_t id, uint8_t *buf, size_t len);
/* ... or failed (TALLY_ERROR, TALLY_TIMEOUT), or was never sent (-1). */
void live_fail(struct copy_server *s, uint64_t id, int outcome);
/* Entries past LIVE_WAIT_MS judged as they stand (every tick). */
void live_tick(struct copy_server *s, uint64_t now_ms);

/*
 * The heartbeat's "diff" of plan @p: what it counted since the last
 * accepted heartbeat ({"unpaired", "points": {POINT: counts + examples}}),
 * or NULL when it is no diff plan.  live_hb_taken(): the admin has it.
 */
json_t *live_hb_json(struct copy_plan *p);
void live_hb_taken(struct copy_plan *p);
/* The totals for `sds-copy stats` (null when no diff plan). */
json_t *live_stats_json(const struct copy_plan *p);

#endif /* COPY_DIFF_LIVE_H */
