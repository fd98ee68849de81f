// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * drill.c - fault drills at guard points: start, stop, expiry, what the
 * loader publishes for them, and how stats show them (drill.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli/cmd.h"
#include "errnames.h"
#include "publish/delaydrill.h"
#include "publish/failfast.h"
#include "heartbeat/heartbeat.h"
#include "state/drill.h"
#include "decide/drill_stop.h"
#include "state/events.h"
#include "decide/engine_eval.h"
#include "kernel/probes.h"
#include "kernel/snapshot.h"
#include "publish/flags.h"
#include "names.h"
#include "pointspec/pointspec.h"

_Static_assert(DRILL_MAX_DELAY_MS * 1000000ULL == SDS_DRILL_DELAY_MAX_NS,
	       "the guards clamp a delay to the loader's own limit");

static const char *kind_name(uint32_t kind)
{
	return kind == SDS_DRILL_ERROR ? "error" :
	       kind == SDS_DRILL_DELAY ? "delay" : "";
}

static uint32_t kind_parse(const char *s)
{
	if (!strcmp(s, "error"))
		return SDS_DRILL_ERROR;
	if (!strcmp(s, "delay"))
		return SDS_DRILL_DELAY;
	return SDS_DRILL_NONE;
}

/*
 * Publish point @id now rather than at the next tick: a stop is at once.
 * The engine evaluates the point once the request is handled
 * (engine__flush), from the tick's read: drills never run a tick.
 */
static void drill_publish(struct drill *dl, int id)
{
	dl->dirty[id] = 1;
	dl->any_dirty = true;
}

void drill__init(struct drill *dl, const struct drill_ctx *ctx)
{
	memset(dl->dirty, 0, sizeof(dl->dirty));
	dl->any_dirty = false;
	dl->c = *ctx;
	memset(dl->stops, 0, sizeof(dl->stops));
	dl->naborted = 0;
}

static void stops_free(struct drill *dl, int id)
{
	free(dl->stops[id]);
	dl->stops[id] = NULL;
}

bool drill__dirty(const struct drill *dl)
{
	return dl->any_dirty;
}

bool drill__take_dirty(struct drill *dl, int id)
{
	bool was = dl->dirty[id];

	dl->dirty[id] = 0;
	if (id + 1 >= dl->c.probes->npoints)
		dl->any_dirty = false;
	return was;
}

int drill__start(struct drill *dl, const char *name, bool create,
		 const struct drill_run *d, char *err, size_t errlen)
{
	const struct cell_counts *n;
	struct drill_run *r;
	bool fn;
	int id;

	if (!sds_point_name_valid(name)) {
		snprintf(err, errlen, "bad point name '%.64s'", name);
		return -1;
	}
	id = probes__find(dl->c.probes, name);
	if (id < 0 && create)
		id = dl->c.point(dl->c.point_ctx, name);
	if (id < 0) {
		snprintf(err, errlen, "no point '%s' in app '%s' (see sds-bpf stats)",
			 name, dl->c.app);
		return -1;
	}
	/*
	 * A function point is drilled through its failfast= operations (an
	 * error drill) or the sockets it connects (a delay drill).
	 */
	fn = dl->c.probes->pts[id].kind != POINT_GUARD;
	if (fn && d->kind == SDS_DRILL_DELAY) {
		if (delaydrill__can(*dl->c.delay, &dl->c.probes->pts[id], err,
				    errlen))
			return -1;
	} else if (fn &&
		   failfast_drill_check(&dl->c.probes->pts[id], d->kind, err, errlen)) {
		return -1;
	}
	if (d->kind != SDS_DRILL_ERROR && d->kind != SDS_DRILL_DELAY) {
		snprintf(err, errlen, "drill on '%s': kind must be error or delay", name);
		return -1;
	}
	if (d->err && dl->c.probes->pts[id].kind == POINT_GUARD) {
		snprintf(err, errlen,
			 "'%s' is a guard point: --errno is for function points with failfast= (a guard's drill makes sds_enter() return SDS_FAULT)",
			 name);
		return -1;
	}
	if (d->ratio > 100) {
		snprintf(err, errlen, "drill on '%s': ratio %u out of range 0..100",
			 name, d->ratio);
		return -1;
	}
	n = flags__counts(dl->c.flags, id);
	r = &dl->c.run[id].drill;
	/* The network is set up last: a refusal there leaves the old drill. */
	if (fn && d->kind == SDS_DRILL_DELAY) {
		char why[400];

		if (delaydrill__start(*dl->c.delay, id, d->ratio, d->delay_ns,
				      d->expires_ns, why, sizeof(why))) {
			snprintf(err, errlen, "delay drill on '%s': %s", name, why);
			return -1;
		}
	} else if (fn && r->kind == SDS_DRILL_DELAY) {
		delaydrill__stop(*dl->c.delay, id);
	}
	if (r->kind)
		events__add(dl->c.events, name, SDS_REASON_DRILL, false);
	*r = *d;
	stops_free(dl, id);	/* the caller sets the new drill's (drill__apply_admin) */
	r->faults_base = !fn ? n->drill_faults : failfast__drilled(*dl->c.failfast, id);
	r->delays_base = !fn ? n->drill_delays : delaydrill__marked(*dl->c.delay, id);
	events__add(dl->c.events, name, SDS_REASON_DRILL, true);
	drill_publish(dl, id);
	return 0;
}

static void drill_end(struct drill *dl, int id)
{
	/* A function point's delay drill: its marks stop delaying at once. */
	if (dl->c.run[id].drill.kind == SDS_DRILL_DELAY &&
	    dl->c.probes->pts[id].kind != POINT_GUARD)
		delaydrill__stop(*dl->c.delay, id);
	dl->c.run[id].drill.kind = SDS_DRILL_NONE;
	stops_free(dl, id);
	events__add(dl->c.events, dl->c.probes->pts[id].spec.name, SDS_REASON_DRILL,
		    false);
}

static bool was_aborted(const struct drill *dl, int64_t admin_id)
{
	int i;

	for (i = 0; i < dl->naborted && i < DRILL_ABORTED_MAX; i++)
		if (dl->aborted[i] == admin_id)
			return true;
	return false;
}

/*
 * End admin drill of point @id here because @why, say so in `events` and
 * on stderr, and tell the admin (which stops it on every host).
 */
static void drill_abort(struct drill *dl, int id, int64_t admin_id, const char *why)
{
	struct events *ev = dl->c.events;
	const char *name = dl->c.probes->pts[id].spec.name;

	if (dl->c.run[id].drill.kind) {
		drill_end(dl, id);
		/* drill_end's event: it ended, and why. */
		snprintf(ev->ring[(ev->next_seq - 1) % EVENTS_MAX].detail, EVENTS_DETAIL_MAX,
			 "drill %lld stopped: %s", (long long)admin_id, why);
	}
	cmd_err("drill %lld on '%s': stopped: %s", (long long)admin_id, name, why);
	dl->aborted[dl->naborted++ % DRILL_ABORTED_MAX] = admin_id;
	if (dl->c.aborted)
		dl->c.aborted(dl->c.aborted_ctx, admin_id, why);
}

int drill__stop(struct drill *dl, const char *name, char *err, size_t errlen)
{
	int id = probes__find(dl->c.probes, name);

	if (id < 0) {
		snprintf(err, errlen, "no point '%.64s' in app '%s' (see sds-bpf stats)",
			 name, dl->c.app);
		return -1;
	}
	if (!dl->c.run[id].drill.kind) {
		snprintf(err, errlen, "no drill runs on '%s'", name);
		return -1;
	}
	drill_end(dl, id);
	drill_publish(dl, id);
	return 0;
}

void drill__tick(struct drill *dl, int id, uint64_t now_ns,
		 struct flag_state *fs)
{
	struct drill_run *r = &dl->c.run[id].drill;
	char broke[SDS_HB_STOP_REASON_MAX];

	if (r->kind && now_ns >= r->expires_ns)
		drill_end(dl, id);
	/* An admin drill's stop conditions, over this tick's read of the point. */
	if (r->kind && r->admin_id && dl->stops[id] &&
	    drill_stop__judge(dl->stops[id], dl->c.snap && *dl->c.snap ?
			      snapshot__point(*dl->c.snap, id) : NULL, now_ns,
			      broke, sizeof(broke)))
		drill_abort(dl, id, r->admin_id, broke);
	/*
	 * A function point's delay drill kept by a loader that died (keep.c
	 * restores the run states): this loader hooks it again, or ends it.
	 */
	if (r->kind == SDS_DRILL_DELAY && dl->c.probes->pts[id].kind != POINT_GUARD &&
	    !delaydrill__running(*dl->c.delay, id)) {
		char why[400];

		if (delaydrill__start(*dl->c.delay, id, r->ratio, r->delay_ns,
				      r->expires_ns, why, sizeof(why))) {
			cmd_err("delay drill on '%s', kept from the last loader: %s; ended",
				dl->c.probes->pts[id].spec.name, why);
			drill_end(dl, id);
		}
	}
	fs->drill_kind = r->kind;
	if (!r->kind)
		return;
	fs->active |= SDS_ACT_DRILL;
	fs->drill_ratio = r->ratio;
	fs->drill_delay_ns = r->delay_ns;
	fs->drill_expires_ns = r->expires_ns;
}

json_t *drill__json(struct drill *dl, int id, uint64_t now_ns)
{
	const struct drill_run *r = &dl->c.run[id].drill;
	/* The loader's own bounded counts: a forged cell cannot wrap them. */
	const struct cell_counts *n = flags__counts(dl->c.flags, id);
	bool fn = dl->c.probes->pts[id].kind != POINT_GUARD;
	uint64_t left;
	json_t *o;

	if (!r->kind)
		return json_null();
	left = r->expires_ns > now_ns ? (r->expires_ns - now_ns) / 1000000 : 0;
	o = json_pack("{s:s, s:i, s:I, s:I, s:I, s:I, s:o}",
		"kind", kind_name(r->kind),
		"ratio", (int)r->ratio,
		"delay_ms", (json_int_t)(r->delay_ns / 1000000),
		"remaining_ms", (json_int_t)left,
		"faults", (json_int_t)(dl->c.probes->pts[id].kind == POINT_GUARD ?
				       n->drill_faults - r->faults_base :
				       failfast__drilled(*dl->c.failfast, id) - r->faults_base),
		/* A function point's delays: the sockets its drill marked. */
		"delays", (json_int_t)(fn ? delaydrill__marked(*dl->c.delay, id) - r->delays_base :
				       n->drill_delays - r->delays_base),
		"source", r->admin_id ? json_integer(r->admin_id) :
					json_string("local"));
	/* Only a drill that names its own errno says so: others use the point's. */
	if (o && r->err)
		json_object_set_new(o, "errno",
				    json_string(errnames_name(r->err)));
	/* An admin drill's stop conditions, judged here every tick. */
	if (o && dl->stops[id])
		json_object_set_new(o, "stop_when",
				    heartbeat_stops_to_json(dl->stops[id]->stop, dl->stops[id]->n));
	/* Where a function point's delay drill holds its packets. */
	if (o && fn && r->kind == SDS_DRILL_DELAY)
		json_object_set_new(o, "devices",
				    json_string(delaydrill__hooked(*dl->c.delay)));
	return o;
}

static char *reply_json(json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT);

	json_decref(o);
	return s;
}

