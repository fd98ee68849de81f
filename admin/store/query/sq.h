// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/sq.h - the store's queries, written once for both engines.
 *
 * The files of store/query/ hold the store's logic (name resolution,
 * audit, version bumps, JSON rows) and call the database only through
 * this header: statements cached by id (sq_q()), bound by index, stepped
 * row by row and read by column until the next reset, as SQLite's API
 * does.  An engine (store/sqlite/, store/pg/) is a struct sq_engine: its
 * statements behind those calls and the few facts of its connection the
 * queries need.  Both engines run the same compiled queries, so they give
 * the same API results, in the same words, and a query added here runs on
 * both as soon as its SQL is in sq_sql[] (store/query/sql.c).
 */
#ifndef SDS_ADMIN_STORE_QUERY_SQ_H
#define SDS_ADMIN_STORE_QUERY_SQ_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "store/store.h"

/*
 * The statements of the query files, by id: their SQL is sq_sql[] (store/query/sql.c),
 * and an engine's own rows where its dialect differs (store/sqlite/sqlite.c, store/pg/pg.c).
 */
enum {
	Q_BEGIN, Q_COMMIT, Q_ROLLBACK,
	Q_GROUP_ID, Q_GROUP_LIST, Q_GROUP_GET, Q_GROUP_INS, Q_GROUP_UPD,
	Q_GROUP_DEL, Q_GROUP_NAPPS,
	Q_APP_ID, Q_APP_LIST, Q_APP_LIST_ALL, Q_APP_GET, Q_APP_INS, Q_APP_UPD,
	Q_APP_DEL, Q_APP_SET_ACTIVE, Q_APP_BUMP,
	Q_SCHEME_ID, Q_SCHEME_LIST, Q_SCHEME_GET, Q_SCHEME_INS, Q_SCHEME_UPD, Q_SCHEME_REN,
	Q_SCHEME_DEL, Q_SCHEME_NAME,
	Q_STRAT_LIST, Q_STRAT_CLEAR, Q_STRAT_PUT, Q_STRAT_DEL, Q_STRAT_CLONE,
	Q_HB_INS, Q_STAT_INS, Q_HOST_UPSERT, Q_KEYS_INS, Q_KEYS_SCAN, Q_DEPS_UPSERT, Q_DEPS_SCAN,
	Q_HOST_LIST, Q_STAT_SCAN, Q_STAT_SCAN_POINT, Q_POINT_LIST, Q_EVENTS, Q_STAT_FIRST,
	Q_AUDIT_INS, Q_AUDIT_LIST,
	Q_PRUNE_STATS, Q_PRUNE_HB, Q_PRUNE_KEYS, Q_PRUNE_HOSTS, Q_PRUNE_DEPS, Q_PRUNE_AUDIT,
	Q_COUNT_GROUPS, Q_COUNT_APPS, Q_COUNT_HOSTS,
	Q_DEL_APP_STATS, Q_DEL_APP_HB, Q_DEL_APP_KEYS, Q_DEL_APP_DEPS, Q_DEL_APP_HOSTS, Q_DEL_APP_AUDIT,
	Q_DEL_APP_SCHEMES, Q_DEL_APP_STRATS,
	Q_DRILLS_BUMP, Q_DRILL_INS, Q_DRILL_LIST, Q_DRILL_ACTIVE, Q_DRILL_GET, Q_DRILL_STOP,
	Q_COPY_INS, Q_COPY_UPD, Q_COPY_LIST, Q_COPY_GET, Q_COPY_STOP,
	Q_COPY_ACTIVE_APP, Q_COPY_ACTIVE_ALL, Q_COPY_BY_NAME, Q_COPY_LSTAT,
	Q_COPY_SSTAT, Q_COPY_STATS, Q_COPY_SRV_UPSERT, Q_COPY_SRV_LIVE,
	Q_COPY_SRV_LIST, Q_COPY_SRV_OWNER, Q_COPY_SRV_OWNED, Q_COPY_SRV_PRUNE,
	Q_GD_INS, Q_GD_LIST, Q_GD_GET, Q_GD_DEL, Q_GD_DUE, Q_GD_NEXT,
	Q_GDR_INS, Q_GDR_OPEN_APP, Q_GDR_LIST, Q_GDR_ABORT, Q_GDR_OPEN, Q_GDR_CLAIM,
	Q_GDR_SAVE, Q_GDR_KEEP, Q_GDR_PRUNE,
	Q_COPY_DSTAT, Q_COPY_DSUM, Q_COPY_DEX, Q_COPY_UNPAIRED, Q_COPY_DPERIODS,
	Q_COPY_RAMP, Q_COPY_RAMPING,
	NQ
};


