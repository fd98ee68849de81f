/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * store/pg/pg.h - what the files of the PostgreSQL engine share: its
 * connection, its statements (libpq behind the calls of store/query/sq.h)
 * and its store.  Private to admin/store/pg/; the rest of the admin sees
 * only store.h.
 */
#ifndef SDS_ADMIN_STORE_PG_H
#define SDS_ADMIN_STORE_PG_H

#include <stdbool.h>
#include <stdint.h>
#include <libpq-fe.h>
#include <pthread.h>
#include "store/query/sq.h"

#define PG_DAY		86400	/* one statistics partition per UTC day */
/*
 * The most $N a statement binds: the heartbeat's 18 and the host's 2,
 * one more per store/stat_cols.h column.
 */
#define PG_MAXPARAM	(22 + STORE_STAT_NCOLS)

/* One connection, and what its last statement left. */
struct pg_db {
	PGconn *conn;			/* NULL until connected */
	int64_t changes;		/* rows the last statement touched */
	int64_t last_id;		/* id RETURNING'd by the last INSERT */
	char sqlstate[6];		/* of the last failed statement, "" if none */
	char msg[256];			/* its first line */
};

/*
 * One prepared statement, with SQLite's contract (store/query/sq.h): bound
 * by index, stepped through its rows, columns valid until the reset.
 */
struct pg_stmt {
	struct sq_stmt base;		/* first: base.e is &pg_engine */
	struct pg_db *db;		/* the connection it is prepared on */
	char name[16];			/* server-side name, "qN" */
	char *sql;			/* its text with $N, owned: prepared again after a reconnect */
	bool prepared;			/* prepared on the current connection */
	int nparam;			/* highest $N bound */
	char *val[PG_MAXPARAM];		/* bound values, text (or raw bytes for blobs), owned */
	int len[PG_MAXPARAM];		/* their lengths (blobs) */
	int fmt[PG_MAXPARAM];		/* 1: binary (blobs), 0: text */
	PGresult *res;			/* the result once stepped, until reset */
	int row;			/* the current row of @res */
	unsigned char *blob;		/* the last col_blob() decoded, owned */
	size_t bloblen;			/* its length */
	bool prefetched;		/* @res came from pg_stmt_prefetch(), not stepped yet */
	char *pre[PG_MAXPARAM];		/* the values it ran with, owned */
	int npre;			/* their count */
};

/*
 * The engine's store: the query files' struct sq_store, and what only
 * PostgreSQL needs.  Nothing here caches data: every answer is read from
 * the database, so any number of admins can share it.
 */
struct pg_store {
	struct sq_store sq;		/* first: the query files' view of it */
	struct pg_db conn;		/* the connection its statements run on */
	char where[256];		/* "HOST:PORT/DB" for messages, never the password */
	int64_t day_ready;		/* a day whose partitions exist (a hint: see pg_partitions) */
	struct pg_stmt *hb_fast;	/* store/pg/hb.c's one-statement heartbeat */
	const char *session;		/* the SETs of its session, run again after a reset */
	char *url;			/* --db's URL, to open the reader (holds the password: never printed) */
	pthread_mutex_t reader_lock;	/* serializes opening the reader */
	struct pg_store *reader;	/* long reads' connection (store/pg/reader.c), NULL until the first */
	char admin_id[17];		/* this admin's, in its NOTIFY payloads (store/pg/listen.c) */
	struct pg_listen *listen;	/* the listener for the others', NULL until listen */
};

static inline struct pg_store *pg_of(struct store *st)
{
	return (struct pg_store *)st;
}

/* store/pg/pg.c: the engine under the query files, reconnects, connections */
extern const struct sq_engine pg_engine;
/* Reconnect if the connection broke; its statements are prepared again. */
void pg_alive(struct sq_store *s);
/* A new connection to @url, given up after 10 s unless @url says otherwise. */
PGconn *pg_connect(const char *url);

