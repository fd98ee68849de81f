// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* pressure.c - the host pressure rules' codec and validation (pressure.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "strategy.h"

static const char *const res_names[SDS_PSI_NRES] = {
	[SDS_PSI_CPU] = "cpu", [SDS_PSI_MEMORY] = "memory", [SDS_PSI_IO] = "io",
};
static const char *const kind_names[] = {
	[SDS_PSI_SOME] = "some", [SDS_PSI_FULL] = "full",
};
static const char *const prio_names[] = {
	[SDS_PRIO_LOW] = "low", [SDS_PRIO_NORMAL] = "normal", [SDS_PRIO_HIGH] = "high",
};
static const char *const action_names[] = {
	[SDS_PRESSURE_DOWNGRADE] = "downgrade", [SDS_PRESSURE_LIMITS] = "limits",
};

#define NAMES(a)	(sizeof(a) / sizeof((a)[0]))

/* @s's index in @names, or -1. */
static int name_index(const char *const *names, size_t n, const char *s)
{
	size_t i;

	for (i = 0; s && i < n; i++)
		if (!strcmp(names[i], s))
			return (int)i;
	return -1;
}

int pressure_priority_parse(const char *name, int64_t *out)
{
	int i = name_index(prio_names, NAMES(prio_names), name);

	if (i < 0)
		return -1;
	*out = i;
	return 0;
}

const char *pressure_priority_name(int64_t prio)
{
	return prio >= 0 && prio < (int64_t)NAMES(prio_names) ? prio_names[prio] : "";
}

const char *pressure_resource_name(uint32_t res)
{
	return res < SDS_PSI_NRES ? res_names[res] : "";
}

const char *pressure_kind_name(uint32_t kind)
{
	return kind < NAMES(kind_names) ? kind_names[kind] : "";
}

static int limits_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sds_strategy *)a)->point,
		      ((const struct sds_strategy *)b)->point);
}

const struct sds_strategy *pressure_rule_limits(const struct sds_pressure_rule *r,
						const char *point)
{
	struct sds_strategy key;

	if (!point || strlen(point) > SDS_NAME_MAX)
		return NULL;
	snprintf(key.point, sizeof(key.point), "%s", point);
	return bsearch(&key, r->limits, r->nlimits, sizeof(r->limits[0]), limits_cmp);
}

/* A string field of @o that must be one of @names; -1 and @err if not. */
static int rule_enum(json_t *o, const char *key, const char *const *names,
		     size_t n, int dflt, int i, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);
	int x;

	if (!v && dflt >= 0)
		return dflt;
	x = json_is_string(v) ? name_index(names, n, json_string_value(v)) : -1;
	if (x < 0) {
		char list[64] = "";
		size_t k;

		for (k = 0; k < n; k++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list),
				 "%s\"%s\"", k ? (k + 1 == n ? " or " : ", ") : "",
				 names[k]);
		snprintf(err, errlen, "pressure rule %d: %s must be %s", i, key, list);
	}
	return x;
}

/* An integer field in @lo..@hi; @dflt when absent (-1: required). */
static int rule_int(json_t *o, const char *key, int64_t lo, int64_t hi,
		    int64_t dflt, int64_t *out, int i, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);

	if (!v && dflt >= 0) {
		*out = dflt;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > hi) {
		snprintf(err, errlen, "pressure rule %d: %s must be an integer %lld..%lld",
			 i, key, (long long)lo, (long long)hi);
		return -1;
	}
	*out = json_integer_value(v);
	return 0;
}

/* "limits": {"POINT": {strategy fields}, ...}, read by the strategies codec. */
static int rule_limits(json_t *lim, struct sds_pressure_rule *r, int i,
		       char *err, size_t errlen)
{
	struct sds_strategies *tmp;
	json_t *doc, *v;
	const char *key;
	char e2[400];
	int ret = -1;

	if (!json_is_object(lim) || !json_object_size(lim) ||
	    json_object_size(lim) > SDS_PRESSURE_MAX_LIMITS) {
		snprintf(err, errlen,
			 "pressure rule %d: limits must be an object of 1..%d point name -> strategy fields",
			 i, SDS_PRESSURE_MAX_LIMITS);
		return -1;
	}
	/* Priority says which rules shed a point: no rule's limits may change it. */
	json_object_foreach(lim, key, v) {
		if (json_is_object(v) && json_object_get(v, "priority")) {
			snprintf(err, errlen,
				 "pressure rule %d: limits of '%.64s': priority is the point's own, not a limit",
				 i, key);
			return -1;
		}
	}
	tmp = malloc(sizeof(*tmp));
	doc = json_pack("{s:i, s:O}", "version", 0, "points", lim);
	if (!tmp || !doc) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (strategy_set_from_json(doc, tmp, e2, sizeof(e2))) {
		snprintf(err, errlen, "pressure rule %d: limits: %s", i, e2);
		goto out;
	}
	/* A rule's limits are strategies alone: no document holds overrides. */
	if (tmp->nkey_ov) {
		snprintf(err, errlen,
			 "pressure rule %d: limits: key_overrides are a point's own, not a rule's",
			 i);
		goto out;
	}
	r->nlimits = tmp->n;
	memcpy(r->limits, tmp->s, tmp->n * sizeof(tmp->s[0]));	/* sorted */
	ret = 0;
out:
	json_decref(doc);
	free(tmp);
	return ret;
}

/* Does a point of @s have priority @prio or lower? */
static bool has_priority_upto(const struct sds_strategies *s, uint32_t prio)
{
	int k;

	for (k = 0; k < s->n; k++)
		if (s->s[k].priority <= (int64_t)prio)
			return true;
	return false;
}

