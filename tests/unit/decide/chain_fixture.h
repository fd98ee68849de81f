/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * chain_fixture.h - what the units of loader/decide/chain.c share: a strategy
 * with everything off, a window of counts, one chain_check(), one tick
 * of chain_eval().
 */
#ifndef SDS_CHAIN_FIXTURE_H
#define SDS_CHAIN_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "decide/chain.h"

#define SEC	1000000000ULL
#define MS	1000000ULL
#define TICK	(100 * MS)	/* the loader's default tick */

static inline struct sds_strategy strat(void)
{
	struct sds_strategy st;

	strategy_init(&st, "p");
	return st;
}

static inline struct sds_counts counts(uint64_t visits, uint64_t exceptions,
				uint64_t timeouts, uint64_t downgrades)
{
	struct sds_counts c = {
		.visits = visits,
		.exceptions = exceptions,
		.timeouts = timeouts,
		.downgrades = downgrades,
	};
	return c;
}

static inline uint32_t check(const struct sds_strategy *st, uint64_t visits,
		      uint64_t exceptions, uint64_t timeouts, uint64_t downgrades)
{
	struct sds_counts w = counts(visits, exceptions, timeouts, downgrades);

	return chain_check(st, &w);
}

/*
 * One tick of @cs at @now: window @w, the probes' results so far, and the
 * half-open phase state @h (NULL: none) with the kernel's slow count
 * @slow, read anew every tick.  @out is poisoned first: what the tick
 * does not set shows.
 */
static inline bool tick_ho(struct chain_state *cs, struct halfopen_run *h,
			   const struct sds_strategy *st, struct sds_counts w,
			   uint64_t now, uint64_t ok, uint64_t failed,
			   uint64_t slow, struct flag_state *out)
{
	struct chain_input in = {
		.st = st,
		.window = w,
		.now_ns = now,
		.tick_ns = TICK,
		.probes_ok = ok,
		.probes_failed = failed,
		.ho = h,
		.slow_total = slow,
		.snap_gen = now,	/* a new read every tick */
	};

	memset(out, 0xee, sizeof(*out));
	return chain_eval(cs, &in, out);
}

#endif /* SDS_CHAIN_FIXTURE_H */
