// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/keys.c - hot keys in the store (both engines, docs/KEYS.md):
 * a keyed point's heaviest keys of a period, as the host's heartbeat sent
 * them ("points.P.keys", already validated by the codec), one row per
 * (app, point, period, host) holding that array as JSON text; and the
 * rows of one point over a range, which api/keys.c merges over hosts.
 * Kept and pruned with the statistics (PostgreSQL: by day partition).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/query/sq.h"

char *sq_point_keys_text(const struct sds_heartbeat *hb, int point)
{
	json_t *o = json_object();
	char *t = NULL;

	if (o && !heartbeat_point_keys_to_json(hb, point, o) &&
	    json_object_get(o, "keys"))
		t = json_dumps(json_object_get(o, "keys"), JSON_COMPACT);
	json_decref(o);
	return t;
}

char *sq_keys_text(const struct sds_heartbeat *hb, bool *oom)
{
	json_t *o;
	char *t;
	int i;

	*oom = false;
	if (!hb->nkeys)
		return NULL;
	o = json_object();
	for (i = 0; o && i < hb->n; i++) {
		json_t *po = json_object();

		if (!po || heartbeat_point_keys_to_json(hb, i, po)) {
			json_decref(po);
			json_decref(o);
			o = NULL;
			break;
		}
		if (json_object_get(po, "keys"))
			json_object_set(o, hb->points[i].name, json_object_get(po, "keys"));
		json_decref(po);
	}
	t = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	*oom = !t;
	return t;
}

int sq_keys_insert(struct sq_store *s, int64_t app, const struct sds_heartbeat *hb,
		   char *err)
{
	struct sq_stmt *q;
	int i, ret;

	for (i = 0; i < hb->n && hb->nkeys; i++) {
		char *t;
		int j, has = 0;

		for (j = 0; j < hb->nkeys; j++)
			has |= hb->keys[j].point == i;
		if (!has)
			continue;
		t = sq_point_keys_text(hb, i);
		if (!t) {
			sq_seterr(err, "out of memory");
			return STORE_ERROR;
		}
		q = sq_q(s, Q_KEYS_INS);
		if (!q) {
			free(t);
			return sq_dberr(s, err);
		}
		sq_bind_int64(q, 1, app);
		sq_bind_int64(q, 2, hb->period_start);
		sq_bind_text(q, 3, hb->host);
		sq_bind_text(q, 4, hb->points[i].name);
		sq_bind_text_free(q, 5, t);
		ret = sq_run(s, q, err);
		if (ret)
			return ret;
	}
	return 0;
}

/* A row: {"host", "period_start", "keys": [...]}; keys unreadable: []. */
static json_t *keys_row(struct sq_stmt *q)
{
	const char *t = sq_col_text(q, 2);
	json_t *k = t ? json_loads(t, 0, NULL) : NULL;

	if (!json_is_array(k)) {
		json_decref(k);
		k = json_array();
	}
	return json_pack("{s:s, s:I, s:o}", "host", sq_col_text(q, 0),
			 "period_start", (json_int_t)sq_col_int64(q, 1), "keys", k);
}

int sq_point_keys(struct store *st, const char *g, const char *a, const char *point,
		  int64_t from, int64_t to, json_t **out, char *err)
{
	struct sq_store *s = SQ(st);
	struct sq_app_ref r;
	struct sq_stmt *q;
	int ret;

	sq_lock(st);
	ret = sq_app_lookup(s, g, a, &r, err);
	if (ret)
		goto out;
	q = sq_q(s, Q_KEYS_SCAN);
	if (!q) {
		ret = sq_dberr(s, err);
		goto out;
	}
	sq_bind_int64(q, 1, r.id);
	sq_bind_text(q, 2, point);
	sq_bind_int64(q, 3, from);
	sq_bind_int64(q, 4, to);
	ret = sq_rows(s, q, keys_row, out, err);
out:
	sq_unlock(st);
	return ret;
}
