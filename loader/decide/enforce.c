// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* enforce.c - the strategy fields a point cannot enforce, refused. */
#include <stdio.h>
#include "decide/enforce.h"

int enforce__strategy(const struct sds_strategy *st, bool function,
		      char *err, size_t errlen)
{
	if (!st || !function)
		return 0;
	/* A limit of calls in flight holds calls back: only a guard can. */
	if (strategy_is_adaptive(st)) {
		snprintf(err, errlen,
			 "point '%s': adaptive_limit needs a guard point (sds_enter/sds_should_downgrade): a function point cannot hold its calls back",
			 st->point);
		return -1;
	}
	return 0;
}
