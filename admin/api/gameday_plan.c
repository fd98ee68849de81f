// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/gameday_plan.c - a game day's definition checked before anything is
 * stored (docs/GAMEDAY.md): its steps (each field, and what they name: a
 * copy plan the app has, a scheme it has, a drill POST {A}/drills would
 * take, an earlier step to stop), its schedule and how many reports it
 * keeps.  Every refusal is one line that names the field.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gameday/gameday.h"
#include "api/api.h"
#include "names.h"

#define PLAN_STEPS_MAX	32
#define EVERY_MIN_S	10		/* the admin's statistics come every 10 s */
#define EVERY_MAX_S	(366 * 86400)

static bool number(json_t *v, double min, double max, double *out)
{
	if (!json_is_number(v))
		return false;
	*out = json_number_value(v);
	return *out >= min && *out <= max;
}

static bool integer(json_t *v, int64_t min, int64_t max, int64_t *out)
{
	if (!json_is_integer(v))
		return false;
	*out = json_integer_value(v);
	return *out >= min && *out <= max;
}

/* Fields of step @i other than @allowed: the 400. */
static int only(struct api_route *r, json_t *o, const char *where, const char *const *allowed,
		const char *list)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v) {
		const char *const *p;

		for (p = allowed; *p && strcmp(*p, key); p++)
			;
		if (!*p) {
			api_fail(r, 400, "%s: unknown field '%.64s' (%s)", where, key, list);
			return -1;
		}
	}
	return 0;
}

/* "until": {point, field, above | below, window_s}. */
static int check_until(struct api_route *r, json_t *u, const char *w)
{
	static const char *const f[] = { "point", "field", "above", "below", "window_s", NULL };
	json_t *above = json_object_get(u, "above"), *below = json_object_get(u, "below");
	const char *point = json_string_value(json_object_get(u, "point"));
	const char *field = json_string_value(json_object_get(u, "field"));
	char where[48];
	double v, max;
	uint32_t fid;

	if (!json_is_object(u))
		return api_fail(r, 400, "%s.until must be an object {point, field, above or below, "
				"window_s}", w), -1;
	snprintf(where, sizeof(where), "%s.until", w);
	if (only(r, u, where, f, "point, field, above, below, window_s"))
		return -1;
	if (!point || !sds_name_valid(point))
		return api_fail(r, 400, "%s.until.point: bad name (1-64 of [A-Za-z0-9_-])", w), -1;
	fid = field ? heartbeat_stop_field(field) : SDS_STOP_NONE;
	if (fid == SDS_STOP_NONE)
		return api_fail(r, 400, "%s.until.field: '%.32s' is not one of exception_rate, "
				"p99_ms, downgrades", w, field ? field : ""), -1;
	if (!above == !below)
		return api_fail(r, 400, "%s.until: give one of above, below", w), -1;
	max = fid == SDS_STOP_EXCEPTION_RATE ? 1 : (double)(1ULL << 40);
	if (!number(above ? above : below, 0, max, &v))
		return api_fail(r, 400, "%s.until.%s must be a number 0..%s", w,
				above ? "above" : "below",
				fid == SDS_STOP_EXCEPTION_RATE ? "1 (a share of the calls)" :
								 "2^40"), -1;
	if (!number(json_object_get(u, "window_s"), GAMEDAY_PERIOD_S, 600, &v))
		return api_fail(r, 400, "%s.until.window_s must be a number 10..600 (seconds of "
				"the stored 10-s periods)", w), -1;
	return 0;
}

