/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * chain_fixture.h - what the units of loader/chain.c share: a strategy
 * with everything off, a window of counts, one chain_check().
 */
#ifndef SDS_CHAIN_FIXTURE_H
#define SDS_CHAIN_FIXTURE_H

#include <stdint.h>
#include "chain.h"

#define SEC	1000000000ULL
#define MS	1000000ULL

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

#endif /* SDS_CHAIN_FIXTURE_H */