/* store/pg/stmt.c: statements, with the calls of struct sq_engine */
/* A statement named @name on @db for @sql (?N or $N: ?N become $N); NULL if out of memory. */
struct pg_stmt *pg_stmt_new(struct pg_db *db, const char *name, const char *sql);
/* @sql with libpq's $N for ?N and for a bare ? (numbered on, as SQLite does); malloc()ed. */
char *pg_stmt_sql(const char *sql);
void pg_stmt_reuse(struct sq_stmt *q);
int pg_stmt_bind_int64(struct sq_stmt *q, int i, int64_t v);
int pg_stmt_bind_text(struct sq_stmt *q, int i, const char *t, enum sq_life life);
int pg_stmt_bind_blob(struct sq_stmt *q, int i, const void *b, int n);
int pg_stmt_bind_null(struct sq_stmt *q, int i);
int pg_stmt_step(struct sq_stmt *q);
void pg_stmt_reset(struct sq_stmt *q);
void pg_stmt_finalize(struct sq_stmt *q);
int64_t pg_stmt_col_int64(struct sq_stmt *q, int i);
const char *pg_stmt_col_text(struct sq_stmt *q, int i);
bool pg_stmt_col_null(struct sq_stmt *q, int i);
const void *pg_stmt_col_blob(struct sq_stmt *q, int i);
int pg_stmt_col_bytes(struct sq_stmt *q, int i);
/*
 * Run the @n bound statements @qs in one round trip (libpq's pipeline);
 * each keeps its result for its first step, which uses it only if the
 * statement is bound to the same values again by then (else it runs as
 * usual): a prefetch can save time, never change an answer.
 */
void pg_stmt_prefetch(struct pg_db *db, struct sq_stmt **qs, int n);
/* Record @r's outcome on @db (changes, last id, error); SQ_OK or SQ_ERROR. */
int pg_db_result(struct pg_db *db, PGresult *r);

/* store/pg/schema.c */
int pg_migrate(struct pg_store *p, char *err);
/* Make sure day @day's (a multiple of PG_DAY) partitions exist; 0 or STORE_ERROR. */
int pg_partitions(struct pg_store *p, int64_t day, char *err);
int pg_prune(struct store *st, int64_t before, char *err);
/* Run @sql (no parameters, no rows wanted); 0 or STORE_ERROR with @err. */
int pg_exec(struct pg_store *p, const char *sql, char *err);

/* store/pg/hb.c */
int pg_heartbeat(struct store *st, const struct sds_heartbeat *hb,
		 int64_t now, struct store_hb_result *res, char *err);

/* store/pg/hb.c: store_ops.app_state, the heartbeat's answer read alone */
int pg_app_state(struct store *st, const char *g, const char *a, int64_t have,
		 int64_t now, struct store_hb_result *res, char *err);

/* store/pg/listen.c: other admins' writes (NOTIFY sds_watch) */
int pg_listen(struct store *st, const struct store_listener *l, void *ctx, char *err);
int pg_changed(struct store *st, const char *g, const char *a, char *err);
/* Stop the listener, if it runs. */
void pg_listen_stop(struct pg_store *p);

/* store/pg/reader.c: the scans the API serves, on a connection of their own */
int pg_stats_scan_apart(struct store *st, const char *g, const char *a,
			const char *point, int64_t from, int64_t to,
			store_stat_cb cb, void *ctx, char *err);
int pg_events(struct store *st, const char *g, const char *a, int64_t from,
	      int64_t to, int limit, json_t **out, char *err);
int pg_app_deps(struct store *st, const char *g, const char *a, json_t **out,
		char *err);
int pg_point_keys(struct store *st, const char *g, const char *a, const char *point,
		  int64_t from, int64_t to, json_t **out, char *err);
int pg_point_list(struct store *st, const char *g, const char *a,
		  json_t **out, char *err);
/* Close the reader, if it was opened. */
void pg_reader_close(struct pg_store *p);

#endif /* SDS_ADMIN_STORE_PG_H */
