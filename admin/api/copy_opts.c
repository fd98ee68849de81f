// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/copy_opts.c - a copy plan's live diff and ramp settings (issue 37,
 * docs/COPY.md "Live diff", "A ramp to the breaking point"), checked
 * whole before anything is stored: each bad one is a 400 of one line.
 *
 *   "diff": true, "ignore": ["$.ts", "/id=[0-9]+/", "header:Date"]
 *   "ramp": {"from": 1, "to": 10, "step": 1, "every_s": 60},
 *   "stop_when": [{"field": "p99_ms", "above": 50}], "shadow_app": "shop-b"
 *
 * The ignore rules are parsed by the same code as `sds-copy replay
 * --ignore` (copy/diff/diff.c), so the admin refuses exactly what the
 * copy servers would.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/api.h"
#include "diff.h"
#include "names.h"

#define IGNORE_MAX	16	/* sds-copy's COPY_IGNORE_MAX */
#define IGNORE_LEN	256	/* ... COPY_IGNORE_LEN */
#define STOPS_MAX	4	/* stop conditions of a ramp */

static const char *const f_ramp[] = { "from", "to", "step", "every_s", NULL };
static const char *const f_stop[] = { "field", "above", NULL };
static const char *const stop_fields[] = { "exception_rate", "p99_ms", "downgrades", NULL };

static int unknown_key(struct api_route *r, json_t *o, const char *const *ok,
		       const char *what)
{
	const char *k;
	json_t *v;
	int i;

	json_object_foreach(o, k, v) {
		for (i = 0; ok[i] && strcmp(ok[i], k); i++)
			;
		if (!ok[i]) {
			api_fail(r, 400, "%s: unknown field '%.64s'", what, k);
			return -1;
		}
	}
	return 0;
}

static int ignore_check(struct api_route *r, json_t *a)
{
	struct diff_rules rules;
	char why[512];
	size_t i;
	json_t *v;
	int rc = 0;

	if (!json_is_array(a) || json_array_size(a) > IGNORE_MAX) {
		api_fail(r, 400, "ignore must be an array of at most %d rules", IGNORE_MAX);
		return -1;
	}
	memset(&rules, 0, sizeof(rules));
	json_array_foreach(a, i, v) {
		const char *s = json_string_value(v);

		if (!s || strlen(s) != json_string_length(v) || strlen(s) > IGNORE_LEN) {
			api_fail(r, 400, "ignore[%zu] must be a string of at most %d bytes", i,
				 IGNORE_LEN);
			rc = -1;
			break;
		}
		if (diff_rules_add(&rules, s, why, sizeof(why))) {
			api_fail(r, 400, "ignore[%zu]: %s", i, why);
			rc = -1;
			break;
		}
	}
	diff_rules_free(&rules);
	return rc;
}

static int int_in(struct api_route *r, json_t *o, const char *key, int64_t lo,
		  int64_t hi, const char *why, int64_t *out)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		api_fail(r, 400, "ramp.%s must be an integer %lld..%lld%s", key,
			 (long long)lo, (long long)hi, why);
		return -1;
	}
	*out = json_integer_value(v);
	return 0;
}

static int ramp_check(struct api_route *r, json_t *o, int64_t *from)
{
	int64_t f, t, step, every;
	char why[96];

	if (!json_is_object(o)) {
		api_fail(r, 400, "ramp must be an object {from, to, step, every_s}");
		return -1;
	}
	snprintf(why, sizeof(why), " (--copy-max-amplification %d)", r->ad->copy_max_amp);
	if (unknown_key(r, o, f_ramp, "ramp") ||
	    int_in(r, o, "from", 1, r->ad->copy_max_amp, why, &f) ||
	    int_in(r, o, "to", 1, r->ad->copy_max_amp, why, &t))
		return -1;
	if (f > t) {
		api_fail(r, 400, "ramp: from %lld is above to %lld", (long long)f, (long long)t);
		return -1;
	}
	if (!json_is_integer(json_object_get(o, "step")) ||
	    json_integer_value(json_object_get(o, "step")) <= 0) {
		api_fail(r, 400, "ramp.step must be an integer >= 1 (copies added per step)");
		return -1;
	}
	if (int_in(r, o, "step", 1, r->ad->copy_max_amp, "", &step))
		return -1;
	if (!json_is_integer(json_object_get(o, "every_s")) ||
	    json_integer_value(json_object_get(o, "every_s")) < SDS_HB_PERIOD_S) {
		api_fail(r, 400, "ramp.every_s must be an integer of at least %d (the admin's period: a shorter step has no statistics of its own)",
			 SDS_HB_PERIOD_S);
		return -1;
	}
	if (int_in(r, o, "every_s", SDS_HB_PERIOD_S, 86400, "", &every))
		return -1;
	*from = f;
	return 0;
}

