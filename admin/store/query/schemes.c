// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/schemes.c - schemes and their strategies in the SQLite store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/sqlite/sqlite.h"

/* ---- schemes ------------------------------------------------------------ */

static json_t *scheme_row(sqlite3_stmt *q)
{
	return json_pack("{s:s, s:s, s:I, s:b, s:I}", "name", col_text(q, 0),
			 "description", col_text(q, 1),
			 "created", (json_int_t)sqlite3_column_int64(q, 2),
			 "active", sqlite3_column_int(q, 3),
			 "points", (json_int_t)sqlite3_column_int64(q, 4));
}

int sq_scheme_list(struct store *st, const char *g, const char *a,
		   json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	ret = rows(s, Qk(s, Q_SCHEME_LIST, r.id), scheme_row, out, err);
out:
	unlock(st);
	return ret;
}

int sq_scheme_get(struct store *st, const char *g, const char *a,
		  const char *name, json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	int64_t sid;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	ret = one(s, Qk(s, Q_SCHEME_GET, sid), scheme_row, out, err);
out:
	unlock(st);
	return ret;
}

int sq_scheme_create(struct store *st, const char *g, const char *a,
		     const char *name, const char *desc, const char *clone_from,
		     const char *comment, char *err)
{
	struct sqlite_store *s = SS(st);
	int64_t from = 0, sid;
	struct app_ref r;
	char detail[160];
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret && clone_from)
		ret = scheme_id(s, r.id, clone_from, &from, err);
	if (ret)
		goto out;
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = scheme_insert(s, r.id, name, desc, &sid, err);
	if (!ret && clone_from) {
		sqlite3_stmt *q = Q(s, Q_STRAT_CLONE);

		if (!q) {
			ret = dberr(s, err);
		} else {
			sqlite3_bind_int64(q, 1, from);
			sqlite3_bind_int64(q, 2, sid);
			ret = run(s, q, err);
		}
	}
	if (clone_from)
		snprintf(detail, sizeof(detail), "%s from %s", name, clone_from);
	else
		snprintf(detail, sizeof(detail), "%s", name);
	if (!ret)
		ret = audit_add(s, r.id, "scheme.create", detail, comment, err);
	if (!ret)
		ret = commit(s, err);
	else
		rollback(s);
out:
	unlock(st);
	return ret;
}

int sq_scheme_update(struct store *st, const char *g, const char *a,
		     const char *name, const char *desc, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int64_t sid;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	q = Q(s, Q_SCHEME_UPD);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, sid);
	bind_text(q, 2, desc);
	ret = run(s, q, err);
out:
	unlock(st);
	return ret;
}

int sq_scheme_delete(struct store *st, const char *g, const char *a,
		     const char *name, const char *comment, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	int64_t sid;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	if (sid == r.active) {
		seterr(err, "scheme '%s' is active: activate another first", name);
		ret = STORE_CONFLICT;
		goto out;
	}
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = run(s, Qk(s, Q_STRAT_CLEAR, sid), err);
	if (!ret) {
		ret = run(s, Qk(s, Q_SCHEME_DEL, sid), err);
	}
	if (!ret)
		ret = audit_add(s, r.id, "scheme.delete", name, comment, err);
	if (!ret)
		ret = commit(s, err);
	else
		rollback(s);
out:
	unlock(st);
	return ret;
}

int sq_scheme_activate(struct store *st, const char *g, const char *a,
		       const char *name, const char *comment,
		       int64_t *version, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int64_t sid;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	if (sid == r.active) {
		/* Already in force: nothing for the hosts to fetch. */
		if (version)
			*version = r.version;
		goto out;
	}
	ret = begin(s, err);
	if (ret)
		goto out;
	q = Q(s, Q_APP_SET_ACTIVE);
	if (!q) {
		ret = dberr(s, err);
	} else {
		sqlite3_bind_int64(q, 1, r.id);
		sqlite3_bind_int64(q, 2, sid);
		sqlite3_bind_int64(q, 3, 1);
		ret = run(s, q, err);
	}
	if (!ret)
		ret = audit_add(s, r.id, "scheme.activate", name, comment, err);
	if (!ret)
		ret = commit(s, err);
	else
		rollback(s);
	if (!ret && version)
		*version = r.version + 1;
out:
	unlock(st);
	return ret;
}

/* ---- strategies --------------------------------------------------------- */

/* Read scheme @sid's strategies into @out (version left alone). */
int strategies_read(struct sqlite_store *s, int64_t sid,
		    struct sds_strategies *out, char *err)
{
	sqlite3_stmt *q = Q(s, Q_STRAT_LIST);
	int rc;

	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, sid);
	out->n = 0;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *point = col_text(q, 0);
		const char *body = col_text(q, 1);
		char doc[4096], perr[256];
		struct sds_strategies *one_pt;
		int n;

		if (out->n >= SDS_MAX_STRATEGIES)
			break;
		/* Stored bodies were validated on the way in; parse them back
		 * with the same codec so both sides agree on the meaning. */
		n = snprintf(doc, sizeof(doc), "{\"version\":0,\"points\":{\"%s\":%s}}",
			     point, body);
		one_pt = malloc(sizeof(*one_pt));
		if (!one_pt || n >= (int)sizeof(doc) ||
		    strategy_set_parse(doc, n, one_pt, perr, sizeof(perr)) || one_pt->n != 1) {
			free(one_pt);
			sqlite3_reset(q);
			seterr(err, "database: stored strategy of point '%s' unreadable", point);
			return STORE_ERROR;
		}
		out->s[out->n++] = one_pt->s[0];
		free(one_pt);
	}
	sqlite3_reset(q);
	if (rc != SQLITE_DONE)
		return dberr(s, err);
	return 0;
}

