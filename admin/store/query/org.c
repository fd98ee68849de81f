// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/org.c - groups, apps and the audit log of the store (both engines).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/query/sq.h"

/* ---- groups ------------------------------------------------------------- */

static json_t *group_row(struct sq_stmt *q)
{
	return json_pack("{s:s, s:s, s:I, s:I}", "name", sq_col_text(q, 0),
			 "description", sq_col_text(q, 1),
			 "created", (json_int_t)sq_col_int64(q, 2),
			 "apps", (json_int_t)sq_col_int64(q, 3));
}


int sq_group_list(struct store *st, json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	int ret;

	sq_lock(st);
	ret = sq_rows(s, sq_q(s, Q_GROUP_LIST), group_row, out, err);
	sq_unlock(st);
	return ret;
}

int sq_group_get(struct store *st, const char *g, json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_stmt *q;
	int ret;

	sq_lock(st);
	q = sq_q(s, Q_GROUP_GET);
	if (!q) {
		ret = sq_dberr(s, err);
	} else {
		sq_bind_text(q, 1, g);
		ret = sq_one(s, q, group_row, out, err);
		if (ret == STORE_NOTFOUND)
			sq_seterr(err, "group '%s' not found", g);
	}
	sq_unlock(st);
	return ret;
}

static int group_insert(struct sq_store *s, const char *g, const char *desc,
			char *err)
{
	struct sq_stmt *q = sq_q(s, Q_GROUP_INS);
	int ret;

	if (!q)
		return sq_dberr(s, err);
	sq_bind_text(q, 1, g);
	sq_bind_text(q, 2, desc);
	sq_bind_int64(q, 3, store_now_s());
	ret = sq_run(s, q, err);
	if (ret == STORE_EXISTS)
		sq_seterr(err, "group '%s' exists", g);
	return ret;
}

int sq_group_create(struct store *st, const char *g, const char *desc, char *err)
{
	int ret;

	sq_lock(st);
	ret = group_insert(SQ(st), g, desc, err);
	sq_unlock(st);
	return ret;
}

int sq_group_update(struct store *st, const char *g, const char *desc, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_stmt *q;
	int ret;

	sq_lock(st);
	q = sq_q(s, Q_GROUP_UPD);
	if (!q) {
		ret = sq_dberr(s, err);
		goto out;
	}
	sq_bind_text(q, 1, g);
	sq_bind_text(q, 2, desc);
	ret = sq_run(s, q, err);
	if (!ret && sq_changes(s) == 0) {
		sq_seterr(err, "group '%s' not found", g);
		ret = STORE_NOTFOUND;
	}
out:
	sq_unlock(st);
	return ret;
}

int sq_group_delete(struct store *st, const char *g, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_stmt *q;
	int64_t id;
	int ret;

	sq_lock(st);
	ret = sq_group_id(s, g, &id, err);
	if (ret)
		goto out;
	q = sq_q(s, Q_GROUP_NAPPS);
	if (!q) {
		ret = sq_dberr(s, err);
		goto out;
	}
	sq_bind_int64(q, 1, id);
	if (sq_step(q) == SQ_ROW && sq_col_int64(q, 0) > 0) {
		sq_reset(q);
		sq_seterr(err, "group '%s' still has apps: delete them first", g);
		ret = STORE_CONFLICT;
		goto out;
	}
	sq_reset(q);
	ret = sq_run(s, sq_qk(s, Q_GROUP_DEL, id), err);
out:
	sq_unlock(st);
	return ret;
}

/* ---- apps --------------------------------------------------------------- */

static json_t *app_row(struct sq_stmt *q)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:I, s:I}",
			 "group", sq_col_text(q, 0), "name", sq_col_text(q, 1),
			 "description", sq_col_text(q, 2),
			 "created", (json_int_t)sq_col_int64(q, 3),
			 "version", (json_int_t)sq_col_int64(q, 4),
			 "active_scheme", sq_col_text(q, 5),
			 "schemes", (json_int_t)sq_col_int64(q, 6),
			 "hosts", (json_int_t)sq_col_int64(q, 7));
}

int sq_app_list(struct store *st, const char *g, json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_stmt *q;
	int64_t gid;
	int ret;

	sq_lock(st);
	if (g) {
		ret = sq_group_id(s, g, &gid, err);
		if (ret)
			goto out;
	}
	q = sq_q(s, g ? Q_APP_LIST : Q_APP_LIST_ALL);
	if (!q) {
		ret = sq_dberr(s, err);
		goto out;
	}
	if (g)
		sq_bind_text(q, 1, g);
	ret = sq_rows(s, q, app_row, out, err);
out:
	sq_unlock(st);
	return ret;
}

int sq_app_get(struct store *st, const char *g, const char *a, json_t **out,
	       char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_stmt *q;
	int ret;

	sq_lock(st);
	q = sq_q(s, Q_APP_GET);
	if (!q) {
		ret = sq_dberr(s, err);
	} else {
		sq_bind_text(q, 1, g);
		sq_bind_text(q, 2, a);
		ret = sq_one(s, q, app_row, out, err);
		if (ret == STORE_NOTFOUND)
			sq_seterr(err, "app '%s' not found in group '%s'", a, g);
	}
	sq_unlock(st);
	return ret;
}

