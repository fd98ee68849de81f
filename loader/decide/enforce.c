// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* enforce.c - the strategy fields a point cannot enforce, refused. */
#include <stdio.h>
#include "decide/enforce.h"

int enforce__strategy(const struct sds_strategy *st, bool function,
		      bool failfast, char *err, size_t errlen)
{
	const char *field = NULL, *limit = NULL;

	if (!st || !function)
		return 0;
	/*
	 * A limit of calls in flight or a token bucket decides at the call's
	 * entry whether it runs: a guard refuses the call; a uprobe counts
	 * the call that runs anyway, so a function point keeps them only
	 * with :failfast=, whose refused calls fail their operations fast
	 * (bpf/sds_fnlimit.bpf.h).  The adaptive limit and the cluster's
	 * bucket are a guard's alone.
	 */
	if (strategy_is_adaptive(st))
		field = "adaptive_limit";
	else if (st->concurrent_threshold != SDS_OFF)
		limit = "concurrent_threshold";
	else if (st->token_rate != SDS_OFF)
		limit = "token_rate";
	if (!field && st->cluster_token_rate != SDS_OFF)
		field = "cluster_token_rate";
	if (limit && !field && !failfast) {
		snprintf(err, errlen,
			 "point '%s': %s needs a guard point (sds_enter/sds_should_downgrade) or :failfast= on this function point (docs/FAILFAST.md): a function point cannot hold its calls back",
			 st->point, limit);
		return -1;
	}
	if (!field)
		return 0;
	snprintf(err, errlen,
		 "point '%s': %s needs a guard point (sds_enter/sds_should_downgrade): a function point cannot hold its calls back",
		 st->point, field);
	return -1;
}

int enforce__keys(const struct sds_strategy *st, bool function, bool keyed,
		  char *err, size_t errlen)
{
	if (!st || !function || keyed || st->key_capacity == SDS_OFF)
		return 0;
	snprintf(err, errlen,
		 "point '%s': key_capacity needs a keyed point (:key=argN, strN or bufN,lenM; docs/KEYS.md): this one has no key",
		 st->point);
	return -1;
}

/* The key limit @st sets, for its refusal; NULL: none. */
static const char *key_limit_field(const struct sds_strategy *st)
{
	if (st->key_visit_threshold != SDS_OFF)
		return "key_visit_threshold";
	if (st->key_token_rate != SDS_OFF)
		return "key_token_rate";
	if (st->key_ov_n > 0)
		return "key_overrides";
	return NULL;
}

int enforce__key_limits(const struct sds_strategy *st, bool function,
			bool keyed, bool failfast, char *err, size_t errlen)
{
	const char *field;

	if (!st || !function || !(field = key_limit_field(st)))
		return 0;
	if (!keyed) {
		snprintf(err, errlen,
			 "point '%s': %s needs a keyed point (:key=argN, strN or bufN,lenM; docs/KEYS.md): this one has no key",
			 st->point, field);
		return -1;
	}
	if (failfast)
		return 0;
	/* A uprobe cannot refuse a call: only failing its operations fast can. */
	snprintf(err, errlen,
		 "point '%s': %s needs :failfast= on this point, or a guard point with sds_should_downgrade_key (docs/KEYS.md)",
		 st->point, field);
	return -1;
}
