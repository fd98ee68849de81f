// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/copy.c - traffic copy plans in the store (both engines) (issue 12,
 * docs/COPY.md): the plans, what loaders captured of them and what copy
 * servers did with the captures, per period, and the copy servers.
 *
 * A point is in at most one active plan of its app, and an active plan's
 * name is unique among all active plans: sds-copy takes every active plan
 * in one document, where names and (app, point) pairs must not repeat.
 * That also makes a loader's per-plan sums exact: each point's counts go
 * to one plan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/query/sq.h"

#define COPY_ACTIVE_MAX	SDS_HB_COPY_PLANS	/* active plans, all apps together */

json_t *sq_copy_col_json(struct sq_stmt *q, int i)
{
	json_t *v = json_loads(sq_col_text(q, i), 0, NULL);

	return v ? v : json_array();
}

static const char *plan_state(json_t *o, int64_t now)
{
	if (!json_is_null(json_object_get(o, "stopped_at")))
		return "stopped";
	return json_integer_value(json_object_get(o, "expires_at")) > now ?
	       "active" : "expired";
}

/* A plan as the API shows it (state added by the caller: it needs now). */
json_t *sq_copy_plan_row(struct sq_stmt *q)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:o, s:i, s:i, s:o, s:s, s:b, s:I, s:I, s:I, s:s}",
		"id", (json_int_t)sq_col_int64(q, CP_ID),
		"group", sq_col_text(q, CP_GROUP), "app", sq_col_text(q, CP_APP),
		"name", sq_col_text(q, CP_NAME), "points", sq_copy_col_json(q, CP_POINTS),
		"sample_pct", sq_col_int(q, CP_PCT),
		"amplification", sq_col_int(q, CP_AMP),
		"shadows", sq_copy_col_json(q, CP_SHADOWS),
		"framing", sq_col_text(q, CP_FRAMING),
		"writes", sq_col_int(q, CP_WRITES),
		"rate", (json_int_t)sq_col_int64(q, CP_RATE),
		"created", (json_int_t)sq_col_int64(q, CP_CREATED),
		"expires_at", (json_int_t)sq_col_int64(q, CP_EXPIRES),
		"started_by", sq_col_text(q, CP_STARTED_BY));

	json_object_set_new(o, "stopped_at", sq_col_null(q, CP_STOPPED_AT) ?
			    json_null() : json_integer(sq_col_int64(q, CP_STOPPED_AT)));
	json_object_set_new(o, "stopped_by", sq_col_null(q, CP_STOPPED_BY) ?
			    json_null() : json_string(sq_col_text(q, CP_STOPPED_BY)));
	sq_copy_opts_show(q, o);
	return o;
}

static bool in_points(json_t *pts, const char *name)
{
	size_t i;
	json_t *v;

	json_array_foreach(pts, i, v)
		if (!strcmp(json_string_value(v), name))
			return true;
	return false;
}

/* Was the plan at @q's row running during the period starting at @ps? */
static bool ran_in(struct sq_stmt *q, int64_t ps)
{
	return sq_col_int64(q, CP_CREATED) < ps + SDS_HB_PERIOD_S &&
	       sq_col_int64(q, CP_EXPIRES) > ps &&
	       (sq_col_null(q, CP_STOPPED_AT) ||
		sq_col_int64(q, CP_STOPPED_AT) > ps);
}

/*
 * Per plan of @app that ran in @hb's period (one stopped since still
 * gets its last period), the sums of @hb's points in it (transaction
 * held).  A host that reported none of a plan's points, or only zeros,
 * adds no row.
 */
int sq_copy_loader_counts(struct sq_store *s, int64_t app,
		       const struct sds_heartbeat *hb, char *err)
{
	struct { int64_t id; uint64_t cap, drop; bool seen; } sums[SDS_HB_COPY_PLANS];
	struct sq_stmt *q = sq_qk(s, Q_COPY_LIST, app);
	int n = 0, i, j, rc, ret;

	if (!q)
		return sq_dberr(s, err);
	while ((rc = sq_step(q)) == SQ_ROW && n < SDS_HB_COPY_PLANS) {
		json_t *pts;

		if (!ran_in(q, hb->period_start))
			continue;
		pts = sq_copy_col_json(q, CP_POINTS);
		memset(&sums[n], 0, sizeof(sums[n]));
		sums[n].id = sq_col_int64(q, CP_ID);
		for (j = 0; j < hb->n; j++) {
			if (!in_points(pts, hb->points[j].name))
				continue;
			sums[n].seen = true;
			sums[n].cap += hb->points[j].copy_captured;
			sums[n].drop += hb->points[j].copy_dropped;
		}
		json_decref(pts);
		n++;
	}
	sq_reset(q);
	if (rc != SQ_DONE && rc != SQ_ROW)
		return sq_dberr(s, err);
	for (i = 0; i < n; i++) {
		/* Zeros add nothing to a sum: most hosts of a plan capture nothing. */
		if (!sums[i].seen || (!sums[i].cap && !sums[i].drop))
			continue;
		q = sq_q(s, Q_COPY_LSTAT);
		if (!q)
			return sq_dberr(s, err);
		sq_bind_int64(q, 1, sums[i].id);
		sq_bind_int64(q, 2, hb->period_start);
		sq_bind_text(q, 3, hb->host);
		sq_bind_int64(q, 4, (int64_t)sums[i].cap);
		sq_bind_int64(q, 5, (int64_t)sums[i].drop);
		ret = sq_run(s, q, err);
		if (ret)
			return ret;
	}
	return 0;
}

