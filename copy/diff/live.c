// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * live.c - a live diff plan's pending pairs and their judgment (live.h).
 * Everything here runs on the server's loop: no lock.  What it compares
 * comes from a loader (the production response) and a shadow (its
 * answer): both are bounded by the codec and the pool before they get
 * here, and diff_compare() trusts neither.
 */
#include <stdlib.h>
#include <string.h>

#include "live.h"
#include "serve.h"

#define LIVE_BUCKETS	(2 * LIVE_PENDING_MAX)

enum { ANS_WAIT, ANS_GOT, ANS_FAILED };

struct live_pend {
	uint64_t id;			/* 0: free */
	uint64_t serial, pair;		/* the sender and its pair id */
	uint64_t born_ms;
	char plan[SDS_NAME_MAX + 1], point[SDS_NAME_MAX + 1];
	uint8_t *resp;			/* the production response, once in */
	uint32_t resp_len;
	bool has_resp, resp_cut;	/* in; cut at copy_max */
	int ans;			/* ANS_* */
	int fail;			/* ANS_FAILED: TALLY_ERROR or TALLY_TIMEOUT */
	uint8_t *abuf;			/* ANS_GOT: the answer */
	size_t alen;
	int32_t next;			/* its bucket's chain, -1: end */
};

struct live_table {
	struct live_pend v[LIVE_PENDING_MAX];
	int32_t bucket[LIVE_BUCKETS];
	uint64_t next_id;		/* ids from 1; slot = id % LIVE_PENDING_MAX */
	uint32_t used;			/* entries in use */
};

int live_init(struct copy_server *s)
{
	struct live_table *t = calloc(1, sizeof(*t));
	int i;

	if (!t)
		return -1;
	for (i = 0; i < LIVE_BUCKETS; i++)
		t->bucket[i] = -1;
	t->next_id = 1;
	s->live = t;
	return 0;
}

void live_free(struct copy_server *s)
{
	struct live_table *t = s->live;
	int i;

	if (!t)
		return;
	for (i = 0; i < LIVE_PENDING_MAX; i++) {
		free(t->v[i].resp);
		free(t->v[i].abuf);
	}
	free(t);
	s->live = NULL;
}

int live_plan_set(struct copy_plan *p)
{
	struct live_plan *lp = p->live;
	char err[512];
	int i;

	if (!p->cfg.diff) {
		live_plan_free(lp);
		p->live = NULL;
		return 0;
	}
	if (!lp) {
		lp = calloc(1, sizeof(*lp));
		if (!lp)
			return -1;
		tally_init(&lp->total, 0);
		tally_init(&lp->cur, LIVE_EXAMPLES);
		tally_init(&lp->out, LIVE_EXAMPLES);
	}
	diff_rules_free(&lp->rules);
	memset(&lp->rules, 0, sizeof(lp->rules));
	/* Checked when the plan was parsed: these compile. */
	for (i = 0; i < p->cfg.nignore; i++)
		diff_rules_add(&lp->rules, p->cfg.ignore[i], err, sizeof(err));
	p->live = lp;
	return 0;
}

void live_plan_free(struct live_plan *lp)
{
	if (!lp)
		return;
	diff_rules_free(&lp->rules);
	tally_free(&lp->total);
	tally_free(&lp->cur);
	tally_free(&lp->out);
	free(lp);
}

static uint32_t hash(uint64_t serial, uint64_t pair)
{
	uint64_t h = (serial * 0x9e3779b97f4a7c15ULL) ^ (pair * 0xff51afd7ed558ccdULL);

	return (uint32_t)((h ^ (h >> 29)) % LIVE_BUCKETS);
}

static struct live_pend *by_id(struct copy_server *s, uint64_t id)
{
	struct live_pend *e;

	if (!s->live || !id)
		return NULL;
	e = &s->live->v[id % LIVE_PENDING_MAX];
	return e->id == id ? e : NULL;
}

static void unlink_pend(struct live_table *t, struct live_pend *e)
{
	int32_t *at = &t->bucket[hash(e->serial, e->pair)];
	int32_t me = (int32_t)(e - t->v);

	while (*at >= 0 && *at != me)
		at = &t->v[*at].next;
	if (*at == me)
		*at = e->next;
}

static void pend_free(struct copy_server *s, struct live_pend *e)
{
	unlink_pend(s->live, e);
	free(e->resp);
	free(e->abuf);
	memset(e, 0, sizeof(*e));
	e->next = -1;
	s->live->used--;
}

/* Judge @e as it stands, tally it in its plan (if still there), free it. */
static void judge(struct copy_server *s, struct live_pend *e)
{
	struct copy_plan *p = copy_plan_by_name(s, e->plan);
	struct live_plan *lp = p ? p->live : NULL;
	struct diff_result res;
	size_t alen = e->alen;
	int out;

	if (!lp)
		goto done;
	if (!e->has_resp) {
		lp->unpaired[0]++;
		lp->unpaired[1]++;
		goto done;
	}
	if (e->ans == ANS_WAIT) {
		out = TALLY_TIMEOUT;
	} else if (e->ans == ANS_FAILED) {
		out = e->fail;
	} else {
		/* A production response cut at copy_max: the answer's first bytes. */
		if (e->resp_cut && alen > e->resp_len)
			alen = e->resp_len;
		out = diff_compare(&lp->rules, e->resp, e->resp_len, e->abuf, alen,
				   &res) ? TALLY_DIFFERENT : TALLY_SAME;
	}
	if (out < 0) {
		lp->skipped[0]++;
		lp->skipped[1]++;
		goto done;
	}
	tally_add(&lp->total, p->cfg.app, e->point, out, 0, &res);
	tally_add(&lp->cur, p->cfg.app, e->point, out, 0, &res);
done:
	pend_free(s, e);
}

