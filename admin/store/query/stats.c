// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/stats.c - heartbeats, hosts, statistics, events and retention
 * in the store (both engines; PostgreSQL has its own heartbeat and
 * retention, store/pg/hb.c and store/pg/schema.c).
 */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/query/sq.h"

/* ---- heartbeats and statistics ------------------------------------------ */

int sq_hb_answer(struct sq_store *s, const struct sq_app_ref *r, int64_t have,
		 int64_t now, struct store_hb_result *res, char *err)
{
	int ret = 0;

	res->version = r->version;
	res->drills_seq = r->drills_seq;
	res->ndrills = 0;
	if (res->drills)
		ret = sq_drills_active(s, r->id, now, res->host, res->drills,
				       &res->ndrills, err);
	if (!ret && res->copy)
		ret = sq_copy_for_app(s, r->id, now, res->copy, err);
	if (!ret && res->strategies && have != r->version) {
		ret = sq_strategies_read(s, r->active, res->strategies, err);
		res->strategies->version = r->version;
	}
	return ret;
}

int sq_app_state(struct store *st, const char *g, const char *a, int64_t have,
		 int64_t now, struct store_hb_result *res, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	int ret;

	res->duplicate = false;
	res->created = false;
	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = sq_hb_answer(s, &r, have, now, res, err);
	sq_unlock(st);
	return ret;
}

int sq_heartbeat(struct store *st, const struct sds_heartbeat *hb,
		 int64_t now, struct store_hb_result *res, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	struct sq_stmt *q;
	int i, ret;

	res->duplicate = false;
	res->created = false;
	sq_lock(st);
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = sq_app_lookup(s, hb->group, hb->app, &r, err);
	if (ret == STORE_NOTFOUND) {
		/* A loader the admin has not heard of registers its app. */
		ret = sq_app_insert(s, hb->group, hb->app, "", &r, err);
		if (!ret)
			ret = sq_audit_add(s, r.id, "app.register", hb->host,
					"registered by a heartbeat", err);
		res->created = true;
	}
	if (ret)
		goto fail;

	q = sq_q(s, Q_HB_INS);
	if (!q)
		goto dbfail;
	sq_bind_int64(q, 1, r.id);
	sq_bind_int64(q, 2, hb->period_start);
	sq_bind_text(q, 3, hb->host);
	sq_bind_int64(q, 4, now);
	ret = sq_run(s, q, err);
	if (ret)
		goto fail;
	res->duplicate = sq_changes(s) == 0;

	for (i = 0; i < hb->n && !res->duplicate; i++) {
		const struct sds_hb_point *p = &hb->points[i];
		uint64_t blob[SDS_HIST_BUCKETS];
		int j, k;

		q = sq_q(s, Q_STAT_INS);
		if (!q)
			goto dbfail;
		sq_bind_int64(q, 1, r.id);
		sq_bind_int64(q, 2, hb->period_start);
		sq_bind_text(q, 3, hb->host);
		sq_bind_text(q, 4, p->name);
		sq_bind_int64(q, 5, (int64_t)p->visits);
		sq_bind_int64(q, 6, (int64_t)p->exceptions);
		sq_bind_int64(q, 7, (int64_t)p->timeouts);
		sq_bind_int64(q, 8, (int64_t)p->downgrades);
		sq_bind_int64(q, 9, (int64_t)p->max_concurrency);
		/* Little-endian u64s up to the last non-zero bucket. */
		for (j = 0; j < p->nhist && j < SDS_HIST_BUCKETS; j++)
			blob[j] = htole64(p->latency_hist[j]);
		if (j)
			sq_bind_blob(q, 10, blob, j * 8);
		else
			sq_bind_null(q, 10);
		sq_bind_int64(q, 11, (int64_t)p->faults);
		sq_bind_int64(q, 12, (int64_t)p->delays);
		sq_bind_int64(q, 13, p->suspended);
		sq_bind_int64(q, 14, (int64_t)p->overhead_milli);
		k = 15;
#define BIND_(f, kind)	sq_bind_int64(q, k++, (int64_t)p->f);
		STORE_STAT_COLS(BIND_)
#undef BIND_
		ret = sq_run(s, q, err);
		if (ret)
			goto fail;
	}

	if (!res->duplicate) {
		ret = sq_copy_loader_counts(s, r.id, hb, err);
		if (!ret)
			ret = sq_keys_insert(s, r.id, hb, err);
		if (!ret)
			ret = sq_deps_store(s, r.id, hb, now, err);
		if (ret)
			goto fail;
	}
	q = sq_q(s, Q_HOST_UPSERT);
	if (!q)
		goto dbfail;
	sq_bind_int64(q, 1, r.id);
	sq_bind_text(q, 2, hb->host);
	sq_bind_text(q, 3, hb->ip);
	sq_bind_int64(q, 4, now);
	sq_bind_int64(q, 5, hb->period_start);
	sq_bind_int64(q, 6, hb->version);
	if (sq_host_json(q, 7, hb)) {
		sq_reset(q);
		sq_seterr(err, "out of memory");
		ret = STORE_ERROR;
		goto fail;
	}
	ret = sq_run(s, q, err);
	if (ret)
		goto fail;
	ret = sq_commit(s, err);
	if (!ret)
		ret = sq_hb_answer(s, &r, hb->version, now, res, err);
	goto out;
dbfail:
	ret = sq_dberr(s, err);
fail:
	sq_rollback(s);
out:
	sq_unlock(st);
	return ret;
}

