// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/copy_ramp.c - a copy plan's ramp to the breaking point (issue 37,
 * docs/COPY.md "A ramp to the breaking point"): the admin steps the
 * plan's amplification from ramp.from by ramp.step every ramp.every_s
 * seconds up to ramp.to, and judges each step on the shadow app's own
 * statistics as its loaders reported them; the first step that breaks a
 * stop condition stops the plan and is recorded as the knee, with the
 * shadow's p99 and error rate of the step before and of it.
 *
 * Driven by the copy servers' heartbeats (every 10 s each): the reply to
 * the heartbeat that steps already carries the new amplification, so a
 * step's periods are those that start after it was taken.  A step is
 * judged only once its window holds at least one whole period with 10
 * of the shadow's calls: a ramp never steps blind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heartbeat/heartbeat.h"
#include "window.h"
#include "api/api.h"

#define RAMP_MIN_CALLS	10	/* as the drills' judgment */

struct ramp_sum {
	uint64_t visits, exceptions, downgrades, hist[SDS_HIST_BUCKETS];
};

static int sum_row(const struct store_stat_row *row, void *ctx)
{
	struct ramp_sum *f = ctx;
	int i;

	f->visits += row->visits;
	f->exceptions += row->exceptions;
	f->downgrades += row->downgrades;
	for (i = 0; i < row->nhist && i < SDS_HIST_BUCKETS; i++)
		f->hist[i] += row->hist[i];
	return 0;
}

static double p99_ms(const struct ramp_sum *f)
{
	return window_hist_percentile(f->hist, SDS_HIST_BUCKETS, 99) / 1e6;
}

/* A step's measure: {"amplification", "calls", "p99_ms", "error_rate", "downgrades", "from", "to"}. */
static json_t *measure(int amp, const struct ramp_sum *f, int64_t from, int64_t to)
{
	return json_pack("{s:i, s:I, s:f, s:f, s:I, s:I, s:I}", "amplification", amp,
			 "calls", (json_int_t)f->visits, "p99_ms", p99_ms(f),
			 "error_rate", f->visits ? (double)f->exceptions / f->visits : 0.0,
			 "downgrades", (json_int_t)f->downgrades,
			 "from", (json_int_t)from, "to", (json_int_t)to);
}

/* The first stop condition @m breaks, into @why; false when none. */
static bool broken(json_t *stops, json_t *m, char *why, size_t len)
{
	static const char *const key[][2] = {
		{ "exception_rate", "error_rate" }, { "p99_ms", "p99_ms" },
		{ "downgrades", "downgrades" },
	};
	size_t i;
	json_t *c;
	int k;

	json_array_foreach(stops, i, c) {
		const char *f = json_string_value(json_object_get(c, "field"));
		double above = json_number_value(json_object_get(c, "above")), v;

		for (k = 0; k < 3 && strcmp(key[k][0], f); k++)
			;
		if (k == 3)
			continue;
		v = json_number_value(json_object_get(m, key[k][1]));
		if (v > above) {
			snprintf(why, len, "%s %.3f above %g at x%lld", f, v, above,
				 (long long)json_integer_value(json_object_get(m, "amplification")));
			return true;
		}
	}
	return false;
}

/* One ramping plan @p at @now: judged, stepped, or stopped at its knee. */
static void ramp_one(struct api_route *r, json_t *p, int64_t now)
{
	struct store *st = r->ad->store;
	json_t *ramp = json_object_get(p, "ramp"), *res, *steps, *m, *prev;
	int64_t every = json_integer_value(json_object_get(ramp, "every_s"));
	int64_t step = json_integer_value(json_object_get(ramp, "step"));
	int64_t top = json_integer_value(json_object_get(ramp, "to"));
	int amp = (int)json_integer_value(json_object_get(p, "amplification"));
	const char *g = json_string_value(json_object_get(p, "group"));
	const char *sa = json_string_value(json_object_get(p, "shadow_app"));
	int64_t at, from, to, id = json_integer_value(json_object_get(p, "id"));
	struct ramp_sum f;
	char why[256], tid[24], *text;
	bool stop = false;

	res = json_object_get(p, "ramp_result");
	res = json_is_object(res) ? json_deep_copy(res) :
	      json_pack("{s:s, s:I, s:[]}", "state", "ramping",
			"step_at", json_integer_value(json_object_get(p, "created")), "steps");
	if (!res)
		return;
	if (strcmp(json_string_value(json_object_get(res, "state")), "ramping"))
		goto out;
	at = json_integer_value(json_object_get(res, "step_at"));
	if (now < at + every)
		goto out;
	/* The whole periods since the step was taken. */
	from = (at + SDS_HB_PERIOD_S - 1) / SDS_HB_PERIOD_S * SDS_HB_PERIOD_S;
	to = now / SDS_HB_PERIOD_S * SDS_HB_PERIOD_S;
	if (to <= from || !sa)
		goto out;
	memset(&f, 0, sizeof(f));
	if (st->ops->stats_scan(st, g, sa, NULL, from, to, sum_row, &f, r->err) ||
	    f.visits < RAMP_MIN_CALLS)
		goto out;	/* no statistics yet: judged at a later heartbeat */
	m = measure(amp, &f, from, to);
	steps = json_object_get(res, "steps");
	prev = json_array_size(steps) ? json_array_get(steps, json_array_size(steps) - 1) : NULL;
	if (broken(json_object_get(p, "stop_when"), m, why, sizeof(why))) {
		json_object_set_new(res, "knee", json_pack("{s:i, s:O, s:O, s:O, s:O}",
			"amplification", amp,
			"p99_ms_before", prev ? json_object_get(prev, "p99_ms") : json_null(),
			"p99_ms_at", json_object_get(m, "p99_ms"),
			"error_rate_before", prev ? json_object_get(prev, "error_rate") : json_null(),
			"error_rate_at", json_object_get(m, "error_rate")));
		json_object_set_new(res, "state", json_string("knee"));
		json_object_set_new(res, "reason", json_string(why));
		stop = true;
	} else if (amp + step > top) {
		json_object_set_new(res, "state", json_string("top"));
		snprintf(why, sizeof(why), "x%d, the ramp's top, broke no condition", amp);
		json_object_set_new(res, "reason", json_string(why));
	} else {
		amp += (int)step;
		json_object_set_new(res, "step_at", json_integer(now));
	}
	json_array_append_new(steps, m);
	text = json_dumps(res, JSON_COMPACT);
	if (text && !st->ops->copy_ramp_set(st, id, amp, text, r->err) && stop) {
		api_token_id(r, tid);
		st->ops->copy_plan_stop(st, g, json_string_value(json_object_get(p, "app")), id,
					"sds-admin ramp", tid, now, r->err);
	}
	free(text);
out:
	json_decref(res);
}

void api_copy_ramp_tick(struct api_route *r, int64_t now)
{
	struct store *st = r->ad->store;
	json_t *plans = NULL, *p;
	size_t i;

	if (!st->ops->copy_ramps || !st->ops->copy_ramp_set ||
	    st->ops->copy_ramps(st, now, &plans, r->err))
		return;		/* the next heartbeat tries again */
	json_array_foreach(plans, i, p)
		if (json_is_object(json_object_get(p, "ramp")))
			ramp_one(r, p, now);
	json_decref(plans);
	r->err[0] = '\0';
}