static int stops_check(struct api_route *r, json_t *a)
{
	json_t *c, *v;
	const char *f;
	char what[32];
	size_t i;
	int k;

	if (!json_is_array(a) || !json_array_size(a) || json_array_size(a) > STOPS_MAX) {
		api_fail(r, 400, "stop_when must be an array of 1..%d conditions {field, above}",
			 STOPS_MAX);
		return -1;
	}
	json_array_foreach(a, i, c) {
		snprintf(what, sizeof(what), "stop_when[%zu]", i);
		if (!json_is_object(c)) {
			api_fail(r, 400, "%s must be an object {field, above}", what);
			return -1;
		}
		if (unknown_key(r, c, f_stop, what))
			return -1;
		f = json_string_value(json_object_get(c, "field"));
		for (k = 0; f && stop_fields[k] && strcmp(stop_fields[k], f); k++)
			;
		if (!f || !stop_fields[k]) {
			api_fail(r, 400, "%s.field: '%.64s' is not one of exception_rate, p99_ms, downgrades",
				 what, f ? f : "");
			return -1;
		}
		v = json_object_get(c, "above");
		if (!json_is_number(v) || json_number_value(v) < 0 ||
		    (k == 0 && json_number_value(v) > 1) ||
		    json_number_value(v) > 1099511627776.0) {
			api_fail(r, 400, "%s.above must be a number %s", what,
				 k == 0 ? "0..1 (a share of the calls)" : "0..2^40");
			return -1;
		}
	}
	return 0;
}

int api_copy_opts(struct api_route *r, const char *g, const struct store_copy_plan *p,
		  int64_t *amp, char **opts)
{
	json_t *d = json_object_get(r->doc, "diff"), *ign = json_object_get(r->doc, "ignore");
	json_t *ramp = json_object_get(r->doc, "ramp");
	json_t *stop = json_object_get(r->doc, "stop_when");
	json_t *sa = json_object_get(r->doc, "shadow_app"), *o, *app = NULL;
	struct store *st = r->ad->store;
	int64_t from = 1;

	*opts = NULL;
	if (d && !json_is_boolean(d)) {
		api_fail(r, 400, "diff must be true or false");
		return -1;
	}
	(void)p;
	if (ign && !json_is_true(d)) {
		api_fail(r, 400, "ignore needs diff: true");
		return -1;
	}
	if (ign && ignore_check(r, ign))
		return -1;
	if (ramp && json_object_get(r->doc, "amplification") &&
	    !json_is_null(json_object_get(r->doc, "amplification"))) {
		api_fail(r, 400, "give amplification or ramp, not both (a ramp sets it)");
		return -1;
	}
	if (ramp && ramp_check(r, ramp, &from))
		return -1;
	if (stop && !ramp) {
		api_fail(r, 400, "stop_when needs a ramp (it says when to stop stepping)");
		return -1;
	}
	if (stop && stops_check(r, stop))
		return -1;
	if (sa && !stop) {
		api_fail(r, 400, "shadow_app needs stop_when (it is whose statistics they read)");
		return -1;
	}
	if (stop && (!json_is_string(sa) || !sds_name_valid(json_string_value(sa)))) {
		api_fail(r, 400, "shadow_app: required with stop_when, the shadow's app name (1-64 of [A-Za-z0-9_-])");
		return -1;
	}
	if (stop) {
		/* Conditions on an app the admin has never heard of would never break. */
		int rc = st->ops->app_get(st, g, json_string_value(sa), &app, r->err);

		if (rc == STORE_NOTFOUND) {
			api_fail(r, 400, "shadow_app '%s': the admin has no such app in group '%s'",
				 json_string_value(sa), g);
			return -1;
		}
		if (api_store_rc(r, rc))
			return -1;
		json_decref(app);
	}
	if (!json_is_true(d) && !ramp)
		return 0;
	o = json_object();
	if (json_is_true(d))
		json_object_set(o, "diff", d);
	if (ign)
		json_object_set(o, "ignore", ign);
	if (ramp) {
		json_object_set_new(o, "ramp", json_pack("{s:O, s:O, s:O, s:O}",
			"from", json_object_get(ramp, "from"), "to", json_object_get(ramp, "to"),
			"step", json_object_get(ramp, "step"),
			"every_s", json_object_get(ramp, "every_s")));
		*amp = from;
	}
	if (stop)
		json_object_set(o, "stop_when", stop);
	if (sa)
		json_object_set(o, "shadow_app", sa);
	*opts = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!*opts) {
		api_fail(r, 500, "out of memory");
		return -1;
	}
	return 0;
}
