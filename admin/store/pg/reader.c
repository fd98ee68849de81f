// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/pg/reader.c - the PostgreSQL store's long reads on a connection
 * of their own (issue 16), as store/sqlite/reader.c does for SQLite.
 *
 * The store's one connection is serialized by a mutex that every
 * heartbeat takes; a 30-day statistics scan under it held every heartbeat
 * that admin serves for as long as it ran.  The scans the API serves
 * (statistics, events, the point list, hot keys) go to a second connection: a
 * struct pg_store of its own (its mutex, its prepared statements), so
 * the shared query files run on it unchanged.  It is opened at the first
 * such read, read-only, reset like the main one when it broke, and closed
 * with the store.  Reads on it see every committed heartbeat at once
 * (READ COMMITTED): no answer changes, only who waits for whom.
 */
#include <stdlib.h>
#include <string.h>
#include "store/pg/pg.h"

/*
 * The reader's session (set again by pg_alive() after a reset): it never
 * writes, and notices are not for the admin's stderr.
 */
static const char reader_session[] = "SET default_transaction_read_only = on;"
				     " SET client_min_messages = warning";

/* A new reader on @url; NULL with @err (never naming the password). */
static struct pg_store *reader_open(struct pg_store *p, char *err)
{
	struct pg_store *r = calloc(1, sizeof(*r));
	const char *m;

	if (!r) {
		sq_seterr(err, "out of memory");
		return NULL;
	}
	r->conn.conn = pg_connect(p->url);
	if (PQstatus(r->conn.conn) == CONNECTION_OK) {
		r->sq.base.ops = p->sq.base.ops;
		r->sq.e = &pg_engine;
		r->session = reader_session;
		memcpy(r->where, p->where, sizeof(r->where));
		pthread_mutex_init(&r->sq.lock, NULL);
		if (!pg_exec(r, reader_session, err))
			return r;
		pthread_mutex_destroy(&r->sq.lock);
		PQfinish(r->conn.conn);
		free(r);
		return NULL;
	}
	m = PQerrorMessage(r->conn.conn);
	m = strstr(m, "FATAL:") ? strstr(m, "FATAL:") + 6 : m;
	m += strspn(m, " ");
	sq_seterr(err, "cannot connect to %s for a scan: %.*s", p->where,
	       (int)strcspn(m, "\n"), m);
	PQfinish(r->conn.conn);
	free(r);
	return NULL;
}

/* The reader, opened at the first call (a failed open is tried again at the next). */
static struct store *reader(struct store *st, char *err)
{
	struct pg_store *p = pg_of(st);

	pthread_mutex_lock(&p->reader_lock);
	if (!p->reader)
		p->reader = reader_open(p, err);
	pthread_mutex_unlock(&p->reader_lock);
	return p->reader ? &p->reader->sq.base : NULL;
}

/*
 * A read that failed because the server dropped the reader (a restart)
 * ran nothing and handed no row to its callback: once more, on the
 * connection sq_lock() resets.
 */
static bool retry(struct store *rd, int ret)
{
	return ret == STORE_ERROR && PQstatus(pg_of(rd)->conn.conn) != CONNECTION_OK;
}

int pg_stats_scan_apart(struct store *st, const char *g, const char *a,
			 const char *point, int64_t from, int64_t to,
			 store_stat_cb cb, void *ctx, char *err)
{
	struct store *rd = reader(st, err);
	int ret;

	if (!rd)
		return STORE_ERROR;
	ret = sq_stats_scan(rd, g, a, point, from, to, cb, ctx, err);
	if (retry(rd, ret))
		ret = sq_stats_scan(rd, g, a, point, from, to, cb, ctx, err);
	return ret;
}

int pg_events(struct store *st, const char *g, const char *a, int64_t from,
	       int64_t to, int limit, json_t **out, char *err)
{
	struct store *rd = reader(st, err);
	int ret;

	if (!rd)
		return STORE_ERROR;
	ret = sq_events(rd, g, a, from, to, limit, out, err);
	if (retry(rd, ret))
		ret = sq_events(rd, g, a, from, to, limit, out, err);
	return ret;
}

int pg_point_list(struct store *st, const char *g, const char *a,
		   json_t **out, char *err)
{
	struct store *rd = reader(st, err);
	int ret;

	if (!rd)
		return STORE_ERROR;
	ret = sq_point_list(rd, g, a, out, err);
	if (retry(rd, ret))
		ret = sq_point_list(rd, g, a, out, err);
	return ret;
}

int pg_point_keys(struct store *st, const char *g, const char *a, const char *point,
		  int64_t from, int64_t to, json_t **out, char *err)
{
	struct store *rd = reader(st, err);
	int ret;

	if (!rd)
		return STORE_ERROR;
	ret = sq_point_keys(rd, g, a, point, from, to, out, err);
	if (retry(rd, ret))
		ret = sq_point_keys(rd, g, a, point, from, to, out, err);
	return ret;
}

int pg_app_deps(struct store *st, const char *g, const char *a, json_t **out,
		char *err)
{
	struct store *rd = reader(st, err);
	int ret;

	if (!rd)
		return STORE_ERROR;
	ret = sq_app_deps(rd, g, a, out, err);
	if (retry(rd, ret))
		ret = sq_app_deps(rd, g, a, out, err);
	return ret;
}

void pg_reader_close(struct pg_store *p)
{
	struct pg_store *r = p->reader;
	int i;

	if (r) {
		for (i = 0; i < NQ; i++)
			pg_stmt_finalize(r->sq.q[i]);
		PQfinish(r->conn.conn);
		pthread_mutex_destroy(&r->sq.lock);
		free(r);
		p->reader = NULL;
	}
}
