// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/gamedays.c - game days and their runs in the store (both
 * engines; docs/GAMEDAY.md).  A game day is its definition as the API
 * checked it (JSON text the store does not read), a schedule and how many
 * runs it keeps; a run is the scheduler's state of it (JSON text too) and,
 * once ended, its result.  What is the store's: one open run per app (a
 * partial unique index, so two admins of one PostgreSQL cannot both open
 * one), a due time opening one run (a conditional UPDATE of next_run), a
 * run advanced by one admin at a time (a lease), the last K runs kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/query/sq.h"

/* ---- rows ------------------------------------------------------------------ */

static json_t *json_text(struct sq_stmt *q, int i)
{
	json_t *v = sq_col_null(q, i) ? NULL : json_loads(sq_col_text(q, i), 0, NULL);

	return v ? v : json_null();
}

static json_t *int_or_null(struct sq_stmt *q, int i)
{
	return sq_col_null(q, i) ? json_null() : json_integer(sq_col_int64(q, i));
}

static json_t *text_or_null(struct sq_stmt *q, int i)
{
	return sq_col_null(q, i) ? json_null() : json_string(sq_col_text(q, i));
}

/* GD_COLS (store/query/sql.c): the definition's fields beside the store's. */
static json_t *gameday_row(struct sq_stmt *q)
{
	json_t *body = json_text(q, 2), *o = json_object();

	json_object_set_new(o, "id", json_integer(sq_col_int64(q, 0)));
	json_object_set_new(o, "name", json_string(sq_col_text(q, 1)));
	if (json_is_object(body))
		json_object_update(o, body);
	json_decref(body);
	json_object_set_new(o, "keep", json_integer(sq_col_int64(q, 5)));
	json_object_set_new(o, "next_run", int_or_null(q, 4));
	json_object_set_new(o, "created", json_integer(sq_col_int64(q, 6)));
	json_object_set_new(o, "created_by", json_string(sq_col_text(q, 7)));
	json_object_set_new(o, "running", int_or_null(q, 8));
	return o;
}

static json_t *run_row(struct sq_stmt *q)
{
	json_t *o = json_object();

	json_object_set_new(o, "run", json_integer(sq_col_int64(q, 0)));
	json_object_set_new(o, "started_by", json_string(sq_col_text(q, 1)));
	json_object_set_new(o, "started_at", json_integer(sq_col_int64(q, 2)));
	json_object_set_new(o, "ended_at", int_or_null(q, 3));
	json_object_set_new(o, "result", text_or_null(q, 4));
	json_object_set_new(o, "abort_by", text_or_null(q, 6));
	json_object_set_new(o, "state", json_text(q, 5));
	return o;
}

/* Game day @name of app @app: its id into *@id and its row (if @out). */
static int gameday_find(struct sq_store *s, int64_t app, const char *name, int64_t *id,
			json_t **out, char *err)
{
	struct sq_stmt *q = sq_q(s, Q_GD_GET);
	int rc;

	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 1, app);
	sq_bind_text(q, 2, name);
	rc = sq_step(q);
	if (rc != SQ_ROW) {
		sq_reset(q);
		if (rc != SQ_DONE)
			return sq_dberr(s, err);
		sq_seterr(err, "game day '%s' not found", name);
		return STORE_NOTFOUND;
	}
	*id = sq_col_int64(q, 0);
	if (out)
		*out = gameday_row(q);
	sq_reset(q);
	return 0;
}

/* The app's open run: its id into *@run (0: none) and its game day's name. */
static int open_run(struct sq_store *s, int64_t app, int64_t *run, char name[SDS_NAME_MAX + 1],
		    char *err)
{
	struct sq_stmt *q = sq_qk(s, Q_GDR_OPEN_APP, app);
	int rc;

	*run = 0;
	if (!q)
		return sq_dberr(s, err);
	rc = sq_step(q);
	if (rc == SQ_ROW) {
		*run = sq_col_int64(q, 0);
		snprintf(name, SDS_NAME_MAX + 1, "%s", sq_col_text(q, 1));
	}
	sq_reset(q);
	return rc == SQ_ROW || rc == SQ_DONE ? 0 : sq_dberr(s, err);
}

