// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/copy_diff.c - a copy plan's live diff and ramp in the store
 * (both engines; docs/COPY.md "Live diff", "A ramp to the breaking
 * point"): the plan's options and its ramp's result shown with the plan,
 * the pairs its copy servers judged stored per period, server and point,
 * and summed for the plan's API.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/query/sq.h"

#define DIFF_EXAMPLES_SHOWN	5	/* first differences shown per point */

static const char *const opt_keys[] = {
	"diff", "ignore", "ramp", "stop_when", "shadow_app", NULL
};

void sq_copy_opts_show(struct sq_stmt *q, json_t *plan)
{
	json_t *opts = sq_col_null(q, CP_OPTS) ? NULL :
		       json_loads(sq_col_text(q, CP_OPTS), 0, NULL);
	json_t *res = sq_col_null(q, CP_RESULT) ? NULL :
		      json_loads(sq_col_text(q, CP_RESULT), 0, NULL);
	int i;

	json_object_set_new(plan, "diff", json_boolean(json_is_true(json_object_get(opts, "diff"))));
	for (i = 1; opt_keys[i]; i++)
		if (json_object_get(opts, opt_keys[i]))
			json_object_set(plan, opt_keys[i], json_object_get(opts, opt_keys[i]));
	if (json_object_get(opts, "ramp"))
		json_object_set(plan, "ramp_result", res ? res : json_null());
	json_decref(opts);
	json_decref(res);
}

int sq_copy_diff_put(struct sq_store *s, int64_t plan, const struct store_copy_hb *hb,
		     const struct store_copy_hb_plan *p, char *err)
{
	static const char *const f[] = {
		"pairs", "same", "different", "shadow_errors", "timeouts", NULL
	};
	const char *point;
	struct sq_stmt *q;
	json_t *v, *ex;
	char *text;
	int i, ret;

	json_object_foreach(p->diff_points, point, v) {
		q = sq_q(s, Q_COPY_DSTAT);
		if (!q)
			return sq_dberr(s, err);
		sq_bind_int64(q, 1, plan);
		sq_bind_int64(q, 2, hb->period_start);
		sq_bind_text(q, 3, hb->name);
		sq_bind_text(q, 4, point);
		for (i = 0; f[i]; i++)
			sq_bind_int64(q, 5 + i, json_integer_value(json_object_get(v, f[i])));
		ex = json_object_get(v, "examples");
		text = json_array_size(ex) ? json_dumps(ex, JSON_COMPACT) : NULL;
		if (text)
			sq_bind_text_copy(q, 10, text);
		else
			sq_bind_null(q, 10);
		free(text);
		ret = sq_run(s, q, err);
		if (ret)
			return ret;
	}
	return 0;
}

static json_t *counts_at(struct sq_stmt *q, int first)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I}",
			 "pairs", (json_int_t)sq_col_int64(q, first),
			 "same", (json_int_t)sq_col_int64(q, first + 1),
			 "different", (json_int_t)sq_col_int64(q, first + 2),
			 "shadow_errors", (json_int_t)sq_col_int64(q, first + 3),
			 "timeouts", (json_int_t)sq_col_int64(q, first + 4));
}

static void add_counts(json_t *to, json_t *from)
{
	const char *k;
	json_t *v;

	json_object_foreach(from, k, v)
		json_object_set_new(to, k, json_integer(json_integer_value(json_object_get(to, k)) +
							json_integer_value(v)));
}

static json_t *point_in(json_t *pts, const char *name)
{
	size_t i;
	json_t *v;

	json_array_foreach(pts, i, v)
		if (!strcmp(json_string_value(json_object_get(v, "point")), name))
			return v;
	return NULL;
}

