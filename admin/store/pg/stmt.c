// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/pg/stmt.c - a libpq prepared statement behind the calls the query
 * files make (store/pg/compat.h): parameters are bound by index as text
 * (blobs as binary), the first step executes and fetches every row, the
 * next steps walk them, and column values stay valid until the reset,
 * as SQLite's do.  Results come back as text: integers are parsed, a
 * boolean ("t"/"f") reads as 1/0, and bytea is decoded on request.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/pg/compat.h"

static int setp(struct pgc_stmt *q, int i, char *v, int len, int fmt)
{
	if (i < 1 || i > PGC_MAXPARAM) {
		free(v);
		return SQLITE_ERROR;
	}
	free(q->val[i - 1]);
	q->val[i - 1] = v;
	q->len[i - 1] = len;
	q->fmt[i - 1] = fmt;
	if (i > q->nparam)
		q->nparam = i;
	return SQLITE_OK;
}

int pgc_bind_int64(struct pgc_stmt *q, int i, int64_t v)
{
	char *t;

	if (asprintf(&t, "%" PRId64, v) < 0)
		return SQLITE_ERROR;
	return setp(q, i, t, 0, 0);
}

/* SQLite's destructor argument: the caller's buffer is ours to free. */
static void dispose(const void *p, void (*d)(void *))
{
	if (d != SQLITE_STATIC && d != SQLITE_TRANSIENT)
		d((void *)p);
}

/* Values are copied: a statement keeps them until it is cleared. */
int pgc_bind_text(struct pgc_stmt *q, int i, const char *t, int n, void (*d)(void *))
{
	char *c = n < 0 ? strdup(t) : strndup(t, n);

	dispose(t, d);
	return c ? setp(q, i, c, 0, 0) : SQLITE_ERROR;
}

int pgc_bind_blob(struct pgc_stmt *q, int i, const void *b, int n, void (*d)(void *))
{
	char *c = malloc(n ? n : 1);

	if (c)
		memcpy(c, b, n);
	dispose(b, d);
	return c ? setp(q, i, c, n, 1) : SQLITE_ERROR;
}

int pgc_bind_null(struct pgc_stmt *q, int i)
{
	return setp(q, i, NULL, 0, 0);
}

int pgc_result(struct pgc_db *db, PGresult *r)
{
	ExecStatusType st = PQresultStatus(r);
	const char *n = PQcmdTuples(r);

	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
		db->sqlstate[0] = '\0';
		db->changes = *n ? strtoll(n, NULL, 10) : 0;
		if (!strncmp(PQcmdStatus(r), "INSERT", 6) && PQntuples(r) > 0 &&
		    PQnfields(r) > 0)
			db->last_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		return SQLITE_OK;
	}
	snprintf(db->sqlstate, sizeof(db->sqlstate), "%s",
		 PQresultErrorField(r, PG_DIAG_SQLSTATE) ?: "?????");
	/* The message's first line; libpq's carry a DETAIL line after it. */
	snprintf(db->msg, sizeof(db->msg), "%.*s",
		 (int)strcspn(PQresultErrorMessage(r), "\n"), PQresultErrorMessage(r));
	if (!db->msg[0])
		snprintf(db->msg, sizeof(db->msg), "%.*s",
			 (int)strcspn(PQerrorMessage(db->conn), "\n"),
			 PQerrorMessage(db->conn));
	return SQLITE_ERROR;
}

static void drop_prefetch(struct pgc_stmt *q)
{
	int i;

	for (i = 0; i < q->npre; i++)
		free(q->pre[i]);
	q->npre = 0;
	q->prefetched = false;
}

/* Bound now to what the prefetch ran with? */
static bool same_binds(const struct pgc_stmt *q)
{
	int i;

	if (q->npre != q->nparam)
		return false;
	for (i = 0; i < q->nparam; i++) {
		if (!q->val[i] != !q->pre[i] || q->fmt[i])
			return false;
		if (q->val[i] && strcmp(q->val[i], q->pre[i]))
			return false;
	}
	return true;
}

