// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/sqlite/sqlite.h - what the files of the SQLite engine share: the statement
 * ids, the store struct and the helpers around the statement cache.  Private
 * to admin/store_sqlite*.c; the rest of the admin sees only store.h.
 */
#ifndef SDS_ADMIN_STORE_SQLITE_H
#define SDS_ADMIN_STORE_SQLITE_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <time.h>
#include "store/store.h"

/* Cached prepared statements, by id; the SQL is in store/sqlite/sqlite.c. */
enum {
	Q_BEGIN, Q_COMMIT, Q_ROLLBACK,
	Q_GROUP_ID, Q_GROUP_LIST, Q_GROUP_GET, Q_GROUP_INS, Q_GROUP_UPD,
	Q_GROUP_DEL, Q_GROUP_NAPPS,
	Q_APP_ID, Q_APP_LIST, Q_APP_LIST_ALL, Q_APP_GET, Q_APP_INS, Q_APP_UPD,
	Q_APP_DEL, Q_APP_SET_ACTIVE, Q_APP_BUMP,
	Q_SCHEME_ID, Q_SCHEME_LIST, Q_SCHEME_GET, Q_SCHEME_INS, Q_SCHEME_UPD,
	Q_SCHEME_DEL, Q_SCHEME_NAME,
	Q_STRAT_LIST, Q_STRAT_CLEAR, Q_STRAT_PUT, Q_STRAT_DEL, Q_STRAT_CLONE,
	Q_HB_INS, Q_STAT_INS, Q_HOST_UPSERT,
	Q_HOST_LIST, Q_STAT_SCAN, Q_STAT_SCAN_POINT, Q_POINT_LIST, Q_EVENTS,
	Q_AUDIT_INS, Q_AUDIT_LIST,
	Q_PRUNE_STATS, Q_PRUNE_HB, Q_PRUNE_HOSTS, Q_PRUNE_AUDIT,
	Q_COUNT_GROUPS, Q_COUNT_APPS, Q_COUNT_HOSTS,
	Q_DEL_APP_STATS, Q_DEL_APP_HB, Q_DEL_APP_HOSTS, Q_DEL_APP_AUDIT,
	Q_DEL_APP_SCHEMES, Q_DEL_APP_STRATS,
	Q_DRILL_INS, Q_DRILL_LIST, Q_DRILL_ACTIVE, Q_DRILL_GET, Q_DRILL_STOP,
	Q_COPY_INS, Q_COPY_UPD, Q_COPY_LIST, Q_COPY_GET, Q_COPY_STOP,
	Q_COPY_ACTIVE_APP, Q_COPY_ACTIVE_ALL, Q_COPY_BY_NAME, Q_COPY_LSTAT,
	Q_COPY_SSTAT, Q_COPY_STATS, Q_COPY_SRV_UPSERT, Q_COPY_SRV_LIVE,
	Q_COPY_SRV_LIST, Q_COPY_SRV_OWNER, Q_COPY_SRV_OWNED, Q_COPY_SRV_PRUNE,
	NQ
};

struct sqlite_store {
	struct store base;
	pthread_mutex_t lock;
	sqlite3 *db;
	sqlite3_stmt *q[NQ];
};

#define SS(st) ((struct sqlite_store *)(st))

struct app_ref {
	int64_t id;
	int64_t version;
	int64_t active;		/* scheme id */
};

/*
 * store/sqlite/sqlite.c (and store/pg/pg.c: one per engine): Q, dberr, run, lock,
 * rollback; store/query/rows.c (shared): the rest of this block.
 */
