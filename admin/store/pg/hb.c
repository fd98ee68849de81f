// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/pg/hb.c - heartbeats in the PostgreSQL store, batched: a
 * heartbeat's points go in one INSERT of unnest()ed arrays, one round trip
 * whatever their number, where SQLite's store inserts row by row (cheap in
 * process, not over a socket).  The rest is the shared queries' logic: the
 * (host, period) row decides duplicates, the host row is upserted, and
 * drills, copy plans and strategies are read after the commit.
 *
 * The common heartbeat (a known app, no copy counts) is one statement:
 * the app looked up, the (host, period) row, the points and the host row
 * written by data-modifying CTEs, atomically without BEGIN/COMMIT, so it
 * costs one round trip where the transaction costs six.  Round trips are
 * what a loaded machine makes expensive: each waits for the server
 * process to be scheduled.  A new app or copy counts take the transaction.
 *
 * Races between admins end in a retry, not an error: two admins
 * registering one new app (a unique violation: the second reads the
 * first's), a heartbeat whose day partition another admin's retention
 * dropped, or that no admin created yet (the partition is created), a
 * connection the server dropped (reconnected).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/pg/pg.h"

/*
 * store/stat_cols.h's columns are one more array each, after the fixed
 * ones: their bare ? are numbered on by pg_stmt_sql().
 */
#define HB_STATS_SQL \
	"INSERT INTO stats (app_id, period_start, host, point, visits, exceptions," \
	" timeouts, downgrades, max_concurrency, hist, faults, delays, suspended," \
	" overhead_milli" STORE_STAT_SQL_NAMES ")" \
	" SELECT $1, $2, $3, u.p, u.v, u.e, u.t, u.d, u.c, decode(u.h, 'hex'), u.f," \
	" u.dl, u.s, u.o" STORE_STAT_SQL_U " FROM unnest($4::text[], $5::bigint[]," \
	" $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::text[]," \
	" $11::bigint[], $12::bigint[], $13::bigint[], $14::bigint[]" \
	STORE_STAT_SQL_ARRAYS ")" \
	" AS u(p, v, e, t, d, c, h, f, dl, s, o" STORE_STAT_SQL_NAMES ")" \
	" ON CONFLICT DO NOTHING"

/*
 * $1 group, $2 app, $3 period, $4 host, $5 now, $6 ip, $7 version, $8..
 * arrays, then the host's pressure and refusals (sq_host_json()), then
 * the points' hot keys, {"POINT": [...]} or NULL (sq_keys_text()): a
 * row per point, written only with a new (host, period) row.
 */
#define HB_FAST_SQL \
	"WITH app AS (SELECT a.id, a.version, a.active_scheme, a.drills_seq FROM apps a" \
	"  JOIN groups g ON g.id = a.group_id WHERE g.name = $1 AND a.name = $2)," \
	" hb AS (INSERT INTO heartbeats (app_id, period_start, host, received)" \
	"  SELECT id, $3, $4, $5 FROM app ON CONFLICT DO NOTHING RETURNING app_id)," \
	" st AS (INSERT INTO stats (app_id, period_start, host, point, visits," \
	"  exceptions, timeouts, downgrades, max_concurrency, hist, faults, delays," \
	"  suspended, overhead_milli" STORE_STAT_SQL_NAMES ")" \
	"  SELECT hb.app_id, $3, $4, u.p, u.v, u.e, u.t, u.d, u.c, decode(u.h, 'hex')," \
	"  u.f, u.dl, u.s, u.o" STORE_STAT_SQL_U " FROM hb, unnest($8::text[]," \
	"  $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[]," \
	"  $14::text[], $15::bigint[], $16::bigint[], $17::bigint[], $18::bigint[]" \
	STORE_STAT_SQL_ARRAYS ")" \
	"  AS u(p, v, e, t, d, c, h, f, dl, s, o" STORE_STAT_SQL_NAMES ")" \
	"  ON CONFLICT DO NOTHING)," \
	" h AS (INSERT INTO hosts (app_id, host, ip, first_seen, last_seen, last_period," \
	"  version, pressure, refused) SELECT id, $4, $6, $5, $5, $3, $7, ?::text, ?::text" \
	"  FROM app ON CONFLICT (app_id, host) DO UPDATE SET ip = EXCLUDED.ip," \
	"  last_seen = EXCLUDED.last_seen," \
	"  last_period = GREATEST(hosts.last_period, EXCLUDED.last_period)," \
	"  version = EXCLUDED.version, pressure = EXCLUDED.pressure," \
	"  refused = EXCLUDED.refused)," \
	" k AS (INSERT INTO hot_keys (app_id, period_start, host, point, keys)" \
	"  SELECT hb.app_id, $3, $4, j.key, j.value::text FROM hb, json_each(?::json) AS j" \
	"  ON CONFLICT DO NOTHING)" \
	" SELECT id, version, active_scheme, (SELECT count(*) FROM hb), drills_seq FROM app"

enum { A_POINT, A_VISITS, A_EXC, A_TMO, A_DOWN, A_CONC, A_HIST, A_FAULTS,
       A_DELAYS, A_SUSP, A_OVER, A_COLS,
       NARRAY = A_COLS + STORE_STAT_NCOLS };	/* store/stat_cols.h's from A_COLS */

/*
 * Append @v in decimal to @f.  By hand, as the hex below: a heartbeat's
 * arrays are some 4,000 numbers and bytes, and printf's format parsing
 * for each was a quarter of the admin's CPU per heartbeat.
 */
static void put_int(FILE *f, int64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do {
		*--p = '0' + u % 10;
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	fwrite(p, 1, buf + sizeof(buf) - p, f);
}

/* Append the @n buckets of @hist to @f as little-endian u64s in hex. */
static void put_hist_hex(FILE *f, const uint64_t *hist, int n)
{
	static const char hex[] = "0123456789abcdef";
	char buf[16 * SDS_HIST_BUCKETS];
	int j, x, k = 0;

	for (j = 0; j < n; j++) {
		uint64_t v = hist[j];

		for (x = 0; x < 8; x++, v >>= 8) {
			buf[k++] = hex[(v >> 4) & 0xf];
			buf[k++] = hex[v & 0xf];
		}
	}
	fwrite(buf, 1, k, f);
}

/* Append @s to array literal @f as a quoted element. */
static void put_text(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* The NARRAY array literals of @hb's points, in @buf[] (free()d by the caller). */
static int point_arrays(const struct sds_heartbeat *hb, char *buf[NARRAY])
{
	FILE *f[NARRAY];
	size_t len[NARRAY];
	int i, k, ret = 0;

	for (k = 0; k < NARRAY; k++) {
		buf[k] = NULL;
		f[k] = open_memstream(&buf[k], &len[k]);
		if (!f[k])
			ret = -1;
		else
			fputc('{', f[k]);
	}
	for (i = 0; i < hb->n && !ret; i++) {
		const struct sds_hb_point *p = &hb->points[i];
		int64_t v[NARRAY] = {
			[A_VISITS] = (int64_t)p->visits, [A_EXC] = (int64_t)p->exceptions,
			[A_TMO] = (int64_t)p->timeouts, [A_DOWN] = (int64_t)p->downgrades,
			[A_CONC] = (int64_t)p->max_concurrency, [A_FAULTS] = (int64_t)p->faults,
			[A_DELAYS] = (int64_t)p->delays, [A_SUSP] = p->suspended,
			[A_OVER] = (int64_t)p->overhead_milli,
		};
		int n = p->nhist < SDS_HIST_BUCKETS ? p->nhist : SDS_HIST_BUCKETS;

		k = A_COLS;
#define COL_(f, kind)	v[k++] = (int64_t)p->f;
		STORE_STAT_COLS(COL_)
#undef COL_

		for (k = 0; k < NARRAY; k++) {
			if (i)
				fputc(',', f[k]);
			if (k != A_POINT && k != A_HIST)
				put_int(f[k], v[k]);
		}
		put_text(f[A_POINT], p->name);
		/* As SQLite's: little-endian u64s up to the last non-zero bucket. */
		if (!n)
			fputs("NULL", f[A_HIST]);
		else
			put_hist_hex(f[A_HIST], p->latency_hist, n);
	}
	for (k = 0; k < NARRAY; k++)
		if (f[k]) {
			fputc('}', f[k]);
			if (fclose(f[k]))
				ret = -1;
		}
	return ret;
}

/* Insert @hb's points, in one statement; 0, or STORE_ERROR with the SQLSTATE on p->conn. */
static int stats_insert(struct pg_store *p, int64_t app, const struct sds_heartbeat *hb,
			char *err)
{
	char *arr[NARRAY], id[24], period[24], *sql = NULL;
	const char *vals[3 + NARRAY];
	PGresult *r;
	int k, ret;

	/* The transaction's path (a new app, copy counts): a copy is cheap beside it. */
	sql = pg_stmt_sql(HB_STATS_SQL);
	if (point_arrays(hb, arr) || !sql) {
		ret = STORE_ERROR;
		sq_seterr(err, "out of memory");
		goto out;
	}
	snprintf(id, sizeof(id), "%" PRId64, app);
	snprintf(period, sizeof(period), "%" PRId64, hb->period_start);
	vals[0] = id;
	vals[1] = period;
	vals[2] = hb->host;
	for (k = 0; k < NARRAY; k++)
		vals[3 + k] = arr[k];
	r = PQexecParams(p->conn.conn, sql, 3 + NARRAY, NULL, vals, NULL, NULL, 0);
	ret = pg_db_result(&p->conn, r) ? sq_dberr(&p->sq, err) : 0;
	PQclear(r);
out:
	for (k = 0; k < NARRAY; k++)
		free(arr[k]);
	free(sql);
	return ret;
}

/* Copy counts to add: the transaction's sq_copy_loader_counts() adds them. */
static bool has_copy_counts(const struct sds_heartbeat *hb)
{
	int i;

	for (i = 0; i < hb->n; i++)
		if (hb->points[i].copy_captured || hb->points[i].copy_dropped)
			return true;
	return false;
}

/*
 * The one-statement heartbeat: 0, STORE_NOTFOUND (the app is new: take
 * the transaction), or an error (the SQLSTATE on p->conn).
 */
static int hb_fast(struct pg_store *p, const struct sds_heartbeat *hb, int64_t now,
		   struct sq_app_ref *r, struct store_hb_result *res, char *err)
{
	struct sq_store *s = &p->sq;
	struct sq_stmt *q;
	char *arr[NARRAY], *keys;
	bool oom;
	int k, rc;

	if (!p->hb_fast) {
		p->hb_fast = pg_stmt_new(&p->conn, "hb_fast", HB_FAST_SQL);
		if (!p->hb_fast) {
			sq_seterr(err, "out of memory");
			return STORE_ERROR;
		}
	}
	q = &p->hb_fast->base;
	pg_stmt_reset(q);
	pg_stmt_reuse(q);
	if (point_arrays(hb, arr)) {
		for (k = 0; k < NARRAY; k++)
			free(arr[k]);
		sq_seterr(err, "out of memory");
		return STORE_ERROR;
	}
	sq_bind_text(q, 1, hb->group);
	sq_bind_text(q, 2, hb->app);
	sq_bind_int64(q, 3, hb->period_start);
	sq_bind_text(q, 4, hb->host);
	sq_bind_int64(q, 5, now);
	sq_bind_text(q, 6, hb->ip);
	sq_bind_int64(q, 7, hb->version);
	for (k = 0; k < NARRAY; k++)
		sq_bind_text_free(q, 8 + k, arr[k]);
	keys = sq_keys_text(hb, &oom);
	if (sq_host_json(q, 8 + NARRAY, hb) || oom) {
		free(keys);
		sq_reset(q);
		sq_seterr(err, "out of memory");
		return STORE_ERROR;
	}
	if (keys)
		sq_bind_text_free(q, 8 + NARRAY + 2, keys);
	else
		sq_bind_null(q, 8 + NARRAY + 2);
	rc = sq_step(q);
	if (rc == SQ_ROW) {
		r->id = sq_col_int64(q, 0);
		r->version = sq_col_int64(q, 1);
		r->active = sq_col_int64(q, 2);
		res->duplicate = sq_col_int64(q, 3) == 0;
		r->drills_seq = sq_col_int64(q, 4);
	}
	sq_reset(q);
	if (rc == SQ_ROW)
		return 0;
	return rc == SQ_DONE ? STORE_NOTFOUND : sq_dberr(s, err);
}

/* The app, registered if new (audited); res->created says which. */
static int hb_app(struct sq_store *s, const struct sds_heartbeat *hb,
		  struct sq_app_ref *r, struct store_hb_result *res, char *err)
{
	int ret = sq_app_lookup(s, hb->group, hb->app, r, err);

	if (ret != STORE_NOTFOUND)
		return ret;
	/* A loader the admin has not heard of registers its app. */
	ret = sq_app_insert(s, hb->group, hb->app, "", r, err);
	if (!ret)
		ret = sq_audit_add(s, r->id, "app.register", hb->host,
				"registered by a heartbeat", err);
	res->created = !ret;
	return ret;
}

/* Store @hb in one transaction; STORE_EXISTS or "23514" on the connection: retry. */
static int hb_write(struct sq_store *s, const struct sds_heartbeat *hb, int64_t now,
		    struct sq_app_ref *r, struct store_hb_result *res, char *err)
{
	struct sq_stmt *q;
	int ret;

	ret = sq_begin(s, err);
	if (!ret)
		ret = hb_app(s, hb, r, res, err);
	if (ret)
		goto fail;
	q = sq_q(s, Q_HB_INS);
	if (!q)
		goto dbfail;
	sq_bind_int64(q, 1, r->id);
	sq_bind_int64(q, 2, hb->period_start);
	sq_bind_text(q, 3, hb->host);
	sq_bind_int64(q, 4, now);
	ret = sq_run(s, q, err);
	if (ret)
		goto fail;
	res->duplicate = sq_changes(s) == 0;
	if (!res->duplicate && hb->n) {
		ret = stats_insert(pg_of(&s->base), r->id, hb, err);
		if (ret)
			goto fail;
	}
	if (!res->duplicate) {
		ret = sq_copy_loader_counts(s, r->id, hb, err);
		if (!ret)
			ret = sq_keys_insert(s, r->id, hb, err);
		if (ret)
			goto fail;
	}
	q = sq_q(s, Q_HOST_UPSERT);
	if (!q)
		goto dbfail;
	sq_bind_int64(q, 1, r->id);
	sq_bind_text(q, 2, hb->host);
	sq_bind_text(q, 3, hb->ip);
	sq_bind_int64(q, 4, now);
	sq_bind_int64(q, 5, hb->period_start);
	sq_bind_int64(q, 6, hb->version);
	if (sq_host_json(q, 7, hb)) {
		sq_reset(q);
		ret = STORE_ERROR;
		sq_seterr(err, "out of memory");
		goto fail;
	}
	ret = sq_run(s, q, err);
	if (ret)
		goto fail;
	return sq_commit(s, err);
dbfail:
	ret = sq_dberr(s, err);
fail:
	sq_rollback(s);
	return ret;
}

/*
 * The reads of the answer below, bound as sq_drills_active() and
 * sq_copy_for_app() bind them, in one round trip instead of three.
 */
static void hb_prefetch(struct sq_store *s, int64_t app, int64_t now)
{
	struct sq_stmt *qs[3] = {
		sq_q(s, Q_DRILL_ACTIVE), sq_q(s, Q_COPY_ACTIVE_APP), sq_q(s, Q_COPY_SRV_LIVE),
	};

	if (!qs[0] || !qs[1] || !qs[2])
		return;
	sq_bind_int64(qs[0], 1, app);
	sq_bind_int64(qs[0], 2, now);
	sq_bind_int64(qs[1], 1, app);
	sq_bind_int64(qs[1], 2, now);
	sq_bind_int64(qs[2], 1, now - STORE_COPY_LIVE_S);
	pg_stmt_prefetch(&pg_of(&s->base)->conn, qs, 3);
}

/*
 * After the commit: what the loader should enforce, the shared read half
 * (sq_hb_answer()), its reads of drills and plans prefetched.  The
 * heartbeat and app_state (GET /api/v1/sync) both answer with it.
 */
static int hb_answer(struct sq_store *s, int64_t have, int64_t now,
		     const struct sq_app_ref *r, struct store_hb_result *res, char *err)
{
	if (res->drills && res->copy)
		hb_prefetch(s, r->id, now);
	return sq_hb_answer(s, r, have, now, res, err);
}

int pg_heartbeat(struct store *st, const struct sds_heartbeat *hb,
		  int64_t now, struct store_hb_result *res, char *err)
{
	struct pg_store *p = pg_of(st);
	struct sq_store *s = &p->sq;
	int64_t day = hb->period_start / PG_DAY * PG_DAY;
	struct sq_app_ref r;
	int try, ret;

	sq_lock(st);
	for (try = 0; try < 3; try++) {
		res->duplicate = false;
		res->created = false;
		ret = pg_partitions(p, day, err);
		if (!ret)
			ret = has_copy_counts(hb) ? STORE_NOTFOUND :
			      hb_fast(p, hb, now, &r, res, err);
		if (ret == STORE_NOTFOUND)
			ret = hb_write(s, hb, now, &r, res, err);
		if (ret == STORE_EXISTS)
			continue;	/* another admin registered the app first */
		if (ret && !strcmp(p->conn.sqlstate, "23514")) {
			p->day_ready = 0;	/* no partition for the row: create it */
			continue;
		}
		if (ret && PQstatus(p->conn.conn) != CONNECTION_OK) {
			/* The server dropped us (restart, failover): nothing was committed. */
			pg_alive(s);
			continue;
		}
		break;
	}
	/*
	 * Each point's dependencies (docs/DEPS.md): the host's row replaced
	 * on its own, not in the batch: the upsert keeps the latest period's
	 * whatever the order, and a failure loses only this period's copy.
	 */
	if (!ret && !res->duplicate)
		ret = sq_deps_store(s, r.id, hb, now, err);
	if (!ret)
		ret = hb_answer(s, hb->version, now, &r, res, err);
	sq_unlock(st);
	return ret;
}

int pg_app_state(struct store *st, const char *g, const char *a, int64_t have,
		 int64_t now, struct store_hb_result *res, char *err)
{
	struct pg_store *p = pg_of(st);
	struct sq_store *s = &p->sq;
	struct sq_app_ref r;
	int try, ret;

	res->duplicate = false;
	res->created = false;
	sq_lock(st);
	for (try = 0; try < 2; try++) {
		ret = sq_app_lookup(s, g, a, &r, err);
		if (!ret)
			ret = hb_answer(s, have, now, &r, res, err);
		if (ret && ret != STORE_NOTFOUND && PQstatus(p->conn.conn) != CONNECTION_OK) {
			pg_alive(s);	/* the server dropped us: read again */
			continue;
		}
		break;
	}
	sq_unlock(st);
	return ret;
}
