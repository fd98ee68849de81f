/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * engine_eval.h - one point's evaluation in a tick, without side effects:
 * its window from the tick's snapshot (since a reset, if one is recent),
 * the strategy chain, the window reset a successful probe asks for, and
 * the state `events` and `stats` show (a trip, or the guard's exact
 * limits refusing).  Pure: engine.c does the publishing, the cells and
 * the events; tests/unit/decide/test_engine.c drives it with fake snapshots and
 * a fake clock.
 */
#ifndef SDS_ENGINE_EVAL_H
#define SDS_ENGINE_EVAL_H

#include <stdbool.h>
#include <stdint.h>
#include "decide/chain.h"
#include "state/drill.h"
#include "decide/verdict.h"
#include "kernel/snapshot.h"
#include "strategy.h"

/* What the engine keeps per point between ticks (plain old data). */
struct point_run {
	struct chain_state cs;		/* trip and hold */
	uint64_t reset_sec;		/* the window starts afresh after this second; 0: never reset */
	struct sds_counts reset_base;	/* counts of @reset_sec up to the reset */
	uint64_t token_seen;		/* guard's refused_token at the last tick */
	uint64_t conc_seen;		/* guard's refused_concurrent at the last tick */
	uint32_t limit_reason;		/* token/concurrent refusals seen in the last second */
	uint64_t limit_last_ns;		/* when refusals were last seen */
	uint32_t shown_reason;		/* reason of the last "started" event; 0: none open */
	struct drill_run drill;		/* the point's drill; kind 0: none */
};

/* One evaluation's inputs besides the point's own state. */
struct engine_eval_in {
	const struct sds_strategy *st;	/* NULL: none */
	const struct snapshot *snap;	/* the tick's read */
	const struct cell_counts *cells;	/* what guards wrote, bounded (flags__counts) */
	uint64_t now_ns;		/* the clock of the tick */
	uint64_t tick_ns;		/* the tick's interval (--tick-ms) */
	uint64_t now_sec;		/* the ring second of @snap */
	struct halfopen_run *ho;	/* the point's half-open phase; NULL: none */
	bool visit_full;		/* exact trips: the visit budget is spent (exact_run.c) */
};

/* What the evaluation decided. */
struct engine_eval_out {
	struct flag_state fs;		/* the point's flag entry, before its drill */
	bool hold_started;		/* a hold (re)started: its first probe one interval on */
	bool reset;			/* the window started afresh (a probe succeeded) */
	uint32_t shown;			/* the reason `events`/`stats` show; 0: none */
};

/* The window of point @id: the last SDS_WINDOW_S seconds, or since a reset. */
void engine_eval_window(const struct point_run *r, const struct snapshot *s, int id,
		   uint64_t now_sec, struct sds_counts *w);
/* Evaluate point @id once: advances @r, fills @out. */
void engine_eval(struct point_run *r, int id, const struct engine_eval_in *in,
		 struct engine_eval_out *out);

#endif /* SDS_ENGINE_EVAL_H */