/* What sq_step() returns: SQLite's numbers, which the engines map theirs to. */
#define SQ_OK		0
#define SQ_ERROR	1
#define SQ_ROW		100	/* a row is ready: read its columns */
#define SQ_DONE		101	/* no more rows (or a statement without any) */

/* How long a bound text lives (sq_bind_text and its two variants below). */
enum sq_life {
	SQ_STATIC,	/* the caller's, alive until the statement's reset */
	SQ_COPY,	/* the engine copies it at once */
	SQ_FREE,	/* malloc()ed: the engine frees it when done with it */
};

struct sq_store;

/* A prepared statement of an engine: the engine's struct starts with this. */
struct sq_stmt {
	const struct sq_engine *e;	/* the engine that made it */
};

/*
 * An engine: its statements and its connection, as the query files use
 * them.  Parameters are 1-based, columns 0-based, as in SQLite.
 */
struct sq_engine {
	/* A new statement for id @id of @s (its SQL: sq_sql_of()), or NULL with the reason in errmsg(). */
	struct sq_stmt *(*prepare)(struct sq_store *s, int id);
	/* Ready a cached statement for another use: reset, bindings cleared. */
	void (*reuse)(struct sq_stmt *q);
	int (*bind_int64)(struct sq_stmt *q, int i, int64_t v);	/* SQ_OK or SQ_ERROR */
	int (*bind_text)(struct sq_stmt *q, int i, const char *t, enum sq_life life);
	int (*bind_blob)(struct sq_stmt *q, int i, const void *b, int n);	/* copied */
	int (*bind_null)(struct sq_stmt *q, int i);
	/* Run (the first call) or go to the next row: SQ_ROW, SQ_DONE or SQ_ERROR. */
	int (*step)(struct sq_stmt *q);
	/* Done with the rows: the next step runs it again; bindings are kept. */
	void (*reset)(struct sq_stmt *q);
	void (*finalize)(struct sq_stmt *q);	/* NULL is a no-op */
	int64_t (*col_int64)(struct sq_stmt *q, int i);	/* 0 for NULL; booleans 0/1 */
	const char *(*col_text)(struct sq_stmt *q, int i);	/* NULL for NULL */
	bool (*col_null)(struct sq_stmt *q, int i);
	const void *(*col_blob)(struct sq_stmt *q, int i);	/* valid until the next call */
	int (*col_bytes)(struct sq_stmt *q, int i);	/* of the last col_blob() */
	int64_t (*changes)(struct sq_store *s);	/* rows the last statement touched */
	int64_t (*last_id)(struct sq_store *s);	/* the row id the last INSERT gave */
	const char *(*errmsg)(struct sq_store *s);	/* the last error's text */
	/* Did the last statement fail on a unique (or primary) key? */
	bool (*unique_violation)(struct sq_store *s);
	bool (*in_txn)(struct sq_store *s);	/* inside a transaction? */
	/* Called with the lock taken: reconnect a broken connection (NULL: none to check). */
	void (*alive)(struct sq_store *s);
};

/*
 * The part of an engine's store the query files see: the engine's struct
 * starts with it, and it starts with the store.
 */