static int live_servers(struct sq_store *s, int64_t now,
			struct sds_hb_copy *out, char *err)
{
	struct sq_stmt *q = sq_q(s, Q_COPY_SRV_LIVE);
	int rc;

	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 1, now - STORE_COPY_LIVE_S);
	while ((rc = sq_step(q)) == SQ_ROW && out->nservers < SDS_HB_COPY_SERVERS)
		snprintf(out->servers[out->nservers++], sizeof(out->servers[0]), "%s",
			 sq_col_text(q, 0));
	sq_reset(q);
	return rc == SQ_DONE || rc == SQ_ROW ? 0 : sq_dberr(s, err);
}

/* The heartbeat reply's "copy" of @app at @now (lock held). */
int sq_copy_for_app(struct sq_store *s, int64_t app, int64_t now,
		 struct sds_hb_copy *out, char *err)
{
	struct sq_stmt *q = sq_q(s, Q_COPY_ACTIVE_APP);
	int rc;

	out->nplans = 0;
	out->nservers = 0;
	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 1, app);
	sq_bind_int64(q, 2, now);
	while ((rc = sq_step(q)) == SQ_ROW && out->nplans < SDS_HB_COPY_PLANS) {
		struct sds_hb_copy_plan *p = &out->plans[out->nplans++];
		json_t *pts = sq_copy_col_json(q, CP_POINTS), *v;
		size_t i;

		p->id = sq_col_int64(q, CP_ID);
		snprintf(p->name, sizeof(p->name), "%s", sq_col_text(q, CP_NAME));
		p->sample_pct = sq_col_int(q, CP_PCT);
		p->expires_at = sq_col_int64(q, CP_EXPIRES);
		p->diff = !sq_col_null(q, CP_OPTS) &&
			  strstr(sq_col_text(q, CP_OPTS), "\"diff\":true");
		p->npoints = 0;
		json_array_foreach(pts, i, v)
			if (p->npoints < SDS_HB_COPY_POINTS)
				snprintf(p->points[p->npoints++], sizeof(p->points[0]),
					 "%s", json_string_value(v));
		json_decref(pts);
	}
	sq_reset(q);
	if (rc != SQ_DONE && rc != SQ_ROW)
		return sq_dberr(s, err);
	return live_servers(s, now, out, err);
}

/*
 * 409 unless @p's name is free among active plans and none of its points
 * is in another active plan of an app named @a (records carry the app's
 * name only, so same-named apps of two groups are one to sds-copy);
 * @self: the plan being updated, or 0.
 */
static int copy_conflicts(struct sq_store *s, const char *a, int64_t self,
			  const struct store_copy_plan *p, int64_t now, char *err)
{
	struct sq_stmt *q = sq_q(s, Q_COPY_ACTIVE_ALL);
	int rc = SQ_DONE, ret = 0, i, n = 0;

	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 1, now);
	while (!ret && (rc = sq_step(q)) == SQ_ROW) {
		int64_t id = sq_col_int64(q, CP_ID);
		json_t *pts;

		if (id == self)
			continue;
		/* A copy server takes 64 plans, a heartbeat reply 64 of an app. */
		if (++n >= COPY_ACTIVE_MAX) {
			sq_seterr(err, "%d copy plans are active, the most copy servers take: stop one first",
			       COPY_ACTIVE_MAX);
			ret = STORE_CONFLICT;
			break;
		}
		if (!strcmp(sq_col_text(q, CP_NAME), p->name)) {
			sq_seterr(err, "copy plan %lld is active with the name '%s'",
			       (long long)id, p->name);
			ret = STORE_CONFLICT;
			break;
		}
		if (strcmp(sq_col_text(q, CP_APP), a))
			continue;
		pts = sq_copy_col_json(q, CP_POINTS);
		for (i = 0; i < p->npoints && !ret; i++) {
			if (!in_points(pts, p->points[i]))
				continue;
			sq_seterr(err, "point '%s' is in active copy plan %lld",
			       p->points[i], (long long)id);
			ret = STORE_CONFLICT;
		}
		json_decref(pts);
	}
	sq_reset(q);
	if (!ret && rc != SQ_DONE)
		return sq_dberr(s, err);
	return ret;
}

