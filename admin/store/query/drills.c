// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/drills.c - fault drills in the SQLite store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "errnames.h"
#include "store/sqlite/sqlite.h"

/* ---- drills ------------------------------------------------------------- */

/* The app's drills in force at @now, for a heartbeat reply (lock held). */
int drills_active(struct sqlite_store *s, int64_t app, int64_t now,
		  struct sds_hb_drill *out, int *n, char *err)
{
	sqlite3_stmt *q = Q(s, Q_DRILL_ACTIVE);
	int rc;

	*n = 0;
	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, app);
	sqlite3_bind_int64(q, 2, now);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW && *n < SDS_HB_MAX_DRILLS) {
		struct sds_hb_drill *d = &out[(*n)++];

		d->id = sqlite3_column_int64(q, 0);
		snprintf(d->point, sizeof(d->point), "%s", col_text(q, 1));
		d->kind = strcmp(col_text(q, 2), "delay") ? SDS_DRILL_ERROR :
							    SDS_DRILL_DELAY;
		d->ratio = sqlite3_column_int(q, 3);
		d->delay_ms = sqlite3_column_int64(q, 4);
		d->expires_at = sqlite3_column_int64(q, 5);
		/* The API checked the name; one this build lacks is the point's. */
		d->err = sqlite3_column_type(q, 6) == SQLITE_NULL ? 0 :
			 errnames_parse(col_text(q, 6));
	}
	sqlite3_reset(q);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return dberr(s, err);
	return 0;
}

int sq_drill_create(struct store *st, const char *g, const char *a,
		    const struct store_drill *d, int64_t now, int64_t *id,
		    char *err)
{
	struct sqlite_store *s = SS(st);
	char detail[256], who[ADMIN_WHO_MAX];
	struct app_ref r;
	sqlite3_stmt *q;
	int ret;

	lock(st);
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto fail;
	q = Q(s, Q_DRILL_INS);
	if (!q)
		goto dbfail;
	sqlite3_bind_int64(q, 1, r.id);
	bind_text(q, 2, d->point);
	bind_text(q, 3, d->kind == SDS_DRILL_DELAY ? "delay" : "error");
	sqlite3_bind_int64(q, 4, d->ratio);
	sqlite3_bind_int64(q, 5, d->delay_ms);
	sqlite3_bind_int64(q, 6, now);
	sqlite3_bind_int64(q, 7, now + d->duration_s);
	snprintf(who, sizeof(who), "%s (token %s)", d->by, d->token_id);
	bind_text(q, 8, who);
	if (d->err)
		bind_text(q, 9, errnames_name(d->err));
	else
		sqlite3_bind_null(q, 9);
	ret = run(s, q, err);
	if (ret)
		goto fail;
	*id = sqlite3_last_insert_rowid(s->db);
	if (d->kind == SDS_DRILL_DELAY)
		snprintf(detail, sizeof(detail), "drill %lld on %s: delay %lld ms, ratio %u, for %lld s",
			 (long long)*id, d->point, (long long)d->delay_ms, d->ratio,
			 (long long)d->duration_s);
	else
		snprintf(detail, sizeof(detail), "drill %lld on %s: error%s%s, ratio %u, for %lld s",
			 (long long)*id, d->point, d->err ? " " : "",
			 d->err ? errnames_name(d->err) : "", d->ratio,
			 (long long)d->duration_s);
	ret = audit_add(s, r.id, "drill.start", detail, who, err);
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
	return ret;
}

static json_t *drill_row(sqlite3_stmt *q)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:i, s:I, s:I, s:I, s:s}",
		"id", (json_int_t)sqlite3_column_int64(q, 0),
		"point", col_text(q, 1), "kind", col_text(q, 2),
		"ratio", sqlite3_column_int(q, 3),
		"delay_ms", (json_int_t)sqlite3_column_int64(q, 4),
		"created", (json_int_t)sqlite3_column_int64(q, 5),
		"expires_at", (json_int_t)sqlite3_column_int64(q, 6),
		"started_by", col_text(q, 8));

	json_object_set_new(o, "stopped_at", sqlite3_column_type(q, 7) == SQLITE_NULL ?
			    json_null() : json_integer(sqlite3_column_int64(q, 7)));
	json_object_set_new(o, "stopped_by", sqlite3_column_type(q, 9) == SQLITE_NULL ?
			    json_null() : json_string(col_text(q, 9)));
	/* null: the point's own errno (and every delay drill) */
	json_object_set_new(o, "errno", sqlite3_column_type(q, 10) == SQLITE_NULL ?
			    json_null() : json_string(col_text(q, 10)));
	return o;
}

int sq_drill_list(struct store *st, const char *g, const char *a,
		  json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = rows(s, Qk(s, Q_DRILL_LIST, r.id), drill_row, out, err);
	unlock(st);
	return ret;
}

int sq_drill_stop(struct store *st, const char *g, const char *a,
		  int64_t id, const char *by, const char *token_id,
		  int64_t now, char *err)
{
	struct sqlite_store *s = SS(st);
	char detail[160], who[ADMIN_WHO_MAX];
	struct app_ref r;
	sqlite3_stmt *q;
	int rc, ret;

	lock(st);
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto fail;
	q = Q(s, Q_DRILL_GET);
	if (!q)
		goto dbfail;
	sqlite3_bind_int64(q, 1, r.id);
	sqlite3_bind_int64(q, 2, id);
	rc = sqlite3_step(q);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(q);
		if (rc != SQLITE_DONE)
			goto dbfail;
		seterr(err, "drill %lld not found", (long long)id);
		ret = STORE_NOTFOUND;
		goto fail;
	}
	snprintf(detail, sizeof(detail), "drill %lld on %s", (long long)id,
		 col_text(q, 0));
	if (sqlite3_column_type(q, 1) != SQLITE_NULL ||
	    sqlite3_column_int64(q, 2) <= now) {
		sqlite3_reset(q);
		seterr(err, "drill %lld has ended already", (long long)id);
		ret = STORE_CONFLICT;
		goto fail;
	}
	sqlite3_reset(q);
	snprintf(who, sizeof(who), "%s (token %s)", by, token_id);
	q = Q(s, Q_DRILL_STOP);
	if (!q)
		goto dbfail;
	sqlite3_bind_int64(q, 1, r.id);
	sqlite3_bind_int64(q, 2, id);
	sqlite3_bind_int64(q, 3, now);
	bind_text(q, 4, who);
	ret = run(s, q, err);
	if (!ret)
		ret = audit_add(s, r.id, "drill.stop", detail, who, err);
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
	return ret;
}

