// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/org.c - groups, apps and the audit log of the SQLite store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/sqlite/sqlite.h"

/* ---- groups ------------------------------------------------------------- */

static json_t *group_row(sqlite3_stmt *q)
{
	return json_pack("{s:s, s:s, s:I, s:I}", "name", col_text(q, 0),
			 "description", col_text(q, 1),
			 "created", (json_int_t)sqlite3_column_int64(q, 2),
			 "apps", (json_int_t)sqlite3_column_int64(q, 3));
}


int sq_group_list(struct store *st, json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	int ret;

	lock(st);
	ret = rows(s, Q(s, Q_GROUP_LIST), group_row, out, err);
	unlock(st);
	return ret;
}

int sq_group_get(struct store *st, const char *g, json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	sqlite3_stmt *q;
	int ret;

	lock(st);
	q = Q(s, Q_GROUP_GET);
	if (!q) {
		ret = dberr(s, err);
	} else {
		bind_text(q, 1, g);
		ret = one(s, q, group_row, out, err);
		if (ret == STORE_NOTFOUND)
			seterr(err, "group '%s' not found", g);
	}
	unlock(st);
	return ret;
}

static int group_insert(struct sqlite_store *s, const char *g, const char *desc,
			char *err)
{
	sqlite3_stmt *q = Q(s, Q_GROUP_INS);
	int ret;

	if (!q)
		return dberr(s, err);
	bind_text(q, 1, g);
	bind_text(q, 2, desc);
	sqlite3_bind_int64(q, 3, store_now_s());
	ret = run(s, q, err);
	if (ret == STORE_EXISTS)
		seterr(err, "group '%s' exists", g);
	return ret;
}

int sq_group_create(struct store *st, const char *g, const char *desc, char *err)
{
	int ret;

	lock(st);
	ret = group_insert(SS(st), g, desc, err);
	unlock(st);
	return ret;
}

int sq_group_update(struct store *st, const char *g, const char *desc, char *err)
{
	struct sqlite_store *s = SS(st);
	sqlite3_stmt *q;
	int ret;

	lock(st);
	q = Q(s, Q_GROUP_UPD);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	bind_text(q, 1, g);
	bind_text(q, 2, desc);
	ret = run(s, q, err);
	if (!ret && sqlite3_changes(s->db) == 0) {
		seterr(err, "group '%s' not found", g);
		ret = STORE_NOTFOUND;
	}
out:
	unlock(st);
	return ret;
}

int sq_group_delete(struct store *st, const char *g, char *err)
{
	struct sqlite_store *s = SS(st);
	sqlite3_stmt *q;
	int64_t id;
	int ret;

	lock(st);
	ret = group_id(s, g, &id, err);
	if (ret)
		goto out;
	q = Q(s, Q_GROUP_NAPPS);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, id);
	if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int64(q, 0) > 0) {
		sqlite3_reset(q);
		seterr(err, "group '%s' still has apps: delete them first", g);
		ret = STORE_CONFLICT;
		goto out;
	}
	sqlite3_reset(q);
	ret = run(s, Qk(s, Q_GROUP_DEL, id), err);
out:
	unlock(st);
	return ret;
}

/* ---- apps --------------------------------------------------------------- */

static json_t *app_row(sqlite3_stmt *q)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:I, s:I}",
			 "group", col_text(q, 0), "name", col_text(q, 1),
			 "description", col_text(q, 2),
			 "created", (json_int_t)sqlite3_column_int64(q, 3),
			 "version", (json_int_t)sqlite3_column_int64(q, 4),
			 "active_scheme", col_text(q, 5),
			 "schemes", (json_int_t)sqlite3_column_int64(q, 6),
			 "hosts", (json_int_t)sqlite3_column_int64(q, 7));
}

int sq_app_list(struct store *st, const char *g, json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	sqlite3_stmt *q;
	int64_t gid;
	int ret;

	lock(st);
	if (g) {
		ret = group_id(s, g, &gid, err);
		if (ret)
			goto out;
	}
	q = Q(s, g ? Q_APP_LIST : Q_APP_LIST_ALL);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	if (g)
		bind_text(q, 1, g);
	ret = rows(s, q, app_row, out, err);
out:
	unlock(st);
	return ret;
}

int sq_app_get(struct store *st, const char *g, const char *a, json_t **out,
	       char *err)
{
	struct sqlite_store *s = SS(st);
	sqlite3_stmt *q;
	int ret;

	lock(st);
	q = Q(s, Q_APP_GET);
	if (!q) {
		ret = dberr(s, err);
	} else {
		bind_text(q, 1, g);
		bind_text(q, 2, a);
		ret = one(s, q, app_row, out, err);
		if (ret == STORE_NOTFOUND)
			seterr(err, "app '%s' not found in group '%s'", a, g);
	}
	unlock(st);
	return ret;
}