struct sq_store {
	struct store base;		/* first: the store_ops take it */
	const struct sq_engine *e;	/* the engine under the queries */
	pthread_mutex_t lock;		/* one call at a time on the connection (sq_lock) */
	struct sq_stmt *q[NQ];		/* the cached statements by id, NULL until first used */
};

#define SQ(st) ((struct sq_store *)(st))

/* An app as the writes need it. */
struct sq_app_ref {
	int64_t id;		/* apps.id */
	int64_t version;	/* its strategies' version, as read */
	int64_t active;		/* the active scheme's id, 0 if none */
	int64_t drills_seq;	/* its drills' change counter, as read */
};

/* store/query/sql.c: the SQL of statement @id; @dialect's own row if it has one. */
extern const char *const sq_sql[NQ];
const char *sq_sql_of(const char *const *dialect, int id);

/* ---- statements: the engine's calls, and the NULLs the queries want ------ */

static inline int sq_bind_int64(struct sq_stmt *q, int i, int64_t v)
{
	return q->e->bind_int64(q, i, v);
}

/* @t (NULL binds "") must live until the statement's reset. */
static inline int sq_bind_text(struct sq_stmt *q, int i, const char *t)
{
	return q->e->bind_text(q, i, t ? t : "", SQ_STATIC);
}

static inline int sq_bind_text_copy(struct sq_stmt *q, int i, const char *t)
{
	return q->e->bind_text(q, i, t, SQ_COPY);
}

/* @t is malloc()ed and the statement's from now on. */
static inline int sq_bind_text_free(struct sq_stmt *q, int i, char *t)
{
	return q->e->bind_text(q, i, t, SQ_FREE);
}

static inline int sq_bind_blob(struct sq_stmt *q, int i, const void *b, int n)
{
	return q->e->bind_blob(q, i, b, n);
}

static inline int sq_bind_null(struct sq_stmt *q, int i)
{
	return q->e->bind_null(q, i);
}

static inline int sq_step(struct sq_stmt *q)
{
	return q->e->step(q);
}

static inline void sq_reset(struct sq_stmt *q)
{
	q->e->reset(q);
}

static inline int64_t sq_col_int64(struct sq_stmt *q, int i)
{
	return q->e->col_int64(q, i);
}

static inline int sq_col_int(struct sq_stmt *q, int i)
{
	return (int)q->e->col_int64(q, i);
}

/* Column @i's text, "" for NULL. */
static inline const char *sq_col_text(struct sq_stmt *q, int i)
{
	const char *t = q->e->col_text(q, i);

	return t ? t : "";
}

static inline bool sq_col_null(struct sq_stmt *q, int i)
{
	return q->e->col_null(q, i);
}

static inline const void *sq_col_blob(struct sq_stmt *q, int i)
{
	return q->e->col_blob(q, i);
}

static inline int sq_col_bytes(struct sq_stmt *q, int i)
{
	return q->e->col_bytes(q, i);
}

static inline int64_t sq_changes(struct sq_store *s)
{
	return s->e->changes(s);
}

static inline int64_t sq_last_id(struct sq_store *s)
{
	return s->e->last_id(s);
}

/* ---- store/query/rows.c: what every query leans on ------------------------ */