static char *reply_err(const char *msg)
{
	return reply_json(json_pack("{s:s}", "error", msg));
}

char *drill__request(struct drill *dl, const char *args)
{
	char name[SDS_NAME_MAX + 2], kind[16], err[256], ename[24];
	unsigned long ratio, delay_ms, for_s;
	struct drill_run d = {};
	int n = 0, m = 0, id;

	if (sscanf(args, "%65s stop%n", name, &n) == 1 && n > 0 && !args[n]) {
		if (drill__stop(dl, name, err, sizeof(err)))
			return reply_err(err);
		return reply_json(json_pack("{s:b}", "ok", 1));
	}
	n = 0;
	if (sscanf(args, "%65s %15s %lu %lu %lu%n", name, kind, &ratio,
		   &delay_ms, &for_s, &n) != 5 || !n ||
	    (args[n] && (args[n] != ' ' ||
			 sscanf(args + n, " %23s%n", ename, &m) != 1 || args[n + m])))
		return reply_err("expected 'drill POINT error|delay RATIO DELAY_MS FOR_S [ERRNO]' or 'drill POINT stop'");
	d.kind = kind_parse(kind);
	if (!d.kind)
		return reply_err("drill kind must be error or delay");
	if (m) {
		d.err = errnames_parse(ename);
		if (!d.err)
			return reply_err("unknown errno name (ECONNREFUSED, ECONNRESET, ETIMEDOUT, EHOSTUNREACH, EIO, EACCES, ...: docs/FAILFAST.md)");
		if (d.kind != SDS_DRILL_ERROR)
			return reply_err("an errno is for error drills only");
	}
	if (ratio > 100)
		return reply_err("ratio out of range 0..100");
	if (for_s < 1 || for_s > DRILL_MAX_S)
		return reply_err("duration out of range 1..86400 s");
	if (d.kind == SDS_DRILL_DELAY && (delay_ms < 1 || delay_ms > DRILL_MAX_DELAY_MS))
		return reply_err("delay out of range 1..60000 ms");
	d.ratio = ratio;
	d.delay_ns = d.kind == SDS_DRILL_DELAY ? delay_ms * 1000000ULL : 0;
	d.expires_ns = flags_now_ns() + for_s * 1000000000ULL;
	if (drill__start(dl, name, false, &d, err, sizeof(err)))
		return reply_err(err);
	id = probes__find(dl->c.probes, name);
	return reply_json(json_pack("{s:b, s:o}", "ok", 1, "drill",
				    drill__json(dl, id, flags_now_ns())));
}