/* ---- the API's ------------------------------------------------------------- */

int sq_gameday_create(struct store *st, const char *g, const char *a,
		      const struct store_gameday *gd, int64_t now, int64_t *id, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	struct sq_stmt *q;
	char detail[200];
	int ret;

	sq_lock(st);
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = sq_app_lookup(s, g, a, &r, err);
	if (ret)
		goto fail;
	q = sq_q(s, Q_GD_INS);
	if (!q) {
		ret = sq_dberr(s, err);
		goto fail;
	}
	sq_bind_int64(q, 1, r.id);
	sq_bind_text(q, 2, gd->name);
	sq_bind_text(q, 3, gd->body);
	sq_bind_int64(q, 4, gd->every_s);
	if (gd->next_run)
		sq_bind_int64(q, 5, gd->next_run);
	else
		sq_bind_null(q, 5);
	sq_bind_int64(q, 6, gd->keep);
	sq_bind_int64(q, 7, now);
	sq_bind_text(q, 8, gd->who);
	ret = sq_run(s, q, err);
	if (ret == STORE_EXISTS)
		sq_seterr(err, "game day '%s' exists already", gd->name);
	if (ret)
		goto fail;
	*id = sq_last_id(s);
	if (gd->every_s)
		snprintf(detail, sizeof(detail), "game day %s: every %lld s from %lld", gd->name,
			 (long long)gd->every_s, (long long)gd->next_run);
	else
		snprintf(detail, sizeof(detail), "game day %s", gd->name);
	ret = sq_commit_audited(s, 0, r.id, "gameday.create", detail, gd->who, err);
	goto out;
fail:
	sq_rollback(s);
out:
	sq_unlock(st);
	return ret;
}

int sq_gameday_list(struct store *st, const char *g, const char *a, json_t **out,
		    char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = sq_rows(s, sq_qk(s, Q_GD_LIST, r.id), gameday_row, out, err);
	sq_unlock(st);
	return ret;
}

int sq_gameday_get(struct store *st, const char *g, const char *a, const char *name,
		   json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	json_t *o = NULL, *runs;
	struct sq_stmt *q;
	int64_t id;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = gameday_find(s, r.id, name, &id, &o, err);
	if (ret)
		goto out;
	q = sq_qk(s, Q_GDR_LIST, id);
	if (q)
		/* The kept ended runs and the open one. */
		sq_bind_int64(q, 2, json_integer_value(json_object_get(o, "keep")) + 1);
	ret = sq_rows(s, q, run_row, &runs, err);
	if (ret) {
		json_decref(o);
		goto out;
	}
	json_object_set_new(o, "runs", runs);
	*out = o;
out:
	sq_unlock(st);
	return ret;
}

int sq_gameday_delete(struct store *st, const char *g, const char *a, const char *name,
		      const char *who, char *err)
{
	struct sq_store *s = SQ(st);
	char detail[100], running[SDS_NAME_MAX + 1];
	struct sq_app_ref r;
	int64_t id, run;
	int ret;

	sq_lock(st);
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = gameday_find(s, r.id, name, &id, NULL, err);
	if (!ret)
		ret = open_run(s, r.id, &run, running, err);
	if (ret)
		goto fail;
	if (run && !strcmp(running, name)) {
		sq_seterr(err, "game day '%s' is running (run %lld): abort it first", name,
			  (long long)run);
		ret = STORE_CONFLICT;
		goto fail;
	}
	snprintf(detail, sizeof(detail), "game day %s", name);
	ret = sq_commit_audited(s, sq_run(s, sq_qk(s, Q_GD_DEL, id), err), r.id,
				"gameday.delete", detail, who, err);
	goto out;
fail:
	sq_rollback(s);
out:
	sq_unlock(st);
	return ret;
}

