// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/sqlite/sqlite.h - what the files of the SQLite engine share: its
 * store (the query files' struct sq_store and the connection) and its
 * schema and scans.  Private to admin/store/sqlite/; the rest of the admin
 * sees only store.h.
 */
#ifndef SDS_ADMIN_STORE_SQLITE_H
#define SDS_ADMIN_STORE_SQLITE_H

#include <sqlite3.h>
#include "store/query/sq.h"

struct sqlite_store {
	struct sq_store sq;	/* first: the query files' view of it */
	sqlite3 *db;		/* the one connection, under sq.lock */
};

/* A prepared statement: the query files see @base. */
struct sqlite_stmt {
	struct sq_stmt base;	/* first: base.e is &sqlite_engine */
	sqlite3_stmt *st;	/* SQLite's statement, owned */
};

static inline struct sqlite_store *sqlite_of(struct store *st)
{
	return (struct sqlite_store *)st;
}

/* store/sqlite/sqlite.c: SQLite's calls behind the query files' (store/query/sq.h) */
extern const struct sq_engine sqlite_engine;

/* Migrate @db's schema forward to this sds-admin's; 0, or -1 with @err (store/sqlite/schema.c). */
int sqlite_migrate(sqlite3 *db, char *err);

/* store/sqlite/reader.c: a statistics scan on a read-only connection of its own. */
int sqlite_stats_scan_apart(struct store *st, const char *g, const char *a,
			    const char *point, int64_t from, int64_t to,
			    store_stat_cb cb, void *ctx, char *err);

#endif /* SDS_ADMIN_STORE_SQLITE_H */
