// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/pg/pg.c - the PostgreSQL engine of the admin's store (libpq).
 *
 * The query logic is the shared one (store/query/), run through this
 * file's engine: libpq statements (store/pg/stmt.c) behind the calls of
 * store/query/sq.h, the rows of the shared SQL where PostgreSQL's dialect
 * differs, and open/close.  The schema and retention by partition are
 * store/pg/schema.c's, the batched heartbeat store/pg/hb.c's.
 *
 * One connection per admin, serialized by a mutex, statements prepared
 * once per connection; the long reads the API serves (statistics scans,
 * events, the point list) have a second one (store/pg/reader.c), so that
 * they never hold a heartbeat.  Nothing is cached but the statements: every read
 * goes to the database, so several admins can serve one database and a
 * change made through one is what the others return at once.  Writes run
 * in transactions; versions bump with UPDATE ... RETURNING, atomically.
 * Text columns compare bytewise (COLLATE "C"), so lists sort as SQLite
 * sorts them.  A connection that broke is reset at the next call.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include "store/pg/pg.h"

/* ---- PostgreSQL's dialect: its rows of the SQL (store/query/sql.c) -------- */

/*
 * Where PostgreSQL's SQL is not SQLite's: an INSERT returns its row's id
 * (libpq has no last_insert_rowid), upserts are ON CONFLICT, GREATEST is
 * max(), a bare parameter needs its type.  Written with ?N as the shared
 * table is; pg_stmt_new() makes them $N.  BEGIN is the shared "BEGIN".
 */
static const char *const pg_sql[NQ] = {
	[Q_GROUP_INS] = "INSERT INTO groups (name, description, created) VALUES (?1, ?2, ?3) RETURNING id",
	[Q_APP_INS] = "INSERT INTO apps (group_id, name, description, created) VALUES (?1, ?2, ?3, ?4)"
		" RETURNING id",
	[Q_SCHEME_INS] = "INSERT INTO schemes (app_id, name, description, created) VALUES (?1, ?2, ?3, ?4)"
		" RETURNING id",
	[Q_STRAT_PUT] = "INSERT INTO strategies (scheme_id, point, body) VALUES (?1, ?2, ?3)"
		" ON CONFLICT (scheme_id, point) DO UPDATE SET body = EXCLUDED.body",
	[Q_STRAT_CLONE] = "INSERT INTO strategies (scheme_id, point, body)"
		" SELECT ?2::bigint, point, body FROM strategies WHERE scheme_id = ?1",
	[Q_HB_INS] = "INSERT INTO heartbeats (app_id, period_start, host, received)"
		" VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
	[Q_KEYS_INS] = "INSERT INTO hot_keys (app_id, period_start, host, point, keys)"
		" VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
	[Q_STAT_INS] = "INSERT INTO stats (app_id, period_start, host, point, visits,"
		" exceptions, timeouts, downgrades, max_concurrency, hist, faults, delays,"
		" suspended, overhead_milli" STORE_STAT_SQL_NAMES ")"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14"
		STORE_STAT_SQL_PARAMS ") ON CONFLICT DO NOTHING",
	[Q_HOST_UPSERT] = "INSERT INTO hosts (app_id, host, ip, first_seen, last_seen, last_period, version,"
		" pressure, refused)"
		" VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6, ?7, ?8)"
		" ON CONFLICT (app_id, host) DO UPDATE SET ip = ?3, last_seen = ?4,"
		" last_period = GREATEST(hosts.last_period, ?5), version = ?6,"
		" pressure = ?7, refused = ?8",
	[Q_DRILL_INS] = "INSERT INTO drills (app_id, point, kind, ratio, delay_ms, created,"
		" expires_at, started_by, errno, hosts, stop_when)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) RETURNING id",
	[Q_COPY_INS] = "INSERT INTO copy_plans (app_id, name, points, sample_pct, amplification,"
		" shadows, framing, writes, rate, created, expires_at, started_by, opts)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) RETURNING id",
	[Q_GD_INS] = "INSERT INTO gamedays (app_id, name, body, every_s, next_run, keep,"
		" created, created_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
	[Q_GDR_INS] = "INSERT INTO gameday_runs (gameday_id, app_id, started_by, started_at,"
		" state, ended_at, result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id",
};

