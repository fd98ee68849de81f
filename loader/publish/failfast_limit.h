/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * failfast_limit.h - the semaphore and token bucket of function points
 * with :failfast= (docs/FAILFAST.md "Limits"): each tick's limits,
 * written where bpf/sds_fnlimit.bpf.h reads them at the calls' entry,
 * and the calls they refused, for stats.
 */
#ifndef SDS_FAILFAST_LIMIT_H
#define SDS_FAILFAST_LIMIT_H

#include <stdint.h>

struct flag_state;
struct probes;

/*
 * Point @id's limits from the tick's decision @fs (its SDS_ACT_CONCURRENT
 * and SDS_ACT_TOKEN parts) into the programs of @p, stored only when they
 * change; a bucket whose rate or size changes starts full.  A no-op
 * without the programs' globals (adopted links run older programs).
 */
void failfast_limit__tick(const struct probes *p, int id,
			  const struct flag_state *fs);

/* Calls of point @id the semaphore and the bucket refused since load. */
void failfast_limit__refused(const struct probes *p, int id,
			     uint64_t *concurrent, uint64_t *token);

#endif /* SDS_FAILFAST_LIMIT_H */
