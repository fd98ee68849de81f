// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store_pg_retention.c - the PostgreSQL store's retention of hosts and
 * the audit log: the same rows as store_sqlite_retention.c deletes.
 *
 * Statistics are not here: they live in day partitions that pgx_prune()
 * drops whole.  hosts and audit are plain tables, deleted by row.
 */
#include <stdio.h>
#include "store_pg.h"

int pgx_prune_meta(struct store *st, int64_t before, char *err)
{
	struct pgx_store *p = PGX(st);
	char sql[160];
	int ret;

	lock(st);
	/* @before is an integer the admin computed: printed, not bound. */
	ret = pgx_exec(p, "BEGIN", err);
	if (!ret) {
		snprintf(sql, sizeof(sql), "DELETE FROM hosts WHERE last_seen < %lld",
			 (long long)before);
		ret = pgx_exec(p, sql, err);
	}
	if (!ret) {
		snprintf(sql, sizeof(sql), "DELETE FROM audit WHERE time < %lld",
			 (long long)before);
		ret = pgx_exec(p, sql, err);
	}
	if (!ret)
		ret = pgx_exec(p, "COMMIT", err);
	else	/* keep the first error's message */
		PQclear(PQexec(p->conn.conn, "ROLLBACK"));
	unlock(st);
	return ret;
}
