// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/stats.c - heartbeats, hosts, statistics, events and retention
 * in the SQLite store.
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/sqlite/sqlite.h"

/* ---- heartbeats and statistics ------------------------------------------ */

int sq_heartbeat(struct store *st, const struct sds_heartbeat *hb,
		 int64_t now, struct store_hb_result *res, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int i, ret;

	res->duplicate = false;
	res->created = false;
	lock(st);
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = app_ref(s, hb->group, hb->app, &r, err);
	if (ret == STORE_NOTFOUND) {
		/* A loader the admin has not heard of registers its app. */
		ret = app_insert(s, hb->group, hb->app, "", &r, err);
		if (!ret)
			ret = audit_add(s, r.id, "app.register", hb->host,
					"registered by a heartbeat", err);
		res->created = true;
	}
	if (ret)
		goto fail;

	q = Q(s, Q_HB_INS);
	if (!q)
		goto dbfail;
	sqlite3_bind_int64(q, 1, r.id);
	sqlite3_bind_int64(q, 2, hb->period_start);
	bind_text(q, 3, hb->host);
	sqlite3_bind_int64(q, 4, now);
	ret = run(s, q, err);
	if (ret)
		goto fail;
	res->duplicate = sqlite3_changes(s->db) == 0;

	for (i = 0; i < hb->n && !res->duplicate; i++) {
		const struct sds_hb_point *p = &hb->points[i];
		uint64_t blob[SDS_HIST_BUCKETS];
		int j;

		q = Q(s, Q_STAT_INS);
		if (!q)
			goto dbfail;
		sqlite3_bind_int64(q, 1, r.id);
		sqlite3_bind_int64(q, 2, hb->period_start);
		bind_text(q, 3, hb->host);
		bind_text(q, 4, p->name);
		sqlite3_bind_int64(q, 5, (sqlite3_int64)p->visits);
		sqlite3_bind_int64(q, 6, (sqlite3_int64)p->exceptions);
		sqlite3_bind_int64(q, 7, (sqlite3_int64)p->timeouts);
		sqlite3_bind_int64(q, 8, (sqlite3_int64)p->downgrades);
		sqlite3_bind_int64(q, 9, (sqlite3_int64)p->max_concurrency);
		/* Little-endian u64s up to the last non-zero bucket. */
		for (j = 0; j < p->nhist && j < SDS_HIST_BUCKETS; j++)
			blob[j] = htole64(p->latency_hist[j]);
		if (j)
			sqlite3_bind_blob(q, 10, blob, j * 8, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(q, 10);
		sqlite3_bind_int64(q, 11, (sqlite3_int64)p->faults);
		sqlite3_bind_int64(q, 12, (sqlite3_int64)p->delays);
		sqlite3_bind_int(q, 13, p->suspended);
		sqlite3_bind_int64(q, 14, (sqlite3_int64)p->overhead_milli);
		ret = run(s, q, err);
		if (ret)
			goto fail;
	}

	if (!res->duplicate) {
		ret = copy_loader_counts(s, r.id, hb, err);
		if (ret)
			goto fail;
	}
	q = Q(s, Q_HOST_UPSERT);
	if (!q)
		goto dbfail;
	sqlite3_bind_int64(q, 1, r.id);
	bind_text(q, 2, hb->host);
	bind_text(q, 3, hb->ip);
	sqlite3_bind_int64(q, 4, now);
	sqlite3_bind_int64(q, 5, hb->period_start);
	sqlite3_bind_int64(q, 6, hb->version);
	ret = run(s, q, err);
	if (ret)
		goto fail;
	ret = commit(s, err);
	if (ret)
		goto out;
	res->version = r.version;
	res->ndrills = 0;
	if (res->drills) {
		ret = drills_active(s, r.id, now, res->drills, &res->ndrills, err);
		if (ret)
			goto out;
	}
	if (res->copy) {
		ret = copy_for_app(s, r.id, now, res->copy, err);
		if (ret)
			goto out;
	}
	if (res->strategies && hb->version != r.version) {
		ret = strategies_read(s, r.active, res->strategies, err);
		res->strategies->version = r.version;
	}
	goto out;
dbfail:
	ret = dberr(s, err);
fail:
	rollback(s);
out:
	unlock(st);
	return ret;
}

static json_t *host_row(sqlite3_stmt *q)
{
	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "host", col_text(q, 0),
			 "ip", col_text(q, 1),
			 "first_seen", (json_int_t)sqlite3_column_int64(q, 2),
			 "last_seen", (json_int_t)sqlite3_column_int64(q, 3),
			 "last_period", (json_int_t)sqlite3_column_int64(q, 4),
			 "version", (json_int_t)sqlite3_column_int64(q, 5));
}

