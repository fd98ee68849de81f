// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * admin_hb.c - the loop's side of `--admin` (admin.c has the thread): when
 * a heartbeat is due, the per-plan counts since the last accepted one; when
 * the reply is in, its plans applied like a reload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#include "live.h"
#include "serve.h"

#define ADMIN_PERIOD_S		10	/* heartbeats at natural 10-s boundaries */

static const struct copy_admin_count *count_of(const struct copy_admin_count *v,
					       int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

/* A counter's growth since @base; a plan that went and came back restarts. */
static uint64_t delta(uint64_t now, uint64_t base)
{
	return now >= base ? now - base : now;
}

static void snapshot(const struct copy_plan *p, struct copy_admin_count *c)
{
	const struct copy_counters *k = &p->c;

	snprintf(c->name, sizeof(c->name), "%s", p->cfg.name);
	c->received = k->received;
	c->dispatched = k->dispatched;
	c->shadow_errors = k->shadow_errors;
	c->dropped = k->drop_write + k->drop_expired + k->drop_rate + k->drop_queue +
		     k->drop_shadow + k->drop_reload;
}

/* The heartbeat body; the snapshot goes to a->sent. */
static char *body_build(struct copy_server *s, int64_t period_start)
{
	struct copy_admin *a = s->admin;
	json_t *plans = json_object(), *doc;
	char *text;
	int i;

	a->nsent = 0;
	for (i = 0; plans && i < s->nplans && i < COPY_PLANS_MAX; i++) {
		struct copy_admin_count *c = &a->sent[a->nsent++];
		const struct copy_admin_count *b;
		json_t *pj, *dj;

		snapshot(&s->plans[i], c);
		b = count_of(a->base, a->nbase, c->name);
		pj = json_pack("{s:I, s:I, s:I, s:I}",
			"received", (json_int_t)delta(c->received, b ? b->received : 0),
			"dispatched", (json_int_t)delta(c->dispatched, b ? b->dispatched : 0),
			"shadow_errors", (json_int_t)delta(c->shadow_errors, b ? b->shadow_errors : 0),
			"dropped", (json_int_t)delta(c->dropped, b ? b->dropped : 0));
		/* A diff plan's pairs judged since the admin last took them. */
		dj = live_hb_json(&s->plans[i]);
		if (pj && dj)
			json_object_set_new(pj, "diff", dj);
		else
			json_decref(dj);
		json_object_set_new(plans, c->name, pj);
	}
	doc = json_pack("{s:s, s:s, s:I, s:o}", "name", s->name, "addr", a->advertise,
			"period_start", (json_int_t)period_start, "plans", plans);
	text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	return text;
}

void copy_admin_tick(struct copy_server *s)
{
	struct copy_admin *a = s->admin;
	struct timespec ts;
	int64_t now, period;
	char *body;

	if (!a || a->busy)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	now = ts.tv_sec;
	if (now < a->next_s)
		return;
	/* The counts are of the period that just closed. */
	period = now / ADMIN_PERIOD_S * ADMIN_PERIOD_S - ADMIN_PERIOD_S;
	a->next_s = now / ADMIN_PERIOD_S * ADMIN_PERIOD_S + ADMIN_PERIOD_S;
	body = body_build(s, period);
	if (!body)
		return;		/* out of memory: the next period carries it */
	pthread_mutex_lock(&a->lock);
	a->body = body;
	pthread_cond_signal(&a->cond);
	pthread_mutex_unlock(&a->lock);
	a->busy = true;
}

/* One line on stderr when @msg differs from the last one of its kind. */
static void say_once(char *last, size_t size, const char *what, const char *msg)
{
	if (!strcmp(last, msg))
		return;
	snprintf(last, size, "%s", msg);
	if (*msg)
		fprintf(stderr, "sds-copy: admin: %s%s\n", what, msg);
}

/* A 200 reply: its plans, bad ones left out and named once. */
static void reply_apply(struct copy_server *s, const char *text, size_t len)
{
	struct copy_admin *a = s->admin;
	struct copy_plans np;
	char err[2048];
	int i;

	if (plan_parse_text(text, len, "reply", s->max_amp, time(NULL), true, &np,
			    err, sizeof(err))) {
		a->errors++;
		say_once(a->last_err, sizeof(a->last_err), "", err);
		return;
	}
	say_once(a->last_skip, sizeof(a->last_skip), "plans left out: ", err);
	if (copy_plans_apply(s, &np)) {
		copy_plans__free(&np);
		a->errors++;
		say_once(a->last_err, sizeof(a->last_err), "", "out of memory: keeping the old plans");
		return;
	}
	/* The admin took the counts: they are the new baseline. */
	memcpy(a->base, a->sent, sizeof(a->sent[0]) * a->nsent);
	a->nbase = a->nsent;
	for (i = 0; i < s->nplans; i++)
		live_hb_taken(&s->plans[i]);
	a->heartbeats++;
	say_once(a->last_err, sizeof(a->last_err), "", "");
}

void copy_admin_event(struct copy_server *s)
{
	struct copy_admin *a = s->admin;
	uint64_t n;
	char *reply, why[sizeof(a->why)];
	size_t len;
	int status;

	if (read(a->efd, &n, sizeof(n)) != sizeof(n))
		return;
	pthread_mutex_lock(&a->lock);
	reply = a->reply;
	len = a->reply_len;
	status = a->status;
	memcpy(why, a->why, sizeof(why));
	a->reply = NULL;
	pthread_mutex_unlock(&a->lock);
	a->busy = false;
	if (status == 200) {
		reply_apply(s, reply ? reply : "", len);
	} else {
		a->errors++;
		say_once(a->last_err, sizeof(a->last_err), "", why);
	}
	free(reply);
}

json_t *copy_admin_json(const struct copy_server *s)
{
	const struct copy_admin *a = s->admin;

	if (!a)
		return json_null();
	return json_pack("{s:s, s:s, s:I, s:I, s:s}", "urls", a->url_spec,
			 "advertise", a->advertise,
			 "heartbeats", (json_int_t)a->heartbeats,
			 "errors", (json_int_t)a->errors, "last_error", a->last_err);
}
