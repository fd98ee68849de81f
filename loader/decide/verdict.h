/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * verdict.h - what the deciders decide for one point in a tick, and the
 * guard-written counts they decide from: plain data, no region, no clock.
 * The deciders (chain.c, engine_eval.c) fill a struct flag_state; the
 * publisher (publish/flags.c) writes it into the point's flag entry, so
 * the publisher depends on the verdict, never the other way round.
 */
#ifndef SDS_VERDICT_H
#define SDS_VERDICT_H

#include <stdint.h>
#include "sds_flags.h"	/* SDS_ACT_*, enum sds_reason, enum sds_drill_kind */

/*
 * What the loader has counted of a point's guard-written counters: the
 * cells hold cumulative counts any client of the app can overwrite, so
 * the loader folds only their increases, each bounded (a decrease or a
 * jump beyond FLAGS_DELTA_MAX is a forgery and counts nothing), into
 * totals of its own that never wrap.
 */
struct cell_counts {
	uint64_t probes_ok;		/* probe calls that succeeded */
	uint64_t probes_failed;		/* probe calls that failed */
	uint64_t refused_concurrent;	/* calls the semaphore refused */
	uint64_t refused_token;		/* calls the bucket refused */
	uint64_t drill_faults;		/* calls an error drill failed */
	uint64_t drill_delays;		/* calls a delay drill slowed */
};

/*
 * What the loader publishes for one point: line 1 of its entry, and the
 * drill of line 3 (flags__publish).
 */
struct flag_state {
	uint32_t active;		/* SDS_ACT_* */
	uint32_t reason;		/* enum sds_reason */
	uint32_t rate;			/* 0..100 */
	uint64_t expires_ns;		/* the downgrade lapses then */
	int64_t concurrent_limit;	/* permits */
	uint64_t token_interval_ns;	/* ns per token */
	uint64_t token_burst_ns;	/* bucket * interval */
	uint64_t probe_interval_ns;	/* hold probes */
	uint32_t drill_kind;		/* line 3: enum sds_drill_kind */
	uint32_t drill_ratio;		/* 0..100 */
	uint64_t drill_delay_ns;	/* delay drill's sleep */
	uint64_t drill_expires_ns;	/* the guard ignores the drill then */
};

#endif /* SDS_VERDICT_H */
