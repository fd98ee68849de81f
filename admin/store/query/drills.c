// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/drills.c - fault drills in the store (both engines).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "errnames.h"
#include "store/query/sq.h"

/* ---- drills ------------------------------------------------------------- */

/*
 * Is @host among a drill's hosts (@hosts: its JSON array; NULL: every
 * host's)?  A row that does not parse is handed to nobody: a drill meant
 * for some hosts never reaches all of them by a damaged row.
 */
static bool drill_for(const char *hosts, const char *host)
{
	json_t *a, *v;
	bool in = false;
	size_t i;

	if (!hosts)
		return true;
	if (!host)
		return false;
	a = json_loads(hosts, 0, NULL);
	json_array_foreach(a, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), host))
			in = true;
	json_decref(a);
	return in;
}

/*
 * The app's drills in force at @now handed to @host, for a heartbeat
 * reply or a sync (lock held).
 */
int sq_drills_active(struct sq_store *s, int64_t app, int64_t now,
		  const char *host, struct sds_hb_drill *out, int *n, char *err)
{
	struct sq_stmt *q = sq_q(s, Q_DRILL_ACTIVE);
	int rc;

	*n = 0;
	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 1, app);
	sq_bind_int64(q, 2, now);
	while ((rc = sq_step(q)) == SQ_ROW && *n < SDS_HB_MAX_DRILLS) {
		struct sds_hb_drill *d = &out[*n];
		char why[160];
		json_t *stop;

		if (!drill_for(sq_col_null(q, 7) ? NULL : sq_col_text(q, 7), host))
			continue;
		(*n)++;
		memset(d, 0, sizeof(*d));
		d->id = sq_col_int64(q, 0);
		snprintf(d->point, sizeof(d->point), "%s", sq_col_text(q, 1));
		d->kind = strcmp(sq_col_text(q, 2), "delay") ? SDS_DRILL_ERROR :
							    SDS_DRILL_DELAY;
		d->ratio = sq_col_int(q, 3);
		d->delay_ms = sq_col_int64(q, 4);
		d->expires_at = sq_col_int64(q, 5);
		d->created = sq_col_int64(q, 9);
		/* The API checked the name; one this build lacks is the point's. */
		d->err = sq_col_null(q, 6) ? 0 :
			 errnames_parse(sq_col_text(q, 6));
		/* The API checked them; a row that no longer parses stops nothing. */
		stop = sq_col_null(q, 8) ? NULL : json_loads(sq_col_text(q, 8), 0, NULL);
		if (heartbeat_stops_from_json(stop, "stop_when", d->stop, &d->nstop,
					      why, sizeof(why)))
			d->nstop = 0;
		json_decref(stop);
	}
	sq_reset(q);
	if (rc != SQ_DONE && rc != SQ_ROW)
		return sq_dberr(s, err);
	return 0;
}

int sq_drill_create(struct store *st, const char *g, const char *a,
		    const struct store_drill *d, int64_t now, int64_t *id,
		    char *err)
{
	struct sq_store *s = SQ(st);
	char detail[512], who[ADMIN_WHO_MAX], *stop_text = NULL;
	struct sq_app_ref r;
	struct sq_stmt *q;
	json_t *stop;
	size_t len;
	int ret;

	sq_lock(st);
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = sq_app_lookup(s, g, a, &r, err);
	if (ret)
		goto fail;
	q = sq_q(s, Q_DRILL_INS);
	if (!q)
		goto dbfail;
	sq_bind_int64(q, 1, r.id);
	sq_bind_text(q, 2, d->point);
	sq_bind_text(q, 3, d->kind == SDS_DRILL_DELAY ? "delay" : "error");
	sq_bind_int64(q, 4, d->ratio);
	sq_bind_int64(q, 5, d->delay_ms);
	sq_bind_int64(q, 6, now);
	sq_bind_int64(q, 7, now + d->duration_s);
	snprintf(who, sizeof(who), "%s (token %s)", d->by, d->token_id);
	sq_bind_text(q, 8, who);
	if (d->err)
		sq_bind_text(q, 9, errnames_name(d->err));
	else
		sq_bind_null(q, 9);
	if (d->hosts)
		sq_bind_text(q, 10, d->hosts);
	else
		sq_bind_null(q, 10);
	stop = d->nstop ? heartbeat_stops_to_json(d->stop, d->nstop) : NULL;
	stop_text = stop ? json_dumps(stop, JSON_COMPACT) : NULL;
	json_decref(stop);
	if (d->nstop && !stop_text) {
		sq_seterr(err, "out of memory");
		ret = STORE_ERROR;
		goto fail;
	}
	if (stop_text)
		sq_bind_text(q, 11, stop_text);
	else
		sq_bind_null(q, 11);
	ret = sq_run(s, q, err);
	if (ret)
		goto fail;
	*id = sq_last_id(s);
	/* Every list a loader is sent after this one is newer (docs/DRILL.md). */
	ret = sq_run(s, sq_qk(s, Q_DRILLS_BUMP, r.id), err);
	if (ret)
		goto fail;
	if (d->kind == SDS_DRILL_DELAY)
		snprintf(detail, sizeof(detail), "drill %lld on %s: delay %lld ms, ratio %u, for %lld s",
			 (long long)*id, d->point, (long long)d->delay_ms, d->ratio,
			 (long long)d->duration_s);
	else
		snprintf(detail, sizeof(detail), "drill %lld on %s: error%s%s, ratio %u, for %lld s",
			 (long long)*id, d->point, d->err ? " " : "",
			 d->err ? errnames_name(d->err) : "", d->ratio,
			 (long long)d->duration_s);
	/* A blast radius and stop conditions, when given (every host's drill reads as before). */
	len = strlen(detail);
	snprintf(detail + len, sizeof(detail) - len, "%s%.200s%s%.200s",
		 d->hosts ? ", hosts " : "", d->hosts ? d->hosts : "",
		 stop_text ? ", stop_when " : "", stop_text ? stop_text : "");
	ret = sq_commit_audited(s, 0, r.id, "drill.start", detail, who, err);
	goto out;
dbfail:
	ret = sq_dberr(s, err);
fail:
	sq_rollback(s);
out:
	sq_unlock(st);
	free(stop_text);
	return ret;
}