/* A run of game day @gd on app @app (lock and transaction held); *@run its id. */
static int run_insert(struct sq_store *s, int64_t gd, int64_t app, const char *who,
		      const char *state, int64_t now, const char *skipped, int64_t *run,
		      char *err)
{
	struct sq_stmt *q = sq_q(s, Q_GDR_INS);
	int ret;

	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 1, gd);
	sq_bind_int64(q, 2, app);
	sq_bind_text(q, 3, who);
	sq_bind_int64(q, 4, now);
	sq_bind_text(q, 5, state);
	if (skipped) {
		sq_bind_int64(q, 6, now);
		sq_bind_text(q, 7, skipped);
	} else {
		sq_bind_null(q, 6);
		sq_bind_null(q, 7);
	}
	ret = sq_run(s, q, err);
	if (!ret)
		*run = sq_last_id(s);
	return ret;
}

/* Only the last @keep ended runs of game day @gd (lock held). */
static int runs_prune(struct sq_store *s, int64_t gd, int64_t keep, char *err)
{
	struct sq_stmt *q = sq_qk(s, Q_GDR_PRUNE, gd);

	if (q)
		sq_bind_int64(q, 2, keep);
	return sq_run(s, q, err);
}

int sq_gameday_run(struct store *st, const char *g, const char *a, const char *name,
		   const char *who, const char *state, int64_t now, int64_t *run, char *err)
{
	struct sq_store *s = SQ(st);
	char detail[120], running[SDS_NAME_MAX + 1];
	struct sq_app_ref r;
	int64_t id, open;
	int ret;

	sq_lock(st);
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = gameday_find(s, r.id, name, &id, NULL, err);
	if (!ret)
		ret = open_run(s, r.id, &open, running, err);
	if (ret)
		goto fail;
	if (!open)
		ret = run_insert(s, id, r.id, who, state, now, NULL, run, err);
	/*
	 * Another admin's, between the look and the insert: the index's word
	 * (PostgreSQL's transaction is over after it: nothing more to read).
	 */
	if (ret == STORE_EXISTS) {
		sq_seterr(err, "a game day is running on %s/%s: one at a time per app", g, a);
		ret = STORE_CONFLICT;
	}
	if (!ret && open) {
		sq_seterr(err, "game day '%s' is running on %s/%s (run %lld): one at a time per app",
			  running, g, a, (long long)open);
		ret = STORE_CONFLICT;
	}
	if (ret)
		goto fail;
	snprintf(detail, sizeof(detail), "game day %s: run %lld", name, (long long)*run);
	ret = sq_commit_audited(s, 0, r.id, "gameday.run", detail, who, err);
	goto out;
fail:
	sq_rollback(s);
out:
	sq_unlock(st);
	return ret;
}

int sq_gameday_abort(struct store *st, const char *g, const char *a, const char *name,
		     const char *who, char *err)
{
	struct sq_store *s = SQ(st);
	char detail[120], running[SDS_NAME_MAX + 1];
	struct sq_app_ref r;
	struct sq_stmt *q;
	int64_t id, run;
	int ret;

	sq_lock(st);
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = gameday_find(s, r.id, name, &id, NULL, err);
	if (!ret)
		ret = open_run(s, r.id, &run, running, err);
	if (ret)
		goto fail;
	if (!run || strcmp(running, name)) {
		sq_seterr(err, "game day '%s' is not running", name);
		ret = STORE_CONFLICT;
		goto fail;
	}
	q = sq_qk(s, Q_GDR_ABORT, run);
	if (q)
		sq_bind_text(q, 2, who);
	ret = sq_run(s, q, err);
	if (!ret && !sq_changes(s)) {
		sq_seterr(err, "game day '%s' (run %lld) is aborting already", name,
			  (long long)run);
		ret = STORE_CONFLICT;
	}
	if (ret)
		goto fail;
	snprintf(detail, sizeof(detail), "game day %s: run %lld", name, (long long)run);
	ret = sq_commit_audited(s, 0, r.id, "gameday.abort", detail, who, err);
	goto out;
fail:
	sq_rollback(s);
out:
	sq_unlock(st);
	return ret;
}

/* ---- the scheduler's ------------------------------------------------------- */

#define TICK_DUE_MAX	64	/* due game days taken per tick; the rest the next */

