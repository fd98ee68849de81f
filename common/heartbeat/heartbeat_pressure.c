// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * heartbeat_pressure.c - the host pressure parts of the heartbeat codec
 * (docs/PRESSURE.md): each rule's state as the period ends, and whether
 * a rule downgraded a point in the period.  Kept apart from heartbeat.c
 * so each file stays one concept.
 */
#include <stdio.h>
#include <string.h>
#include "heartbeat/heartbeat.h"

int heartbeat_pressure_to_json(const struct sds_heartbeat *hb, json_t *o)
{
	json_t *arr;
	int i;

	/* Only with rules: older admins refuse unknown fields. */
	if (!hb->nrules)
		return 0;
	arr = json_array();
	if (!arr)
		return -1;
	for (i = 0; i < hb->nrules && i < SDS_HB_MAX_RULES; i++)
		if (json_array_append_new(arr, json_pack("{s:b, s:I}",
				"firing", hb->rules[i].firing,
				"fired", (json_int_t)hb->rules[i].fired))) {
			json_decref(arr);
			return -1;
		}
	return json_object_set_new(o, "pressure", arr);
}

int heartbeat_pressure_from_json(json_t *doc, struct sds_heartbeat *out,
				 char *err, size_t errlen)
{
	json_t *arr = json_object_get(doc, "pressure"), *r, *v;
	const char *key;
	size_t i;

	out->nrules = 0;
	if (!arr)
		return 0;
	if (!json_is_array(arr) || !json_array_size(arr) ||
	    json_array_size(arr) > SDS_HB_MAX_RULES) {
		snprintf(err, errlen, "pressure must be an array of 1..%d rules",
			 SDS_HB_MAX_RULES);
		return -1;
	}
	json_array_foreach(arr, i, r) {
		struct sds_hb_rule *x = &out->rules[i];

		if (!json_is_object(r)) {
			snprintf(err, errlen, "pressure[%zu] must be an object", i);
			return -1;
		}
		json_object_foreach(r, key, v) {
			if (strcmp(key, "firing") && strcmp(key, "fired")) {
				snprintf(err, errlen, "pressure[%zu]: unknown field '%.64s'",
					 i, key);
				return -1;
			}
		}
		v = json_object_get(r, "firing");
		if (!json_is_boolean(v)) {
			snprintf(err, errlen, "pressure[%zu].firing must be true or false", i);
			return -1;
		}
		x->firing = json_is_true(v);
		v = json_object_get(r, "fired");
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > SDS_HB_COUNT_MAX) {
			snprintf(err, errlen, "pressure[%zu].fired must be an integer 0..%lld",
				 i, (long long)SDS_HB_COUNT_MAX);
			return -1;
		}
		x->fired = (uint64_t)json_integer_value(v);
	}
	out->nrules = (int)json_array_size(arr);
	return 0;
}

int heartbeat_point_overload_from_json(const char *name, json_t *obj,
				       struct sds_hb_point *p, char *err,
				       size_t errlen)
{
	json_t *v = json_object_get(obj, "overload");

	if (v && !json_is_boolean(v)) {
		snprintf(err, errlen, "points.%s.overload must be true or false", name);
		return -1;
	}
	p->overload = json_is_true(v);
	return 0;
}