/*
 * As SQLite's synchronous=NORMAL: a commit does not wait for its WAL
 * flush, so a server crash can lose the last commits, never corrupt
 * anything (a loader re-sends a period it got no answer for).  Notices
 * ("already exists, skipping") are not for the admin's stderr.
 */
static const char main_session[] = "SET synchronous_commit = off;"
				   " SET client_min_messages = warning";

/*
 * libpq waits for a server that accepts and never answers for as long as
 * the socket lives, and a heartbeat or an API call would wait with it:
 * unless the URL sets its own connect_timeout, give up after 10 s (libpq
 * measures it on the wall clock, in whole seconds).  The
 * URL is expanded in place of "dbname", after our default, so its
 * parameters win; PQreset() reuses them all.
 */
PGconn *pg_connect(const char *url)
{
	static const char *const keys[] = { "connect_timeout", "dbname", NULL };
	const char *const vals[] = { "10", url, NULL };

	return PQconnectdbParams(keys, vals, 1);
}

/*
 * A connection that broke (the server restarted) is reset once per call,
 * its session's settings set again (a new server process has none).
 */
void pg_alive(struct sq_store *s)
{
	struct pg_store *p = pg_of(&s->base);
	int i;

	if (PQstatus(p->conn.conn) == CONNECTION_OK)
		return;
	PQreset(p->conn.conn);
	if (PQstatus(p->conn.conn) == CONNECTION_OK && p->session)
		PQclear(PQexec(p->conn.conn, p->session));
	for (i = 0; i < NQ; i++)
		if (s->q[i])
			((struct pg_stmt *)s->q[i])->prepared = false;
	if (p->hb_fast)
		p->hb_fast->prepared = false;
}

/* ---- the engine: libpq behind store/query/sq.h ---------------------------- */

static struct pg_db *db_of(struct sq_store *s)
{
	return &pg_of(&s->base)->conn;
}

/* The statement @id; prepared on the server at its first step. */
static struct sq_stmt *e_prepare(struct sq_store *s, int id)
{
	char name[16];
	struct pg_stmt *q;

	snprintf(name, sizeof(name), "q%d", id);
	q = pg_stmt_new(db_of(s), name, sq_sql_of(pg_sql, id));
	return q ? &q->base : NULL;
}

static int64_t e_changes(struct sq_store *s)
{
	return db_of(s)->changes;
}

static int64_t e_last_id(struct sq_store *s)
{
	return db_of(s)->last_id;
}

static const char *e_errmsg(struct sq_store *s)
{
	return db_of(s)->msg[0] ? db_of(s)->msg : "out of memory";
}

/* 23505: unique_violation */
static bool e_unique_violation(struct sq_store *s)
{
	return !strcmp(db_of(s)->sqlstate, "23505");
}

static bool e_in_txn(struct sq_store *s)
{
	return PQtransactionStatus(db_of(s)->conn) != PQTRANS_IDLE;
}

const struct sq_engine pg_engine = {
	.prepare = e_prepare,
	.reuse = pg_stmt_reuse,
	.bind_int64 = pg_stmt_bind_int64,
	.bind_text = pg_stmt_bind_text,
	.bind_blob = pg_stmt_bind_blob,
	.bind_null = pg_stmt_bind_null,
	.step = pg_stmt_step,
	.reset = pg_stmt_reset,
	.finalize = pg_stmt_finalize,
	.col_int64 = pg_stmt_col_int64,
	.col_text = pg_stmt_col_text,
	.col_null = pg_stmt_col_null,
	.col_blob = pg_stmt_col_blob,
	.col_bytes = pg_stmt_col_bytes,
	.changes = e_changes,
	.last_id = e_last_id,
	.errmsg = e_errmsg,
	.unique_violation = e_unique_violation,
	.in_txn = e_in_txn,
	.alive = pg_alive,
};

/* ---- open --------------------------------------------------------------- */

static void pg_close(struct store *st)
{
	struct pg_store *p = pg_of(st);
	int i;

	pg_listen_stop(p);
	for (i = 0; i < NQ; i++)
		pg_stmt_finalize(p->sq.q[i]);
	if (p->hb_fast)
		pg_stmt_finalize(&p->hb_fast->base);
	PQfinish(p->conn.conn);
	pg_reader_close(p);
	pthread_mutex_destroy(&p->reader_lock);
	pthread_mutex_destroy(&p->sq.lock);
	free(p->url);
	free(p);
}