static char *points_text(const struct store_copy_plan *p)
{
	json_t *a = json_array();
	char *t;
	int i;

	for (i = 0; a && i < p->npoints; i++)
		json_array_append_new(a, json_string(p->points[i]));
	t = a ? json_dumps(a, JSON_COMPACT) : NULL;
	json_decref(a);
	return t;
}

/* Bind ?3..?9 (points .. rate) of Q_COPY_INS/UPD's shared order. */
static void bind_settings(struct sq_stmt *q, int first, const char *pts,
			  const struct store_copy_plan *p)
{
	sq_bind_text_copy(q, first, pts);
	sq_bind_int64(q, first + 1, (int)p->sample_pct);
	sq_bind_int64(q, first + 2, p->amplification);
	sq_bind_text(q, first + 3, p->shadows);
	sq_bind_text(q, first + 4, p->framing);
	sq_bind_int64(q, first + 5, p->writes);
	sq_bind_int64(q, first + 6, p->rate);
}

/* "copy plan 3 (x5) on order,pay: 30%, x5 raw, reads, until 1700003600" */
static void plan_detail(char *out, size_t len, int64_t id, const char *pts,
			const struct store_copy_plan *p)
{
	snprintf(out, len, "copy plan %lld (%s) on %s: %u%%, x%d %s, %s, until %lld",
		 (long long)id, p->name, pts, p->sample_pct, p->amplification,
		 p->framing, p->writes ? "writes too" : "reads",
		 (long long)p->expires_at);
}

int sq_copy_plan_create(struct store *st, const char *g, const char *a,
			const struct store_copy_plan *p, int64_t now,
			int64_t *id, char *err)
{
	struct sq_store *s = SQ(st);
	char detail[1024], who[ADMIN_WHO_MAX], *pts = points_text(p);
	struct sq_app_ref r;
	struct sq_stmt *q;
	int ret;

	if (!pts) {
		sq_seterr(err, "out of memory");
		return STORE_ERROR;
	}
	sq_lock(st);
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = copy_conflicts(s, a, 0, p, now, err);
	if (ret)
		goto fail;
	q = sq_q(s, Q_COPY_INS);
	if (!q)
		goto dbfail;
	sq_bind_int64(q, 1, r.id);
	sq_bind_text(q, 2, p->name);
	bind_settings(q, 3, pts, p);
	sq_bind_int64(q, 10, now);
	sq_bind_int64(q, 11, p->expires_at);
	snprintf(who, sizeof(who), "%s (token %s)", p->by, p->token_id);
	sq_bind_text(q, 12, who);
	if (p->opts)
		sq_bind_text(q, 13, p->opts);
	else
		sq_bind_null(q, 13);
	ret = sq_run(s, q, err);
	if (ret)
		goto fail;
	*id = sq_last_id(s);
	plan_detail(detail, sizeof(detail), *id, pts, p);
	ret = sq_commit_audited(s, 0, r.id, "copy.start", detail, who, err);
	goto out;
dbfail:
	ret = sq_dberr(s, err);
fail:
	sq_rollback(s);
out:
	sq_unlock(st);
	free(pts);
	return ret;
}

/*
 * Plan @id of @app into *out (NOTFOUND with a message if there is none);
 * 409 if @active and it is stopped or expired.
 */
static int plan_fetch(struct sq_store *s, int64_t app, int64_t id,
		      int64_t now, bool active, json_t **out, char *err)
{
	struct sq_stmt *q = sq_q(s, Q_COPY_GET);
	int ret;

	if (q) {
		sq_bind_int64(q, 1, app);
		sq_bind_int64(q, 2, id);
	}
	ret = sq_one(s, q, sq_copy_plan_row, out, err);
	if (ret == STORE_NOTFOUND)
		sq_seterr(err, "copy plan %lld not found", (long long)id);
	if (ret)
		return ret;
	json_object_set_new(*out, "state", json_string(plan_state(*out, now)));
	if (!active && json_is_true(json_object_get(*out, "diff"))) {
		ret = sq_copy_diff_summary(s, id, *out, err);
		if (ret) {
			json_decref(*out);
			*out = NULL;
			return ret;
		}
	}
	if (active && strcmp(plan_state(*out, now), "active")) {
		sq_seterr(err, "copy plan %lld has ended already", (long long)id);
		json_decref(*out);
		*out = NULL;
		return STORE_CONFLICT;
	}
	return 0;
}

