// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * heartbeat_drill.c - the drills part of the heartbeat codec: the reply's
 * "drills" array, which the admin writes and every loader parses (each
 * field bounded, "errno" one of errnames.c's).  Kept apart from
 * heartbeat.c so each file stays one concept.
 */
#include <stdio.h>
#include <string.h>
#include "errnames.h"
#include "heartbeat/heartbeat.h"
#include "names.h"

static const char *const stop_fields[] = {
	[SDS_STOP_EXCEPTION_RATE] = "exception_rate",
	[SDS_STOP_P99_MS] = "p99_ms",
	[SDS_STOP_DOWNGRADES] = "downgrades",
};
#define NFIELDS ((uint32_t)(sizeof(stop_fields) / sizeof(stop_fields[0])))

uint32_t heartbeat_stop_field(const char *name)
{
	uint32_t f;

	for (f = 1; name && f < NFIELDS; f++)
		if (!strcmp(name, stop_fields[f]))
			return f;
	return SDS_STOP_NONE;
}

const char *heartbeat_stop_field_name(uint32_t field)
{
	return field && field < NFIELDS ? stop_fields[field] : "?";
}

/* The bound's range by field: a rate is a share, the others counts or ms. */
static double stop_max(uint32_t field)
{
	return field == SDS_STOP_EXCEPTION_RATE ? 1.0 : (double)SDS_HB_COUNT_MAX;
}

static const char *const stop_keys[] = { "field", "above", "window_s", NULL };

int heartbeat_stops_from_json(json_t *v, const char *what,
			      struct sds_hb_stop *out, int *n, char *err,
			      size_t errlen)
{
	size_t i;

	*n = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) > SDS_HB_MAX_STOPS) {
		snprintf(err, errlen, "%s must be an array of at most %d conditions",
			 what, SDS_HB_MAX_STOPS);
		return -1;
	}
	for (i = 0; i < json_array_size(v); i++) {
		json_t *o = json_array_get(v, i), *x;
		struct sds_hb_stop *s = &out[i];
		const char *key;
		double w;
		int k;

		if (!json_is_object(o)) {
			snprintf(err, errlen, "%s[%zu] must be an object {\"field\", \"above\", \"window_s\"}",
				 what, i);
			return -1;
		}
		json_object_foreach(o, key, x) {
			for (k = 0; stop_keys[k] && strcmp(stop_keys[k], key); k++)
				;
			if (!stop_keys[k]) {
				snprintf(err, errlen, "%s[%zu]: unknown field '%.32s' (field, above, window_s)",
					 what, i, key);
				return -1;
			}
		}
		x = json_object_get(o, "field");
		s->field = heartbeat_stop_field(json_string_value(x));
		if (!s->field) {
			snprintf(err, errlen, "%s[%zu].field: %s%.32s%s is not one of %s", what, i,
				 json_is_string(x) ? "'" : "", json_is_string(x) ?
				 json_string_value(x) : "missing", json_is_string(x) ? "'" : "",
				 SDS_HB_STOP_FIELDS);
			return -1;
		}
		x = json_object_get(o, "above");
		if (!json_is_number(x) || json_number_value(x) < 0 ||
		    json_number_value(x) > stop_max(s->field)) {
			snprintf(err, errlen, "%s[%zu].above must be a number 0..%s", what, i,
				 s->field == SDS_STOP_EXCEPTION_RATE ? "1 (a share of the calls)" :
				 "2^40");
			return -1;
		}
		s->above = json_number_value(x);
		x = json_object_get(o, "window_s");
		w = json_is_number(x) ? json_number_value(x) * 1000.0 : -1;
		if (w < SDS_HB_STOP_MIN_MS || w > SDS_HB_STOP_MAX_MS) {
			snprintf(err, errlen, "%s[%zu].window_s must be a number %g..%d (seconds; a tick is %d ms)",
				 what, i, SDS_HB_STOP_MIN_MS / 1000.0, SDS_HB_STOP_MAX_MS / 1000,
				 SDS_HB_STOP_MIN_MS);
			return -1;
		}
		s->window_ms = (int64_t)(w + 0.5);
	}
	*n = (int)i;
	return 0;
}

json_t *heartbeat_stops_to_json(const struct sds_hb_stop *s, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; a && i < n; i++)
		json_array_append_new(a, json_pack("{s:s, s:f, s:f}",
			"field", heartbeat_stop_field_name(s[i].field),
			"above", s[i].above,
			"window_s", s[i].window_ms / 1000.0));
	return a;
}

