/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Downgrade transitions (the counterpart of SDS's downgrade listener):
 * a bounded ring the `events` command reads by sequence number.
 */
#ifndef SDS_EVENTS_H
#define SDS_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "target/buildid.h"
#include "sds_types.h"

#define EVENTS_MAX	1024	/* kept; older ones are dropped */
#define EVENTS_DETAIL_MAX	160	/* a deploy event's sentence, cut past it */

/* What a deploy event says (docs/DEPLOY.md); 0: not a deploy event. */
enum deploy_event {
	DEPLOY_NONE,
	DEPLOY_BUILD,		/* a new build of TARGET is followed: old -> new */
	DEPLOY_UNRESOLVED,	/* a point's symbol is not in the new build */
	DEPLOY_REJECTED,	/* a file at TARGET's path is not followed */
	DEPLOY_RETIRED,		/* an old build's probes are detached */
};

struct event {
	uint64_t seq;			/* 1, 2, ... in the order they happened */
	uint64_t time_ms;		/* wall clock, Unix milliseconds */
	char point[SDS_NAME_MAX + 1];	/* the point */
	uint32_t reason;		/* enum sds_reason */
	bool started;			/* true: downgrading began (or suspended); false: it ended (resumed) */
	bool budget;			/* the budget's: suspended/resumed for overhead */
	bool at_call;			/* started: @time_ms is the crossing call's, not the tick's */
	enum deploy_event deploy;	/* a deploy's event (then @reason, @started unused) */
	char old_build[BUILDID_HEX_MAX + 1];	/* deploy: the build-id before, "" if none */
	char new_build[BUILDID_HEX_MAX + 1];	/* deploy: the build-id after, "" if none */
	char detail[EVENTS_DETAIL_MAX];	/* deploy, limit, key: what happened, one sentence */
	/* An adaptive point's concurrency limit moved by more than 10 % (then @reason, @started unused). */
	bool limit;
	int64_t limit_from, limit_to;
};

struct events {
	uint64_t next_seq;		/* seq of the next event */
	struct event ring[EVENTS_MAX];	/* event seq s at ring[s % EVENTS_MAX] */
};

void events__init(struct events *ev);
void events__add(struct events *ev, const char *point, uint32_t reason,
		 bool started);
/*
 * A downgrade of function point @point started at the call that crossed
 * its mark, at Unix @time_ms (loader/tick/exact_fn.c), not at the tick.
 */
void events__add_at_call(struct events *ev, const char *point, uint32_t reason,
			 uint64_t time_ms);
/*
 * A key of point @point blocked (@started) or lifted by its key limits
 * (reason "key", docs/KEYS.md "Limits"); @detail names it.
 */
void events__add_key(struct events *ev, const char *point, bool started,
		     const char *detail);
/* Point @point's probes were suspended (@suspended) or resumed: overhead. */
void events__add_budget(struct events *ev, const char *point, bool suspended);
/*
 * A deploy event (@point "" when it is TARGET's, not a point's) with the
 * build-ids before and after (NULL: none) and a sentence.
 */
void events__add_deploy(struct events *ev, const char *point,
			enum deploy_event what, const char *old_build,
			const char *new_build, const char *detail);
/*
 * Adaptive point @point's concurrency limit went from @from to @to
 * (docs/ADAPTIVE.md); @detail: the latencies it steered by.
 */
void events__add_limit(struct events *ev, const char *point, int64_t from,
		       int64_t to, const char *detail);
/* {"next": N, "dropped": D, "events": [...]} of the events with seq >= @since. */
json_t *events__json(const struct events *ev, uint64_t since);

#endif /* SDS_EVENTS_H */