/* Examples of the periods in order, the first few per point (lock held). */
static int examples_add(struct sq_store *s, int64_t plan, json_t *pts, char *err)
{
	struct sq_stmt *q = sq_qk(s, Q_COPY_DEX, plan);
	json_t *pt, *ex, *mine, *e;
	size_t i;
	int rc;

	if (!q)
		return sq_dberr(s, err);
	while ((rc = sq_step(q)) == SQ_ROW) {
		pt = point_in(pts, sq_col_text(q, 0));
		ex = json_loads(sq_col_text(q, 1), 0, NULL);
		mine = pt ? json_object_get(pt, "examples") : NULL;
		json_array_foreach(ex, i, e)
			if (mine && json_array_size(mine) < DIFF_EXAMPLES_SHOWN)
				json_array_append(mine, e);
		json_decref(ex);
	}
	sq_reset(q);
	return rc == SQ_DONE ? 0 : sq_dberr(s, err);
}

int sq_copy_diff_summary(struct sq_store *s, int64_t plan, json_t *out, char *err)
{
	struct sq_stmt *q = sq_qk(s, Q_COPY_DSUM, plan);
	json_t *pts = json_array(), *tot, *o;
	int64_t unpaired = 0;
	int rc, ret;

	tot = json_pack("{s:I, s:I, s:I, s:I, s:I}", "pairs", (json_int_t)0, "same",
			(json_int_t)0, "different", (json_int_t)0, "shadow_errors",
			(json_int_t)0, "timeouts", (json_int_t)0);
	if (!q) {
		json_decref(pts);
		json_decref(tot);
		return sq_dberr(s, err);
	}
	while ((rc = sq_step(q)) == SQ_ROW) {
		o = counts_at(q, 1);
		add_counts(tot, o);
		json_object_set_new(o, "point", json_string(sq_col_text(q, 0)));
		json_object_set_new(o, "examples", json_array());
		json_array_append_new(pts, o);
	}
	sq_reset(q);
	ret = rc == SQ_DONE ? examples_add(s, plan, pts, err) : sq_dberr(s, err);
	q = ret ? NULL : sq_qk(s, Q_COPY_UNPAIRED, plan);
	if (!ret && (!q || (rc = sq_step(q)) != SQ_ROW))
		ret = sq_dberr(s, err);
	if (!ret) {
		unpaired = sq_col_int64(q, 0);
		sq_reset(q);
	}
	if (ret) {
		json_decref(pts);
		json_decref(tot);
		return ret;
	}
	json_object_set_new(tot, "unpaired", json_integer(unpaired));
	json_object_set_new(tot, "points", pts);
	json_object_set_new(out, "diff_result", tot);
	return 0;
}

int sq_copy_diff_periods(struct sq_store *s, int64_t plan, int64_t from, int64_t to,
			 json_t *periods, char *err)
{
	struct sq_stmt *q = sq_qk(s, Q_COPY_DPERIODS, plan);
	json_t *v;
	size_t i;
	int rc;

	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 2, from);
	sq_bind_int64(q, 3, to);
	while ((rc = sq_step(q)) == SQ_ROW) {
		json_array_foreach(periods, i, v)
			if (json_integer_value(json_object_get(v, "period_start")) ==
			    sq_col_int64(q, 0)) {
				json_object_set_new(v, "diff", counts_at(q, 1));
				break;
			}
	}
	sq_reset(q);
	return rc == SQ_DONE ? 0 : sq_dberr(s, err);
}

int sq_copy_ramps(struct store *st, int64_t now, json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_stmt *q;
	int ret;

	sq_lock(st);
	q = sq_q(s, Q_COPY_RAMPING);
	if (q)
		sq_bind_int64(q, 1, now);
	ret = sq_rows(s, q, sq_copy_plan_row, out, err);
	sq_unlock(st);
	return ret;
}

int sq_copy_ramp_set(struct store *st, int64_t id, int amplification,
		     const char *result, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_stmt *q;
	int ret;

	sq_lock(st);
	q = sq_q(s, Q_COPY_RAMP);
	if (!q) {
		ret = sq_dberr(s, err);
	} else {
		sq_bind_int64(q, 1, id);
		sq_bind_int64(q, 2, amplification);
		sq_bind_text(q, 3, result);
		ret = sq_run(s, q, err);
	}
	sq_unlock(st);
	return ret;
}
