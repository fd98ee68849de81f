// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* events.c - the ring of downgrade transitions. */
#include <string.h>
#include <stdio.h>
#include <time.h>
#include "decide/chain.h"
#include "state/events.h"

void events__init(struct events *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->next_seq = 1;
}

void events__add(struct events *ev, const char *point, uint32_t reason,
		 bool started)
{
	struct event *e = &ev->ring[ev->next_seq % EVENTS_MAX];
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	e->seq = ev->next_seq++;
	e->time_ms = (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	snprintf(e->point, sizeof(e->point), "%s", point);
	e->reason = reason;
	e->started = started;
	e->budget = false;
	e->at_call = false;
	e->deploy = DEPLOY_NONE;
	e->limit = false;
	e->old_build[0] = e->new_build[0] = e->detail[0] = '\0';
}

void events__add_at_call(struct events *ev, const char *point, uint32_t reason,
			 uint64_t time_ms)
{
	struct event *e;

	events__add(ev, point, reason, true);
	e = &ev->ring[(ev->next_seq - 1) % EVENTS_MAX];
	e->time_ms = time_ms;
	e->at_call = true;
}

void events__add_key(struct events *ev, const char *point, bool started,
		     const char *detail)
{
	struct event *e;

	events__add(ev, point, SDS_REASON_KEY, started);
	e = &ev->ring[(ev->next_seq - 1) % EVENTS_MAX];
	snprintf(e->detail, sizeof(e->detail), "%s", detail);
}

void events__add_budget(struct events *ev, const char *point, bool suspended)
{
	events__add(ev, point, 0, suspended);
	ev->ring[(ev->next_seq - 1) % EVENTS_MAX].budget = true;
}

void events__add_deploy(struct events *ev, const char *point,
			enum deploy_event what, const char *old_build,
			const char *new_build, const char *detail)
{
	struct event *e;

	events__add(ev, point, 0, false);
	e = &ev->ring[(ev->next_seq - 1) % EVENTS_MAX];
	e->deploy = what;
	snprintf(e->old_build, sizeof(e->old_build), "%s", old_build ? old_build : "");
	snprintf(e->new_build, sizeof(e->new_build), "%s", new_build ? new_build : "");
	snprintf(e->detail, sizeof(e->detail), "%s", detail ? detail : "");
}

void events__add_limit(struct events *ev, const char *point, int64_t from,
		       int64_t to, const char *detail)
{
	struct event *e;

	events__add(ev, point, 0, false);
	e = &ev->ring[(ev->next_seq - 1) % EVENTS_MAX];
	e->limit = true;
	e->limit_from = from;
	e->limit_to = to;
	snprintf(e->detail, sizeof(e->detail), "%s", detail ? detail : "");
}

/* {..., "reason": "adaptive", "event": "limit", "from", "to", "detail"}. */
static json_t *limit_json(const struct event *e)
{
	return json_pack("{s:I, s:I, s:s, s:s, s:s, s:I, s:I, s:s}",
			 "seq", (json_int_t)e->seq,
			 "time_ms", (json_int_t)e->time_ms,
			 "point", e->point,
			 "reason", "adaptive",
			 "event", "limit",
			 "from", (json_int_t)e->limit_from,
			 "to", (json_int_t)e->limit_to,
			 "detail", e->detail);
}

/* A deploy event's "event" field. */
static const char *deploy_name(enum deploy_event d)
{
	switch (d) {
	case DEPLOY_BUILD:
		return "build";
	case DEPLOY_UNRESOLVED:
		return "unresolved";
	case DEPLOY_REJECTED:
		return "rejected";
	case DEPLOY_RETIRED:
		return "retired";
	case DEPLOY_NONE:
		break;
	}
	return "";
}

/* {..., "reason": "deploy", "event": ..., "old_build", "new_build", "detail"}. */
static json_t *deploy_json(const struct event *e)
{
	return json_pack("{s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:s}",
			 "seq", (json_int_t)e->seq,
			 "time_ms", (json_int_t)e->time_ms,
			 "point", e->point,
			 "reason", "deploy",
			 "event", deploy_name(e->deploy),
			 "old_build", e->old_build,
			 "new_build", e->new_build,
			 "detail", e->detail);
}

/* "started"/"ended" for a downgrade, "suspended"/"resumed" for the budget. */
static const char *event_name(const struct event *e)
{
	if (e->budget)
		return e->started ? "suspended" : "resumed";
	return e->started ? "started" : "ended";
}

json_t *events__json(const struct events *ev, uint64_t since)
{
	uint64_t first = ev->next_seq > EVENTS_MAX ? ev->next_seq - EVENTS_MAX : 1;
	json_t *o = json_object(), *arr = json_array(), *o2;
	uint64_t s;

	if (since < 1)
		since = 1;
	json_object_set_new(o, "dropped",
			    json_integer(since < first ? first - since : 0));
	if (since < first)
		since = first;
	for (s = since; s < ev->next_seq; s++) {
		const struct event *e = &ev->ring[s % EVENTS_MAX];

		if (e->deploy) {
			json_array_append_new(arr, deploy_json(e));
			continue;
		}
		if (e->limit) {
			json_array_append_new(arr, limit_json(e));
			continue;
		}
		o2 = json_pack("{s:I, s:I, s:s, s:s, s:s}",
			"seq", (json_int_t)e->seq,
			"time_ms", (json_int_t)e->time_ms,
			"point", e->point,
			"reason", e->budget ? "overhead" : chain_reason_name(e->reason),
			"event", event_name(e));
		/* Only where true: dated by the crossing call (exact trips). */
		if (e->at_call)
			json_object_set_new(o2, "at_call", json_true());
		/* A key blocked or lifted (keys_run.c): which. */
		if (e->detail[0])
			json_object_set_new(o2, "detail", json_string(e->detail));
		json_array_append_new(arr, o2);
	}
	json_object_set_new(o, "next", json_integer(ev->next_seq));
	json_object_set_new(o, "events", arr);
	return o;
}
