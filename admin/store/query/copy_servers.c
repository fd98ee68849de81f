// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/copy_servers.c - copy servers in the store (both engines): their
 * heartbeats (per-plan counts per period) and the plans they are given.
 * The plans themselves are store/query/copy.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/query/sq.h"

/* A plan as sds-copy's plans document has it (docs/COPY.md). */
static json_t *plan_file_row(struct sq_stmt *q)
{
	json_t *o, *opts = sq_col_null(q, CP_OPTS) ? NULL :
			   json_loads(sq_col_text(q, CP_OPTS), 0, NULL);

	o = json_pack("{s:s, s:s, s:o, s:i, s:o, s:s, s:b, s:I, s:I, s:i}",
		"name", sq_col_text(q, CP_NAME), "app", sq_col_text(q, CP_APP),
		"points", sq_copy_col_json(q, CP_POINTS),
		"amplification", sq_col_int(q, CP_AMP),
		"shadows", sq_copy_col_json(q, CP_SHADOWS),
		"framing", sq_col_text(q, CP_FRAMING),
		"writes", sq_col_int(q, CP_WRITES),
		"rate", (json_int_t)sq_col_int64(q, CP_RATE),
		"expires_at", (json_int_t)sq_col_int64(q, CP_EXPIRES),
		"sample_pct", sq_col_int(q, CP_PCT));
	/* What sds-copy does of a diff plan; a ramp is the admin's alone. */
	if (o && json_is_true(json_object_get(opts, "diff"))) {
		json_object_set_new(o, "diff", json_true());
		if (json_object_get(opts, "ignore"))
			json_object_set(o, "ignore", json_object_get(opts, "ignore"));
	}
	json_decref(opts);
	return o;
}

/* One plan's counts of a copy server's heartbeat (transaction held). */
static int server_counts(struct sq_store *s, const struct store_copy_hb *hb,
			 const struct store_copy_hb_plan *p, char *err)
{
	struct sq_stmt *q = sq_q(s, Q_COPY_BY_NAME);
	int64_t id;
	int rc;

	if (!q)
		return sq_dberr(s, err);
	sq_bind_text(q, 1, p->name);
	rc = sq_step(q);
	id = rc == SQ_ROW ? sq_col_int64(q, 0) : 0;
	sq_reset(q);
	if (rc != SQ_ROW && rc != SQ_DONE)
		return sq_dberr(s, err);
	if (!id)	/* a plan of the server's own file: not the admin's */
		return 0;
	q = sq_q(s, Q_COPY_SSTAT);
	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 1, id);
	sq_bind_int64(q, 2, hb->period_start);
	sq_bind_text(q, 3, hb->name);
	sq_bind_int64(q, 4, p->received);
	sq_bind_int64(q, 5, p->dispatched);
	sq_bind_int64(q, 6, p->shadow_errors);
	sq_bind_int64(q, 7, p->dropped);
	sq_bind_int64(q, 8, p->unpaired);
	rc = sq_run(s, q, err);
	if (rc || !p->diff_points)
		return rc;
	return sq_copy_diff_put(s, id, hb, p, err);
}

/*
 * May @hb's token take or keep its name (transaction held)?  A name is
 * bound to the token that first registered it: another copy-server token
 * cannot re-point it (STORE_FORBIDDEN), an operator's can.  A token holds
 * at most STORE_COPY_SERVERS_PER_TOKEN names (STORE_CONFLICT), so one
 * cannot fill the table or every loader's list.
 */
static int server_owner_check(struct sq_store *s, const struct store_copy_hb *hb,
			      char *err)
{
	struct sq_stmt *q = sq_q(s, Q_COPY_SRV_OWNER);
	char owner[64] = "";
	bool found;
	int64_t held;
	int rc;

	if (!q)
		return sq_dberr(s, err);
	sq_bind_text(q, 1, hb->name);
	rc = sq_step(q);
	found = rc == SQ_ROW;
	if (found && !sq_col_null(q, 0))
		snprintf(owner, sizeof(owner), "%s", sq_col_text(q, 0));
	sq_reset(q);
	if (rc != SQ_ROW && rc != SQ_DONE)
		return sq_dberr(s, err);
	if (owner[0] && strcmp(owner, hb->owner ? hb->owner : "") && !hb->operator) {
		snprintf(err, STORE_ERR_MAX,
			 "copy server '%s' is registered by another token (%s): not re-pointed",
			 hb->name, owner);
		return STORE_FORBIDDEN;
	}
	if (found || hb->operator)
		return 0;
	q = sq_q(s, Q_COPY_SRV_OWNED);
	if (!q)
		return sq_dberr(s, err);
	sq_bind_text(q, 1, hb->owner);
	rc = sq_step(q);
	held = rc == SQ_ROW ? sq_col_int64(q, 0) : 0;
	sq_reset(q);
	if (rc != SQ_ROW)
		return sq_dberr(s, err);
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
	struct sq_store *s = SQ(st);
	struct sq_stmt *q;
	int i, ret;

	*plans = NULL;
	sq_lock(st);
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = server_owner_check(s, hb, err);
	if (ret)
		goto fail;
	q = sq_q(s, Q_COPY_SRV_UPSERT);
	if (!q)
		goto dbfail;
	sq_bind_text(q, 1, hb->name);
	sq_bind_text(q, 2, hb->addr);
	sq_bind_int64(q, 3, now);
	sq_bind_text(q, 4, hb->owner);
	ret = sq_run(s, q, err);
	for (i = 0; !ret && i < hb->nplans; i++)
		ret = server_counts(s, hb, &hb->plans[i], err);
	if (ret)
		goto fail;
	ret = sq_commit(s, err);
	if (ret)
		goto out;
	q = sq_q(s, Q_COPY_ACTIVE_ALL);
	if (q)
		sq_bind_int64(q, 1, now);
	ret = sq_rows(s, q, plan_file_row, plans, err);
	goto out;
dbfail:
	ret = sq_dberr(s, err);
fail:
	sq_rollback(s);
out:
	sq_unlock(st);
	return ret;
}

static json_t *server_row(struct sq_stmt *q)
{
	return json_pack("{s:s, s:s, s:I, s:I, s:s?}", "name", sq_col_text(q, 0),
			 "addr", sq_col_text(q, 1),
			 "first_seen", (json_int_t)sq_col_int64(q, 2),
			 "last_seen", (json_int_t)sq_col_int64(q, 3),
			 "owner", sq_col_null(q, 4) ? NULL :
				  sq_col_text(q, 4));
}

int sq_copy_server_list(struct store *st, int64_t now, json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	json_t *v;
	size_t i;
	int ret;

	sq_lock(st);
	ret = sq_rows(s, sq_q(s, Q_COPY_SRV_LIST), server_row, out, err);
	sq_unlock(st);
	if (!ret)
		json_array_foreach(*out, i, v)
			json_object_set_new(v, "live", json_boolean(
				json_integer_value(json_object_get(v, "last_seen")) >=
				now - STORE_COPY_LIVE_S));
	return ret;
}