/*
 * Admin drill @dr, running on point @id: judge its stop conditions from
 * now on; one this loader cannot judge (a window under its tick) stops
 * the drill, as a broken one would: never a drill run unwatched.
 */
static void drill_stops_set(struct drill *dl, int id, const struct sds_hb_drill *dr)
{
	char err[SDS_HB_STOP_REASON_MAX];

	if (id < 0)
		return;
	dl->stops[id] = drill_stop__new(dr->stop, dr->nstop, dl->c.tick_ns ? *dl->c.tick_ns : 0,
					 err, sizeof(err));
	if (!dl->stops[id])
		drill_abort(dl, id, dr->id, err);
}

void drill__apply_admin(struct drill *dl, const struct sds_hb_drill *dr, int n,
			int64_t now_unix)
{
	uint64_t now_ns = flags_now_ns();
	char err[256];
	int i, id;

	/* Stop the admin's drills it no longer lists (stopped or expired). */
	for (id = 0; id < dl->c.probes->npoints; id++) {
		struct drill_run *r = &dl->c.run[id].drill;
		bool listed = false;

		if (!r->kind || !r->admin_id)
			continue;
		for (i = 0; i < n; i++)
			if (dr[i].id == r->admin_id &&
			    !strcmp(dr[i].point, dl->c.probes->pts[id].spec.name))
				listed = true;
		if (!listed) {
			drill_end(dl, id);
			drill_publish(dl, id);
		}
	}
	for (i = 0; i < n; i++) {
		struct drill_run d = {};
		int64_t left_s = dr[i].expires_at - now_unix;

		if (left_s <= 0)
			continue;
		/*
		 * The reply may say up to 2^40 s: with an admin whose clock
		 * is far ahead, or a reply not from sds-admin, left_s * 1e9
		 * would wrap.  A drill ends within DRILL_MAX_S, whoever
		 * started it, as sds-admin's own duration_s allows.
		 */
		if (left_s > DRILL_MAX_S)
			left_s = DRILL_MAX_S;
		id = probes__find(dl->c.probes, dr[i].point);
		if (was_aborted(dl, dr[i].id))
			continue;	/* stopped here: the admin is being told */
		if (id >= 0 && dl->c.run[id].drill.kind &&
		    dl->c.run[id].drill.admin_id == dr[i].id) {
			/* Kept from the last loader (keep.c): its conditions again. */
			if (dr[i].nstop && !dl->stops[id])
				drill_stops_set(dl, id, &dr[i]);
			continue;	/* running already */
		}
		d.kind = dr[i].kind;
		d.ratio = dr[i].ratio;
		d.delay_ns = (uint64_t)dr[i].delay_ms * 1000000ULL;
		d.expires_ns = now_ns + (uint64_t)left_s * 1000000000ULL;
		d.admin_id = dr[i].id;
		d.err = dr[i].err;	/* 0: the point's own errno */
		if (drill__start(dl, dr[i].point, true, &d, err, sizeof(err))) {
			cmd_err("drill %" PRId64 " from the admin: %s", dr[i].id, err);
			continue;
		}
		if (dr[i].nstop)
			drill_stops_set(dl, probes__find(dl->c.probes, dr[i].point), &dr[i]);
	}
}