/* One part of @hb as JSON text (NULL when it has none), bound at @i. */
static int bind_json(struct sq_stmt *q, int i, const struct sds_heartbeat *hb,
		     int (*part)(const struct sds_heartbeat *, json_t *),
		     const char *key)
{
	json_t *o = json_object();
	char *t = NULL;

	if (!o || part(hb, o)) {
		json_decref(o);
		return -1;
	}
	if (json_object_get(o, key)) {
		t = json_dumps(json_object_get(o, key), JSON_COMPACT);
		if (!t) {
			json_decref(o);
			return -1;
		}
	}
	json_decref(o);
	if (!t)
		return sq_bind_null(q, i);
	return sq_bind_text_free(q, i, t);
}

int sq_host_json(struct sq_stmt *q, int i, const struct sds_heartbeat *hb)
{
	if (bind_json(q, i, hb, heartbeat_pressure_to_json, "pressure") ||
	    bind_json(q, i + 1, hb, heartbeat_refused_to_json, "refused"))
		return -1;
	return 0;
}

/* Column @i, JSON text stored by sq_host_json(); NULL, or unreadable: @none. */
static json_t *json_col(struct sq_stmt *q, int i, json_t *none)
{
	const char *t = sq_col_text(q, i);
	json_t *v = t && *t ? json_loads(t, 0, NULL) : NULL;

	if (!json_is_array(v)) {
		json_decref(v);
		return none;
	}
	json_decref(none);
	return v;
}

static json_t *host_row(struct sq_stmt *q)
{
	/* The host's last heartbeat's: pressure null without rules, refused [] without any. */
	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o}", "host", sq_col_text(q, 0),
			 "ip", sq_col_text(q, 1),
			 "first_seen", (json_int_t)sq_col_int64(q, 2),
			 "last_seen", (json_int_t)sq_col_int64(q, 3),
			 "last_period", (json_int_t)sq_col_int64(q, 4),
			 "version", (json_int_t)sq_col_int64(q, 5),
			 "pressure", json_col(q, 6, json_null()),
			 "refused", json_col(q, 7, json_array()));
}

int sq_host_list(struct store *st, const char *g, const char *a,
		 json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	size_t i;
	json_t *h;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (ret)
		goto out;
	ret = sq_rows(s, sq_qk(s, Q_HOST_LIST, r.id), host_row, out, err);
	if (!ret) {
		json_array_foreach(*out, i, h) {
			json_int_t v = json_integer_value(json_object_get(h, "version"));

			json_object_set_new(h, "in_sync", json_boolean(v == r.version));
		}
	}
out:
	sq_unlock(st);
	return ret;
}