struct due {
	int64_t id, app, every, next;
	char name[SDS_NAME_MAX + 1];
};

/*
 * Due game day @d opens a run (lock held): its next time moved past @now
 * first, by this admin only (the UPDATE's condition), so each due time
 * opens one run whichever admins tick.  A run that would overlap another
 * of its app is recorded as skipped, ended at once, with why.
 */
static int fire(struct sq_store *s, const struct due *d, int64_t now, const char *state,
		char *err)
{
	char why[200], running[SDS_NAME_MAX + 1], detail[400];
	int64_t next = d->next, open, run;
	struct sq_stmt *q;
	int ret;

	/* The missed times are not made up: the next after now. */
	if (d->every > 0)
		next += ((now - d->next) / d->every + 1) * d->every;
	ret = sq_begin(s, err);
	if (ret)
		return ret;
	q = sq_qk(s, Q_GD_NEXT, d->id);
	if (!q) {
		ret = sq_dberr(s, err);
		goto fail;
	}
	sq_bind_int64(q, 2, d->next);
	if (d->every > 0)
		sq_bind_int64(q, 3, next);
	else
		sq_bind_null(q, 3);
	ret = sq_run(s, q, err);
	if (ret)
		goto fail;
	if (!sq_changes(s)) {	/* another admin fired it */
		sq_rollback(s);
		return 0;
	}
	ret = open_run(s, d->app, &open, running, err);
	if (ret)
		goto fail;
	if (!open)
		ret = run_insert(s, d->id, d->app, "schedule", state, now, NULL, &run, err);
	/* Another admin's run opened between: the next tick skips this one. */
	if (ret == STORE_EXISTS) {
		sq_rollback(s);
		return 0;
	}
	if (ret)
		goto fail;
	if (open) {
		snprintf(why, sizeof(why), "skipped: game day '%s' was running on the app (run %lld)",
			 running, (long long)open);
		ret = run_insert(s, d->id, d->app, "schedule", state, now, why, &run, err);
		if (!ret)
			ret = runs_prune(s, d->id, STORE_GAMEDAY_MAX_RUNS, err);
		if (ret)
			goto fail;
	}
	snprintf(detail, sizeof(detail), "game day %s: run %lld%s%s", d->name, (long long)run,
		 open ? ", " : "", open ? why : "");
	return sq_commit_audited(s, 0, d->app, open ? "gameday.skip" : "gameday.run", detail,
				 "schedule", err);
fail:
	sq_rollback(s);
	return ret;
}

static int tick_due(struct sq_store *s, int64_t now, const char *state, char *err)
{
	struct due *due = calloc(TICK_DUE_MAX, sizeof(*due));
	struct sq_stmt *q = sq_qk(s, Q_GD_DUE, now);
	int i, n = 0, rc, ret = 0;

	if (!due)
		return STORE_ERROR;
	if (!q) {
		free(due);
		return sq_dberr(s, err);
	}
	while (n < TICK_DUE_MAX && (rc = sq_step(q)) == SQ_ROW) {
		due[n].id = sq_col_int64(q, 0);
		due[n].app = sq_col_int64(q, 1);
		due[n].every = sq_col_int64(q, 2);
		due[n].next = sq_col_int64(q, 3);
		snprintf(due[n].name, sizeof(due[n].name), "%s", sq_col_text(q, 4));
		n++;
	}
	if (n < TICK_DUE_MAX && rc != SQ_DONE)
		ret = sq_dberr(s, err);
	sq_reset(q);
	for (i = 0; !ret && i < n; i++)
		ret = fire(s, &due[i], now, state, err);
	free(due);
	return ret;
}

static json_t *claim_row(struct sq_stmt *q)
{
	json_t *o = json_object();

	json_object_set_new(o, "run", json_integer(sq_col_int64(q, 0)));
	json_object_set_new(o, "group", json_string(sq_col_text(q, 1)));
	json_object_set_new(o, "app", json_string(sq_col_text(q, 2)));
	json_object_set_new(o, "gameday", json_string(sq_col_text(q, 3)));
	json_object_set_new(o, "body", json_text(q, 4));
	json_object_set_new(o, "state", json_text(q, 5));
	json_object_set_new(o, "started_at", json_integer(sq_col_int64(q, 6)));
	json_object_set_new(o, "abort_by", text_or_null(q, 7));
	json_object_set_new(o, "started_by", json_string(sq_col_text(q, 8)));
	return o;
}