int sq_host_list(struct store *st, const char *g, const char *a,
		 json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	size_t i;
	json_t *h;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	ret = rows(s, Qk(s, Q_HOST_LIST, r.id), host_row, out, err);
	if (!ret) {
		json_array_foreach(*out, i, h) {
			json_int_t v = json_integer_value(json_object_get(h, "version"));

			json_object_set_new(h, "in_sync", json_boolean(v == r.version));
		}
	}
out:
	unlock(st);
	return ret;
}

int sq_stats_scan(struct store *st, const char *g, const char *a,
		  const char *point, int64_t from, int64_t to,
		  store_stat_cb cb, void *ctx, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int rc, ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	q = Q(s, point ? Q_STAT_SCAN_POINT : Q_STAT_SCAN);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, r.id);
	sqlite3_bind_int64(q, 2, from);
	sqlite3_bind_int64(q, 3, to);
	if (point)
		bind_text(q, 4, point);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		if (stat_row_emit(q, cb, ctx))
			break;
	sqlite3_reset(q);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = dberr(s, err);
out:
	unlock(st);
	return ret;
}

static json_t *name_row(sqlite3_stmt *q)
{
	return json_string(col_text(q, 0));
}

int sq_point_list(struct store *st, const char *g, const char *a,
		  json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	q = Q(s, Q_POINT_LIST);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, r.id);
	/* Points seen in the last day: enough for the dashboard's list. */
	sqlite3_bind_int64(q, 2, store_now_s() - 86400);
	ret = rows(s, q, name_row, out, err);
out:
	unlock(st);
	return ret;
}

static json_t *event_row(sqlite3_stmt *q)
{
	return json_pack("{s:I, s:s, s:s, s:I, s:I}",
			 "period_start", (json_int_t)sqlite3_column_int64(q, 0),
			 "host", col_text(q, 1), "point", col_text(q, 2),
			 "downgrades", (json_int_t)sqlite3_column_int64(q, 3),
			 "visits", (json_int_t)sqlite3_column_int64(q, 4));
}

int sq_events(struct store *st, const char *g, const char *a, int64_t from,
	      int64_t to, int limit, json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	q = Q(s, Q_EVENTS);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, r.id);
	sqlite3_bind_int64(q, 2, from);
	sqlite3_bind_int64(q, 3, to);
	sqlite3_bind_int(q, 4, limit);
	ret = rows(s, q, event_row, out, err);
out:
	unlock(st);
	return ret;
}

int sq_prune(struct store *st, int64_t before, char *err)
{
	struct sqlite_store *s = SS(st);
	int ret;

	lock(st);
	ret = run(s, Qk(s, Q_PRUNE_STATS, before), err);
	if (!ret)
		ret = run(s, Qk(s, Q_PRUNE_HB, before), err);
	unlock(st);
	return ret;
}

static int count1(struct sqlite_store *s, int id, int64_t *out)
{
	sqlite3_stmt *q = Q(s, id);

	if (!q || sqlite3_step(q) != SQLITE_ROW) {
		if (q)
			sqlite3_reset(q);
		return -1;
	}
	*out = sqlite3_column_int64(q, 0);
	sqlite3_reset(q);
	return 0;
}

int sq_counts(struct store *st, struct store_counts *out, char *err)
{
	struct sqlite_store *s = SS(st);
	int ret = 0;

	memset(out, 0, sizeof(*out));
	lock(st);
	if (count1(s, Q_COUNT_GROUPS, &out->groups) ||
	    count1(s, Q_COUNT_APPS, &out->apps) ||
	    count1(s, Q_COUNT_HOSTS, &out->hosts))
		ret = dberr(s, err);
	unlock(st);
	return ret;
}

