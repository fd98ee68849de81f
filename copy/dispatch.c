// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * dispatch.c - a received record to its plan: N copies, each to the next
 * endpoint of the plan's smooth weighted round robin, within the plan's
 * rate cap and the server's memory bound.  Also the plans' life: applied
 * on start and SIGHUP (counters kept by plan name), expired on time.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "live.h"
#include "serve.h"

void copy_body_put(struct copy_server *s, struct copy_body *b)
{
	if (--b->refs)
		return;
	/* The compared copy was never sent (a full queue, a reload). */
	if (b->diff_id)
		live_fail(s, b->diff_id, -1);
	s->mem -= sizeof(*b) + b->len;
	free(b);
}

static struct copy_plan *plan_find(struct copy_server *s, const char *app,
				   const char *point)
{
	int i, k;

	for (i = 0; i < s->nplans; i++) {
		struct copy_plan *p = &s->plans[i];

		if (strcmp(p->cfg.app, app))
			continue;
		for (k = 0; k < p->cfg.npoints; k++)
			if (!strcmp(p->cfg.points[k], point))
				return p;
	}
	return NULL;
}

/* Token bucket: @rate copies a second, bursts of at most one second's. */
static bool rate_take(struct copy_plan *p, uint64_t now)
{
	if (!p->cfg.rate)
		return true;
	p->tokens += (double)(now - p->tokens_ms) * p->cfg.rate / 1000.0;
	if (p->tokens > p->cfg.rate)
		p->tokens = p->cfg.rate;
	p->tokens_ms = now;
	if (p->tokens < 1.0)
		return false;
	p->tokens -= 1.0;
	return true;
}

/* "app/point" without printf: this runs for every record. */
static void colour_set(char *out, const char *app, const char *point)
{
	size_t a = strlen(app), p = strlen(point);

	memcpy(out, app, a);
	out[a] = '/';
	memcpy(out + a + 1, point, p + 1);
}

void copy_dispatch(struct copy_server *s, uint64_t serial, const struct copyrec *r)
{
	struct copy_plan *p = plan_find(s, r->app, r->point);
	struct copy_body *b;
	uint64_t now;
	int i, e;

	/* A production response: what a diff plan compares with, never copied. */
	if (r->flags & COPYREC_F_RESPONSE) {
		if (p && p->live)
			live_response(s, serial, r);
		return;
	}
	s->records++;
	if (!p) {
		s->unmatched++;
		return;
	}
	p->c.received++;
	if (p->expired) {
		p->c.drop_expired++;
		return;
	}
	if ((r->flags & COPYREC_F_WRITE) && !p->cfg.writes) {
		p->c.drop_write++;
		return;
	}
	p->c.copies += p->cfg.amplification;
	if (s->mem + sizeof(*b) + r->cap_len > s->mem_max) {
		p->c.drop_queue += p->cfg.amplification;
		return;
	}
	b = malloc(sizeof(*b) + r->cap_len);
	if (!b) {
		p->c.drop_queue += p->cfg.amplification;
		return;
	}
	/* One reference of our own while the copies are queued. */
	b->refs = 1;
	b->len = r->cap_len;
	colour_set(b->colour, r->app, r->point);
	memcpy(b->data, r->data, r->cap_len);
	s->mem += sizeof(*b) + b->len;
	b->diff_id = p->live && (r->flags & COPYREC_F_PAIRED) ?
		     live_open(s, p, serial, r) : 0;
	/* The clock only for a cap: a tenth of the per-record cost otherwise. */
	now = p->cfg.rate ? copy_now_ms() : 0;
	for (i = 0; i < p->cfg.amplification; i++) {
		if (!rate_take(p, now)) {
			p->c.drop_rate++;
			continue;
		}
		e = copy_wrr__next(&p->wrr);
		if (!copy_endpoint_push(&p->eps[e], b))
			p->c.drop_queue++;
	}
	/* The endpoints are pumped once per read of the sender, not here. */
	copy_body_put(s, b);
}

void copy_pump_all(struct copy_server *s)
{
	int i, e;

	for (i = 0; i < s->nplans; i++)
		for (e = 0; e < s->plans[i].neps; e++)
			copy_endpoint_pump(s, &s->plans[i].eps[e]);
}