int sq_strategies_get(struct store *st, const char *g, const char *a,
		      const char *name, struct sds_strategies *out,
		      char scheme[SDS_NAME_MAX + 1], char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	int64_t sid;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	if (name) {
		ret = scheme_id(s, r.id, name, &sid, err);
		if (ret)
			goto out;
	} else {
		sid = r.active;
	}
	ret = strategies_read(s, sid, out, err);
	out->version = r.version;
	if (!ret && scheme) {
		sqlite3_stmt *q = Q(s, Q_SCHEME_NAME);

		scheme[0] = '\0';
		if (q) {
			sqlite3_bind_int64(q, 1, sid);
			if (sqlite3_step(q) == SQLITE_ROW)
				snprintf(scheme, SDS_NAME_MAX + 1, "%s", col_text(q, 0));
			sqlite3_reset(q);
		}
	}
out:
	unlock(st);
	return ret;
}

static int strategy_write(struct sqlite_store *s, int64_t sid,
			  const struct sds_strategy *in, char *err)
{
	sqlite3_stmt *q = Q(s, Q_STRAT_PUT);
	json_t *o;
	char *body;
	int ret;

	if (!q)
		return dberr(s, err);
	o = strategy_to_json(in);
	body = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	if (!body) {
		seterr(err, "out of memory");
		return STORE_ERROR;
	}
	sqlite3_bind_int64(q, 1, sid);
	bind_text(q, 2, in->point);
	sqlite3_bind_text(q, 3, body, -1, free);
	ret = run(s, q, err);
	return ret;
}

/*
 * Common frame of the strategy writes: resolve, begin, @fn, bump if the
 * scheme is active, audit, commit.
 */
struct strat_op {
	const struct sds_strategies *all;
	const struct sds_strategy *one;
	const char *del;
};

static int strat_apply(struct sqlite_store *s, int64_t sid, const struct strat_op *op,
		       char *err)
{
	sqlite3_stmt *q;
	int i, ret = 0;

	if (op->all) {
		ret = run(s, Qk(s, Q_STRAT_CLEAR, sid), err);
		for (i = 0; i < op->all->n && !ret; i++)
			ret = strategy_write(s, sid, &op->all->s[i], err);
		return ret;
	}
	if (op->one)
		return strategy_write(s, sid, op->one, err);
	q = Q(s, Q_STRAT_DEL);
	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, sid);
	bind_text(q, 2, op->del);
	ret = run(s, q, err);
	if (!ret && sqlite3_changes(s->db) == 0) {
		seterr(err, "point '%s' has no strategy in this scheme", op->del);
		return STORE_NOTFOUND;
	}
	return ret;
}

static int strat_frame(struct store *st, const char *g, const char *a,
		       const char *name, const struct strat_op *op,
		       const char *action, const char *detail,
		       const char *comment, int64_t *version, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	int64_t sid, v;
	char full[256];
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	v = r.version;
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = strat_apply(s, sid, op, err);
	if (!ret && sid == r.active)
		ret = bump(s, r.id, &v, err);
	snprintf(full, sizeof(full), "%s: %s", name, detail);
	if (!ret)
		ret = audit_add(s, r.id, action, full, comment, err);
	if (!ret)
		ret = commit(s, err);
	else
		rollback(s);
	if (!ret && version)
		*version = v;
out:
	unlock(st);
	return ret;
}

int sq_strategies_put(struct store *st, const char *g, const char *a,
		      const char *name, const struct sds_strategies *in,
		      const char *comment, int64_t *version, char *err)
{
	struct strat_op op = { .all = in };
	char detail[64];

	snprintf(detail, sizeof(detail), "%d points", in->n);
	return strat_frame(st, g, a, name, &op, "strategies.replace", detail,
			   comment, version, err);
}

int sq_strategy_put(struct store *st, const char *g, const char *a,
		    const char *name, const struct sds_strategy *in,
		    const char *comment, int64_t *version, char *err)
{
	struct strat_op op = { .one = in };
	char detail[200];
	json_t *o = strategy_to_json(in);
	char *body = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	int ret;

	snprintf(detail, sizeof(detail), "%s %s", in->point, body ? body : "");
	free(body);
	json_decref(o);
	ret = strat_frame(st, g, a, name, &op, "strategy.put", detail, comment,
			  version, err);
	return ret;
}

int sq_strategy_delete(struct store *st, const char *g, const char *a,
		       const char *name, const char *point,
		       const char *comment, int64_t *version, char *err)
{
	struct strat_op op = { .del = point };

	return strat_frame(st, g, a, name, &op, "strategy.delete", point, comment,
			   version, err);
}

