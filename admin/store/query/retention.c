// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/retention.c - the retention of hosts and the audit log
 * (the audit of refused writes is store/query/org.c's).  Compiled for
 * both engines (store/pg/shared.c): they forget the same rows.
 * Statistics are not here: SQLite deletes them by row (sq_prune),
 * PostgreSQL drops their day partitions whole (pgx_prune).
 */
#include <stdio.h>
#include "store/sqlite/sqlite.h"

int sq_prune_meta(struct store *st, int64_t before, char *err)
{
	struct sqlite_store *s = SS(st);
	int ret;

	lock(st);
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = run(s, Qk(s, Q_PRUNE_HOSTS, before), err);
	if (!ret)
		ret = run(s, Qk(s, Q_PRUNE_AUDIT, before), err);
	/* Copy servers not heard since: a name registered once is not kept forever. */
	if (!ret)
		ret = run(s, Qk(s, Q_COPY_SRV_PRUNE, before), err);
	if (ret)
		rollback(s);
	else
		ret = commit(s, err);
out:
	unlock(st);
	return ret;
}