int sq_gameday_tick(struct store *st, const char *runner, int64_t now, int64_t lease_s,
		    const char *state, json_t **claimed, char *err)
{
	struct sq_store *s = SQ(st);
	json_t *open = NULL, *mine, *v;
	struct sq_stmt *q;
	size_t i;
	int ret;

	sq_lock(st);
	ret = tick_due(s, now, state, err);
	if (ret)
		goto out;
	q = sq_q(s, Q_GDR_OPEN);
	if (q) {
		sq_bind_text(q, 1, runner);
		sq_bind_int64(q, 2, now);
	}
	ret = sq_rows(s, q, claim_row, &open, err);
	if (ret)
		goto out;
	mine = json_array();
	json_array_foreach(open, i, v) {
		q = sq_q(s, Q_GDR_CLAIM);
		if (!q) {
			ret = sq_dberr(s, err);
			json_decref(mine);
			goto out;
		}
		sq_bind_text(q, 1, runner);
		sq_bind_int64(q, 2, now);
		sq_bind_int64(q, 3, now + lease_s);
		sq_bind_int64(q, 4, json_integer_value(json_object_get(v, "run")));
		ret = sq_run(s, q, err);
		if (ret) {
			json_decref(mine);
			goto out;
		}
		/* Another admin's between the read and the claim: not ours. */
		if (sq_changes(s))
			json_array_append(mine, v);
	}
	*claimed = mine;
out:
	json_decref(open);
	sq_unlock(st);
	return ret;
}

int sq_gameday_save(struct store *st, int64_t run, const char *runner, const char *state,
		    int64_t ended_at, const char *result, char *err)
{
	struct sq_store *s = SQ(st);
	char detail[300], name[SDS_NAME_MAX + 1];
	int64_t gd = 0, keep = 1, app = 0;
	struct sq_stmt *q;
	int ret, rc;

	sq_lock(st);
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	q = sq_q(s, Q_GDR_SAVE);
	if (!q) {
		ret = sq_dberr(s, err);
		goto fail;
	}
	sq_bind_int64(q, 1, run);
	sq_bind_text(q, 2, runner);
	sq_bind_text(q, 3, state);
	if (ended_at) {
		sq_bind_int64(q, 4, ended_at);
		sq_bind_text(q, 5, result);
	} else {
		sq_bind_null(q, 4);
		sq_bind_null(q, 5);
	}
	ret = sq_run(s, q, err);
	if (ret)
		goto fail;
	if (!sq_changes(s)) {
		sq_seterr(err, "run %lld: no longer held by %s", (long long)run, runner);
		ret = STORE_CONFLICT;
		goto fail;
	}
	if (!ended_at) {
		ret = sq_commit(s, err);
		goto out;
	}
	q = sq_qk(s, Q_GDR_KEEP, run);
	if (!q) {
		ret = sq_dberr(s, err);
		goto fail;
	}
	rc = sq_step(q);
	if (rc == SQ_ROW) {
		gd = sq_col_int64(q, 0);
		keep = sq_col_int64(q, 1);
		app = sq_col_int64(q, 2);
		snprintf(name, sizeof(name), "%s", sq_col_text(q, 3));
	}
	sq_reset(q);
	if (rc != SQ_ROW) {
		ret = sq_dberr(s, err);
		goto fail;
	}
	ret = runs_prune(s, gd, keep, err);
	if (ret)
		goto fail;
	snprintf(detail, sizeof(detail), "game day %s: run %lld %.200s", name, (long long)run,
		 result ? result : "");
	ret = sq_commit_audited(s, 0, app, "gameday.end", detail, runner, err);
	goto out;
fail:
	sq_rollback(s);
out:
	sq_unlock(st);
	return ret;
}