static int check_step(struct api_route *r, const char *g, const char *a, json_t *steps,
		      size_t i, const char *name)
{
	static const char *const f_drill[] = { "do", "drill", NULL };
	static const char *const f_copy[] = { "do", "plan", "duration_s", NULL };
	static const char *const f_wait[] = { "do", "for_s", "until", "timeout_s", NULL };
	static const char *const f_scheme[] = { "do", "scheme", NULL };
	static const char *const f_stop[] = { "do", "step", NULL };
	json_t *s = json_array_get(steps, i), *v, *out;
	const char *op;
	char w[32], by[96];
	int64_t n;

	snprintf(w, sizeof(w), "steps[%zu]", i);
	if (!json_is_object(s))
		return api_fail(r, 400, "%s must be an object with \"do\"", w), -1;
	op = json_string_value(json_object_get(s, "do"));
	if (!op || !gameday_step_kind(op))
		return api_fail(r, 400, "%s.do must be one of drill, copy, wait, scheme, stop", w), -1;
	if (!strcmp(op, "drill")) {
		json_t *d = json_object_get(s, "drill");
		int ret;

		if (only(r, s, w, f_drill, "do, drill"))
			return -1;
		if (!json_is_object(d))
			return api_fail(r, 400, "%s.drill must be an object, as POST .../drills "
					"takes (without by)", w), -1;
		if (json_object_get(d, "by"))
			return api_fail(r, 400, "%s.drill.by: the game day says who", w), -1;
		d = json_deep_copy(d);
		snprintf(by, sizeof(by), "game day %s", name);
		json_object_set_new(d, "by", json_string(by));
		ret = api_drill_check(r, g, a, d);
		json_decref(d);
		if (ret) {
			/* The drill's own line, said of this step. */
			const char *e = json_string_value(json_object_get(r->rs->body, "error"));
			char msg[600];

			snprintf(msg, sizeof(msg), "%s.drill: %s", w, e ? e : "refused");
			json_decref(r->rs->body);
			r->rs->body = NULL;
			api_fail(r, r->rs->status, "%s", msg);
		}
		return ret;
	}
	if (!strcmp(op, "copy")) {
		const char *plan = json_string_value(json_object_get(s, "plan"));
		struct store *st = r->ad->store;
		bool found = false;
		size_t k;

		if (only(r, s, w, f_copy, "do, plan, duration_s"))
			return -1;
		if (!plan || !sds_name_valid(plan))
			return api_fail(r, 400, "%s.plan: bad name (1-64 of [A-Za-z0-9_-])", w), -1;
		v = json_object_get(s, "duration_s");
		if (v && !integer(v, 1, 86400, &n))
			return api_fail(r, 400, "%s.duration_s must be an integer 1..86400", w), -1;
		if (api_store_rc(r, st->ops->copy_plan_list(st, g, a, store_now_s(), &out, r->err)))
			return -1;
		json_array_foreach(out, k, v)
			found |= !strcmp(json_string_value(json_object_get(v, "name")) ?: "", plan);
		json_decref(out);
		if (!found)
			return api_fail(r, 400, "%s.plan: the app has no copy plan '%s' (see GET "
					".../copy-plans)", w, plan), -1;
		return 0;
	}
	if (!strcmp(op, "wait")) {
		json_t *fs = json_object_get(s, "for_s"), *u = json_object_get(s, "until");
		double x;

		if (only(r, s, w, f_wait, "do, for_s, until, timeout_s"))
			return -1;
		if (!fs == !u)
			return api_fail(r, 400, "%s: give one of for_s, until", w), -1;
		if (fs) {
			if (!number(fs, 0.1, 86400, &x))
				return api_fail(r, 400, "%s.for_s must be a number 0.1..86400 (seconds)",
						w), -1;
			if (json_object_get(s, "timeout_s"))
				return api_fail(r, 400, "%s.timeout_s is for a wait until", w), -1;
			return 0;
		}
		if (check_until(r, u, w))
			return -1;
		if (!integer(json_object_get(s, "timeout_s"), 1, 86400, &n))
			return api_fail(r, 400, "%s.timeout_s: required with until, an integer "
					"1..86400 (seconds)", w), -1;
		return 0;
	}
	if (!strcmp(op, "scheme")) {
		const char *sch = json_string_value(json_object_get(s, "scheme"));
		struct store *st = r->ad->store;
		int rc;

		if (only(r, s, w, f_scheme, "do, scheme"))
			return -1;
		if (!sch || !sds_name_valid(sch))
			return api_fail(r, 400, "%s.scheme: bad name (1-64 of [A-Za-z0-9_-])", w), -1;
		rc = st->ops->scheme_get(st, g, a, sch, &out, r->err);
		if (rc == STORE_NOTFOUND)
			return api_fail(r, 400, "%s.scheme: the app has no scheme '%s' (see GET "
					".../schemes)", w, sch), -1;
		if (api_store_rc(r, rc))
			return -1;
		json_decref(out);
		return 0;
	}
	/* stop: an earlier drill or copy step; none: all this run started */
	if (only(r, s, w, f_stop, "do, step"))
		return -1;
	v = json_object_get(s, "step");
	if (v) {
		const char *k;

		if (!integer(v, 0, (int64_t)i - 1, &n) ||
		    !(k = json_string_value(json_object_get(json_array_get(steps, n), "do"))) ||
		    (strcmp(k, "drill") && strcmp(k, "copy")))
			return api_fail(r, 400, "%s.step must be the index of an earlier drill or "
					"copy step", w), -1;
	}
	return 0;
}