int sq_stats_scan(struct store *st, const char *g, const char *a,
		  const char *point, int64_t from, int64_t to,
		  store_stat_cb cb, void *ctx, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	struct sq_stmt *q;
	int rc, ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (ret)
		goto out;
	q = sq_q(s, point ? Q_STAT_SCAN_POINT : Q_STAT_SCAN);
	if (!q) {
		ret = sq_dberr(s, err);
		goto out;
	}
	sq_bind_int64(q, 1, r.id);
	sq_bind_int64(q, 2, from);
	sq_bind_int64(q, 3, to);
	if (point)
		sq_bind_text(q, 4, point);
	while ((rc = sq_step(q)) == SQ_ROW)
		if (sq_stat_row_emit(q, cb, ctx))
			break;
	sq_reset(q);
	if (rc != SQ_DONE && rc != SQ_ROW)
		ret = sq_dberr(s, err);
out:
	sq_unlock(st);
	return ret;
}

static json_t *name_row(struct sq_stmt *q)
{
	return json_string(sq_col_text(q, 0));
}

int sq_point_list(struct store *st, const char *g, const char *a,
		  json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	struct sq_stmt *q;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (ret)
		goto out;
	q = sq_q(s, Q_POINT_LIST);
	if (!q) {
		ret = sq_dberr(s, err);
		goto out;
	}
	sq_bind_int64(q, 1, r.id);
	/* Points seen in the last day: enough for the dashboard's list. */
	sq_bind_int64(q, 2, store_now_s() - 86400);
	ret = sq_rows(s, q, name_row, out, err);
out:
	sq_unlock(st);
	return ret;
}

static json_t *event_row(struct sq_stmt *q)
{
	return json_pack("{s:I, s:s, s:s, s:I, s:I}",
			 "period_start", (json_int_t)sq_col_int64(q, 0),
			 "host", sq_col_text(q, 1), "point", sq_col_text(q, 2),
			 "downgrades", (json_int_t)sq_col_int64(q, 3),
			 "visits", (json_int_t)sq_col_int64(q, 4));
}

int sq_events(struct store *st, const char *g, const char *a, int64_t from,
	      int64_t to, int limit, json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	struct sq_stmt *q;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (ret)
		goto out;
	q = sq_q(s, Q_EVENTS);
	if (!q) {
		ret = sq_dberr(s, err);
		goto out;
	}
	sq_bind_int64(q, 1, r.id);
	sq_bind_int64(q, 2, from);
	sq_bind_int64(q, 3, to);
	sq_bind_int64(q, 4, limit);
	ret = sq_rows(s, q, event_row, out, err);
out:
	sq_unlock(st);
	return ret;
}

int sq_stats_first(struct store *st, const char *g, const char *a, int64_t *first,
		   char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	struct sq_stmt *q;
	int rc, ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (ret)
		goto out;
	q = sq_qk(s, Q_STAT_FIRST, r.id);
	if (!q) {
		ret = sq_dberr(s, err);
		goto out;
	}
	*first = 0;
	rc = sq_step(q);
	if (rc == SQ_ROW)
		*first = sq_col_int64(q, 0);
	else if (rc != SQ_DONE)
		ret = sq_dberr(s, err);
	sq_reset(q);
out:
	sq_unlock(st);
	return ret;
}

int sq_prune(struct store *st, int64_t before, char *err)
{
	struct sq_store *s = SQ(st);
	int ret;

	sq_lock(st);
	ret = sq_run(s, sq_qk(s, Q_PRUNE_STATS, before), err);
	if (!ret)
		ret = sq_run(s, sq_qk(s, Q_PRUNE_HB, before), err);
	if (!ret)
		ret = sq_run(s, sq_qk(s, Q_PRUNE_KEYS, before), err);
	sq_unlock(st);
	return ret;
}

static int count1(struct sq_store *s, int id, int64_t *out)
{
	struct sq_stmt *q = sq_q(s, id);

	if (!q || sq_step(q) != SQ_ROW) {
		if (q)
			sq_reset(q);
		return -1;
	}
	*out = sq_col_int64(q, 0);
	sq_reset(q);
	return 0;
}

int sq_counts(struct store *st, struct store_counts *out, char *err)
{
	struct sq_store *s = SQ(st);
	int ret = 0;

	memset(out, 0, sizeof(*out));
	sq_lock(st);
	if (count1(s, Q_COUNT_GROUPS, &out->groups) ||
	    count1(s, Q_COUNT_APPS, &out->apps) ||
	    count1(s, Q_COUNT_HOSTS, &out->hosts))
		ret = sq_dberr(s, err);
	sq_unlock(st);
	return ret;
}

