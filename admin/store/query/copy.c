// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/copy.c - traffic copy plans in the SQLite store (issue 12,
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
#include "store/sqlite/sqlite.h"

#define COPY_ACTIVE_MAX	SDS_HB_COPY_PLANS	/* active plans, all apps together */

json_t *copy_col_json(sqlite3_stmt *q, int i)
{
	json_t *v = json_loads(col_text(q, i), 0, NULL);

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
static json_t *plan_row(sqlite3_stmt *q)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:o, s:i, s:i, s:o, s:s, s:b, s:I, s:I, s:I, s:s}",
		"id", (json_int_t)sqlite3_column_int64(q, CP_ID),
		"group", col_text(q, CP_GROUP), "app", col_text(q, CP_APP),
		"name", col_text(q, CP_NAME), "points", copy_col_json(q, CP_POINTS),
		"sample_pct", sqlite3_column_int(q, CP_PCT),
		"amplification", sqlite3_column_int(q, CP_AMP),
		"shadows", copy_col_json(q, CP_SHADOWS),
		"framing", col_text(q, CP_FRAMING),
		"writes", sqlite3_column_int(q, CP_WRITES),
		"rate", (json_int_t)sqlite3_column_int64(q, CP_RATE),
		"created", (json_int_t)sqlite3_column_int64(q, CP_CREATED),
		"expires_at", (json_int_t)sqlite3_column_int64(q, CP_EXPIRES),
		"started_by", col_text(q, CP_STARTED_BY));

	json_object_set_new(o, "stopped_at", sqlite3_column_type(q, CP_STOPPED_AT) == SQLITE_NULL ?
			    json_null() : json_integer(sqlite3_column_int64(q, CP_STOPPED_AT)));
	json_object_set_new(o, "stopped_by", sqlite3_column_type(q, CP_STOPPED_BY) == SQLITE_NULL ?
			    json_null() : json_string(col_text(q, CP_STOPPED_BY)));
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
static bool ran_in(sqlite3_stmt *q, int64_t ps)
{
	return sqlite3_column_int64(q, CP_CREATED) < ps + SDS_HB_PERIOD_S &&
	       sqlite3_column_int64(q, CP_EXPIRES) > ps &&
	       (sqlite3_column_type(q, CP_STOPPED_AT) == SQLITE_NULL ||
		sqlite3_column_int64(q, CP_STOPPED_AT) > ps);
}

/*
 * Per plan of @app that ran in @hb's period (one stopped since still
 * gets its last period), the sums of @hb's points in it (transaction
 * held).  A host that reported none of a plan's points, or only zeros,
 * adds no row.
 */
int copy_loader_counts(struct sqlite_store *s, int64_t app,
		       const struct sds_heartbeat *hb, char *err)
{
	struct { int64_t id; uint64_t cap, drop; bool seen; } sums[SDS_HB_COPY_PLANS];
	sqlite3_stmt *q = Qk(s, Q_COPY_LIST, app);
	int n = 0, i, j, rc, ret;

	if (!q)
		return dberr(s, err);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW && n < SDS_HB_COPY_PLANS) {
		json_t *pts;

		if (!ran_in(q, hb->period_start))
			continue;
		pts = copy_col_json(q, CP_POINTS);
		memset(&sums[n], 0, sizeof(sums[n]));
		sums[n].id = sqlite3_column_int64(q, CP_ID);
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
	sqlite3_reset(q);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return dberr(s, err);
	for (i = 0; i < n; i++) {
		/* Zeros add nothing to a sum: most hosts of a plan capture nothing. */
		if (!sums[i].seen || (!sums[i].cap && !sums[i].drop))
			continue;
		q = Q(s, Q_COPY_LSTAT);
		if (!q)
			return dberr(s, err);
		sqlite3_bind_int64(q, 1, sums[i].id);
		sqlite3_bind_int64(q, 2, hb->period_start);
		bind_text(q, 3, hb->host);
		sqlite3_bind_int64(q, 4, (sqlite3_int64)sums[i].cap);
		sqlite3_bind_int64(q, 5, (sqlite3_int64)sums[i].drop);
		ret = run(s, q, err);
		if (ret)
			return ret;
	}
	return 0;
}

static int live_servers(struct sqlite_store *s, int64_t now,
			struct sds_hb_copy *out, char *err)
{
	sqlite3_stmt *q = Q(s, Q_COPY_SRV_LIVE);
	int rc;

	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, now - STORE_COPY_LIVE_S);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW && out->nservers < SDS_HB_COPY_SERVERS)
		snprintf(out->servers[out->nservers++], sizeof(out->servers[0]), "%s",
			 col_text(q, 0));
	sqlite3_reset(q);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : dberr(s, err);
}

/* The heartbeat reply's "copy" of @app at @now (lock held). */
int copy_for_app(struct sqlite_store *s, int64_t app, int64_t now,
		 struct sds_hb_copy *out, char *err)
{
	sqlite3_stmt *q = Q(s, Q_COPY_ACTIVE_APP);
	int rc;