void pgc_prefetch(struct pgc_db *db, struct pgc_stmt **qs, int n)
{
	PGconn *c = db->conn;
	int i, k, sent = 0;

	for (i = 0; i < n; i++) {
		if (!qs[i]->prepared) {
			PGresult *r = PQprepare(c, qs[i]->name, qs[i]->sql, 0, NULL);

			qs[i]->prepared = !pgc_result(db, r);
			PQclear(r);
			if (!qs[i]->prepared)
				return;
		}
		pgc_reset(qs[i]);
	}
	if (!PQenterPipelineMode(c))
		return;
	for (i = 0; i < n; i++, sent++)
		if (!PQsendQueryPrepared(c, qs[i]->name, qs[i]->nparam,
					 (const char *const *)qs[i]->val, qs[i]->len,
					 qs[i]->fmt, 0))
			break;
	if (PQpipelineSync(c)) {
		for (i = 0; i < sent; i++) {
			PGresult *r = PQgetResult(c);

			if (r && PQresultStatus(r) == PGRES_TUPLES_OK) {
				struct pgc_stmt *q = qs[i];

				q->res = r;
				q->row = -1;
				q->prefetched = true;
				for (k = 0; k < q->nparam; k++)
					q->pre[k] = q->val[k] ? strdup(q->val[k]) : NULL;
				q->npre = q->nparam;
			} else {
				PQclear(r);
			}
			/* Each query's results end with a NULL. */
			while ((r = PQgetResult(c)))
				PQclear(r);
		}
		/* The PGRES_PIPELINE_SYNC. */
		PQclear(PQgetResult(c));
	}
	PQexitPipelineMode(c);
}

int pgc_step(struct pgc_stmt *q)
{
	struct pgc_db *db = q->db;

	if (q->prefetched) {
		bool same = same_binds(q);

		drop_prefetch(q);
		if (same) {
			q->row = 0;
			return q->row < PQntuples(q->res) ? SQLITE_ROW : SQLITE_DONE;
		}
		PQclear(q->res);
		q->res = NULL;
	}
	if (!q->res) {
		const char *vals[PGC_MAXPARAM];
		int i;

		if (!q->prepared) {
			PGresult *r = PQprepare(db->conn, q->name, q->sql, 0, NULL);
			int rc = pgc_result(db, r);

			PQclear(r);
			if (rc)
				return rc;
			q->prepared = true;
		}
		for (i = 0; i < q->nparam; i++)
			vals[i] = q->val[i];
		q->res = PQexecPrepared(db->conn, q->name, q->nparam, vals, q->len,
					q->fmt, 0);
		q->row = 0;
		if (pgc_result(db, q->res)) {
			PQclear(q->res);
			q->res = NULL;
			return SQLITE_ERROR;
		}
	} else {
		q->row++;
	}
	return q->row < PQntuples(q->res) ? SQLITE_ROW : SQLITE_DONE;
}

int pgc_reset(struct pgc_stmt *q)
{
	drop_prefetch(q);
	PQclear(q->res);
	q->res = NULL;
	PQfreemem(q->blob);
	q->blob = NULL;
	return SQLITE_OK;
}

void pgc_clear_bindings(struct pgc_stmt *q)
{
	int i;

	for (i = 0; i < q->nparam; i++) {
		free(q->val[i]);
		q->val[i] = NULL;
		q->len[i] = q->fmt[i] = 0;
	}
	q->nparam = 0;
}

void pgc_finalize(struct pgc_stmt *q)
{
	if (!q)
		return;
	pgc_reset(q);
	pgc_clear_bindings(q);
	free(q);
}

static const char *value(struct pgc_stmt *q, int i)
{
	if (!q->res || q->row >= PQntuples(q->res) || i >= PQnfields(q->res) ||
	    PQgetisnull(q->res, q->row, i))
		return NULL;
	return PQgetvalue(q->res, q->row, i);
}

int64_t pgc_column_int64(struct pgc_stmt *q, int i)
{
	const char *v = value(q, i);

	if (!v)
		return 0;
	if (*v == 't' || *v == 'f')
		return *v == 't';
	return strtoll(v, NULL, 10);
}

const unsigned char *pgc_column_text(struct pgc_stmt *q, int i)
{
	return (const unsigned char *)value(q, i);
}

int pgc_column_type(struct pgc_stmt *q, int i)
{
	return value(q, i) ? SQLITE_INTEGER : SQLITE_NULL;
}

/* bytea comes back as "\x0a0b..."; decoded once per row and column. */
const void *pgc_column_blob(struct pgc_stmt *q, int i)
{
	const char *v = value(q, i);

	PQfreemem(q->blob);
	q->blob = NULL;
	q->bloblen = 0;
	if (v)
		q->blob = PQunescapeBytea((const unsigned char *)v, &q->bloblen);
	return q->blob;
}

int pgc_column_bytes(struct pgc_stmt *q, int i)
{
	return (int)q->bloblen;
}