void seterr(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Migrate @db's schema forward to this sds-admin's; 0, or -1 with @err (store/sqlite/schema.c). */
int store_sqlite_migrate(sqlite3 *db, char *err);
sqlite3_stmt *Q(struct sqlite_store *s, int id);
sqlite3_stmt *Qk(struct sqlite_store *s, int id, int64_t key);
int dberr(struct sqlite_store *s, char *err);
int run(struct sqlite_store *s, sqlite3_stmt *q, char *err);
int exec0(struct sqlite_store *s, int id, char *err);
void lock(struct store *st);
void unlock(struct store *st);
int begin(struct sqlite_store *s, char *err);
int commit(struct sqlite_store *s, char *err);
void rollback(struct sqlite_store *s);
void bind_text(sqlite3_stmt *q, int i, const char *t);
const char *col_text(sqlite3_stmt *q, int i);
int group_id(struct sqlite_store *s, const char *g, int64_t *id, char *err);
int app_ref(struct sqlite_store *s, const char *g, const char *a,
	    struct app_ref *r, char *err);
int scheme_id(struct sqlite_store *s, int64_t app, const char *name,
	      int64_t *id, char *err);
int audit_add(struct sqlite_store *s, int64_t app, const char *action,
	      const char *detail, const char *comment, char *err);
int bump(struct sqlite_store *s, int64_t app, int64_t *version, char *err);
int rows(struct sqlite_store *s, sqlite3_stmt *q, json_t *(*row)(sqlite3_stmt *),
	 json_t **out, char *err);
int one(struct sqlite_store *s, sqlite3_stmt *q, json_t *(*row)(sqlite3_stmt *),
	json_t **out, char *err);
/* The current row of a statistics scan to @cb (nonzero from it: stop). */
int stat_row_emit(sqlite3_stmt *q, store_stat_cb cb, void *ctx);

/* store/query/org.c: groups, apps, audit */
int sq_group_list(struct store *st, json_t **out, char *err);
int sq_group_get(struct store *st, const char *g, json_t **out, char *err);
int sq_group_create(struct store *st, const char *g, const char *desc, char *err);
int sq_group_update(struct store *st, const char *g, const char *desc, char *err);
int sq_group_delete(struct store *st, const char *g, char *err);
int sq_app_list(struct store *st, const char *g, json_t **out, char *err);
int sq_app_get(struct store *st, const char *g, const char *a, json_t **out,
	       char *err);
int scheme_insert(struct sqlite_store *s, int64_t app, const char *name,
		  const char *desc, int64_t *id, char *err);
int app_insert(struct sqlite_store *s, const char *g, const char *a,
	       const char *desc, struct app_ref *r, char *err);
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
int sq_scheme_update(struct store *st, const char *g, const char *a,
		     const char *name, const char *desc, char *err);
int sq_scheme_delete(struct store *st, const char *g, const char *a,
		     const char *name, const char *comment, char *err);
int sq_scheme_activate(struct store *st, const char *g, const char *a,
		       const char *name, const char *comment,
		       int64_t *version, char *err);
int strategies_read(struct sqlite_store *s, int64_t sid,
		    struct sds_strategies *out, char *err);
int sq_strategies_get(struct store *st, const char *g, const char *a,
		      const char *name, struct sds_strategies *out,
		      char scheme[SDS_NAME_MAX + 1], char *err);
int sq_strategies_put(struct store *st, const char *g, const char *a,
		      const char *name, const struct sds_strategies *in,
		      const char *comment, int64_t *version, char *err);
int sq_strategy_put(struct store *st, const char *g, const char *a,
		    const char *name, const struct sds_strategy *in,
		    const char *comment, int64_t *version, char *err);
int sq_strategy_delete(struct store *st, const char *g, const char *a,
		       const char *name, const char *point,
		       const char *comment, int64_t *version, char *err);

/* store/query/drills.c: drills */
int drills_active(struct sqlite_store *s, int64_t app, int64_t now,
		  struct sds_hb_drill *out, int *n, char *err);
int sq_drill_create(struct store *st, const char *g, const char *a,
		    const struct store_drill *d, int64_t now, int64_t *id,
		    char *err);
int sq_drill_list(struct store *st, const char *g, const char *a,
		  json_t **out, char *err);
int sq_drill_stop(struct store *st, const char *g, const char *a,
		  int64_t id, const char *by, const char *token_id,
		  int64_t now, char *err);

/* store/query/copy.c: copy plans, their statistics; _servers.c: copy servers */
/* Columns of COPY_COLS (store/sqlite/sqlite.c). */
enum {
	CP_ID, CP_NAME, CP_POINTS, CP_PCT, CP_AMP, CP_SHADOWS, CP_FRAMING, CP_WRITES,
	CP_RATE, CP_CREATED, CP_EXPIRES, CP_STOPPED_AT, CP_STARTED_BY, CP_STOPPED_BY,
	CP_GROUP, CP_APP,
};
/* Column @i (JSON text) parsed; an empty array if it does not parse. */
json_t *copy_col_json(sqlite3_stmt *q, int i);
int copy_loader_counts(struct sqlite_store *s, int64_t app,
		       const struct sds_heartbeat *hb, char *err);
int copy_for_app(struct sqlite_store *s, int64_t app, int64_t now,
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

/* store/query/stats.c: heartbeats, hosts, stats, events, retention */
int sq_heartbeat(struct store *st, const struct sds_heartbeat *hb,
		 int64_t now, struct store_hb_result *res, char *err);
int sq_host_list(struct store *st, const char *g, const char *a,
		 json_t **out, char *err);
int sq_stats_scan(struct store *st, const char *g, const char *a,
		  const char *point, int64_t from, int64_t to,
		  store_stat_cb cb, void *ctx, char *err);
int sq_point_list(struct store *st, const char *g, const char *a,
		  json_t **out, char *err);
int sq_events(struct store *st, const char *g, const char *a, int64_t from,
	      int64_t to, int limit, json_t **out, char *err);
int sq_prune(struct store *st, int64_t before, char *err);
int sq_counts(struct store *st, struct store_counts *out, char *err);
/* store/query/org.c (audit_denied), _retention.c, _reader.c */
int sq_audit_denied(struct store *st, const char *g, const char *a,
		    const char *detail, const char *who, char *err);
int sq_prune_meta(struct store *st, int64_t before, char *err);
int sq_stats_scan_apart(struct store *st, const char *g, const char *a,
			const char *point, int64_t from, int64_t to,
			store_stat_cb cb, void *ctx, char *err);

/*
 * The store ops both engines take from the query files as they are (the
 * PostgreSQL store compiles them over libpq, where these names are its
 * own: store/pg/compat.h); each engine adds close, heartbeat and
 * retention of its own, and the long reads (point_list, events,
 * stats_scan_apart): PostgreSQL runs them on a second connection.
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
	.counts = sq_counts, \
	.audit_denied = sq_audit_denied

#endif