static int rule_from_json(json_t *o, int i, const struct sds_strategies *s,
			  struct sds_pressure_rule *r, char *err, size_t errlen)
{
	static const char *const known[] = {
		"resource", "kind", "above_pct", "below_pct", "for_ms",
		"clear_ms", "action", "priority", "limits",
	};
	const char *key;
	json_t *v;
	int x;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(o)) {
		snprintf(err, errlen, "pressure rule %d: expected an object", i);
		return -1;
	}
	json_object_foreach(o, key, v) {
		if (name_index(known, NAMES(known), key) < 0) {
			snprintf(err, errlen, "pressure rule %d: unknown field '%.64s'",
				 i, key);
			return -1;
		}
	}
	if ((x = rule_enum(o, "resource", res_names, SDS_PSI_NRES, -1, i, err, errlen)) < 0)
		return -1;
	r->resource = x;
	if ((x = rule_enum(o, "kind", kind_names, NAMES(kind_names), SDS_PSI_SOME,
			   i, err, errlen)) < 0)
		return -1;
	r->kind = x;
	/* Nothing stalls more than all the time: above 99 % can never be exceeded. */
	if (rule_int(o, "above_pct", 0, 99, -1, &r->above_pct, i, err, errlen))
		return -1;
	if (rule_int(o, "below_pct", 0, r->above_pct,
		     r->above_pct > SDS_PRESSURE_MARGIN_PCT ?
		     r->above_pct - SDS_PRESSURE_MARGIN_PCT : 0,
		     &r->below_pct, i, err, errlen))
		return -1;
	/* The windows a PSI trigger accepts: such a rule stays pollable. */
	if (rule_int(o, "for_ms", SDS_PRESSURE_WIN_MIN_MS, SDS_PRESSURE_WIN_MAX_MS,
		     -1, &r->for_ms, i, err, errlen))
		return -1;
	if (rule_int(o, "clear_ms", SDS_PRESSURE_WIN_MIN_MS, SDS_PRESSURE_WIN_MAX_MS,
		     r->for_ms, &r->clear_ms, i, err, errlen))
		return -1;
	if ((x = rule_enum(o, "action", action_names, NAMES(action_names), -1,
			   i, err, errlen)) < 0)
		return -1;
	r->action = x;
	/*
	 * The kernel reports cpu "full" as 0 host-wide (it is defined for
	 * cgroups only): such a rule can never fire.
	 */
	if (r->resource == SDS_PSI_CPU && r->kind == SDS_PSI_FULL) {
		snprintf(err, errlen,
			 "pressure rule %d: cpu full is always 0 host-wide: the rule can never fire",
			 i);
		return -1;
	}
	if (r->action == SDS_PRESSURE_LIMITS) {
		if (json_object_get(o, "priority")) {
			snprintf(err, errlen,
				 "pressure rule %d: priority goes with action \"downgrade\"", i);
			return -1;
		}
		return rule_limits(json_object_get(o, "limits"), r, i, err, errlen);
	}
	if (json_object_get(o, "limits")) {
		snprintf(err, errlen, "pressure rule %d: limits go with action \"limits\"", i);
		return -1;
	}
	if ((x = rule_enum(o, "priority", prio_names, NAMES(prio_names), SDS_PRIO_LOW,
			   i, err, errlen)) < 0)
		return -1;
	r->priority = x;
	/*
	 * Points without a strategy are normal: only a rule shedding low
	 * points needs one the document marks low, else it sheds nothing.
	 */
	if (r->priority == SDS_PRIO_LOW && !has_priority_upto(s, SDS_PRIO_LOW)) {
		snprintf(err, errlen,
			 "pressure rule %d: no point has priority \"low\": the rule would downgrade nothing",
			 i);
		return -1;
	}
	return 0;
}

int pressure_set_from_json(json_t *arr, const struct sds_strategies *s,
			   struct sds_pressure_set *out, char *err, size_t errlen)
{
	size_t i;
	json_t *v;

	out->n = 0;
	if (!arr)
		return 0;
	if (!json_is_array(arr) || json_array_size(arr) > SDS_PRESSURE_MAX_RULES) {
		snprintf(err, errlen, "pressure must be an array of at most %d rules",
			 SDS_PRESSURE_MAX_RULES);
		return -1;
	}
	json_array_foreach(arr, i, v) {
		if (rule_from_json(v, (int)i, s, &out->r[i], err, errlen))
			return -1;
		out->n++;
	}
	return 0;
}

json_t *pressure_set_to_json(const struct sds_pressure_set *p)
{
	json_t *arr = json_array();
	int i, k;

	for (i = 0; arr && i < p->n; i++) {
		const struct sds_pressure_rule *r = &p->r[i];
		json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:s}",
				      "resource", pressure_resource_name(r->resource),
				      "kind", pressure_kind_name(r->kind),
				      "above_pct", (json_int_t)r->above_pct,
				      "below_pct", (json_int_t)r->below_pct,
				      "for_ms", (json_int_t)r->for_ms,
				      "clear_ms", (json_int_t)r->clear_ms,
				      "action", action_names[r->action]);

		if (!o)
			continue;
		if (r->action == SDS_PRESSURE_DOWNGRADE) {
			json_object_set_new(o, "priority",
					    json_string(pressure_priority_name(r->priority)));
		} else {
			json_t *lim = json_object();

			for (k = 0; k < r->nlimits; k++)
				json_object_set_new(lim, r->limits[k].point,
						    strategy_to_json(&r->limits[k]));
			json_object_set_new(o, "limits", lim);
		}
		json_array_append_new(arr, o);
	}
	return arr;
}