static const struct store_ops pg_ops = {
	.close = pg_close,
	SQ_QUERY_OPS,
	.point_keys = pg_point_keys,
	.app_deps = pg_app_deps,
	/* The long reads: on the reader's connection (store/pg/reader.c). */
	.events = pg_events,
	.point_list = pg_point_list,
	.stats_scan_apart = pg_stats_scan_apart,
	.heartbeat = pg_heartbeat,
	.app_state = pg_app_state,
	.changed = pg_changed,
	.listen = pg_listen,
	.prune = pg_prune,
	.prune_meta = sq_prune_meta,	/* store/query/retention.c, shared */
};

/* "HOST:PORT/DB" of @c, for messages: never the user's password. */
static void describe(struct pg_store *p, const char *url)
{
	PQconninfoOption *o = PQconninfoParse(url, NULL), *i;
	const char *host = "localhost", *port = "5432", *db = "?";

	for (i = o; i && i->keyword; i++) {
		if (!i->val || !*i->val)
			continue;
		if (!strcmp(i->keyword, "host"))
			host = i->val;
		else if (!strcmp(i->keyword, "port"))
			port = i->val;
		else if (!strcmp(i->keyword, "dbname"))
			db = i->val;
	}
	snprintf(p->where, sizeof(p->where), "database '%s' on %s:%s", db, host, port);
	PQconninfoFree(o);
}

/*
 * This admin's id in its notifications (store/pg/listen.c): random, so
 * that admins of one database, wherever they run, skip only their own.
 */
static void admin_id(struct pg_store *p)
{
	unsigned char b[8];
	struct timespec ts;
	int i;

	if (getrandom(b, sizeof(b), 0) != sizeof(b)) {
		clock_gettime(CLOCK_REALTIME, &ts);
		for (i = 0; i < 8; i++)
			b[i] = (unsigned char)(((uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 32) >>
					       (8 * i));
	}
	for (i = 0; i < 8; i++)
		snprintf(p->admin_id + 2 * i, 3, "%02x", b[i]);
}

struct store *pg_store_open(const char *url, char *err)
{
	struct pg_store *p;
	char *perr = NULL;
	PQconninfoOption *o;
	int i;

	/* A statement id added without its SQL: say so, never run NULL. */
	for (i = 0; i < NQ; i++)
		if (!sq_sql_of(pg_sql, i)) {
			sq_seterr(err, "statement %d has no SQL in store/query/sql.c", i);
			return NULL;
		}
	p = calloc(1, sizeof(*p));
	if (!p) {
		sq_seterr(err, "out of memory");
		return NULL;
	}
	o = PQconninfoParse(url, &perr);
	if (!o) {
		/* libpq's message quotes no part of the URL. */
		sq_seterr(err, "not a PostgreSQL URL: %.*s",
			  perr ? (int)strcspn(perr, "\n") : 0, perr ? perr : "");
		PQfreemem(perr);
		free(p);
		return NULL;
	}
	PQconninfoFree(o);
	describe(p, url);
	p->sq.base.ops = &pg_ops;
	p->sq.e = &pg_engine;
	pthread_mutex_init(&p->sq.lock, NULL);
	pthread_mutex_init(&p->reader_lock, NULL);
	p->url = strdup(url);
	if (!p->url) {
		sq_seterr(err, "out of memory");
		goto fail;
	}
	p->conn.conn = pg_connect(url);
	if (PQstatus(p->conn.conn) != CONNECTION_OK) {
		const char *m = PQerrorMessage(p->conn.conn);
		const char *f = strstr(m, "FATAL:");

		/* "connection to server at ... failed: FATAL:  why": keep the why. */
		m = f ? f + 6 : m;
		m += strspn(m, " ");
		sq_seterr(err, "cannot connect to %s: %.*s", p->where,
			  (int)strcspn(m, "\n"), m);
		goto fail;
	}
	p->session = main_session;
	if (pg_exec(p, main_session, err) || pg_migrate(p, err))
		goto fail;
	admin_id(p);
	return &p->sq.base;
fail:
	PQfinish(p->conn.conn);
	pthread_mutex_destroy(&p->reader_lock);
	pthread_mutex_destroy(&p->sq.lock);
	free(p->url);
	free(p);
	return NULL;
}