int sq_scheme_insert(struct sq_store *s, int64_t app, const char *name,
		  const char *desc, int64_t *id, char *err)
{
	struct sq_stmt *q = sq_q(s, Q_SCHEME_INS);
	int ret;

	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 1, app);
	sq_bind_text(q, 2, name);
	sq_bind_text(q, 3, desc);
	sq_bind_int64(q, 4, store_now_s());
	ret = sq_run(s, q, err);
	if (ret == STORE_EXISTS)
		sq_seterr(err, "scheme '%s' exists", name);
	*id = sq_last_id(s);
	return ret;
}

/* Inside a transaction: the group (created if missing) and a new app. */
int sq_app_insert(struct sq_store *s, const char *g, const char *a,
	       const char *desc, struct sq_app_ref *r, char *err)
{
	struct sq_stmt *q;
	int64_t gid, sid;
	int ret;

	ret = sq_group_id(s, g, &gid, err);
	if (ret == STORE_NOTFOUND) {
		ret = group_insert(s, g, "", err);
		gid = sq_last_id(s);
	}
	if (ret)
		return ret;
	q = sq_q(s, Q_APP_INS);
	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 1, gid);
	sq_bind_text(q, 2, a);
	sq_bind_text(q, 3, desc);
	sq_bind_int64(q, 4, store_now_s());
	ret = sq_run(s, q, err);
	if (ret == STORE_EXISTS)
		sq_seterr(err, "app '%s' exists in group '%s'", a, g);
	if (ret)
		return ret;
	r->id = sq_last_id(s);
	r->version = 1;
	r->drills_seq = 0;
	ret = sq_scheme_insert(s, r->id, "default", "", &sid, err);
	if (ret)
		return ret;
	r->active = sid;
	q = sq_q(s, Q_APP_SET_ACTIVE);
	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 1, r->id);
	sq_bind_int64(q, 2, sid);
	sq_bind_int64(q, 3, 0);
	return sq_run(s, q, err);
}

int sq_app_create(struct store *st, const char *g, const char *a,
		  const char *desc, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	int ret;

	sq_lock(st);
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = sq_app_insert(s, g, a, desc, &r, err);
	ret = sq_commit_audited(s, ret, r.id, "app.create", a, "", err);
out:
	sq_unlock(st);
	return ret;
}

int sq_app_update(struct store *st, const char *g, const char *a,
		  const char *desc, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	struct sq_stmt *q;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (ret)
		goto out;
	q = sq_q(s, Q_APP_UPD);
	if (!q) {
		ret = sq_dberr(s, err);
		goto out;
	}
	sq_bind_int64(q, 1, r.id);
	sq_bind_text(q, 2, desc);
	ret = sq_run(s, q, err);
out:
	sq_unlock(st);
	return ret;
}

int sq_app_delete(struct store *st, const char *g, const char *a, char *err)
{
	static const int dels[] = {
		Q_DEL_APP_STATS, Q_DEL_APP_HB, Q_DEL_APP_KEYS, Q_DEL_APP_DEPS, Q_DEL_APP_HOSTS,
		Q_DEL_APP_AUDIT, Q_DEL_APP_STRATS, Q_DEL_APP_SCHEMES, Q_APP_DEL,
	};
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	size_t i;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (ret)
		goto out;
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	/* Explicit deletes: no reliance on foreign_keys being on. */
	for (i = 0; i < sizeof(dels) / sizeof(dels[0]) && !ret; i++)
		ret = sq_run(s, sq_qk(s, dels[i], r.id), err);
	if (!ret)
		ret = sq_commit(s, err);
	else
		sq_rollback(s);
out:
	sq_unlock(st);
	return ret;
}

static json_t *audit_row(struct sq_stmt *q)
{
	return json_pack("{s:I, s:s, s:s, s:s}",
			 "time", (json_int_t)sq_col_int64(q, 0),
			 "action", sq_col_text(q, 1), "detail", sq_col_text(q, 2),
			 "comment", sq_col_text(q, 3));
}

int sq_audit(struct store *st, const char *g, const char *a, int limit,
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
	q = sq_q(s, Q_AUDIT_LIST);
	if (!q) {
		ret = sq_dberr(s, err);
		goto out;
	}
	sq_bind_int64(q, 1, r.id);
	sq_bind_int64(q, 2, limit);
	ret = sq_rows(s, q, audit_row, out, err);
out:
	sq_unlock(st);
	return ret;
}

/* A refused write to app @g/@a (admin/auth.c), as an audit row "denied". */
int sq_audit_denied(struct store *st, const char *g, const char *a,
		    const char *detail, const char *who, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = sq_audit_add(s, r.id, "denied", detail, who, err);
	sq_unlock(st);
	return ret;
}
