// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/schemes.c - schemes and their strategies in the store (both engines).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/query/sq.h"

/* ---- schemes ------------------------------------------------------------ */

static json_t *scheme_row(struct sq_stmt *q)
{
	return json_pack("{s:s, s:s, s:I, s:b, s:I}", "name", sq_col_text(q, 0),
			 "description", sq_col_text(q, 1),
			 "created", (json_int_t)sq_col_int64(q, 2),
			 "active", sq_col_int(q, 3),
			 "points", (json_int_t)sq_col_int64(q, 4));
}

int sq_scheme_list(struct store *st, const char *g, const char *a,
		   json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (ret)
		goto out;
	ret = sq_rows(s, sq_qk(s, Q_SCHEME_LIST, r.id), scheme_row, out, err);
out:
	sq_unlock(st);
	return ret;
}

int sq_scheme_get(struct store *st, const char *g, const char *a,
		  const char *name, json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	int64_t sid;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = sq_scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	ret = sq_one(s, sq_qk(s, Q_SCHEME_GET, sid), scheme_row, out, err);
out:
	sq_unlock(st);
	return ret;
}

int sq_scheme_create(struct store *st, const char *g, const char *a,
		     const char *name, const char *desc, const char *clone_from,
		     const char *comment, char *err)
{
	struct sq_store *s = SQ(st);
	int64_t from = 0, sid;
	struct sq_app_ref r;
	char detail[160];
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret && clone_from)
		ret = sq_scheme_id(s, r.id, clone_from, &from, err);
	if (ret)
		goto out;
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = sq_scheme_insert(s, r.id, name, desc, &sid, err);
	if (!ret && clone_from) {
		struct sq_stmt *q = sq_q(s, Q_STRAT_CLONE);

		if (!q) {
			ret = sq_dberr(s, err);
		} else {
			sq_bind_int64(q, 1, from);
			sq_bind_int64(q, 2, sid);
			ret = sq_run(s, q, err);
		}
	}
	if (clone_from)
		snprintf(detail, sizeof(detail), "%s from %s", name, clone_from);
	else
		snprintf(detail, sizeof(detail), "%s", name);
	ret = sq_commit_audited(s, ret, r.id, "scheme.create", detail, comment, err);
out:
	sq_unlock(st);
	return ret;
}

int sq_scheme_rename(struct store *st, const char *g, const char *a,
		     const char *name, const char *to, const char *comment,
		     char *err)
{
	struct sq_store *s = SQ(st);
	char detail[2 * SDS_NAME_MAX + 8];
	struct sq_app_ref r;
	struct sq_stmt *q;
	int64_t sid, other;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = sq_scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	if (!strcmp(name, to))
		goto out;
	ret = sq_scheme_id(s, r.id, to, &other, err);
	if (ret != STORE_NOTFOUND) {
		if (!ret) {
			sq_seterr(err, "scheme '%s' exists", to);
			ret = STORE_CONFLICT;
		}
		goto out;
	}
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	q = sq_q(s, Q_SCHEME_REN);
	if (!q) {
		ret = sq_dberr(s, err);
	} else {
		sq_bind_int64(q, 1, sid);
		sq_bind_text(q, 2, to);
		ret = sq_run(s, q, err);
	}
	snprintf(detail, sizeof(detail), "%s -> %s", name, to);
	ret = sq_commit_audited(s, ret, r.id, "scheme.rename", detail, comment, err);
out:
	sq_unlock(st);
	return ret;
}

int sq_scheme_update(struct store *st, const char *g, const char *a,
		     const char *name, const char *desc, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	struct sq_stmt *q;
	int64_t sid;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = sq_scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	q = sq_q(s, Q_SCHEME_UPD);
	if (!q) {
		ret = sq_dberr(s, err);
		goto out;
	}
	sq_bind_int64(q, 1, sid);
	sq_bind_text(q, 2, desc);
	ret = sq_run(s, q, err);
out:
	sq_unlock(st);
	return ret;
}

int sq_scheme_delete(struct store *st, const char *g, const char *a,
		     const char *name, const char *comment, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	int64_t sid;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = sq_scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	if (sid == r.active) {
		sq_seterr(err, "scheme '%s' is active: activate another first", name);
		ret = STORE_CONFLICT;
		goto out;
	}
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = sq_run(s, sq_qk(s, Q_STRAT_CLEAR, sid), err);
	if (!ret) {
		ret = sq_run(s, sq_qk(s, Q_SCHEME_DEL, sid), err);
	}
	ret = sq_commit_audited(s, ret, r.id, "scheme.delete", name, comment, err);
out:
	sq_unlock(st);
	return ret;
}

