/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The strategy chain of docs/DESIGN.md §4, evaluated by the loader every tick
 * for one point: which window strategy trips, the delay_ms hold with its
 * probe calls, and what to publish in the point's flag entry.  Pure logic
 * (no maps, no clock): unit tested in tests/unit/decide/test_chain.c.
 */
#ifndef SDS_CHAIN_H
#define SDS_CHAIN_H

#include <stdbool.h>
#include <stdint.h>
#include "decide/verdict.h"
#include "decide/halfopen.h"
#include "strategy.h"
#include "window.h"

/*
 * A published downgrade lives one tick + this unless renewed: the next
 * tick renews it with a second to spare, however long the tick (--tick-ms
 * up to 10 s), and a loader that stops ticking lets it lapse a second
 * after its next tick was due (the guards take such a loader for gone a
 * second later still: sds_guard_stale).
 */
#define CHAIN_EXPIRY_NS	1000000000ULL

/* What the loader remembers of one point between ticks. */
struct chain_state {
	bool tripped;			/* downgraded by a window strategy or the hold */
	uint32_t reason;		/* enum sds_reason of the trip */
	uint64_t hold_until_ns;		/* the delay_ms hold ends then; 0: no hold */
	uint64_t probes_ok_seen;	/* guard's probes_ok at the last tick */
	uint64_t probes_failed_seen;	/* guard's probes_failed at the last tick */
};

/* One tick's view of a point. */
struct chain_input {
	const struct sds_strategy *st;	/* NULL: no strategy, nothing trips */
	struct sds_counts window;	/* the sliding window (since a reset) */
	uint64_t now_ns;		/* CLOCK_MONOTONIC */
	uint64_t tick_ns;		/* the loader's tick (--tick-ms) */
	uint64_t probes_ok;		/* guard's cumulative probe results */
	uint64_t probes_failed;
	/*
	 * Half-open phases (probe_calls >= 2): the point's phase state (NULL:
	 * the hold keeps one probe per interval whatever probe_calls says)
	 * and the kernel's slow calls of the point since attach.
	 */
	struct halfopen_run *ho;
	uint64_t slow_total;
	uint64_t snap_gen;		/* the read @slow_total comes from (snapshot gen) */
	bool visit_full;		/* exact trips: the guards' visit budget is spent */
};

/* The first window strategy that trips on @w, in the order of §4. */
uint32_t chain_check(const struct sds_strategy *st, const struct sds_counts *w);

/*
 * Advance @cs by one tick and fill @out.  Returns true when the point's
 * window must start afresh (a probe call succeeded and ended the hold).
 */
bool chain_eval(struct chain_state *cs, const struct chain_input *in,
		struct flag_state *out);

/* "visit", "token", ... ; "" for none. */
const char *chain_reason_name(uint32_t reason);

#endif /* SDS_CHAIN_H */
