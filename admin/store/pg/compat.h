/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * store/pg/compat.h - the PostgreSQL store runs the SQLite store's query
 * logic (store_sqlite_{rows,org,schemes,drills,stats,copy,copy_servers,
 * retention}.c),
 * compiled a second time with this header forced in first (admin.mk).
 *
 * Why: both engines must give the same API results, exactly; one copy of
 * the logic (name resolution, audit, version bumps, JSON rows) cannot
 * drift, and a new store op written for SQLite runs on PostgreSQL as soon
 * as its SQL is added to store/pg/pg.c's table.  What differs per engine is
 * the SQL text (store/pg/pg.c), the schema (store/pg/schema.c) and the hot
 * paths (the batched heartbeat and partition retention, store/pg/hb.c).
 *
 * The handful of sqlite3_* calls the query files make are mapped onto a
 * libpq statement (store/pg/stmt.c) with the same contract: bind by
 * index, step through rows, read columns until the next reset.  Every
 * global of those files gets a pg_ name so both copies link into one
 * sds-admin.
 */
#ifndef SDS_ADMIN_STORE_PG_COMPAT_H
#define SDS_ADMIN_STORE_PG_COMPAT_H

#include <stdbool.h>
#include <stdint.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <jansson.h>

/* Stand in for <sqlite3.h>: store/sqlite/sqlite.h includes it. */
#define SQLITE3_H
#define _SQLITE3RTREE_H_
#define _FTS5_H

#define SQLITE_OK		0
#define SQLITE_ERROR		1
#define SQLITE_INTEGER		1
#define SQLITE_NULL		5
#define SQLITE_ROW		100
#define SQLITE_DONE		101
#define SQLITE_STATIC		((void (*)(void *))0)
#define SQLITE_TRANSIENT	((void (*)(void *))-1)

#define PGC_MAXPARAM	20	/* the most $N a statement binds (the heartbeat's 18) */

/* One connection: what sqlite3 * is in the query files. */
struct pgc_db {
	PGconn *conn;			/* NULL until connected */
	int64_t changes;		/* rows the last statement touched */
	int64_t last_id;		/* id RETURNING'd by the last INSERT */
	char sqlstate[6];		/* of the last failed statement, "" if none */
	char msg[256];			/* its first line */
};

/* One prepared statement: what sqlite3_stmt * is in the query files. */
struct pgc_stmt {
	struct pgc_db *db;		/* the connection it is prepared on */
	char name[16];			/* server-side name, "qN" */
	const char *sql;		/* its text, to prepare it again after a reconnect */
	bool prepared;			/* prepared on the current connection */
	int nparam;			/* highest $N bound */
	char *val[PGC_MAXPARAM];	/* bound values, text (or raw bytes for blobs), owned */
	int len[PGC_MAXPARAM];		/* their lengths (blobs) */
	int fmt[PGC_MAXPARAM];		/* 1: binary (blobs), 0: text */
	PGresult *res;			/* the result once stepped, until reset */
	int row;			/* the current row of @res */
	unsigned char *blob;		/* the last column_blob() decoded, owned */
	size_t bloblen;			/* its length */
	bool prefetched;		/* @res came from pgc_prefetch(), not stepped yet */
	char *pre[PGC_MAXPARAM];	/* the values it ran with, owned */
	int npre;			/* their count */
};

typedef struct pgc_db sqlite3;
typedef struct pgc_stmt sqlite3_stmt;
typedef int64_t sqlite3_int64;

/* store/pg/stmt.c */
int pgc_bind_int64(struct pgc_stmt *q, int i, int64_t v);
int pgc_bind_text(struct pgc_stmt *q, int i, const char *t, int n, void (*d)(void *));
int pgc_bind_blob(struct pgc_stmt *q, int i, const void *b, int n, void (*d)(void *));
int pgc_bind_null(struct pgc_stmt *q, int i);
int pgc_step(struct pgc_stmt *q);
int pgc_reset(struct pgc_stmt *q);
void pgc_clear_bindings(struct pgc_stmt *q);
void pgc_finalize(struct pgc_stmt *q);
int64_t pgc_column_int64(struct pgc_stmt *q, int i);
const unsigned char *pgc_column_text(struct pgc_stmt *q, int i);
int pgc_column_type(struct pgc_stmt *q, int i);
const void *pgc_column_blob(struct pgc_stmt *q, int i);
int pgc_column_bytes(struct pgc_stmt *q, int i);
/*
 * Run the @n bound statements @qs in one round trip (libpq's pipeline);
 * each keeps its result for its first step, which uses it only if the
 * statement is bound to the same values again by then (else it runs as
 * usual): a prefetch can save time, never change an answer.
 */
