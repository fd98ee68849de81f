// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/deps.c - each point's dependencies in the store (both
 * engines, docs/DEPS.md): a host's heartbeat carries its points' peers
 * counted since its loader attached ("points.P.deps", validated by the
 * codec), so the store keeps one row per (app, host): the latest, as
 * {"POINT": [edges...]} JSON text re-encoded by the codec, never the
 * bytes the host sent.  A row is replaced only by a heartbeat of the same
 * period or a later one: a backlog sent late never overwrites newer
 * counts.  Bounded per host by the heartbeat's own bounds
 * (SDS_HB_MAX_DEPS); forgotten with the host (retention) or the app.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/query/sq.h"

/* Every point's "deps" of @hb as {"POINT": [...]}; NULL: none (*@oom: no memory). */
static char *deps_text(const struct sds_heartbeat *hb, bool *oom)
{
	json_t *o = json_object();
	char *t;
	int i;

	*oom = false;
	for (i = 0; o && i < hb->n; i++) {
		json_t *po = json_object();

		if (!po || heartbeat_point_deps_to_json(hb, i, po)) {
			json_decref(po);
			json_decref(o);
			o = NULL;
			break;
		}
		if (json_object_get(po, "deps"))
			json_object_set(o, hb->points[i].name, json_object_get(po, "deps"));
		json_decref(po);
	}
	t = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	*oom = !t;
	return t;
}

int sq_deps_store(struct sq_store *s, int64_t app, const struct sds_heartbeat *hb,
		  int64_t now, char *err)
{
	struct sq_stmt *q;
	bool oom;
	char *t;

	if (!hb->ndeps)
		return 0;
	t = deps_text(hb, &oom);
	if (!t) {
		sq_seterr(err, "out of memory");
		return STORE_ERROR;
	}
	q = sq_q(s, Q_DEPS_UPSERT);
	if (!q) {
		free(t);
		return sq_dberr(s, err);
	}
	sq_bind_int64(q, 1, app);
	sq_bind_text(q, 2, hb->host);
	sq_bind_int64(q, 3, hb->period_start);
	sq_bind_int64(q, 4, now);
	sq_bind_text_free(q, 5, t);
	return sq_run(s, q, err);
}

/* A row: {"host", "period_start", "updated", "deps": {"POINT": [...]}}. */
static json_t *deps_row(struct sq_stmt *q)
{
	const char *t = sq_col_text(q, 3);
	json_t *d = t ? json_loads(t, 0, NULL) : NULL;

	if (!json_is_object(d)) {
		json_decref(d);
		d = json_object();
	}
	return json_pack("{s:s, s:I, s:I, s:o}", "host", sq_col_text(q, 0),
			 "period_start", (json_int_t)sq_col_int64(q, 1),
			 "updated", (json_int_t)sq_col_int64(q, 2), "deps", d);
}

int sq_app_deps(struct store *st, const char *g, const char *a, json_t **out,
		char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	struct sq_stmt *q;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (ret)
		goto out;
	q = sq_q(s, Q_DEPS_SCAN);
	if (!q) {
		ret = sq_dberr(s, err);
		goto out;
	}
	sq_bind_int64(q, 1, r.id);
	ret = sq_rows(s, q, deps_row, out, err);
out:
	sq_unlock(st);
	return ret;
}
