// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * tally.c - the counts and first examples of compared pairs, per point
 * (tally.h); shared by `replay --diff` and live diff plans so both report
 * the same things the same way.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally.h"

void tally_init(struct tally *t, int examples)
{
	memset(t, 0, sizeof(*t));
	t->examples = examples;
}

void tally_free(struct tally *t)
{
	int i;

	for (i = 0; i < t->npts; i++)
		free(t->pts[i].ex);
	t->npts = 0;
}

static struct tally_point *point_of(struct tally *t, const char *app,
				    const char *point)
{
	struct tally_point *p;
	int i;

	for (i = 0; i < t->npts; i++)
		if (!strcmp(t->pts[i].app, app) && !strcmp(t->pts[i].point, point))
			return &t->pts[i];
	if (t->npts == TALLY_POINTS_MAX)
		return NULL;		/* counted in the totals only */
	p = &t->pts[t->npts++];
	memset(p, 0, sizeof(*p));
	snprintf(p->app, sizeof(p->app), "%s", app);
	snprintf(p->point, sizeof(p->point), "%s", point);
	p->ex = t->examples ? calloc(t->examples, sizeof(*p->ex)) : NULL;
	return p;
}

void tally_add(struct tally *t, const char *app, const char *point,
	       enum tally_outcome out, uint64_t record,
	       const struct diff_result *res)
{
	struct tally_point *p = point_of(t, app, point);
	struct tally_count *c[2] = { &t->total, p ? &p->n : NULL };
	int i;

	for (i = 0; i < 2; i++) {
		if (!c[i])
			continue;
		c[i]->pairs++;
		if (out == TALLY_SAME)
			c[i]->same++;
		else if (out == TALLY_DIFFERENT)
			c[i]->different++;
		else if (out == TALLY_ERROR)
			c[i]->shadow_errors++;
		else
			c[i]->timeouts++;
	}
	if (p && out == TALLY_DIFFERENT && p->nex < t->examples && p->ex) {
		p->ex[p->nex].record = record;
		p->ex[p->nex++].res = *res;
	}
}

void tally_examples_clear(struct tally *t)
{
	int i;

	for (i = 0; i < t->npts; i++)
		t->pts[i].nex = 0;
}

json_t *tally_count_json(const struct tally_count *c)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I}",
			 "pairs", (json_int_t)c->pairs, "same", (json_int_t)c->same,
			 "different", (json_int_t)c->different,
			 "shadow_errors", (json_int_t)c->shadow_errors,
			 "timeouts", (json_int_t)c->timeouts);
}

json_t *tally_point_json(const struct tally_point *p, bool record)
{
	json_t *pj = tally_count_json(&p->n), *ex = json_array(), *e;
	int k;

	json_object_set_new(pj, "app", json_string(p->app));
	json_object_set_new(pj, "point", json_string(p->point));
	for (k = 0; k < p->nex; k++) {
		e = record ? json_pack("{s:I}", "record", (json_int_t)p->ex[k].record) :
			     json_object();
		json_object_set_new(e, "path", json_string(p->ex[k].res.where));
		json_object_set_new(e, "recorded", json_string(p->ex[k].res.recorded));
		json_object_set_new(e, "shadow", json_string(p->ex[k].res.shadow));
		json_array_append_new(ex, e);
	}
	json_object_set_new(pj, "examples", ex);
	return pj;
}

json_t *tally_points_json(const struct tally *t, bool record)
{
	json_t *pts = json_array();
	int i;

	for (i = 0; i < t->npts; i++)
		json_array_append_new(pts, tally_point_json(&t->pts[i], record));
	return pts;
}

void tally_print_points(const struct tally *t, FILE *out)
{
	int i, k;

	for (i = 0; i < t->npts; i++) {
		const struct tally_point *p = &t->pts[i];

		fprintf(out, "%s/%s: %" PRIu64 " pairs: %" PRIu64 " same, %" PRIu64
			" different, %" PRIu64 " shadow errors, %" PRIu64 " timeouts\n",
			p->app, p->point, p->n.pairs, p->n.same, p->n.different,
			p->n.shadow_errors, p->n.timeouts);
		for (k = 0; k < p->nex; k++)
			fprintf(out, "  record %" PRIu64 ": %s: recorded %s, shadow %s\n",
				p->ex[k].record, p->ex[k].res.where,
				p->ex[k].res.recorded, p->ex[k].res.shadow);
	}
}

void tally_reset(struct tally *t)
{
	int i;

	memset(&t->total, 0, sizeof(t->total));
	for (i = 0; i < t->npts; i++) {
		memset(&t->pts[i].n, 0, sizeof(t->pts[i].n));
		t->pts[i].nex = 0;
	}
}

void tally_merge(struct tally *dst, const struct tally *src)
{
	int i, k;

	for (i = 0; i < src->npts; i++) {
		const struct tally_point *sp = &src->pts[i];
		struct tally_point *dp = point_of(dst, sp->app, sp->point);
		struct tally_count *c[2] = { &dst->total, dp ? &dp->n : NULL };
		int j;

		for (j = 0; j < 2; j++) {
			if (!c[j])
				continue;
			c[j]->pairs += sp->n.pairs;
			c[j]->same += sp->n.same;
			c[j]->different += sp->n.different;
			c[j]->shadow_errors += sp->n.shadow_errors;
			c[j]->timeouts += sp->n.timeouts;
		}
		for (k = 0; dp && dp->ex && k < sp->nex && dp->nex < dst->examples; k++)
			dp->ex[dp->nex++] = sp->ex[k];
	}
}
