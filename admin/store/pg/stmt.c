// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/pg/stmt.c - a libpq prepared statement behind the calls the query
 * files make (struct sq_engine, store/query/sq.h): parameters are bound by index as text
 * (blobs as binary), the first step executes and fetches every row, the
 * next steps walk them, and column values stay valid until the reset,
 * as SQLite's do.  Results come back as text: integers are parsed, a
 * boolean ("t"/"f") reads as 1/0, and bytea is decoded on request.
 * The query files' SQL has SQLite's ?N parameters: a statement's text
 * has them as $N from pg_stmt_new() on.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/pg/pg.h"

#define PREFETCH_MAX	8	/* statements pg_stmt_prefetch() sends at once */

static void st_reset(struct pg_stmt *q);

static struct pg_stmt *ps(struct sq_stmt *q)
{
	return (struct pg_stmt *)q;
}

/*
 * @sql with each ?N (N a digit) as $N: libpq's parameters.  A bare ? is
 * numbered as SQLite numbers it, one past the highest ?N or $N before it
 * (store/stat_cols.h's columns are written so).
 */
char *pg_stmt_sql(const char *sql)
{
	size_t n = strlen(sql), bare = 0, k = 0;
	const char *c;
	char *t;
	long top = 0;

	for (c = sql; *c; c++)
		bare += *c == '?';
	/* "$" and up to three digits for each. */
	t = malloc(n + bare * 3 + 1);
	if (!t)
		return NULL;
	for (c = sql; *c; c++) {
		if ((*c == '?' || *c == '$') && c[1] >= '0' && c[1] <= '9') {
			long v = strtol(c + 1, NULL, 10);

			if (v > top)
				top = v;
			t[k++] = '$';
		} else if (*c == '?' && top < 999) {
			k += sprintf(t + k, "$%ld", ++top);
		} else {
			t[k++] = *c;
		}
	}
	t[k] = '\0';
	return t;
}

struct pg_stmt *pg_stmt_new(struct pg_db *db, const char *name, const char *sql)
{
	struct pg_stmt *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->sql = pg_stmt_sql(sql);
	if (!q->sql) {
		free(q);
		return NULL;
	}
	q->base.e = &pg_engine;
	q->db = db;
	snprintf(q->name, sizeof(q->name), "%s", name);
	return q;
}

static int setp(struct pg_stmt *q, int i, char *v, int len, int fmt)
{
	if (i < 1 || i > PG_MAXPARAM) {
		free(v);
		return SQ_ERROR;
	}
	free(q->val[i - 1]);
	q->val[i - 1] = v;
	q->len[i - 1] = len;
	q->fmt[i - 1] = fmt;
	if (i > q->nparam)
		q->nparam = i;
	return SQ_OK;
}

static int st_bind_int64(struct pg_stmt *q, int i, int64_t v)
{
	char *t;

	if (asprintf(&t, "%" PRId64, v) < 0)
		return SQ_ERROR;
	return setp(q, i, t, 0, 0);
}

/* Values are copied (or taken: SQ_FREE): a statement keeps them until it is cleared. */
static int st_bind_text(struct pg_stmt *q, int i, const char *t, enum sq_life life)
{
	char *c = life == SQ_FREE ? (char *)t : strdup(t);

	return c ? setp(q, i, c, 0, 0) : SQ_ERROR;
}

static int st_bind_blob(struct pg_stmt *q, int i, const void *b, int n)
{
	char *c = malloc(n ? n : 1);

	if (c)
		memcpy(c, b, n);
	return c ? setp(q, i, c, n, 1) : SQ_ERROR;
}

static int st_bind_null(struct pg_stmt *q, int i)
{
	return setp(q, i, NULL, 0, 0);
}

int pg_db_result(struct pg_db *db, PGresult *r)
{
	ExecStatusType st = PQresultStatus(r);
	const char *n = PQcmdTuples(r);

	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
		db->sqlstate[0] = '\0';
		db->changes = *n ? strtoll(n, NULL, 10) : 0;
		if (!strncmp(PQcmdStatus(r), "INSERT", 6) && PQntuples(r) > 0 &&
		    PQnfields(r) > 0)
			db->last_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		return SQ_OK;
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
	return SQ_ERROR;
}

static void drop_prefetch(struct pg_stmt *q)
{
	int i;

	for (i = 0; i < q->npre; i++)
		free(q->pre[i]);
	q->npre = 0;
	q->prefetched = false;
}

/* Bound now to what the prefetch ran with? */
static bool same_binds(const struct pg_stmt *q)
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

