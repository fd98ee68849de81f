// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/retention.c - the retention of hosts and the audit log
 * (the audit of refused writes is store/query/org.c's), for both
 * engines: they forget the same rows.  Statistics are not here: SQLite
 * deletes them by row (sq_prune), PostgreSQL drops their day partitions
 * whole (pg_prune).
 */
#include <stdio.h>
#include "store/query/sq.h"

int sq_prune_meta(struct store *st, int64_t before, char *err)
{
	struct sq_store *s = SQ(st);
	int ret;

	sq_lock(st);
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = sq_run(s, sq_qk(s, Q_PRUNE_HOSTS, before), err);
	/* A host's dependencies go with it (docs/DEPS.md). */
	if (!ret)
		ret = sq_run(s, sq_qk(s, Q_PRUNE_DEPS, before), err);
	if (!ret)
		ret = sq_run(s, sq_qk(s, Q_PRUNE_AUDIT, before), err);
	/* Copy servers not heard since: a name registered once is not kept forever. */
	if (!ret)
		ret = sq_run(s, sq_qk(s, Q_COPY_SRV_PRUNE, before), err);
	if (ret)
		sq_rollback(s);
	else
		ret = sq_commit(s, err);
out:
	sq_unlock(st);
	return ret;
}