/* "7d", "6h", "30m", "45s" or a number of seconds. */
static bool every(json_t *v, int64_t *out)
{
	const char *t = json_string_value(v), *unit;
	long long n;
	char *end;

	if (json_is_integer(v)) {
		*out = json_integer_value(v);
	} else if (t) {
		n = strtoll(t, &end, 10);
		unit = end;
		if (end == t || n <= 0 || strlen(unit) != 1)
			return false;
		switch (*unit) {
		case 's': *out = n; break;
		case 'm': *out = n * 60; break;
		case 'h': *out = n * 3600; break;
		case 'd': *out = n * 86400; break;
		default: return false;
		}
		if (n > EVERY_MAX_S)
			return false;
	} else {
		return false;
	}
	return *out >= EVERY_MIN_S && *out <= EVERY_MAX_S;
}

/* Unix seconds or "YYYY-MM-DDTHH:MM:SSZ". */
static bool when(json_t *v, int64_t *out)
{
	const char *t = json_string_value(v);
	struct tm tm = { 0 };
	char *end;

	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return *out > 0 && *out < (1LL << 40);
	}
	if (!t)
		return false;
	end = strptime(t, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!end || *end)
		return false;
	*out = (int64_t)timegm(&tm);
	return *out > 0;
}

static int check_schedule(struct api_route *r, json_t *s, int64_t *every_s, int64_t *next)
{
	static const char *const f[] = { "every", "from", NULL };
	int64_t now = store_now_s(), from;

	*every_s = *next = 0;
	if (!s || json_is_null(s))
		return 0;
	if (!json_is_object(s))
		return api_fail(r, 400, "schedule must be an object {every, from} or null"), -1;
	if (only(r, s, "schedule", f, "every, from"))
		return -1;
	if (!every(json_object_get(s, "every"), every_s))
		return api_fail(r, 400, "schedule.every must be a period of 10 s to 366 d: "
				"seconds, or N followed by s, m, h or d (\"7d\")"), -1;
	if (!json_object_get(s, "from"))
		from = now + *every_s;
	else if (!when(json_object_get(s, "from"), &from))
		return api_fail(r, 400, "schedule.from must be Unix seconds or a UTC time "
				"YYYY-MM-DDTHH:MM:SSZ"), -1;
	/* The first time at or after now on the grid from + k * every. */
	*next = from >= now ? from : from + ((now - from + *every_s - 1) / *every_s) * *every_s;
	return 0;
}

int api_gameday_plan(struct api_route *r, const char *g, const char *a, json_t **body,
		     int64_t *every_s, int64_t *next_run, int *keep)
{
	static const char *const f[] = { "name", "description", "steps", "schedule", "keep",
					 "by", NULL };
	const char *name, *desc;
	json_t *steps, *sched, *app;
	int64_t k = GAMEDAY_KEEP_DEFAULT;
	size_t i;

	if (api_only_fields(r, f) || api_name_field(r, "name", true, &name) ||
	    api_text_field(r, "description", &desc))
		return -1;
	/* The app first: a refusal below may read its plans, schemes and hosts. */
	if (api_store_rc(r, r->ad->store->ops->app_get(r->ad->store, g, a, &app, r->err)))
		return -1;
	json_decref(app);
	steps = json_object_get(r->doc, "steps");
	if (!json_is_array(steps) || !json_array_size(steps) ||
	    json_array_size(steps) > PLAN_STEPS_MAX)
		return api_fail(r, 400, "steps must be an array of 1..%d steps", PLAN_STEPS_MAX), -1;
	for (i = 0; i < json_array_size(steps); i++)
		if (check_step(r, g, a, steps, i, name))
			return -1;
	sched = json_object_get(r->doc, "schedule");
	if (check_schedule(r, sched, every_s, next_run))
		return -1;
	if (json_object_get(r->doc, "keep") &&
	    !integer(json_object_get(r->doc, "keep"), 1, STORE_GAMEDAY_MAX_RUNS, &k))
		return api_fail(r, 400, "keep must be an integer 1..%d (reports kept)",
				STORE_GAMEDAY_MAX_RUNS), -1;
	*keep = (int)k;
	*body = json_pack("{s:o, s:O, s:o}",
			  "description", desc ? json_string(desc) : json_null(),
			  "steps", steps,
			  "schedule", *every_s ? json_pack("{s:I, s:I}", "every_s",
							   (json_int_t)*every_s, "first",
							   (json_int_t)*next_run) : json_null());
	return *body ? 0 : (api_fail(r, 500, "out of memory"), -1);
}