int sq_scheme_activate(struct store *st, const char *g, const char *a,
		       const char *name, const char *comment,
		       int64_t *version, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	struct sq_stmt *q;
	int64_t sid;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = sq_scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	if (sid == r.active) {
		/* Already in force: nothing for the hosts to fetch. */
		if (version)
			*version = r.version;
		goto out;
	}
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	q = sq_q(s, Q_APP_SET_ACTIVE);
	if (!q) {
		ret = sq_dberr(s, err);
	} else {
		sq_bind_int64(q, 1, r.id);
		sq_bind_int64(q, 2, sid);
		sq_bind_int64(q, 3, 1);
		ret = sq_run(s, q, err);
	}
	ret = sq_commit_audited(s, ret, r.id, "scheme.activate", name, comment, err);
	if (!ret && version)
		*version = r.version + 1;
out:
	sq_unlock(st);
	return ret;
}

/* ---- strategies --------------------------------------------------------- */

/*
 * A scheme's host pressure rules (docs/PRESSURE.md) are the row of point
 * "", which no point name can be: @text (NULL: none, freed here) read
 * back against the points already in @out.
 */
static int rules_read(char *text, struct sds_strategies *out, char *err)
{
	char perr[256];
	json_t *arr;
	int ret = 0;

	if (!text)
		return 0;
	arr = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	if (!arr || pressure_set_from_json(arr, out, &out->pressure, perr, sizeof(perr))) {
		sq_seterr(err, "database: stored pressure rules unreadable");
		ret = STORE_ERROR;
	}
	json_decref(arr);
	free(text);
	return ret;
}

/*
 * Put @o (taken) as the row of point @point of scheme @sid: a point's
 * strategy, or the scheme's host pressure rules as point "".
 */
static int row_write(struct sq_store *s, int64_t sid, const char *point,
		     json_t *o, char *err)
{
	struct sq_stmt *q = sq_q(s, Q_STRAT_PUT);
	char *body;

	if (!q) {
		json_decref(o);
		return sq_dberr(s, err);
	}
	body = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	if (!body) {
		sq_seterr(err, "out of memory");
		return STORE_ERROR;
	}
	sq_bind_int64(q, 1, sid);
	sq_bind_text(q, 2, point);
	sq_bind_text_free(q, 3, body);
	return sq_run(s, q, err);
}

static int rules_write(struct sq_store *s, int64_t sid,
		       const struct sds_pressure_set *p, char *err)
{
	if (!p->n)
		return 0;
	return row_write(s, sid, "", pressure_set_to_json(p), err);
}

/* Read scheme @sid's strategies into @out (version left alone). */
int sq_strategies_read(struct sq_store *s, int64_t sid,
		    struct sds_strategies *out, char *err)
{
	struct sq_stmt *q = sq_q(s, Q_STRAT_LIST);
	char *rules = NULL;
	int rc;

	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 1, sid);
	out->n = 0;
	out->pressure.n = 0;
	out->nkey_ov = 0;
	while ((rc = sq_step(q)) == SQ_ROW) {
		const char *point = sq_col_text(q, 0);
		const char *body = sq_col_text(q, 1);
		struct sds_strategies *one_pt;
		struct sds_strategy *st;
		char *doc = NULL, perr[256];
		int n, bad;

		/* The scheme's host pressure rules: the row no point can name. */
		if (!point[0]) {
			free(rules);
			rules = strdup(body);
			if (!rules) {
				sq_reset(q);
				sq_seterr(err, "out of memory");
				return STORE_ERROR;
			}
			continue;
		}
		if (out->n >= SDS_MAX_STRATEGIES)
			break;
		/*
		 * Stored bodies were validated on the way in; parse them back
		 * with the same codec so both sides agree on the meaning.  A
		 * body with its key_overrides can be ~100 KiB: sized to fit.
		 */
		n = asprintf(&doc, "{\"version\":0,\"points\":{\"%s\":%s}}", point, body);
		one_pt = n < 0 ? NULL : malloc(sizeof(*one_pt));
		bad = !one_pt || strategy_set_parse(doc, (size_t)n, one_pt, perr, sizeof(perr)) ||
		      one_pt->n != 1 ||
		      out->nkey_ov + one_pt->nkey_ov > SDS_KEY_OVERRIDES_ALL;
		if (n >= 0)
			free(doc);
		if (bad) {
			free(one_pt);
			free(rules);
			sq_reset(q);
			sq_seterr(err, "database: stored strategy of point '%s' unreadable", point);
			return STORE_ERROR;
		}
		/* Its key_overrides move to the end of the document's. */
		st = &out->s[out->n++];
		*st = one_pt->s[0];
		st->key_ov_first = out->nkey_ov;
		memcpy(&out->key_ov[out->nkey_ov], one_pt->key_ov,
		       (size_t)one_pt->nkey_ov * sizeof(*one_pt->key_ov));
		out->nkey_ov += one_pt->nkey_ov;
		free(one_pt);
	}
	sq_reset(q);
	if (rc != SQ_DONE) {
		free(rules);
		return sq_dberr(s, err);
	}
	return rules_read(rules, out, err);
}

