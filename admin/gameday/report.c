// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * gameday/report.c - a game day run's report (docs/GAMEDAY.md, "Report"):
 * its steps as the scheduler timed them, and from the app's stored
 * periods (every point, every host summed): the first period a drill of
 * the run injected anything in, the first period after it a point
 * downgraded calls (the events), when the run switched the scheme, and
 * the first period after the trip with calls, no downgrade and nothing
 * injected: recovered.  Made when asked, from what the store holds then:
 * the periods after a run's end arrive a heartbeat later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gameday/gameday.h"

#define REPORT_PERIODS	8640	/* a day of periods; a longer run reports its first day */

struct rperiod {
	int64_t start;
	uint64_t visits, injected, downgrades;
	uint64_t top;			/* the most downgrades of one point */
	char point[SDS_NAME_MAX + 1];	/* that point (ties: the first by name) */
};

struct rscan {
	int64_t from;			/* the first slot's period */
	int n;				/* slots up to the newest period with a row */
	struct rperiod *p;
};

/* Rows come in any order (PostgreSQL's partitions): each to its period's slot. */
static int add_row(const struct store_stat_row *row, void *ctx)
{
	struct rscan *s = ctx;
	int64_t i = (row->period_start - s->from) / GAMEDAY_PERIOD_S;
	struct rperiod *p;

	if (row->period_start < s->from || i >= REPORT_PERIODS)
		return 0;
	if (s->n < i + 1)
		s->n = (int)i + 1;
	p = &s->p[i];
	p->start = row->period_start;
	p->visits += row->visits;
	p->injected += row->faults + row->delays;
	p->downgrades += row->downgrades;
	if (row->downgrades > p->top ||
	    (row->downgrades && row->downgrades == p->top && strcmp(row->point, p->point) < 0)) {
		p->top = row->downgrades;
		snprintf(p->point, sizeof(p->point), "%s", row->point);
	}
	return 0;
}

static json_t *first_step(json_t *steps, const char *op, size_t *at)
{
	json_t *v;
	size_t i;

	json_array_foreach(steps, i, v)
		if (!strcmp(json_string_value(json_object_get(v, "do")) ?: "", op) &&
		    json_is_number(json_object_get(v, "ended_at"))) {
			*at = i;
			return v;
		}
	return NULL;
}

json_t *gameday_report(struct store *st, const char *g, const char *a, json_t *run, char *err)
{
	json_t *state = json_object_get(run, "state");
	json_t *steps = json_object_get(state, "steps"), *rep, *d, *sw, *took;
	int64_t from = json_integer_value(json_object_get(run, "started_at"));
	int64_t fault = 0, trip = 0, rec = 0, now = store_now_s();
	struct rscan s = { 0 };
	size_t di = 0, si = 0;
	int i, ret;

	rep = json_object();
	json_object_update(rep, run);
	json_object_del(rep, "state");
	json_object_set_new(rep, "steps", json_is_array(steps) ? json_incref(steps) : json_array());
	json_object_set_new(rep, "error", json_incref(json_object_get(state, "error")) ?:
			    json_null());
	d = first_step(steps, "drill", &di);
	sw = first_step(steps, "scheme", &si);
	s.p = calloc(REPORT_PERIODS, sizeof(*s.p));
	if (!s.p) {
		json_decref(rep);
		snprintf(err, STORE_ERR_MAX, "out of memory");
		return NULL;
	}
	s.from = from = from / GAMEDAY_PERIOD_S * GAMEDAY_PERIOD_S;
	ret = (st->ops->stats_scan_apart ? st->ops->stats_scan_apart :
	       st->ops->stats_scan)(st, g, a, NULL, from, now + GAMEDAY_PERIOD_S, add_row, &s, err);
	if (ret) {
		free(s.p);
		json_decref(rep);
		return NULL;
	}
	/* The fault: the drill's period or after, the first a drill injected in. */
	if (d) {
		int64_t at = (int64_t)json_number_value(json_object_get(d, "started_at"));

		at = at / GAMEDAY_PERIOD_S * GAMEDAY_PERIOD_S;
		for (i = 0; i < s.n && !fault; i++)
			if (s.p[i].start >= at && s.p[i].injected)
				fault = s.p[i].start;
	}
	json_object_set_new(rep, "fault", d ? json_pack("{s:I, s:O, s:O, s:o}",
		"step", (json_int_t)di, "at", json_object_get(d, "ended_at"),
		"drill", json_object_get(d, "drill") ?: json_null(),
		"first_period", fault ? json_integer(fault) : json_null()) : json_null());
	for (i = 0; i < s.n && fault && !trip; i++)
		if (s.p[i].start >= fault && s.p[i].downgrades) {
			trip = s.p[i].start;
			json_object_set_new(rep, "first_trip", json_pack("{s:I, s:s, s:I}",
				"period_start", (json_int_t)trip, "point", s.p[i].point,
				"downgrades", (json_int_t)s.p[i].top));
		}
	if (!trip)
		json_object_set_new(rep, "first_trip", json_null());
	json_object_set_new(rep, "scheme_switch", sw ? json_pack("{s:I, s:O, s:O, s:O}",
		"step", (json_int_t)si, "at", json_object_get(sw, "ended_at"),
		"scheme", json_object_get(sw, "scheme") ?: json_null(),
		"version", json_object_get(sw, "version") ?: json_null()) : json_null());
	for (i = 0; i < s.n && fault && !rec; i++)
		if (s.p[i].start > (trip ? trip : fault) && s.p[i].visits && !s.p[i].injected &&
		    !s.p[i].downgrades)
			rec = s.p[i].start;
	json_object_set_new(rep, "recovered", rec ? json_pack("{s:I}", "period_start",
							      (json_int_t)rec) : json_null());
	took = json_object();
	json_object_set_new(took, "fault_to_trip", fault && trip ? json_integer(trip - fault) :
				json_null());
	json_object_set_new(took, "trip_to_switch", trip && sw ?
		json_real(json_number_value(json_object_get(sw, "ended_at")) - trip) : json_null());
	json_object_set_new(took, "fault_to_recovered", fault && rec ? json_integer(rec - fault) :
				json_null());
	json_object_set_new(rep, "took_s", took);
	free(s.p);
	return rep;
}