/* A JSON column: its value, or @none when NULL or damaged. */
static json_t *json_col(struct sq_stmt *q, int i, json_t *none)
{
	json_t *v = sq_col_null(q, i) ? NULL : json_loads(sq_col_text(q, i), 0, NULL);

	if (!v)
		return none;
	json_decref(none);
	return v;
}

static json_t *drill_row(struct sq_stmt *q)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:i, s:I, s:I, s:I, s:s}",
		"id", (json_int_t)sq_col_int64(q, 0),
		"point", sq_col_text(q, 1), "kind", sq_col_text(q, 2),
		"ratio", sq_col_int(q, 3),
		"delay_ms", (json_int_t)sq_col_int64(q, 4),
		"created", (json_int_t)sq_col_int64(q, 5),
		"expires_at", (json_int_t)sq_col_int64(q, 6),
		"started_by", sq_col_text(q, 8));

	json_object_set_new(o, "stopped_at", sq_col_null(q, 7) ?
			    json_null() : json_integer(sq_col_int64(q, 7)));
	json_object_set_new(o, "stopped_by", sq_col_null(q, 9) ?
			    json_null() : json_string(sq_col_text(q, 9)));
	/* null: the point's own errno (and every delay drill) */
	json_object_set_new(o, "errno", sq_col_null(q, 10) ?
			    json_null() : json_string(sq_col_text(q, 10)));
	/* "all", or the hosts it was handed to; the conditions; why one stopped it. */
	json_object_set_new(o, "hosts", json_col(q, 11, json_string("all")));
	json_object_set_new(o, "stop_when", json_col(q, 12, json_array()));
	json_object_set_new(o, "stop_reason", sq_col_null(q, 13) ?
			    json_null() : json_string(sq_col_text(q, 13)));
	return o;
}

int sq_drill_list(struct store *st, const char *g, const char *a,
		  json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = sq_rows(s, sq_qk(s, Q_DRILL_LIST, r.id), drill_row, out, err);
	sq_unlock(st);
	return ret;
}

int sq_drill_stop(struct store *st, const char *g, const char *a,
		  int64_t id, const char *by, const char *token_id,
		  const char *reason, int64_t now, char *err)
{
	struct sq_store *s = SQ(st);
	char detail[160 + SDS_HB_STOP_REASON_MAX], who[ADMIN_WHO_MAX];
	struct sq_app_ref r;
	struct sq_stmt *q;
	int rc, ret;

	sq_lock(st);
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = sq_app_lookup(s, g, a, &r, err);
	if (ret)
		goto fail;
	q = sq_q(s, Q_DRILL_GET);
	if (!q)
		goto dbfail;
	sq_bind_int64(q, 1, r.id);
	sq_bind_int64(q, 2, id);
	rc = sq_step(q);
	if (rc != SQ_ROW) {
		sq_reset(q);
		if (rc != SQ_DONE)
			goto dbfail;
		sq_seterr(err, "drill %lld not found", (long long)id);
		ret = STORE_NOTFOUND;
		goto fail;
	}
	snprintf(detail, sizeof(detail), "drill %lld on %s%s%.*s", (long long)id,
		 sq_col_text(q, 0), reason ? ": " : "", SDS_HB_STOP_REASON_MAX,
		 reason ? reason : "");
	if (!sq_col_null(q, 1) ||
	    sq_col_int64(q, 2) <= now) {
		sq_reset(q);
		sq_seterr(err, "drill %lld has ended already", (long long)id);
		ret = STORE_CONFLICT;
		goto fail;
	}
	sq_reset(q);
	snprintf(who, sizeof(who), "%s (token %s)", by, token_id);
	q = sq_q(s, Q_DRILL_STOP);
	if (!q)
		goto dbfail;
	sq_bind_int64(q, 1, r.id);
	sq_bind_int64(q, 2, id);
	sq_bind_int64(q, 3, now);
	sq_bind_text(q, 4, who);
	if (reason)
		sq_bind_text(q, 5, reason);
	else
		sq_bind_null(q, 5);
	ret = sq_run(s, q, err);
	if (!ret)
		ret = sq_run(s, sq_qk(s, Q_DRILLS_BUMP, r.id), err);
	ret = sq_commit_audited(s, ret, r.id,
				reason ? "drill.abort" : "drill.stop", detail, who, err);
	goto out;
dbfail:
	ret = sq_dberr(s, err);
fail:
	sq_rollback(s);
out:
	sq_unlock(st);
	return ret;
}

