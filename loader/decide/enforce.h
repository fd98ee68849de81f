/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * enforce.h - which strategy fields a point can enforce.  A setting that
 * cannot be enforced is refused, never silently ignored: attach refuses
 * to start with it, a SIGHUP reload or an admin reply that carries it is
 * refused whole and the strategies in force stay.  Pure: no maps, no
 * clock (tests/unit/decide/test_adaptive.c).
 */
#ifndef SDS_ENFORCE_H
#define SDS_ENFORCE_H

#include <stdbool.h>
#include <stddef.h>
#include "strategy.h"

/*
 * Can a point enforce @st?  @function: a function point (a uprobe on
 * TARGET's code: it can count and fail dependency calls, never hold a
 * call back); else a guard point.  @failfast: the function point has
 * :failfast= operations, so concurrent_threshold and token_rate are kept
 * at its calls' entry and the calls they refuse fail fast
 * (docs/FAILFAST.md "Limits").  0, or -1 with one line in @err naming
 * the field and what can enforce it.
 */
int enforce__strategy(const struct sds_strategy *st, bool function,
		      bool failfast, char *err, size_t errlen);

/*
 * key_capacity needs a point with keys: a function point with :key=
 * (@keyed), or a guard point (libsds passes its keys).  0, or -1 with
 * one line in @err.
 */
int enforce__keys(const struct sds_strategy *st, bool function, bool keyed,
		  char *err, size_t errlen);

/*
 * Key limits (key_visit_threshold, key_token_rate, key_overrides) block
 * a key's calls: a guard point's libsds refuses them, a function point
 * only fails them fast, so it needs :key= (@keyed) and :failfast=
 * (@failfast).  0, or -1 with one line in @err naming what can enforce
 * them.
 */
int enforce__key_limits(const struct sds_strategy *st, bool function,
			bool keyed, bool failfast, char *err, size_t errlen);

#endif /* SDS_ENFORCE_H */
