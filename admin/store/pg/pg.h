/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * store/pg/pg.h - what the files of the PostgreSQL engine share.  Private to
 * admin/store_pg*.c; the rest of the admin sees only store.h.
 */
#ifndef SDS_ADMIN_STORE_PG_H
#define SDS_ADMIN_STORE_PG_H

#include "store/pg/compat.h"
#include "store/sqlite/sqlite.h"

#define PG_DAY	86400	/* one statistics partition per UTC day */

/*
 * The engine's state: the SQLite store's struct (as the shared query
 * files see it: one connection, its statements, a mutex), and what only
 * PostgreSQL needs.  Nothing here caches data: every answer is read from
 * the database, so any number of admins can share it.
 */
struct pgx_store {
	struct pg_store s;		/* first: the query files cast to it */
	struct pgc_db conn;		/* s.db points here */
	char where[256];		/* "HOST:PORT/DB" for messages, never the password */
	int64_t day_ready;		/* a day whose partitions exist (a hint: see pgx_partitions) */
	struct pgc_stmt *hb_fast;	/* store/pg/hb.c's one-statement heartbeat */
	const char *session;		/* the SETs of its session, run again after a reset */
	char *url;			/* --db's URL, to open the reader (holds the password: never printed) */
	pthread_mutex_t reader_lock;	/* serializes opening the reader */
	struct pgx_store *reader;	/* long reads' connection (store/pg/reader.c), NULL until the first */
};

#define PGX(st) ((struct pgx_store *)(st))

/* store/pg/pg.c: reconnect if the connection broke, statements to prepare again */
void pgx_alive(struct pg_store *s);
/* A new connection to @url, given up after 10 s unless @url says otherwise. */
PGconn *pgx_connect(const char *url);

/* store/pg/schema.c */
int pgx_migrate(struct pgx_store *p, char *err);
/* Make sure day @day's (a multiple of PG_DAY) partitions exist; 0 or STORE_ERROR. */
int pgx_partitions(struct pgx_store *p, int64_t day, char *err);
int pgx_prune(struct store *st, int64_t before, char *err);
/* Run @sql (no parameters, no rows wanted); 0 or STORE_ERROR with @err. */
int pgx_exec(struct pgx_store *p, const char *sql, char *err);

/* store/pg/hb.c */
int pgx_heartbeat(struct store *st, const struct sds_heartbeat *hb,
		  int64_t now, struct store_hb_result *res, char *err);

/* store/pg/reader.c: the scans the API serves, on a connection of their own */
int pgx_stats_scan_apart(struct store *st, const char *g, const char *a,
			 const char *point, int64_t from, int64_t to,
			 store_stat_cb cb, void *ctx, char *err);
int pgx_events(struct store *st, const char *g, const char *a, int64_t from,
	       int64_t to, int limit, json_t **out, char *err);
int pgx_point_list(struct store *st, const char *g, const char *a,
		   json_t **out, char *err);
/* Close the reader, if it was opened. */
void pgx_reader_close(struct pgx_store *p);

#endif /* SDS_ADMIN_STORE_PG_H */