int scheme_insert(struct sqlite_store *s, int64_t app, const char *name,
		  const char *desc, int64_t *id, char *err)
{
	sqlite3_stmt *q = Q(s, Q_SCHEME_INS);
	int ret;

	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, app);
	bind_text(q, 2, name);
	bind_text(q, 3, desc);
	sqlite3_bind_int64(q, 4, store_now_s());
	ret = run(s, q, err);
	if (ret == STORE_EXISTS)
		seterr(err, "scheme '%s' exists", name);
	*id = sqlite3_last_insert_rowid(s->db);
	return ret;
}

/* Inside a transaction: the group (created if missing) and a new app. */
int app_insert(struct sqlite_store *s, const char *g, const char *a,
	       const char *desc, struct app_ref *r, char *err)
{
	sqlite3_stmt *q;
	int64_t gid, sid;
	int ret;

	ret = group_id(s, g, &gid, err);
	if (ret == STORE_NOTFOUND) {
		ret = group_insert(s, g, "", err);
		gid = sqlite3_last_insert_rowid(s->db);
	}
	if (ret)
		return ret;
	q = Q(s, Q_APP_INS);
	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, gid);
	bind_text(q, 2, a);
	bind_text(q, 3, desc);
	sqlite3_bind_int64(q, 4, store_now_s());
	ret = run(s, q, err);
	if (ret == STORE_EXISTS)
		seterr(err, "app '%s' exists in group '%s'", a, g);
	if (ret)
		return ret;
	r->id = sqlite3_last_insert_rowid(s->db);
	r->version = 1;
	ret = scheme_insert(s, r->id, "default", "", &sid, err);
	if (ret)
		return ret;
	r->active = sid;
	q = Q(s, Q_APP_SET_ACTIVE);
	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, r->id);
	sqlite3_bind_int64(q, 2, sid);
	sqlite3_bind_int64(q, 3, 0);
	return run(s, q, err);
}

int sq_app_create(struct store *st, const char *g, const char *a,
		  const char *desc, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	int ret;

	lock(st);
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = app_insert(s, g, a, desc, &r, err);
	if (!ret)
		ret = audit_add(s, r.id, "app.create", a, "", err);
	if (!ret)
		ret = commit(s, err);
	else
		rollback(s);
out:
	unlock(st);
	return ret;
}

int sq_app_update(struct store *st, const char *g, const char *a,
		  const char *desc, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	q = Q(s, Q_APP_UPD);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, r.id);
	bind_text(q, 2, desc);
	ret = run(s, q, err);
out:
	unlock(st);
	return ret;
}

int sq_app_delete(struct store *st, const char *g, const char *a, char *err)
{
	static const int dels[] = {
		Q_DEL_APP_STATS, Q_DEL_APP_HB, Q_DEL_APP_HOSTS, Q_DEL_APP_AUDIT,
		Q_DEL_APP_STRATS, Q_DEL_APP_SCHEMES, Q_APP_DEL,
	};
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	size_t i;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	ret = begin(s, err);
	if (ret)
		goto out;
	/* Explicit deletes: no reliance on foreign_keys being on. */
	for (i = 0; i < sizeof(dels) / sizeof(dels[0]) && !ret; i++)
		ret = run(s, Qk(s, dels[i], r.id), err);
	if (!ret)
		ret = commit(s, err);
	else
		rollback(s);
out:
	unlock(st);
	return ret;
}

static json_t *audit_row(sqlite3_stmt *q)
{
	return json_pack("{s:I, s:s, s:s, s:s}",
			 "time", (json_int_t)sqlite3_column_int64(q, 0),
			 "action", col_text(q, 1), "detail", col_text(q, 2),
			 "comment", col_text(q, 3));
}

int sq_audit(struct store *st, const char *g, const char *a, int limit,
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
	q = Q(s, Q_AUDIT_LIST);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, r.id);
	sqlite3_bind_int(q, 2, limit);
	ret = rows(s, q, audit_row, out, err);
out:
	unlock(st);
	return ret;
}

/* A refused write to app @g/@a (admin/auth.c), as an audit row "denied". */
int sq_audit_denied(struct store *st, const char *g, const char *a,
		    const char *detail, const char *who, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = audit_add(s, r.id, "denied", detail, who, err);
	unlock(st);
	return ret;
}