int sq_copy_plan_update(struct store *st, const char *g, const char *a,
			int64_t id, const struct store_copy_plan *p,
			int64_t now, char *err)
{
	struct sq_store *s = SQ(st);
	char detail[1024], who[ADMIN_WHO_MAX], *pts = points_text(p);
	struct sq_app_ref r;
	json_t *old = NULL;
	struct sq_stmt *q;
	int ret;

	if (!pts) {
		sq_seterr(err, "out of memory");
		return STORE_ERROR;
	}
	sq_lock(st);
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = plan_fetch(s, r.id, id, now, true, &old, err);
	if (!ret)
		ret = copy_conflicts(s, a, id, p, now, err);
	if (ret)
		goto fail;
	q = sq_q(s, Q_COPY_UPD);
	if (!q)
		goto dbfail;
	sq_bind_int64(q, 1, r.id);
	sq_bind_int64(q, 2, id);
	bind_settings(q, 3, pts, p);
	sq_bind_int64(q, 10, p->expires_at);
	if (p->opts)
		sq_bind_text(q, 11, p->opts);
	else
		sq_bind_null(q, 11);
	ret = sq_run(s, q, err);
	if (ret)
		goto fail;
	snprintf(who, sizeof(who), "%s (token %s)", p->by, p->token_id);
	plan_detail(detail, sizeof(detail), id, pts, p);
	ret = sq_commit_audited(s, 0, r.id, "copy.update", detail, who, err);
	goto out;
dbfail:
	ret = sq_dberr(s, err);
fail:
	sq_rollback(s);
out:
	sq_unlock(st);
	json_decref(old);
	free(pts);
	return ret;
}

int sq_copy_plan_list(struct store *st, const char *g, const char *a,
		      int64_t now, json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	json_t *v;
	size_t i;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = sq_rows(s, sq_qk(s, Q_COPY_LIST, r.id), sq_copy_plan_row, out, err);
	sq_unlock(st);
	if (!ret)
		json_array_foreach(*out, i, v)
			json_object_set_new(v, "state", json_string(plan_state(v, now)));
	return ret;
}

int sq_copy_plan_get(struct store *st, const char *g, const char *a,
		     int64_t id, int64_t now, json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = plan_fetch(s, r.id, id, now, false, out, err);
	sq_unlock(st);
	return ret;
}

int sq_copy_plan_stop(struct store *st, const char *g, const char *a,
		      int64_t id, const char *by, const char *token_id,
		      int64_t now, char *err)
{
	struct sq_store *s = SQ(st);
	char detail[160], who[ADMIN_WHO_MAX];
	struct sq_app_ref r;
	json_t *old = NULL;
	struct sq_stmt *q;
	int ret;

	sq_lock(st);
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = plan_fetch(s, r.id, id, now, true, &old, err);
	if (ret)
		goto fail;
	snprintf(who, sizeof(who), "%s (token %s)", by, token_id);
	snprintf(detail, sizeof(detail), "copy plan %lld (%s)", (long long)id,
		 json_string_value(json_object_get(old, "name")));
	q = sq_q(s, Q_COPY_STOP);
	if (!q)
		goto dbfail;
	sq_bind_int64(q, 1, r.id);
	sq_bind_int64(q, 2, id);
	sq_bind_int64(q, 3, now);
	sq_bind_text(q, 4, who);
	ret = sq_commit_audited(s, sq_run(s, q, err), r.id, "copy.stop", detail, who, err);
	goto out;
dbfail:
	ret = sq_dberr(s, err);
fail:
	sq_rollback(s);
out:
	sq_unlock(st);
	json_decref(old);
	return ret;
}

static json_t *stat_row(struct sq_stmt *q)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"period_start", (json_int_t)sq_col_int64(q, 0),
		"captured", (json_int_t)sq_col_int64(q, 1),
		"dropped", (json_int_t)sq_col_int64(q, 2),
		"received", (json_int_t)sq_col_int64(q, 3),
		"dispatched", (json_int_t)sq_col_int64(q, 4),
		"shadow_errors", (json_int_t)sq_col_int64(q, 5),
		"server_dropped", (json_int_t)sq_col_int64(q, 6));
}

int sq_copy_plan_stats(struct store *st, const char *g, const char *a,
		       int64_t id, int64_t from, int64_t to, json_t **out,
		       char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	json_t *plan = NULL;
	struct sq_stmt *q;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = plan_fetch(s, r.id, id, 0, false, &plan, err);
	json_decref(plan);
	if (!ret) {
		q = sq_qk(s, Q_COPY_STATS, id);
		if (q) {
			sq_bind_int64(q, 2, from);
			sq_bind_int64(q, 3, to);
		}
		ret = sq_rows(s, q, stat_row, out, err);
	}
	if (!ret)
		ret = sq_copy_diff_periods(s, id, from, to, *out, err);
	sq_unlock(st);
	return ret;
}