void pgc_prefetch(struct pgc_db *db, struct pgc_stmt **qs, int n);
/* Record @r's outcome on @db (changes, last id, error); 0 or SQLITE_ERROR. */
int pgc_result(struct pgc_db *db, PGresult *r);

#define sqlite3_bind_int64		pgc_bind_int64
#define sqlite3_bind_int		pgc_bind_int64
#define sqlite3_bind_text		pgc_bind_text
#define sqlite3_bind_blob		pgc_bind_blob
#define sqlite3_bind_null		pgc_bind_null
#define sqlite3_step			pgc_step
#define sqlite3_reset			pgc_reset
#define sqlite3_clear_bindings		pgc_clear_bindings
#define sqlite3_column_int64		pgc_column_int64
#define sqlite3_column_int(q, i)	((int)pgc_column_int64(q, i))
#define sqlite3_column_text		pgc_column_text
#define sqlite3_column_type		pgc_column_type
#define sqlite3_column_blob		pgc_column_blob
#define sqlite3_column_bytes		pgc_column_bytes
#define sqlite3_changes(db)		((int)(db)->changes)
#define sqlite3_last_insert_rowid(db)	((db)->last_id)

/* The globals of the shared files and of store/sqlite/sqlite.c's helpers. */
#define seterr			pg_seterr
#define Q			pg_Q
#define Qk			pg_Qk
#define dberr			pg_dberr
#define run			pg_run
#define exec0			pg_exec0
#define lock			pg_lock
#define unlock			pg_unlock
#define begin			pg_begin
#define commit			pg_commit
#define rollback		pg_rollback
#define bind_text		pg_bind_text
#define col_text		pg_col_text
#define group_id		pg_group_id
#define app_ref			pg_app_ref
#define scheme_id		pg_scheme_id
#define audit_add		pg_audit_add
#define bump			pg_bump
#define rows			pg_rows
#define one			pg_one
#define stat_row_emit		pg_stat_row_emit
#define app_insert		pg_app_insert
#define scheme_insert		pg_scheme_insert
#define strategies_read		pg_strategies_read
#define drills_active		pg_drills_active
#define copy_col_json		pg_copy_col_json
#define copy_for_app		pg_copy_for_app
#define copy_loader_counts	pg_copy_loader_counts
#define sqlite_store		pg_store
#define store_sqlite_migrate	pg_store_migrate_unused
#define sq_group_list		pg_group_list
#define sq_group_get		pg_group_get
#define sq_group_create		pg_group_create
#define sq_group_update		pg_group_update
#define sq_group_delete		pg_group_delete
#define sq_app_list		pg_app_list
#define sq_app_get		pg_app_get
#define sq_app_create		pg_app_create
#define sq_app_update		pg_app_update
#define sq_app_delete		pg_app_delete
#define sq_audit		pg_audit
#define sq_audit_denied		pg_audit_denied
#define sq_prune_meta		pg_prune_meta
#define sq_scheme_list		pg_scheme_list
#define sq_scheme_get		pg_scheme_get
#define sq_scheme_create	pg_scheme_create
#define sq_scheme_update	pg_scheme_update
#define sq_scheme_delete	pg_scheme_delete
#define sq_scheme_activate	pg_scheme_activate
#define sq_strategies_get	pg_strategies_get
#define sq_strategies_put	pg_strategies_put
#define sq_strategy_put		pg_strategy_put
#define sq_strategy_delete	pg_strategy_delete
#define sq_drill_create		pg_drill_create
#define sq_drill_list		pg_drill_list
#define sq_drill_stop		pg_drill_stop
#define sq_copy_plan_create	pg_copy_plan_create
#define sq_copy_plan_update	pg_copy_plan_update
#define sq_copy_plan_list	pg_copy_plan_list
#define sq_copy_plan_get	pg_copy_plan_get
#define sq_copy_plan_stop	pg_copy_plan_stop
#define sq_copy_plan_stats	pg_copy_plan_stats
#define sq_copy_server_heartbeat pg_copy_server_heartbeat
#define sq_copy_server_list	pg_copy_server_list
/* The shared versions of these are replaced by store/pg/hb.c's. */
#define sq_heartbeat		pg_heartbeat_rowwise
#define sq_prune		pg_prune_rows
#define sq_host_list		pg_host_list
#define sq_stats_scan		pg_stats_scan
#define sq_point_list		pg_point_list
#define sq_events		pg_events
#define sq_counts		pg_counts

#endif /* SDS_ADMIN_STORE_PG_COMPAT_H */