/* The same endpoints: then the queues and connections carry over. */
static bool eps_same(const struct copy_plan_cfg *a, const struct copy_plan_cfg *b)
{
	int i;

	if (a->nshadows != b->nshadows || a->framing != b->framing ||
	    a->pool != b->pool)
		return false;
	for (i = 0; i < a->nshadows; i++)
		if (strcmp(a->shadows[i].addr.text, b->shadows[i].addr.text) ||
		    a->shadows[i].weight != b->shadows[i].weight)
			return false;
	return true;
}

static struct copy_plan *plan_by_name(struct copy_plan *v, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i].cfg.name, name))
			return &v[i];
	return NULL;
}

struct copy_plan *copy_plan_by_name(struct copy_server *s, const char *name)
{
	return plan_by_name(s->plans, s->nplans, name);
}

static void plan_eps_free(struct copy_server *s, struct copy_plan *p,
			  uint64_t *lost)
{
	uint64_t n = 0;
	int e;

	for (e = 0; e < p->neps; e++)
		n += copy_endpoint_free(s, &p->eps[e]);
	free(p->eps);
	copy_wrr__free(&p->wrr);
	p->eps = NULL;
	p->neps = 0;
	if (lost)
		*lost += n;
}

/* Fresh endpoints and round robin for @p (its cfg set). */
static int plan_eps_init(struct copy_server *s, struct copy_plan *p)
{
	int w[COPY_SHADOWS_MAX], e;

	p->eps = calloc(p->cfg.nshadows, sizeof(*p->eps));
	if (!p->eps)
		return -1;
	for (e = 0; e < p->cfg.nshadows; e++) {
		w[e] = p->cfg.shadows[e].weight;
		if (copy_endpoint_init(&p->eps[e], p, &p->cfg.shadows[e], s->qcap))
			goto err;
		p->neps = e + 1;
	}
	if (copy_wrr__init(&p->wrr, w, p->cfg.nshadows))
		goto err;
	return 0;
err:
	plan_eps_free(s, p, NULL);
	return -1;
}

/*
 * Replace the plans by @np (consumed on success).  A plan of the same
 * name keeps its counters, and its queues and connections when its
 * endpoints are unchanged; copies queued to endpoints that go are
 * counted as dropped by the reload.  -1 (nothing changed) without memory.
 */
int copy_plans_apply(struct copy_server *s, struct copy_plans *np)
{
	struct copy_plan *v = calloc(np->n + 1, sizeof(*v)), *o;
	uint64_t now = copy_now_ms();
	int i, e;

	if (!v)
		return -1;
	for (i = 0; i < np->n; i++) {
		v[i].cfg = np->plans[i];
		o = plan_by_name(s->plans, s->nplans, v[i].cfg.name);
		if (o && eps_same(&o->cfg, &v[i].cfg))
			continue;
		if (plan_eps_init(s, &v[i])) {
			while (i--)
				plan_eps_free(s, &v[i], NULL);
			free(v);
			return -1;
		}
	}
	for (i = 0; i < np->n; i++) {
		v[i].tokens = v[i].cfg.rate;
		v[i].tokens_ms = now;
		o = plan_by_name(s->plans, s->nplans, v[i].cfg.name);
		if (o) {
			v[i].live = o->live;	/* its diff's counts carry over */
			o->live = NULL;
		}
		live_plan_set(&v[i]);	/* out of memory: no diff until the next */
		if (!o)
			continue;
		v[i].c = o->c;
		if (v[i].eps)
			continue;
		v[i].eps = o->eps;
		v[i].neps = o->neps;
		v[i].wrr = o->wrr;
		for (e = 0; e < v[i].neps; e++)
			v[i].eps[e].plan = &v[i];
		o->eps = NULL;
		o->neps = 0;
		memset(&o->wrr, 0, sizeof(o->wrr));
	}
	for (i = 0; i < s->nplans; i++) {
		uint64_t lost = 0;

		plan_eps_free(s, &s->plans[i], &lost);
		live_plan_free(s->plans[i].live);
		o = plan_by_name(v, np->n, s->plans[i].cfg.name);
		if (o)
			o->c.drop_reload += lost;
	}
	free(s->plans);
	s->plans = v;
	s->nplans = np->n;
	copy_plans__free(np);
	return 0;
}

void copy_plans_expire(struct copy_server *s, int64_t now)
{
	int i;

	for (i = 0; i < s->nplans; i++)
		if (now >= s->plans[i].cfg.expires_at)
			s->plans[i].expired = true;
}