	out->nplans = 0;
	out->nservers = 0;
	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, app);
	sqlite3_bind_int64(q, 2, now);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW && out->nplans < SDS_HB_COPY_PLANS) {
		struct sds_hb_copy_plan *p = &out->plans[out->nplans++];
		json_t *pts = copy_col_json(q, CP_POINTS), *v;
		size_t i;

		p->id = sqlite3_column_int64(q, CP_ID);
		snprintf(p->name, sizeof(p->name), "%s", col_text(q, CP_NAME));
		p->sample_pct = sqlite3_column_int(q, CP_PCT);
		p->expires_at = sqlite3_column_int64(q, CP_EXPIRES);
		p->npoints = 0;
		json_array_foreach(pts, i, v)
			if (p->npoints < SDS_HB_COPY_POINTS)
				snprintf(p->points[p->npoints++], sizeof(p->points[0]),
					 "%s", json_string_value(v));
		json_decref(pts);
	}
	sqlite3_reset(q);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return dberr(s, err);
	return live_servers(s, now, out, err);
}

/*
 * 409 unless @p's name is free among active plans and none of its points
 * is in another active plan of an app named @a (records carry the app's
 * name only, so same-named apps of two groups are one to sds-copy);
 * @self: the plan being updated, or 0.
 */
static int copy_conflicts(struct sqlite_store *s, const char *a, int64_t self,
			  const struct store_copy_plan *p, int64_t now, char *err)
{
	sqlite3_stmt *q = Q(s, Q_COPY_ACTIVE_ALL);
	int rc = SQLITE_DONE, ret = 0, i, n = 0;

	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, now);
	while (!ret && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(q, CP_ID);
		json_t *pts;

		if (id == self)
			continue;
		/* A copy server takes 64 plans, a heartbeat reply 64 of an app. */
		if (++n >= COPY_ACTIVE_MAX) {
			seterr(err, "%d copy plans are active, the most copy servers take: stop one first",
			       COPY_ACTIVE_MAX);
			ret = STORE_CONFLICT;
			break;
		}
		if (!strcmp(col_text(q, CP_NAME), p->name)) {
			seterr(err, "copy plan %lld is active with the name '%s'",
			       (long long)id, p->name);
			ret = STORE_CONFLICT;
			break;
		}
		if (strcmp(col_text(q, CP_APP), a))
			continue;
		pts = copy_col_json(q, CP_POINTS);
		for (i = 0; i < p->npoints && !ret; i++) {
			if (!in_points(pts, p->points[i]))
				continue;
			seterr(err, "point '%s' is in active copy plan %lld",
			       p->points[i], (long long)id);
			ret = STORE_CONFLICT;
		}
		json_decref(pts);
	}
	sqlite3_reset(q);
	if (!ret && rc != SQLITE_DONE)
		return dberr(s, err);
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
static void bind_settings(sqlite3_stmt *q, int first, const char *pts,
			  const struct store_copy_plan *p)
{
	sqlite3_bind_text(q, first, pts, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(q, first + 1, (int)p->sample_pct);
	sqlite3_bind_int(q, first + 2, p->amplification);
	bind_text(q, first + 3, p->shadows);
	bind_text(q, first + 4, p->framing);
	sqlite3_bind_int(q, first + 5, p->writes);
	sqlite3_bind_int64(q, first + 6, p->rate);
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
	struct sqlite_store *s = SS(st);
	char detail[1024], who[ADMIN_WHO_MAX], *pts = points_text(p);
	struct app_ref r;
	sqlite3_stmt *q;
	int ret;

	if (!pts) {
		seterr(err, "out of memory");
		return STORE_ERROR;
	}
	lock(st);
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = copy_conflicts(s, a, 0, p, now, err);
	if (ret)
		goto fail;
	q = Q(s, Q_COPY_INS);
	if (!q)
		goto dbfail;
	sqlite3_bind_int64(q, 1, r.id);
	bind_text(q, 2, p->name);
	bind_settings(q, 3, pts, p);
	sqlite3_bind_int64(q, 10, now);
	sqlite3_bind_int64(q, 11, p->expires_at);
	snprintf(who, sizeof(who), "%s (token %s)", p->by, p->token_id);
	bind_text(q, 12, who);
	ret = run(s, q, err);
	if (ret)
		goto fail;
	*id = sqlite3_last_insert_rowid(s->db);
	plan_detail(detail, sizeof(detail), *id, pts, p);
	ret = audit_add(s, r.id, "copy.start", detail, who, err);
	if (ret)
		goto fail;
	ret = commit(s, err);
	goto out;
dbfail:
	ret = dberr(s, err);
fail:
	rollback(s);
out:
	unlock(st);
	free(pts);
	return ret;
}

/*
 * Plan @id of @app into *out (NOTFOUND with a message if there is none);
 * 409 if @active and it is stopped or expired.
 */
static int plan_fetch(struct sqlite_store *s, int64_t app, int64_t id,
		      int64_t now, bool active, json_t **out, char *err)
{
	sqlite3_stmt *q = Q(s, Q_COPY_GET);
	int ret;

	if (q) {
		sqlite3_bind_int64(q, 1, app);
		sqlite3_bind_int64(q, 2, id);
	}
	ret = one(s, q, plan_row, out, err);
	if (ret == STORE_NOTFOUND)
		seterr(err, "copy plan %lld not found", (long long)id);
	if (ret)
		return ret;
	json_object_set_new(*out, "state", json_string(plan_state(*out, now)));
	if (active && strcmp(plan_state(*out, now), "active")) {
		seterr(err, "copy plan %lld has ended already", (long long)id);
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
	struct sqlite_store *s = SS(st);
	char detail[1024], who[ADMIN_WHO_MAX], *pts = points_text(p);
	struct app_ref r;
	json_t *old = NULL;
	sqlite3_stmt *q;
	int ret;

	if (!pts) {
		seterr(err, "out of memory");
		return STORE_ERROR;
	}
	lock(st);
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = plan_fetch(s, r.id, id, now, true, &old, err);
	if (!ret)
		ret = copy_conflicts(s, a, id, p, now, err);
	if (ret)
		goto fail;
	q = Q(s, Q_COPY_UPD);
	if (!q)
		goto dbfail;
	sqlite3_bind_int64(q, 1, r.id);
	sqlite3_bind_int64(q, 2, id);
	bind_settings(q, 3, pts, p);
	sqlite3_bind_int64(q, 10, p->expires_at);
	ret = run(s, q, err);
	if (ret)
		goto fail;
	snprintf(who, sizeof(who), "%s (token %s)", p->by, p->token_id);
	plan_detail(detail, sizeof(detail), id, pts, p);
	ret = audit_add(s, r.id, "copy.update", detail, who, err);
	if (ret)
		goto fail;
	ret = commit(s, err);
	goto out;
dbfail:
	ret = dberr(s, err);
fail:
	rollback(s);
out:
	unlock(st);
	json_decref(old);
	free(pts);
	return ret;
}

int sq_copy_plan_list(struct store *st, const char *g, const char *a,
		      int64_t now, json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	json_t *v;
	size_t i;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = rows(s, Qk(s, Q_COPY_LIST, r.id), plan_row, out, err);
	unlock(st);
	if (!ret)
		json_array_foreach(*out, i, v)
			json_object_set_new(v, "state", json_string(plan_state(v, now)));
	return ret;
}

int sq_copy_plan_get(struct store *st, const char *g, const char *a,
		     int64_t id, int64_t now, json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = plan_fetch(s, r.id, id, now, false, out, err);
	unlock(st);
	return ret;
}

int sq_copy_plan_stop(struct store *st, const char *g, const char *a,
		      int64_t id, const char *by, const char *token_id,
		      int64_t now, char *err)
{
	struct sqlite_store *s = SS(st);
	char detail[160], who[ADMIN_WHO_MAX];
	struct app_ref r;
	json_t *old = NULL;
	sqlite3_stmt *q;
	int ret;

	lock(st);
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = plan_fetch(s, r.id, id, now, true, &old, err);
	if (ret)
		goto fail;
	snprintf(who, sizeof(who), "%s (token %s)", by, token_id);
	snprintf(detail, sizeof(detail), "copy plan %lld (%s)", (long long)id,
		 json_string_value(json_object_get(old, "name")));
	q = Q(s, Q_COPY_STOP);
	if (!q)
		goto dbfail;
	sqlite3_bind_int64(q, 1, r.id);
	sqlite3_bind_int64(q, 2, id);
	sqlite3_bind_int64(q, 3, now);
	bind_text(q, 4, who);
	ret = run(s, q, err);
	if (!ret)
		ret = audit_add(s, r.id, "copy.stop", detail, who, err);
	if (ret)
		goto fail;
	ret = commit(s, err);
	goto out;
dbfail:
	ret = dberr(s, err);
fail:
	rollback(s);
out:
	unlock(st);
	json_decref(old);
	return ret;
}

static json_t *stat_row(sqlite3_stmt *q)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"period_start", (json_int_t)sqlite3_column_int64(q, 0),
		"captured", (json_int_t)sqlite3_column_int64(q, 1),
		"dropped", (json_int_t)sqlite3_column_int64(q, 2),
		"received", (json_int_t)sqlite3_column_int64(q, 3),
		"dispatched", (json_int_t)sqlite3_column_int64(q, 4),
		"shadow_errors", (json_int_t)sqlite3_column_int64(q, 5),
		"server_dropped", (json_int_t)sqlite3_column_int64(q, 6));
}

int sq_copy_plan_stats(struct store *st, const char *g, const char *a,
		       int64_t id, int64_t from, int64_t to, json_t **out,
		       char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	json_t *plan = NULL;
	sqlite3_stmt *q;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = plan_fetch(s, r.id, id, 0, false, &plan, err);
	json_decref(plan);
	if (!ret) {
		q = Qk(s, Q_COPY_STATS, id);
		if (q) {
			sqlite3_bind_int64(q, 2, from);
			sqlite3_bind_int64(q, 3, to);
		}
		ret = rows(s, q, stat_row, out, err);
	}
	unlock(st);
	return ret;
}
