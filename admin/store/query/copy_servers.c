// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/copy_servers.c - copy servers in the SQLite store: their
 * heartbeats (per-plan counts per period) and the plans they are given.
 * The plans themselves are store/query/copy.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/sqlite/sqlite.h"

/* A plan as sds-copy's plans document has it (docs/COPY.md). */
static json_t *plan_file_row(sqlite3_stmt *q)
{
	return json_pack("{s:s, s:s, s:o, s:i, s:o, s:s, s:b, s:I, s:I, s:i}",
		"name", col_text(q, CP_NAME), "app", col_text(q, CP_APP),
		"points", copy_col_json(q, CP_POINTS),
		"amplification", sqlite3_column_int(q, CP_AMP),
		"shadows", copy_col_json(q, CP_SHADOWS),
		"framing", col_text(q, CP_FRAMING),
		"writes", sqlite3_column_int(q, CP_WRITES),
		"rate", (json_int_t)sqlite3_column_int64(q, CP_RATE),
		"expires_at", (json_int_t)sqlite3_column_int64(q, CP_EXPIRES),
		"sample_pct", sqlite3_column_int(q, CP_PCT));
}

/* One plan's counts of a copy server's heartbeat (transaction held). */
static int server_counts(struct sqlite_store *s, const struct store_copy_hb *hb,
			 const struct store_copy_hb_plan *p, char *err)
{
	sqlite3_stmt *q = Q(s, Q_COPY_BY_NAME);
	int64_t id;
	int rc;

	if (!q)
		return dberr(s, err);
	bind_text(q, 1, p->name);
	rc = sqlite3_step(q);
	id = rc == SQLITE_ROW ? sqlite3_column_int64(q, 0) : 0;
	sqlite3_reset(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return dberr(s, err);
	if (!id)	/* a plan of the server's own file: not the admin's */
		return 0;
	q = Q(s, Q_COPY_SSTAT);
	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, id);
	sqlite3_bind_int64(q, 2, hb->period_start);
	bind_text(q, 3, hb->name);
	sqlite3_bind_int64(q, 4, p->received);
	sqlite3_bind_int64(q, 5, p->dispatched);
	sqlite3_bind_int64(q, 6, p->shadow_errors);
	sqlite3_bind_int64(q, 7, p->dropped);
	return run(s, q, err);
}

/*
 * May @hb's token take or keep its name (transaction held)?  A name is
 * bound to the token that first registered it: another copy-server token
 * cannot re-point it (STORE_FORBIDDEN), an operator's can.  A token holds
 * at most STORE_COPY_SERVERS_PER_TOKEN names (STORE_CONFLICT), so one
 * cannot fill the table or every loader's list.
 */
static int server_owner_check(struct sqlite_store *s, const struct store_copy_hb *hb,
			      char *err)
{
	sqlite3_stmt *q = Q(s, Q_COPY_SRV_OWNER);
	char owner[64] = "";
	bool found;
	int64_t held;
	int rc;

	if (!q)
		return dberr(s, err);
	bind_text(q, 1, hb->name);
	rc = sqlite3_step(q);
	found = rc == SQLITE_ROW;
	if (found && sqlite3_column_type(q, 0) != SQLITE_NULL)
		snprintf(owner, sizeof(owner), "%s", col_text(q, 0));
	sqlite3_reset(q);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return dberr(s, err);
	if (owner[0] && strcmp(owner, hb->owner ? hb->owner : "") && !hb->operator) {
		snprintf(err, STORE_ERR_MAX,
			 "copy server '%s' is registered by another token (%s): not re-pointed",
			 hb->name, owner);
		return STORE_FORBIDDEN;
	}
	if (found || hb->operator)
		return 0;
	q = Q(s, Q_COPY_SRV_OWNED);
	if (!q)
		return dberr(s, err);
	bind_text(q, 1, hb->owner);
	rc = sqlite3_step(q);
	held = rc == SQLITE_ROW ? sqlite3_column_int64(q, 0) : 0;
	sqlite3_reset(q);
	if (rc != SQLITE_ROW)
		return dberr(s, err);
	if (held >= STORE_COPY_SERVERS_PER_TOKEN) {
		snprintf(err, STORE_ERR_MAX,
			 "copy server '%s': this token already holds %d names (at most %d)",
			 hb->name, (int)held, STORE_COPY_SERVERS_PER_TOKEN);
		return STORE_CONFLICT;
	}
	return 0;
}

int sq_copy_server_heartbeat(struct store *st, const struct store_copy_hb *hb,
			     int64_t now, json_t **plans, char *err)
{
	struct sqlite_store *s = SS(st);
	sqlite3_stmt *q;
	int i, ret;

	*plans = NULL;
	lock(st);
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = server_owner_check(s, hb, err);
	if (ret)
		goto fail;
	q = Q(s, Q_COPY_SRV_UPSERT);
	if (!q)
		goto dbfail;
	bind_text(q, 1, hb->name);
	bind_text(q, 2, hb->addr);
	sqlite3_bind_int64(q, 3, now);
	bind_text(q, 4, hb->owner);
	ret = run(s, q, err);
	for (i = 0; !ret && i < hb->nplans; i++)
		ret = server_counts(s, hb, &hb->plans[i], err);
	if (ret)
		goto fail;
	ret = commit(s, err);
	if (ret)
		goto out;
	q = Q(s, Q_COPY_ACTIVE_ALL);
	if (q)
		sqlite3_bind_int64(q, 1, now);
	ret = rows(s, q, plan_file_row, plans, err);
	goto out;
dbfail:
	ret = dberr(s, err);
fail:
	rollback(s);
out:
	unlock(st);
	return ret;
}

static json_t *server_row(sqlite3_stmt *q)
{
	return json_pack("{s:s, s:s, s:I, s:I, s:s?}", "name", col_text(q, 0),
			 "addr", col_text(q, 1),
			 "first_seen", (json_int_t)sqlite3_column_int64(q, 2),
			 "last_seen", (json_int_t)sqlite3_column_int64(q, 3),
			 "owner", sqlite3_column_type(q, 4) == SQLITE_NULL ? NULL :
				  col_text(q, 4));
}

int sq_copy_server_list(struct store *st, int64_t now, json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	json_t *v;
	size_t i;
	int ret;

	lock(st);
	ret = rows(s, Q(s, Q_COPY_SRV_LIST), server_row, out, err);
	unlock(st);
	if (!ret)
		json_array_foreach(*out, i, v)
			json_object_set_new(v, "live", json_boolean(
				json_integer_value(json_object_get(v, "last_seen")) >=
				now - STORE_COPY_LIVE_S));
	return ret;
}
