// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store_sqlite_retention.c - the SQLite store's retention of hosts and
 * the audit log (the audit of refused writes is store_sqlite_org.c's).
 *
 * Its statements are prepared per call, not in the shared cache: they run
 * once a minute, where a prepare costs nothing
 * that matters, and the cache's table stays as it is.
 */
#include <stdio.h>
#include "store_sqlite.h"

/* Run @sql with @before bound to ?1; 0 or STORE_ERROR. */
static int run_before(struct sqlite_store *s, const char *sql, int64_t before, char *err)
{
	sqlite3_stmt *q = NULL;
	int ret;

	if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, before);
	ret = run(s, q, err);
	sqlite3_finalize(q);
	return ret;
}

int sq_prune_meta(struct store *st, int64_t before, char *err)
{
	struct sqlite_store *s = SS(st);
	int ret;

	lock(st);
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = run_before(s, "DELETE FROM hosts WHERE last_seen < ?1", before, err);
	if (!ret)
		ret = run_before(s, "DELETE FROM audit WHERE time < ?1", before, err);
	if (ret)
		rollback(s);
	else
		ret = commit(s, err);
out:
	unlock(st);
	return ret;
}