static void maybe_judge(struct copy_server *s, struct live_pend *e)
{
	if (e->has_resp && e->ans != ANS_WAIT)
		judge(s, e);
}

uint64_t live_open(struct copy_server *s, struct copy_plan *p, uint64_t serial,
		   const struct copyrec *r)
{
	struct live_table *t = s->live;
	struct live_pend *e;
	uint32_t h;
	uint64_t id;

	if (!t || !p->live)
		return 0;
	id = t->next_id++;
	e = &t->v[id % LIVE_PENDING_MAX];
	/* The oldest entry gives way: judged as it stands. */
	if (e->id)
		judge(s, e);
	e->id = id;
	e->serial = serial;
	e->pair = r->pair;
	e->born_ms = copy_now_ms();
	snprintf(e->plan, sizeof(e->plan), "%s", p->cfg.name);
	snprintf(e->point, sizeof(e->point), "%s", r->point);
	e->ans = ANS_WAIT;
	h = hash(serial, r->pair);
	e->next = t->bucket[h];
	t->bucket[h] = (int32_t)(e - t->v);
	t->used++;
	return id;
}

void live_response(struct copy_server *s, uint64_t serial, const struct copyrec *r)
{
	struct live_table *t = s->live;
	struct live_pend *e = NULL;
	int32_t k;

	if (!t)
		return;
	/* The newest open request of the pair (chains are newest first). */
	for (k = t->bucket[hash(serial, r->pair)]; k >= 0; k = t->v[k].next) {
		struct live_pend *x = &t->v[k];

		if (x->serial == serial && x->pair == r->pair && !x->has_resp &&
		    !strcmp(x->point, r->point)) {
			e = x;
			break;
		}
	}
	if (!e)
		return;		/* no compared copy of it: nothing to judge */
	e->resp = malloc(r->cap_len ? r->cap_len : 1);
	if (!e->resp) {
		e->has_resp = true;
		e->ans = ANS_FAILED;
		e->fail = -1;		/* out of memory: compared nothing */
		judge(s, e);
		return;
	}
	memcpy(e->resp, r->data, r->cap_len);
	e->resp_len = r->cap_len;
	e->resp_cut = r->flags & COPYREC_F_TRUNCATED;
	e->has_resp = true;
	maybe_judge(s, e);
}

void live_answer(struct copy_server *s, uint64_t id, uint8_t *buf, size_t len)
{
	struct live_pend *e = by_id(s, id);

	if (!e || e->ans != ANS_WAIT) {
		free(buf);
		return;
	}
	e->ans = ANS_GOT;
	e->abuf = buf;
	e->alen = len;
	maybe_judge(s, e);
}

void live_fail(struct copy_server *s, uint64_t id, int outcome)
{
	struct live_pend *e = by_id(s, id);

	if (!e || e->ans != ANS_WAIT)
		return;
	e->ans = ANS_FAILED;
	e->fail = outcome;
	maybe_judge(s, e);
}

void live_tick(struct copy_server *s, uint64_t now_ms)
{
	struct live_table *t = s->live;
	int i;

	if (!t || !t->used)
		return;
	for (i = 0; i < LIVE_PENDING_MAX; i++)
		if (t->v[i].id && now_ms >= t->v[i].born_ms + LIVE_WAIT_MS)
			judge(s, &t->v[i]);
}

/* The period's tally: @lp->cur folded into what is not taken yet. */
json_t *live_hb_json(struct copy_plan *p)
{
	struct live_plan *lp = p->live;
	json_t *pts, *pj;
	int i;

	if (!lp)
		return NULL;
	tally_merge(&lp->out, &lp->cur);
	tally_reset(&lp->cur);
	lp->unpaired[2] += lp->unpaired[1];
	lp->skipped[2] += lp->skipped[1];
	lp->unpaired[1] = lp->skipped[1] = 0;
	pts = json_object();
	for (i = 0; i < lp->out.npts; i++) {
		pj = tally_point_json(&lp->out.pts[i], false);
		json_object_del(pj, "app");
		json_object_del(pj, "point");
		json_object_set_new(pts, lp->out.pts[i].point, pj);
	}
	return json_pack("{s:I, s:I, s:o}", "unpaired", (json_int_t)lp->unpaired[2],
			 "skipped", (json_int_t)lp->skipped[2], "points", pts);
}

void live_hb_taken(struct copy_plan *p)
{
	struct live_plan *lp = p->live;

	if (!lp)
		return;
	tally_reset(&lp->out);
	lp->unpaired[2] = lp->skipped[2] = 0;
}

json_t *live_stats_json(const struct copy_plan *p)
{
	const struct live_plan *lp = p->live;
	json_t *o;

	if (!lp)
		return json_null();
	o = tally_count_json(&lp->total.total);
	json_object_set_new(o, "unpaired", json_integer((json_int_t)lp->unpaired[0]));
	json_object_set_new(o, "skipped", json_integer((json_int_t)lp->skipped[0]));
	json_object_set_new(o, "points", tally_points_json(&lp->total, false));
	return o;
}
