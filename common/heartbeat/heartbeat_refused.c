// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * heartbeat_refused.c - the "refused" part of the heartbeat codec: the
 * admin's strategies a loader refused (a field a point cannot enforce,
 * decide/enforce.c), so that the admin shows why a host keeps an older
 * version.  Bounded: one line of at most SDS_HB_REASON_MAX bytes per
 * point, SDS_HB_MAX_REFUSED points.
 */
#include <stdio.h>
#include <string.h>
#include "heartbeat/heartbeat.h"
#include "names.h"

/* Printable and no line break: the reason is shown as one line. */
static bool reason_ok(const char *s, size_t len)
{
	size_t i;

	if (!len || len > SDS_HB_REASON_MAX || strlen(s) != len)
		return false;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

void heartbeat_refusal_set(struct sds_hb_refusal *r, int64_t version,
			   const char *point, const char *reason)
{
	size_t i, n;

	memset(r, 0, sizeof(*r));
	r->version = version;
	if (point && sds_point_name_valid(point))
		snprintf(r->point, sizeof(r->point), "%s", point);
	/* Cut at the limit on a UTF-8 boundary, control bytes as blanks. */
	n = reason ? strlen(reason) : 0;
	if (n > SDS_HB_REASON_MAX) {
		n = SDS_HB_REASON_MAX;
		while (n && ((unsigned char)reason[n] & 0xc0) == 0x80)
			n--;
	}
	for (i = 0; i < n; i++)
		r->reason[i] = (unsigned char)reason[i] < 0x20 || reason[i] == 0x7f ?
			       ' ' : reason[i];
	r->reason[n] = '\0';
	if (!n)
		snprintf(r->reason, sizeof(r->reason), "refused");
}

int heartbeat_refused_to_json(const struct sds_heartbeat *hb, json_t *o)
{
	json_t *arr, *e;
	int i;

	/* Only with some: older admins refuse unknown fields. */
	if (hb->nrefused <= 0)
		return 0;
	arr = json_array();
	if (!arr)
		return -1;
	for (i = 0; i < hb->nrefused && i < SDS_HB_MAX_REFUSED; i++) {
		const struct sds_hb_refusal *r = &hb->refused[i];

		e = json_pack("{s:I, s:s}", "version", (json_int_t)r->version,
			      "reason", r->reason);
		if (!e || (r->point[0] &&
			   json_object_set_new(e, "point", json_string(r->point))) ||
		    json_array_append_new(arr, e)) {
			json_decref(arr);
			return -1;
		}
	}
	return json_object_set_new(o, "refused", arr);
}

static int refusal_from_json(json_t *r, size_t i, struct sds_hb_refusal *x,
			     char *err, size_t errlen)
{
	const char *key;
	json_t *v;

	memset(x, 0, sizeof(*x));
	if (!json_is_object(r)) {
		snprintf(err, errlen, "refused[%zu] must be an object", i);
		return -1;
	}
	json_object_foreach(r, key, v) {
		if (strcmp(key, "version") && strcmp(key, "point") && strcmp(key, "reason")) {
			snprintf(err, errlen, "refused[%zu]: unknown field '%.64s'", i, key);
			return -1;
		}
	}
	v = json_object_get(r, "version");
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > SDS_HB_TIME_MAX) {
		snprintf(err, errlen, "refused[%zu].version must be an integer 1..%lld",
			 i, (long long)SDS_HB_TIME_MAX);
		return -1;
	}
	x->version = json_integer_value(v);
	v = json_object_get(r, "point");
	if (v) {
		if (!json_is_string(v) || !sds_point_name_valid(json_string_value(v)) ||
		    strlen(json_string_value(v)) != json_string_length(v)) {
			snprintf(err, errlen, "refused[%zu].point: bad point name (1-64 of [A-Za-z0-9_-])", i);
			return -1;
		}
		snprintf(x->point, sizeof(x->point), "%s", json_string_value(v));
	}
	v = json_object_get(r, "reason");
	if (!json_is_string(v) || !reason_ok(json_string_value(v), json_string_length(v))) {
		snprintf(err, errlen,
			 "refused[%zu].reason must be one line of 1..%d bytes without control characters",
			 i, SDS_HB_REASON_MAX);
		return -1;
	}
	memcpy(x->reason, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

int heartbeat_refused_from_json(json_t *doc, struct sds_heartbeat *out,
				char *err, size_t errlen)
{
	json_t *arr = json_object_get(doc, "refused"), *r;
	size_t i, j;

	out->nrefused = 0;
	if (!arr)
		return 0;
	if (!json_is_array(arr) || !json_array_size(arr) ||
	    json_array_size(arr) > SDS_HB_MAX_REFUSED) {
		snprintf(err, errlen, "refused must be an array of 1..%d refusals",
			 SDS_HB_MAX_REFUSED);
		return -1;
	}
	json_array_foreach(arr, i, r) {
		if (refusal_from_json(r, i, &out->refused[i], err, errlen))
			return -1;
		/* One per point (one without a point too): the latest. */
		for (j = 0; j < i; j++)
			if (!strcmp(out->refused[j].point, out->refused[i].point)) {
				snprintf(err, errlen, "refused[%zu]: point '%s' twice",
					 i, out->refused[i].point);
				return -1;
			}
	}
	out->nrefused = (int)json_array_size(arr);
	return 0;
}