json_t *heartbeat_drills_to_json(const struct sds_hb_drill *d, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; a && i < n; i++) {
		json_t *o = json_pack("{s:I, s:s, s:s, s:i, s:I, s:I}",
			"id", (json_int_t)d[i].id, "point", d[i].point,
			"kind", d[i].kind == SDS_DRILL_DELAY ? "delay" : "error",
			"ratio", (int)d[i].ratio,
			"delay_ms", (json_int_t)d[i].delay_ms,
			"expires_at", (json_int_t)d[i].expires_at);

		/* Only a drill that names an errno says so: older loaders never see it. */
		if (o && d[i].err)
			json_object_set_new(o, "errno",
					    json_string(errnames_name(d[i].err)));
		/* Only a drill with stop conditions: older loaders never see them. */
		if (o && d[i].nstop)
			json_object_set_new(o, "stop_when",
					    heartbeat_stops_to_json(d[i].stop, d[i].nstop));
		json_array_append_new(a, o);
	}
	return a;
}

static int int_in(json_t *o, const char *key, int64_t min, int64_t max,
		  int64_t *out)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max)
		return -1;
	*out = json_integer_value(v);
	return 0;
}

/* A drill's optional "errno": absent or null is the point's own. */
static int drill_errno_from_json(json_t *o, size_t i, struct sds_hb_drill *d,
				 char *err, size_t errlen)
{
	json_t *v = json_object_get(o, "errno");

	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v))
		d->err = errnames_parse(json_string_value(v));
	if (!d->err || d->kind != SDS_DRILL_ERROR) {
		snprintf(err, errlen,
			 "drills[%zu].errno must be an errno name (ETIMEDOUT, ...) of an error drill", i);
		d->err = 0;
		return -1;
	}
	return 0;
}

/* One entry of a reply's "drills"; @err names the field. */
static int drill_from_json(json_t *o, size_t i, struct sds_hb_drill *d,
			   char *err, size_t errlen)
{
	const char *point, *kind;
	char what[48];
	int64_t ratio;

	memset(d, 0, sizeof(*d));
	if (!json_is_object(o)) {
		snprintf(err, errlen, "drills[%zu] must be an object", i);
		return -1;
	}
	point = json_string_value(json_object_get(o, "point"));
	kind = json_string_value(json_object_get(o, "kind"));
	if (int_in(o, "id", 1, INT64_MAX, &d->id)) {
		snprintf(err, errlen, "drills[%zu].id must be a positive integer", i);
		return -1;
	}
	if (!point || !sds_point_name_valid(point)) {
		snprintf(err, errlen, "drills[%zu].point: bad name", i);
		return -1;
	}
	snprintf(d->point, sizeof(d->point), "%s", point);
	if (!kind || (strcmp(kind, "error") && strcmp(kind, "delay"))) {
		snprintf(err, errlen, "drills[%zu].kind must be \"error\" or \"delay\"", i);
		return -1;
	}
	d->kind = strcmp(kind, "error") ? SDS_DRILL_DELAY : SDS_DRILL_ERROR;
	if (int_in(o, "ratio", 0, 100, &ratio)) {
		snprintf(err, errlen, "drills[%zu].ratio must be an integer 0..100", i);
		return -1;
	}
	d->ratio = ratio;
	if (int_in(o, "delay_ms", 0, SDS_HB_DRILL_DELAY_MAX, &d->delay_ms) ||
	    (d->kind == SDS_DRILL_DELAY && d->delay_ms < 1)) {
		snprintf(err, errlen, "drills[%zu].delay_ms must be an integer %d..%d",
			 i, d->kind == SDS_DRILL_DELAY, SDS_HB_DRILL_DELAY_MAX);
		return -1;
	}
	if (int_in(o, "expires_at", 0, SDS_HB_TIME_MAX, &d->expires_at)) {
		snprintf(err, errlen, "drills[%zu].expires_at must be Unix seconds", i);
		return -1;
	}
	if (drill_errno_from_json(o, i, d, err, errlen))
		return -1;
	snprintf(what, sizeof(what), "drills[%zu].stop_when", i);
	return heartbeat_stops_from_json(json_object_get(o, "stop_when"), what,
					 d->stop, &d->nstop, err, errlen);
}

int heartbeat_drills_from_json(json_t *v, struct sds_hb_reply *r, char *err,
			       size_t errlen)
{
	r->ndrills = 0;
	if (!v)
		return 0;
	if (!json_is_array(v)) {
		snprintf(err, errlen, "drills must be an array");
		return -1;
	}
	if (json_array_size(v) > SDS_HB_MAX_DRILLS) {
		snprintf(err, errlen, "drills: at most %d", SDS_HB_MAX_DRILLS);
		return -1;
	}
	for (; (size_t)r->ndrills < json_array_size(v); r->ndrills++)
		if (drill_from_json(json_array_get(v, r->ndrills), r->ndrills,
				    &r->drills[r->ndrills], err, errlen))
			return -1;
	return 0;
}

bool heartbeat_drills_newer(bool has, int64_t seq, int64_t kept, uint64_t kept_ms,
			    uint64_t now_ms)
{
	if (!has || seq >= kept)
		return true;
	/* Lower: a reply overtaken by a newer one, unless the counter went back. */
	return now_ms >= kept_ms + SDS_HB_DRILLS_STALE_MS;
}