int sq_strategies_get(struct store *st, const char *g, const char *a,
		      const char *name, struct sds_strategies *out,
		      char scheme[SDS_NAME_MAX + 1], char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	int64_t sid;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (ret)
		goto out;
	if (name) {
		ret = sq_scheme_id(s, r.id, name, &sid, err);
		if (ret)
			goto out;
	} else {
		sid = r.active;
	}
	ret = sq_strategies_read(s, sid, out, err);
	out->version = r.version;
	if (!ret && scheme) {
		struct sq_stmt *q = sq_q(s, Q_SCHEME_NAME);

		scheme[0] = '\0';
		if (q) {
			sq_bind_int64(q, 1, sid);
			if (sq_step(q) == SQ_ROW)
				snprintf(scheme, SDS_NAME_MAX + 1, "%s", sq_col_text(q, 0));
			sq_reset(q);
		}
	}
out:
	sq_unlock(st);
	return ret;
}

/* Point @in of document @doc, with its key_overrides (which live in @doc). */
static int strategy_write(struct sq_store *s, int64_t sid,
			  const struct sds_strategies *doc,
			  const struct sds_strategy *in, char *err)
{
	return row_write(s, sid, in->point, strategy_to_json_in(doc, in), err);
}

/*
 * Common frame of the strategy writes: resolve, begin, @fn, bump if the
 * scheme is active, audit, commit.
 */
struct strat_op {
	const struct sds_strategies *all;	/* replace every strategy with these, or */
	const struct sds_strategies *one;	/* set its one point's (s[0]), or */
	const char *del;			/* delete this point's */
};

static int strat_apply(struct sq_store *s, int64_t sid, const struct strat_op *op,
		       char *err)
{
	struct sq_stmt *q;
	int i, ret = 0;

	if (op->all) {
		ret = sq_run(s, sq_qk(s, Q_STRAT_CLEAR, sid), err);
		for (i = 0; i < op->all->n && !ret; i++)
			ret = strategy_write(s, sid, op->all, &op->all->s[i], err);
		if (!ret)
			ret = rules_write(s, sid, &op->all->pressure, err);
		return ret;
	}
	if (op->one)
		return strategy_write(s, sid, op->one, &op->one->s[0], err);
	q = sq_q(s, Q_STRAT_DEL);
	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 1, sid);
	sq_bind_text(q, 2, op->del);
	ret = sq_run(s, q, err);
	if (!ret && sq_changes(s) == 0) {
		sq_seterr(err, "point '%s' has no strategy in this scheme", op->del);
		return STORE_NOTFOUND;
	}
	return ret;
}

static int strat_frame(struct store *st, const char *g, const char *a,
		       const char *name, const struct strat_op *op,
		       const char *action, const char *detail,
		       const char *comment, int64_t *version, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	int64_t sid, v;
	char full[256];
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (!ret)
		ret = sq_scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	v = r.version;
	ret = sq_begin(s, err);
	if (ret)
		goto out;
	ret = strat_apply(s, sid, op, err);
	if (!ret && sid == r.active)
		ret = sq_bump(s, r.id, &v, err);
	snprintf(full, sizeof(full), "%s: %s", name, detail);
	ret = sq_commit_audited(s, ret, r.id, action, full, comment, err);
	if (!ret && version)
		*version = v;
out:
	sq_unlock(st);
	return ret;
}

int sq_strategies_put(struct store *st, const char *g, const char *a,
		      const char *name, const struct sds_strategies *in,
		      const char *comment, int64_t *version, char *err)
{
	struct strat_op op = { .all = in };
	char detail[64];

	snprintf(detail, sizeof(detail), "%d points", in->n);
	return strat_frame(st, g, a, name, &op, "strategies.replace", detail,
			   comment, version, err);
}

int sq_strategy_put(struct store *st, const char *g, const char *a,
		    const char *name, const struct sds_strategies *in,
		    const char *comment, int64_t *version, char *err)
{
	struct strat_op op = { .one = in };
	char detail[200];
	json_t *o = strategy_to_json_in(in, &in->s[0]);
	/*
	 * The audit's detail is cut at 200 bytes (a long override list too):
	 * in ASCII (a key's text escaped), so the cut never splits a UTF-8
	 * character, which PostgreSQL would refuse and SQLite keep unreadable.
	 */
	char *body = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII) : NULL;
	int ret;

	snprintf(detail, sizeof(detail), "%s %s", in->s[0].point, body ? body : "");
	free(body);
	json_decref(o);
	ret = strat_frame(st, g, a, name, &op, "strategy.put", detail, comment,
			  version, err);
	return ret;
}

int sq_strategy_delete(struct store *st, const char *g, const char *a,
		       const char *name, const char *point,
		       const char *comment, int64_t *version, char *err)
{
	struct strat_op op = { .del = point };

	return strat_frame(st, g, a, name, &op, "strategy.delete", point, comment,
			   version, err);
}