void pg_stmt_prefetch(struct pg_db *db, struct sq_stmt **sqs, int n)
{
	struct pg_stmt *qs[PREFETCH_MAX];
	PGconn *c = db->conn;
	int i, k, sent = 0;

	if (n > PREFETCH_MAX)
		n = PREFETCH_MAX;	/* the rest run at their step */
	for (i = 0; i < n; i++)
		qs[i] = ps(sqs[i]);
	for (i = 0; i < n; i++) {
		if (!qs[i]->prepared) {
			PGresult *r = PQprepare(c, qs[i]->name, qs[i]->sql, 0, NULL);

			qs[i]->prepared = !pg_db_result(db, r);
			PQclear(r);
			if (!qs[i]->prepared)
				return;
		}
		st_reset(qs[i]);
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
				struct pg_stmt *q = qs[i];

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

static int st_step(struct pg_stmt *q)
{
	struct pg_db *db = q->db;

	if (q->prefetched) {
		bool same = same_binds(q);

		drop_prefetch(q);
		if (same) {
			q->row = 0;
			return q->row < PQntuples(q->res) ? SQ_ROW : SQ_DONE;
		}
		PQclear(q->res);
		q->res = NULL;
	}
	if (!q->res) {
		const char *vals[PG_MAXPARAM];
		int i;

		if (!q->prepared) {
			PGresult *r = PQprepare(db->conn, q->name, q->sql, 0, NULL);
			int rc = pg_db_result(db, r);

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
		if (pg_db_result(db, q->res)) {
			PQclear(q->res);
			q->res = NULL;
			return SQ_ERROR;
		}
	} else {
		q->row++;
	}
	return q->row < PQntuples(q->res) ? SQ_ROW : SQ_DONE;
}

static void st_reset(struct pg_stmt *q)
{
	drop_prefetch(q);
	PQclear(q->res);
	q->res = NULL;
	PQfreemem(q->blob);
	q->blob = NULL;
}

static void clear_bindings(struct pg_stmt *q)
{
	int i;

	for (i = 0; i < q->nparam; i++) {
		free(q->val[i]);
		q->val[i] = NULL;
		q->len[i] = q->fmt[i] = 0;
	}
	q->nparam = 0;
}

static void st_finalize(struct pg_stmt *q)
{
	if (!q)
		return;
	st_reset(q);
	clear_bindings(q);
	free(q->sql);
	free(q);
}

/* A prefetched result waits for its step (pg_stmt_prefetch()). */
static void st_reuse(struct pg_stmt *q)
{
	if (!q->prefetched)
		st_reset(q);
	clear_bindings(q);
}

static const char *value(struct pg_stmt *q, int i)
{
	if (!q->res || q->row >= PQntuples(q->res) || i >= PQnfields(q->res) ||
	    PQgetisnull(q->res, q->row, i))
		return NULL;
	return PQgetvalue(q->res, q->row, i);
}

static int64_t st_col_int64(struct pg_stmt *q, int i)
{
	const char *v = value(q, i);

	if (!v)
		return 0;
	if (*v == 't' || *v == 'f')
		return *v == 't';
	return strtoll(v, NULL, 10);
}

static const char *st_col_text(struct pg_stmt *q, int i)
{
	return value(q, i);
}

static bool st_col_null(struct pg_stmt *q, int i)
{
	return !value(q, i);
}

/* bytea comes back as "\x0a0b..."; decoded once per row and column. */
static const void *st_col_blob(struct pg_stmt *q, int i)
{
	const char *v = value(q, i);

	PQfreemem(q->blob);
	q->blob = NULL;
	q->bloblen = 0;
	if (v)
		q->blob = PQunescapeBytea((const unsigned char *)v, &q->bloblen);
	return q->blob;
}

static int st_col_bytes(struct pg_stmt *q, int i)
{
	return (int)q->bloblen;
}

/* ---- the calls of struct sq_engine (pg.c's pg_engine) --------------------- */

int pg_stmt_bind_int64(struct sq_stmt *q, int i, int64_t v)
{
	return st_bind_int64(ps(q), i, v);
}

int pg_stmt_bind_text(struct sq_stmt *q, int i, const char *t, enum sq_life life)
{
	return st_bind_text(ps(q), i, t, life);
}

int pg_stmt_bind_blob(struct sq_stmt *q, int i, const void *b, int n)
{
	return st_bind_blob(ps(q), i, b, n);
}

int pg_stmt_bind_null(struct sq_stmt *q, int i)
{
	return st_bind_null(ps(q), i);
}

int pg_stmt_step(struct sq_stmt *q)
{
	return st_step(ps(q));
}

void pg_stmt_reset(struct sq_stmt *q)
{
	st_reset(ps(q));
}

void pg_stmt_finalize(struct sq_stmt *q)
{
	if (q)
		st_finalize(ps(q));
}

void pg_stmt_reuse(struct sq_stmt *q)
{
	st_reuse(ps(q));
}

int64_t pg_stmt_col_int64(struct sq_stmt *q, int i)
{
	return st_col_int64(ps(q), i);
}

const char *pg_stmt_col_text(struct sq_stmt *q, int i)
{
	return st_col_text(ps(q), i);
}

bool pg_stmt_col_null(struct sq_stmt *q, int i)
{
	return st_col_null(ps(q), i);
}

const void *pg_stmt_col_blob(struct sq_stmt *q, int i)
{
	return st_col_blob(ps(q), i);
}

int pg_stmt_col_bytes(struct sq_stmt *q, int i)
{
	return st_col_bytes(ps(q), i);
}
