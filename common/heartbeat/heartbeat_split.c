// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * heartbeat_split.c - the split parts of the heartbeat codec: where a
 * point's completed calls' time went in the period (docs/SPLIT.md), as
 * four integers beside the latency histogram.  Sent only when the period
 * has split calls, so that admins older than them take the rest.
 */
#include <stdio.h>
#include "heartbeat/heartbeat.h"

/*
 * ns in one period: the calls of a 10-s period can sum more than
 * SDS_HB_COUNT_MAX ns (18 min) when many are in flight; 2^53 ns is 104
 * days, what 900,000 calls blocked the whole period sum to.
 */
#define SDS_HB_SPLIT_NS_MAX	((int64_t)1 << 53)

int heartbeat_point_split_to_json(const struct sds_hb_point *p, json_t *po)
{
	if (!p->split_calls)
		return 0;
	if (json_object_set_new(po, "split_calls", json_integer((json_int_t)p->split_calls)) ||
	    json_object_set_new(po, "split_on_cpu_ns", json_integer((json_int_t)p->split_on_cpu_ns)) ||
	    json_object_set_new(po, "split_runqueue_ns", json_integer((json_int_t)p->split_runqueue_ns)) ||
	    json_object_set_new(po, "split_blocked_ns", json_integer((json_int_t)p->split_blocked_ns)))
		return -1;
	return 0;
}

static int split_field(const char *name, json_t *obj, const char *key,
		       int64_t max, uint64_t *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);
	json_int_t x;

	*out = 0;
	if (!v)
		return 0;
	x = json_is_integer(v) ? json_integer_value(v) : -1;
	if (x < 0 || x > max) {
		snprintf(err, errlen, "points.%s.%s must be an integer 0..%lld",
			 name, key, (long long)max);
		return -1;
	}
	*out = (uint64_t)x;
	return 0;
}

int heartbeat_point_split_from_json(const char *name, json_t *obj,
				    struct sds_hb_point *p, char *err,
				    size_t errlen)
{
	if (split_field(name, obj, "split_calls", SDS_HB_COUNT_MAX,
			&p->split_calls, err, errlen) ||
	    split_field(name, obj, "split_on_cpu_ns", SDS_HB_SPLIT_NS_MAX,
			&p->split_on_cpu_ns, err, errlen) ||
	    split_field(name, obj, "split_runqueue_ns", SDS_HB_SPLIT_NS_MAX,
			&p->split_runqueue_ns, err, errlen) ||
	    split_field(name, obj, "split_blocked_ns", SDS_HB_SPLIT_NS_MAX,
			&p->split_blocked_ns, err, errlen))
		return -1;
	return 0;
}