void sq_seterr(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The cached statement @id, reset and unbound, or NULL (sq_run and the rest report it). */
struct sq_stmt *sq_q(struct sq_store *s, int id);
/* The same with ?1 bound to @key. */
struct sq_stmt *sq_qk(struct sq_store *s, int id, int64_t key);
/* "database: <the engine's message>" in @err; STORE_ERROR. */
int sq_dberr(struct sq_store *s, char *err);
/* Run @q, rows unread: 0, STORE_EXISTS on a unique key, or STORE_ERROR. */
int sq_run(struct sq_store *s, struct sq_stmt *q, char *err);
int sq_exec0(struct sq_store *s, int id, char *err);
void sq_lock(struct store *st);
void sq_unlock(struct store *st);
int sq_begin(struct sq_store *s, char *err);
/* Commit, or roll back if the commit failed. */
int sq_commit(struct sq_store *s, char *err);
/* Roll back the open transaction, if there is one. */
void sq_rollback(struct sq_store *s);
/*
 * The tail of every audited write: @ret is what the transaction's writes
 * returned.  If 0, add the audit row (app @app, @action, @detail,
 * @comment) and commit; on any failure, roll back.  0 or the first
 * failure's STORE_* code (with @err).
 */
int sq_commit_audited(struct sq_store *s, int ret, int64_t app, const char *action,
		      const char *detail, const char *comment, char *err);
int sq_group_id(struct sq_store *s, const char *g, int64_t *id, char *err);
int sq_app_lookup(struct sq_store *s, const char *g, const char *a,
		  struct sq_app_ref *r, char *err);
int sq_scheme_id(struct sq_store *s, int64_t app, const char *name,
		 int64_t *id, char *err);
int sq_audit_add(struct sq_store *s, int64_t app, const char *action,
		 const char *detail, const char *comment, char *err);
int sq_bump(struct sq_store *s, int64_t app, int64_t *version, char *err);
int sq_rows(struct sq_store *s, struct sq_stmt *q, json_t *(*row)(struct sq_stmt *),
	    json_t **out, char *err);
int sq_one(struct sq_store *s, struct sq_stmt *q, json_t *(*row)(struct sq_stmt *),
	   json_t **out, char *err);
/* The current row of a statistics scan to @cb (nonzero from it: stop). */
int sq_stat_row_emit(struct sq_stmt *q, store_stat_cb cb, void *ctx);

/* store/query/org.c: groups, apps, audit */
int sq_group_list(struct store *st, json_t **out, char *err);
int sq_group_get(struct store *st, const char *g, json_t **out, char *err);
int sq_group_create(struct store *st, const char *g, const char *desc, char *err);
int sq_group_update(struct store *st, const char *g, const char *desc, char *err);
int sq_group_delete(struct store *st, const char *g, char *err);
int sq_app_list(struct store *st, const char *g, json_t **out, char *err);
int sq_app_get(struct store *st, const char *g, const char *a, json_t **out,
	       char *err);
int sq_scheme_insert(struct sq_store *s, int64_t app, const char *name,
		  const char *desc, int64_t *id, char *err);
int sq_app_insert(struct sq_store *s, const char *g, const char *a,
	       const char *desc, struct sq_app_ref *r, char *err);
int sq_app_create(struct store *st, const char *g, const char *a,
		  const char *desc, char *err);
int sq_app_update(struct store *st, const char *g, const char *a,
		  const char *desc, char *err);
int sq_app_delete(struct store *st, const char *g, const char *a, char *err);
int sq_audit(struct store *st, const char *g, const char *a, int limit,
	     json_t **out, char *err);

/* store/query/schemes.c: schemes, strategies */
int sq_scheme_list(struct store *st, const char *g, const char *a,
		   json_t **out, char *err);
int sq_scheme_get(struct store *st, const char *g, const char *a,
		  const char *name, json_t **out, char *err);
int sq_scheme_create(struct store *st, const char *g, const char *a,
		     const char *name, const char *desc, const char *clone_from,
		     const char *comment, char *err);
int sq_scheme_rename(struct store *st, const char *g, const char *a,
		     const char *name, const char *to, const char *comment,
		     char *err);
int sq_scheme_update(struct store *st, const char *g, const char *a,
		     const char *name, const char *desc, char *err);
int sq_scheme_delete(struct store *st, const char *g, const char *a,
		     const char *name, const char *comment, char *err);
int sq_scheme_activate(struct store *st, const char *g, const char *a,
		       const char *name, const char *comment,
		       int64_t *version, char *err);
int sq_strategies_read(struct sq_store *s, int64_t sid,
		    struct sds_strategies *out, char *err);
int sq_strategies_get(struct store *st, const char *g, const char *a,
		      const char *name, struct sds_strategies *out,
		      char scheme[SDS_NAME_MAX + 1], char *err);
int sq_strategies_put(struct store *st, const char *g, const char *a,
		      const char *name, const struct sds_strategies *in,
		      const char *comment, int64_t *version, char *err);
int sq_strategy_put(struct store *st, const char *g, const char *a,
		    const char *name, const struct sds_strategies *in,
		    const char *comment, int64_t *version, char *err);
int sq_strategy_delete(struct store *st, const char *g, const char *a,
		       const char *name, const char *point,
		       const char *comment, int64_t *version, char *err);

/* store/query/drills.c: drills */
int sq_drills_active(struct sq_store *s, int64_t app, int64_t now,
		  const char *host, struct sds_hb_drill *out, int *n, char *err);
int sq_drill_create(struct store *st, const char *g, const char *a,
		    const struct store_drill *d, int64_t now, int64_t *id,
		    char *err);
int sq_drill_list(struct store *st, const char *g, const char *a,
		  json_t **out, char *err);
int sq_drill_stop(struct store *st, const char *g, const char *a,
		  int64_t id, const char *by, const char *token_id,
		  const char *reason, int64_t now, char *err);

/* store/query/copy.c: copy plans, their statistics; _servers.c: copy servers */
/* Columns of COPY_COLS (store/query/sql.c). */
enum {
	CP_ID, CP_NAME, CP_POINTS, CP_PCT, CP_AMP, CP_SHADOWS, CP_FRAMING, CP_WRITES,
	CP_RATE, CP_CREATED, CP_EXPIRES, CP_STOPPED_AT, CP_STARTED_BY, CP_STOPPED_BY,
	CP_GROUP, CP_APP, CP_OPTS, CP_RESULT,
};
/* Column @i (JSON text) parsed; an empty array if it does not parse. */
json_t *sq_copy_col_json(struct sq_stmt *q, int i);
/* store/query/copy_diff.c: a plan's options and results shown, its diff stored and summed */
void sq_copy_opts_show(struct sq_stmt *q, json_t *plan);
json_t *sq_copy_plan_row(struct sq_stmt *q);
int sq_copy_diff_put(struct sq_store *s, int64_t plan, const struct store_copy_hb *hb,
		     const struct store_copy_hb_plan *p, char *err);
int sq_copy_diff_summary(struct sq_store *s, int64_t plan, json_t *out, char *err);
int sq_copy_ramps(struct store *st, int64_t now, json_t **out, char *err);
int sq_copy_ramp_set(struct store *st, int64_t id, int amplification,
		     const char *result, char *err);
int sq_copy_diff_periods(struct sq_store *s, int64_t plan, int64_t from, int64_t to,
			 json_t *periods, char *err);
int sq_copy_loader_counts(struct sq_store *s, int64_t app,
		       const struct sds_heartbeat *hb, char *err);
int sq_copy_for_app(struct sq_store *s, int64_t app, int64_t now,
		 struct sds_hb_copy *out, char *err);
int sq_copy_plan_create(struct store *st, const char *g, const char *a,
			const struct store_copy_plan *p, int64_t now,
			int64_t *id, char *err);
int sq_copy_plan_update(struct store *st, const char *g, const char *a,
			int64_t id, const struct store_copy_plan *p,
			int64_t now, char *err);
int sq_copy_plan_list(struct store *st, const char *g, const char *a,
		      int64_t now, json_t **out, char *err);
int sq_copy_plan_get(struct store *st, const char *g, const char *a,
		     int64_t id, int64_t now, json_t **out, char *err);
int sq_copy_plan_stop(struct store *st, const char *g, const char *a,
		      int64_t id, const char *by, const char *token_id,
		      int64_t now, char *err);
int sq_copy_plan_stats(struct store *st, const char *g, const char *a,
		       int64_t id, int64_t from, int64_t to, json_t **out,
		       char *err);
int sq_copy_server_heartbeat(struct store *st, const struct store_copy_hb *hb,
			     int64_t now, json_t **plans, char *err);
int sq_copy_server_list(struct store *st, int64_t now, json_t **out, char *err);

/* store/query/gamedays.c: game days and their runs (docs/GAMEDAY.md) */
int sq_gameday_create(struct store *st, const char *g, const char *a,
		      const struct store_gameday *gd, int64_t now, int64_t *id, char *err);
int sq_gameday_list(struct store *st, const char *g, const char *a, json_t **out,
		    char *err);
int sq_gameday_get(struct store *st, const char *g, const char *a, const char *name,
		   json_t **out, char *err);
int sq_gameday_delete(struct store *st, const char *g, const char *a, const char *name,
		      const char *who, char *err);
int sq_gameday_run(struct store *st, const char *g, const char *a, const char *name,
		   const char *who, const char *state, int64_t now, int64_t *run, char *err);
int sq_gameday_abort(struct store *st, const char *g, const char *a, const char *name,
		     const char *who, char *err);
int sq_gameday_tick(struct store *st, const char *runner, int64_t now, int64_t lease_s,
		    const char *state, json_t **claimed, char *err);
int sq_gameday_save(struct store *st, int64_t run, const char *runner, const char *state,
		    int64_t ended_at, const char *result, char *err);

/* store/query/stats.c: heartbeats, hosts, stats, events, retention */
int sq_heartbeat(struct store *st, const struct sds_heartbeat *hb,
		 int64_t now, struct store_hb_result *res, char *err);
/*
 * The read half of a heartbeat's answer, the lock held: app @r's version,
 * drills and copy plans at @now, its strategies when @have is not its
 * version (as store_ops.heartbeat fills @res).  The heartbeat and
 * app_state (GET /api/v1/sync) both answer with it.
 */
int sq_hb_answer(struct sq_store *s, const struct sq_app_ref *r, int64_t have,
		 int64_t now, struct store_hb_result *res, char *err);
/* store_ops.app_state: the app looked up, sq_hb_answer(); nothing written. */
int sq_app_state(struct store *st, const char *g, const char *a, int64_t have,
		 int64_t now, struct store_hb_result *res, char *err);
/*
 * Bind @hb's host pressure rules (docs/PRESSURE.md) at @i and its
 * refusals at @i + 1, each the heartbeat's JSON text, NULL when it sent
 * none: the host row keeps its last heartbeat's.  -1: out of memory.
 */
int sq_host_json(struct sq_stmt *q, int i, const struct sds_heartbeat *hb);
int sq_host_list(struct store *st, const char *g, const char *a,
		 json_t **out, char *err);
/*
 * store/query/keys.c: hot keys.  sq_point_keys_text: point index
 * @point's "keys" array of @hb as JSON text (malloc'd; NULL: none, or
 * out of memory).  sq_keys_text: every point's, {"POINT": [...], ...}
 * (NULL: none; *@oom when out of memory).  sq_keys_insert: each point's
 * row (a new heartbeat's; transaction held).  sq_point_keys:
 * store_ops.point_keys.
 */
char *sq_point_keys_text(const struct sds_heartbeat *hb, int point);
char *sq_keys_text(const struct sds_heartbeat *hb, bool *oom);
int sq_keys_insert(struct sq_store *s, int64_t app, const struct sds_heartbeat *hb,
		   char *err);
int sq_point_keys(struct store *st, const char *g, const char *a, const char *point,
		  int64_t from, int64_t to, json_t **out, char *err);
/*
 * store/query/deps.c: each point's dependencies (docs/DEPS.md).
 * sq_deps_store: @hb's, the host's row replaced unless a later period's
 * is there (nothing when it sent none).  sq_app_deps: store_ops.app_deps.
 */
int sq_deps_store(struct sq_store *s, int64_t app, const struct sds_heartbeat *hb,
		  int64_t now, char *err);
int sq_app_deps(struct store *st, const char *g, const char *a, json_t **out,
		char *err);
int sq_stats_scan(struct store *st, const char *g, const char *a,
		  const char *point, int64_t from, int64_t to,
		  store_stat_cb cb, void *ctx, char *err);
int sq_point_list(struct store *st, const char *g, const char *a,
		  json_t **out, char *err);
int sq_events(struct store *st, const char *g, const char *a, int64_t from,
	      int64_t to, int limit, json_t **out, char *err);
int sq_stats_first(struct store *st, const char *g, const char *a, int64_t *first,
		   char *err);
int sq_prune(struct store *st, int64_t before, char *err);
int sq_counts(struct store *st, struct store_counts *out, char *err);
/* store/query/org.c (audit_denied), store/query/retention.c */
int sq_audit_denied(struct store *st, const char *g, const char *a,
		    const char *detail, const char *who, char *err);
int sq_prune_meta(struct store *st, int64_t before, char *err);

/*
 * The store ops both engines take from the query files as they are; each
 * engine adds close, heartbeat and retention of its own, and the long
 * reads (point_list, events, stats_scan_apart): each runs those on a
 * second connection.
 */
#define SQ_QUERY_OPS \
	.group_list = sq_group_list, \
	.group_get = sq_group_get, \
	.group_create = sq_group_create, \
	.group_update = sq_group_update, \
	.group_delete = sq_group_delete, \
	.app_list = sq_app_list, \
	.app_get = sq_app_get, \
	.app_create = sq_app_create, \
	.app_update = sq_app_update, \
	.app_delete = sq_app_delete, \
	.scheme_list = sq_scheme_list, \
	.scheme_get = sq_scheme_get, \
	.scheme_create = sq_scheme_create, \
	.scheme_update = sq_scheme_update, \
	.scheme_rename = sq_scheme_rename, \
	.scheme_delete = sq_scheme_delete, \
	.scheme_activate = sq_scheme_activate, \
	.strategies_get = sq_strategies_get, \
	.strategies_put = sq_strategies_put, \
	.strategy_put = sq_strategy_put, \
	.strategy_delete = sq_strategy_delete, \
	.host_list = sq_host_list, \
	.stats_scan = sq_stats_scan, \
	.audit = sq_audit, \
	.drill_create = sq_drill_create, \
	.drill_list = sq_drill_list, \
	.drill_stop = sq_drill_stop, \
	.copy_plan_create = sq_copy_plan_create, \
	.copy_plan_update = sq_copy_plan_update, \
	.copy_plan_list = sq_copy_plan_list, \
	.copy_plan_get = sq_copy_plan_get, \
	.copy_plan_stop = sq_copy_plan_stop, \
	.copy_plan_stats = sq_copy_plan_stats, \
	.copy_server_heartbeat = sq_copy_server_heartbeat, \
	.copy_server_list = sq_copy_server_list, \
	.copy_ramps = sq_copy_ramps, \
	.copy_ramp_set = sq_copy_ramp_set, \
	.counts = sq_counts, \
	.audit_denied = sq_audit_denied, \
	.stats_first = sq_stats_first, \
	.gameday_create = sq_gameday_create, \
	.gameday_list = sq_gameday_list, \
	.gameday_get = sq_gameday_get, \
	.gameday_delete = sq_gameday_delete, \
	.gameday_run = sq_gameday_run, \
	.gameday_abort = sq_gameday_abort, \
	.gameday_tick = sq_gameday_tick, \
	.gameday_save = sq_gameday_save

#endif /* SDS_ADMIN_STORE_QUERY_SQ_H */
