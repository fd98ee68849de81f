// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/pg/pg.c - the PostgreSQL engine of the admin's store (libpq).
 *
 * The query logic is the SQLite store's, compiled again over libpq
 * (store/pg/compat.h says why); this file holds the SQL those files run,
 * in PostgreSQL's dialect and under the same statement ids, the helpers
 * store/sqlite/sqlite.c gives them, and open/close.  The schema and retention by
 * partition are store/pg/schema.c's, the batched heartbeat store/pg/hb.c's.
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
#include "store/pg/pg.h"

/* ---- the SQL of the shared query files ---------------------------------- */

static const char *const sql[NQ] = {
	[Q_BEGIN] = "BEGIN",
	[Q_COMMIT] = "COMMIT",
	[Q_ROLLBACK] = "ROLLBACK",
	[Q_GROUP_ID] = "SELECT id FROM groups WHERE name = $1",
	[Q_GROUP_LIST] = "SELECT g.name, g.description, g.created,"
		" (SELECT count(*) FROM apps a WHERE a.group_id = g.id)"
		" FROM groups g ORDER BY g.name",
	[Q_GROUP_GET] = "SELECT g.name, g.description, g.created,"
		" (SELECT count(*) FROM apps a WHERE a.group_id = g.id)"
		" FROM groups g WHERE g.name = $1",
	[Q_GROUP_INS] = "INSERT INTO groups (name, description, created) VALUES ($1, $2, $3) RETURNING id",
	[Q_GROUP_UPD] = "UPDATE groups SET description = $2 WHERE name = $1",
	[Q_GROUP_DEL] = "DELETE FROM groups WHERE id = $1",
	[Q_GROUP_NAPPS] = "SELECT count(*) FROM apps WHERE group_id = $1",
	[Q_APP_ID] = "SELECT a.id, a.version, a.active_scheme FROM apps a"
		" JOIN groups g ON g.id = a.group_id WHERE g.name = $1 AND a.name = $2",
#define APP_COLS "g.name, a.name, a.description, a.created, a.version," \
		" (SELECT s.name FROM schemes s WHERE s.id = a.active_scheme)," \
		" (SELECT count(*) FROM schemes s WHERE s.app_id = a.id)," \
		" (SELECT count(*) FROM hosts h WHERE h.app_id = a.id)"
	[Q_APP_LIST] = "SELECT " APP_COLS " FROM apps a JOIN groups g ON g.id = a.group_id"
		" WHERE g.name = $1 ORDER BY a.name",
	[Q_APP_LIST_ALL] = "SELECT " APP_COLS " FROM apps a JOIN groups g ON g.id = a.group_id"
		" ORDER BY g.name, a.name",
	[Q_APP_GET] = "SELECT " APP_COLS " FROM apps a JOIN groups g ON g.id = a.group_id"
		" WHERE g.name = $1 AND a.name = $2",
	[Q_APP_INS] = "INSERT INTO apps (group_id, name, description, created) VALUES ($1, $2, $3, $4)"
		" RETURNING id",
	[Q_APP_UPD] = "UPDATE apps SET description = $2 WHERE id = $1",
	[Q_APP_DEL] = "DELETE FROM apps WHERE id = $1",
	[Q_APP_SET_ACTIVE] = "UPDATE apps SET active_scheme = $2, version = version + $3 WHERE id = $1",
	[Q_APP_BUMP] = "UPDATE apps SET version = version + 1 WHERE id = $1 RETURNING version",
	[Q_SCHEME_ID] = "SELECT id FROM schemes WHERE app_id = $1 AND name = $2",
	[Q_SCHEME_LIST] = "SELECT s.name, s.description, s.created, s.id = a.active_scheme,"
		" (SELECT count(*) FROM strategies t WHERE t.scheme_id = s.id)"
		" FROM schemes s JOIN apps a ON a.id = s.app_id WHERE s.app_id = $1 ORDER BY s.name",
	[Q_SCHEME_GET] = "SELECT s.name, s.description, s.created, s.id = a.active_scheme,"
		" (SELECT count(*) FROM strategies t WHERE t.scheme_id = s.id)"
		" FROM schemes s JOIN apps a ON a.id = s.app_id WHERE s.id = $1",
	[Q_SCHEME_INS] = "INSERT INTO schemes (app_id, name, description, created) VALUES ($1, $2, $3, $4)"
		" RETURNING id",
	[Q_SCHEME_UPD] = "UPDATE schemes SET description = $2 WHERE id = $1",
	[Q_SCHEME_DEL] = "DELETE FROM schemes WHERE id = $1",
	[Q_SCHEME_NAME] = "SELECT name FROM schemes WHERE id = $1",
	[Q_STRAT_LIST] = "SELECT point, body FROM strategies WHERE scheme_id = $1 ORDER BY point",
	[Q_STRAT_CLEAR] = "DELETE FROM strategies WHERE scheme_id = $1",
	[Q_STRAT_PUT] = "INSERT INTO strategies (scheme_id, point, body) VALUES ($1, $2, $3)"
		" ON CONFLICT (scheme_id, point) DO UPDATE SET body = EXCLUDED.body",
	[Q_STRAT_DEL] = "DELETE FROM strategies WHERE scheme_id = $1 AND point = $2",
	[Q_STRAT_CLONE] = "INSERT INTO strategies (scheme_id, point, body)"
		" SELECT $2::bigint, point, body FROM strategies WHERE scheme_id = $1",
	[Q_HB_INS] = "INSERT INTO heartbeats (app_id, period_start, host, received)"
		" VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
	[Q_STAT_INS] = "INSERT INTO stats (app_id, period_start, host, point, visits,"
		" exceptions, timeouts, downgrades, max_concurrency, hist, faults, delays,"
		" suspended, overhead_milli)"
		" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
		" ON CONFLICT DO NOTHING",
	[Q_HOST_UPSERT] = "INSERT INTO hosts (app_id, host, ip, first_seen, last_seen, last_period, version)"
		" VALUES ($1, $2, $3, $4, $4, $5, $6)"
		" ON CONFLICT (app_id, host) DO UPDATE SET ip = $3, last_seen = $4,"
		" last_period = GREATEST(hosts.last_period, $5), version = $6",
	[Q_HOST_LIST] = "SELECT h.host, h.ip, h.first_seen, h.last_seen, h.last_period, h.version"
		" FROM hosts h WHERE h.app_id = $1 ORDER BY h.host",
	[Q_STAT_SCAN] = "SELECT period_start, point, host, visits, exceptions, timeouts,"
		" downgrades, max_concurrency, hist, faults, delays, suspended, overhead_milli"
		" FROM stats"
		" WHERE app_id = $1 AND period_start >= $2 AND period_start < $3",
	[Q_STAT_SCAN_POINT] = "SELECT period_start, point, host, visits, exceptions, timeouts,"
		" downgrades, max_concurrency, hist, faults, delays, suspended, overhead_milli"
		" FROM stats"
		" WHERE app_id = $1 AND period_start >= $2 AND period_start < $3 AND point = $4",
	[Q_POINT_LIST] = "SELECT point FROM strategies t JOIN schemes s ON s.id = t.scheme_id"
		" WHERE s.app_id = $1 UNION SELECT point FROM stats WHERE app_id = $1"
		" AND period_start >= $2 ORDER BY 1",
	[Q_EVENTS] = "SELECT period_start, host, point, downgrades, visits FROM stats"
		" WHERE app_id = $1 AND period_start >= $2 AND period_start < $3 AND downgrades > 0"
		" ORDER BY period_start DESC, host, point LIMIT $4",
	[Q_AUDIT_INS] = "INSERT INTO audit (app_id, time, action, detail, comment) VALUES ($1, $2, $3, $4, $5)",
	[Q_AUDIT_LIST] = "SELECT time, action, detail, comment FROM audit WHERE app_id = $1"
		" ORDER BY id DESC LIMIT $2",
	[Q_PRUNE_STATS] = "DELETE FROM stats WHERE period_start < $1",
	[Q_PRUNE_HB] = "DELETE FROM heartbeats WHERE period_start < $1",
	[Q_PRUNE_HOSTS] = "DELETE FROM hosts WHERE last_seen < $1",
	[Q_PRUNE_AUDIT] = "DELETE FROM audit WHERE time < $1",
	[Q_COUNT_GROUPS] = "SELECT count(*) FROM groups",
	[Q_COUNT_APPS] = "SELECT count(*) FROM apps",
	[Q_COUNT_HOSTS] = "SELECT count(*) FROM hosts",
	[Q_DEL_APP_STATS] = "DELETE FROM stats WHERE app_id = $1",
	[Q_DEL_APP_HB] = "DELETE FROM heartbeats WHERE app_id = $1",
	[Q_DEL_APP_HOSTS] = "DELETE FROM hosts WHERE app_id = $1",
	[Q_DEL_APP_AUDIT] = "DELETE FROM audit WHERE app_id = $1",
	[Q_DEL_APP_STRATS] = "DELETE FROM strategies WHERE scheme_id IN"
		" (SELECT id FROM schemes WHERE app_id = $1)",
	[Q_DEL_APP_SCHEMES] = "DELETE FROM schemes WHERE app_id = $1",
	[Q_DRILL_INS] = "INSERT INTO drills (app_id, point, kind, ratio, delay_ms, created,"
		" expires_at, started_by, errno) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
	[Q_DRILL_LIST] = "SELECT id, point, kind, ratio, delay_ms, created, expires_at,"
		" stopped_at, started_by, stopped_by, errno FROM drills WHERE app_id = $1"
		" ORDER BY id DESC LIMIT 200",
	[Q_DRILL_ACTIVE] = "SELECT id, point, kind, ratio, delay_ms, expires_at, errno FROM drills"
		" WHERE app_id = $1 AND stopped_at IS NULL AND expires_at > $2 ORDER BY id",
	[Q_DRILL_GET] = "SELECT point, stopped_at, expires_at FROM drills"
		" WHERE app_id = $1 AND id = $2",
	[Q_DRILL_STOP] = "UPDATE drills SET stopped_at = $3, stopped_by = $4"
		" WHERE app_id = $1 AND id = $2",
#define COPY_COLS "p.id, p.name, p.points, p.sample_pct, p.amplification, p.shadows," \
		" p.framing, p.writes, p.rate, p.created, p.expires_at, p.stopped_at," \
		" p.started_by, p.stopped_by, g.name, a.name"
#define COPY_FROM " FROM copy_plans p JOIN apps a ON a.id = p.app_id" \
		" JOIN groups g ON g.id = a.group_id"
	[Q_COPY_INS] = "INSERT INTO copy_plans (app_id, name, points, sample_pct, amplification,"
		" shadows, framing, writes, rate, created, expires_at, started_by)"
		" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
	[Q_COPY_UPD] = "UPDATE copy_plans SET points = $3, sample_pct = $4, amplification = $5,"
		" shadows = $6, framing = $7, writes = $8, rate = $9, expires_at = $10"
		" WHERE app_id = $1 AND id = $2",
	[Q_COPY_LIST] = "SELECT " COPY_COLS COPY_FROM " WHERE p.app_id = $1"
		" ORDER BY p.id DESC LIMIT 200",
	[Q_COPY_GET] = "SELECT " COPY_COLS COPY_FROM " WHERE p.app_id = $1 AND p.id = $2",
	[Q_COPY_STOP] = "UPDATE copy_plans SET stopped_at = $3, stopped_by = $4"
		" WHERE app_id = $1 AND id = $2",
	[Q_COPY_ACTIVE_APP] = "SELECT " COPY_COLS COPY_FROM " WHERE p.app_id = $1"
		" AND p.stopped_at IS NULL AND p.expires_at > $2 ORDER BY p.id",
	[Q_COPY_ACTIVE_ALL] = "SELECT " COPY_COLS COPY_FROM
		" WHERE p.stopped_at IS NULL AND p.expires_at > $1 ORDER BY p.id",
	[Q_COPY_BY_NAME] = "SELECT id FROM copy_plans WHERE name = $1 ORDER BY id DESC LIMIT 1",
	[Q_COPY_LSTAT] = "INSERT INTO copy_loader_stats (plan_id, period_start, host, captured,"
		" dropped) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
	[Q_COPY_SSTAT] = "INSERT INTO copy_server_stats (plan_id, period_start, server, received,"
		" dispatched, shadow_errors, dropped) VALUES ($1, $2, $3, $4, $5, $6, $7)"
		" ON CONFLICT (plan_id, period_start, server) DO UPDATE SET"
		" received = copy_server_stats.received + $4,"
		" dispatched = copy_server_stats.dispatched + $5,"
		" shadow_errors = copy_server_stats.shadow_errors + $6,"
		" dropped = copy_server_stats.dropped + $7",
	[Q_COPY_STATS] = "SELECT period_start, sum(c), sum(d), sum(r), sum(di), sum(se), sum(sd) FROM"
		" (SELECT period_start, captured c, dropped d, 0 r, 0 di, 0 se, 0 sd"
		"  FROM copy_loader_stats WHERE plan_id = $1 AND period_start >= $2 AND period_start < $3"
		"  UNION ALL SELECT period_start, 0, 0, received, dispatched, shadow_errors, dropped"
		"  FROM copy_server_stats WHERE plan_id = $1 AND period_start >= $2 AND period_start < $3) AS u"
		" GROUP BY period_start ORDER BY period_start",
	/* The owner checked first (Q_COPY_SRV_OWNER): a row without one is claimed. */
	[Q_COPY_SRV_UPSERT] = "INSERT INTO copy_servers (name, addr, first_seen, last_seen, owner)"
		" VALUES ($1, $2, $3, $3, $4) ON CONFLICT (name) DO UPDATE SET addr = $2,"
		" last_seen = $3, owner = COALESCE(copy_servers.owner, $4)",
	/* Registration order, as the operator started them: never by name. */
	[Q_COPY_SRV_LIVE] = "SELECT addr FROM copy_servers WHERE last_seen >= $1"
		" ORDER BY first_seen, name",
	[Q_COPY_SRV_LIST] = "SELECT name, addr, first_seen, last_seen, owner FROM copy_servers"
		" ORDER BY first_seen, name",
	[Q_COPY_SRV_OWNER] = "SELECT owner FROM copy_servers WHERE name = $1",
	[Q_COPY_SRV_OWNED] = "SELECT count(*) FROM copy_servers WHERE owner = $1",
	[Q_COPY_SRV_PRUNE] = "DELETE FROM copy_servers WHERE last_seen < $1",
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
 * unless the URL sets its own connect_timeout, give up after 10 s.  The
 * URL is expanded in place of "dbname", after our default, so its
 * parameters win; PQreset() reuses them all.
 */
PGconn *pgx_connect(const char *url)
{
	static const char *const keys[] = { "connect_timeout", "dbname", NULL };
	const char *const vals[] = { "10", url, NULL };

	return PQconnectdbParams(keys, vals, 1);
}

/*
 * A connection that broke (the server restarted) is reset once per call,
 * its session's settings set again (a new server process has none).
 */
void pgx_alive(struct pg_store *s)
{
	int i;

	if (PQstatus(s->db->conn) == CONNECTION_OK)
		return;
	PQreset(s->db->conn);
	if (PQstatus(s->db->conn) == CONNECTION_OK && PGX(s)->session)
		PQclear(PQexec(s->db->conn, PGX(s)->session));
	for (i = 0; i < NQ; i++)
		if (s->q[i])
			s->q[i]->prepared = false;
	if (PGX(s)->hb_fast)
		PGX(s)->hb_fast->prepared = false;
}

/* The statement @id, reset and unbound; prepared at its first step. */
sqlite3_stmt *Q(struct pg_store *s, int id)
{
	sqlite3_stmt *q = s->q[id];

	if (!q) {
		q = calloc(1, sizeof(*q));
		if (!q)
			return NULL;
		q->db = s->db;
		q->sql = sql[id];
		snprintf(q->name, sizeof(q->name), "q%d", id);
		s->q[id] = q;
		return q;
	}
	/* A prefetched result waits for its step (pgc_prefetch()). */
	if (!q->prefetched)
		pgc_reset(q);
	pgc_clear_bindings(q);
	return q;
}

int dberr(struct pg_store *s, char *err)
{
	seterr(err, "database: %s", s->db->msg[0] ? s->db->msg : "out of memory");
	return STORE_ERROR;
}

/* Run a statement; 0, STORE_EXISTS on a unique violation, or STORE_ERROR. */
int run(struct pg_store *s, sqlite3_stmt *q, char *err)
{
	int rc;

	if (!q)
		return dberr(s, err);
	rc = pgc_step(q);
	pgc_reset(q);
	if (rc == SQLITE_DONE || rc == SQLITE_ROW)
		return 0;
	/* 23505: unique_violation */
	return !strcmp(s->db->sqlstate, "23505") ? STORE_EXISTS : dberr(s, err);
}

void lock(struct store *st)
{
	pthread_mutex_lock(&SS(st)->lock);
	pgx_alive(SS(st));
}

void rollback(struct pg_store *s)
{
	if (PQtransactionStatus(s->db->conn) != PQTRANS_IDLE)
		exec0(s, Q_ROLLBACK, NULL);
}

/* Qk, exec0, unlock, begin, commit, bump and the row helpers: store/query/rows.c, shared. */

/* ---- open --------------------------------------------------------------- */

static void pgx_close(struct store *st)
{
	struct pgx_store *p = PGX(st);
	int i;

	for (i = 0; i < NQ; i++)
		pgc_finalize(p->s.q[i]);
	pgc_finalize(p->hb_fast);
	PQfinish(p->conn.conn);
	pgx_reader_close(p);
	pthread_mutex_destroy(&p->reader_lock);
	pthread_mutex_destroy(&p->s.lock);
	free(p->url);
	free(p);
}

static const struct store_ops pg_ops = {
	.close = pgx_close,
	SQ_QUERY_OPS,
	/* The long reads: on the reader's connection (store/pg/reader.c). */
	.events = pgx_events,
	.point_list = pgx_point_list,
	.stats_scan_apart = pgx_stats_scan_apart,
	.heartbeat = pgx_heartbeat,
	.prune = pgx_prune,
	.prune_meta = sq_prune_meta,	/* store/query/retention.c, shared */
};

/* "HOST:PORT/DB" of @c, for messages: never the user's password. */
static void describe(struct pgx_store *p, const char *url)
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

struct store *store_pg_open(const char *url, char *err)
{
	struct pgx_store *p;
	char *perr = NULL;
	PQconninfoOption *o;
	int i;

	/* A statement id added for SQLite needs its SQL here too: say so, never run NULL. */
	for (i = 0; i < NQ; i++)
		if (!sql[i]) {
			seterr(err, "statement %d has no PostgreSQL SQL in store/pg/pg.c", i);
			return NULL;
		}
	p = calloc(1, sizeof(*p));
	if (!p) {
		seterr(err, "out of memory");
		return NULL;
	}
	o = PQconninfoParse(url, &perr);
	if (!o) {
		/* libpq's message quotes no part of the URL. */
		seterr(err, "not a PostgreSQL URL: %.*s",
		       perr ? (int)strcspn(perr, "\n") : 0, perr ? perr : "");
		PQfreemem(perr);
		free(p);
		return NULL;
	}
	PQconninfoFree(o);
	describe(p, url);
	p->s.base.ops = &pg_ops;
	p->s.db = &p->conn;
	pthread_mutex_init(&p->s.lock, NULL);
	pthread_mutex_init(&p->reader_lock, NULL);
	p->url = strdup(url);
	if (!p->url) {
		seterr(err, "out of memory");
		goto fail;
	}
	p->conn.conn = pgx_connect(url);
	if (PQstatus(p->conn.conn) != CONNECTION_OK) {
		const char *m = PQerrorMessage(p->conn.conn);
		const char *f = strstr(m, "FATAL:");

		/* "connection to server at ... failed: FATAL:  why": keep the why. */
		m = f ? f + 6 : m;
		m += strspn(m, " ");
		seterr(err, "cannot connect to %s: %.*s", p->where,
		       (int)strcspn(m, "\n"), m);
		goto fail;
	}
	p->session = main_session;
	if (pgx_exec(p, main_session, err) || pgx_migrate(p, err))
		goto fail;
	return &p->s.base;
fail:
	PQfinish(p->conn.conn);
	pthread_mutex_destroy(&p->reader_lock);
	pthread_mutex_destroy(&p->s.lock);
	free(p->url);
	free(p);
	return NULL;
}
