// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * serve.c - build the JSON replies of the control socket.  The replies'
 * shape and order are this file's (docs/PROTOCOL.md); the values that
 * only the loader whole knows (the engine's state, drills, budget, the
 * tick) come through struct serve_ops, each in its place.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "capture/capture.h"
#include "state/events.h"
#include "deploy/watch.h"
#include "kernel/probes.h"
#include "kernel/snapshot.h"
#include "point/clones.h"
#include "publish/flags.h"
#include "serve/serve.h"
#include "window.h"

static json_t *counts_json(const struct sds_counts *c, int seconds)
{
	json_t *o = json_object();

	if (seconds)
		json_object_set_new(o, "seconds", json_integer(seconds));
	json_object_set_new(o, "visits", json_integer(c->visits));
	json_object_set_new(o, "exceptions", json_integer(c->exceptions));
	json_object_set_new(o, "timeouts", json_integer(c->timeouts));
	json_object_set_new(o, "downgrades", json_integer(c->downgrades));
	return o;
}

/* Put @from's @key (when it has one) at the end of @o. */
static void take(json_t *o, json_t *from, const char *key)
{
	json_t *v = json_object_get(from, key);

	if (v)
		json_object_set(o, key, v);
}

/*
 * Where the point's completed calls' time went, summed since attach
 * (docs/SPLIT.md); NULL when the split is unavailable (the head's
 * "split" says why), never zeros.
 */
static json_t *split_json(const struct point_stats *p)
{
	if (!p->split)
		return NULL;
	return json_pack("{s:I, s:I, s:I, s:I}",
			 "calls", (json_int_t)p->split_calls,
			 "on_cpu_ns", (json_int_t)p->split_on_cpu_ns,
			 "runqueue_ns", (json_int_t)p->split_runq_ns,
			 "blocked_ns", (json_int_t)p->split_blocked_ns);
}

/* The head's "split": whether calls are split, and why not. */
static json_t *split_head_json(const struct probes *pr)
{
	json_t *o = json_object();

	json_object_set_new(o, "on", json_boolean(pr->split.on));
	if (!pr->split.on)
		json_object_set_new(o, "why", json_string(pr->split.why[0] ?
				    pr->split.why : "no point yet"));
	return o;
}

/*
 * A point's sites when it has clones (point/clones.h): each with its
 * symbol, offset, site kind and returns; a .part.N piece marked.  The
 * counts are the point's, all sites' together (one cookie).
 */
static json_t *sites_json(const struct probe_point *p)
{
	json_t *a = json_array();
	int i;

	for (i = -1; i < p->nclones; i++) {
		const struct probe_point *c = i < 0 ? p : &p->clones[i];
		json_t *o = json_object();

		json_object_set_new(o, "symbol", json_string(c->fn.name));
		json_object_set_new(o, "offset", json_integer(c->fn.offset + c->site.skip));
		json_object_set_new(o, "site", json_string(site_kind_name(c->site.kind)));
		json_object_set_new(o, "returns", json_string(unwind_ret_mode_name(c->ret_mode)));
		if (c->part)
			json_object_set_new(o, "piece", json_true());
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *point_json(struct serve *sv, int id, const struct snapshot *snap)
{
	const struct probe_point *p = &sv->probes->pts[id];
	const struct point_stats *sp = snapshot__point(snap, id);
	static const struct point_stats unread;
	const struct point_stats *stp = sp ? sp : &unread;
	json_t *o, *lat, *st, *cp;
	char rets[48];

	/* A point added since the read (a guard's `point`) shows zeros. */
	if (!sp && snap && id < snap->npoints)
		return NULL;
	o = json_object();
	json_object_set_new(o, "name", json_string(probes__name(sv->probes, id)));
	if (p->kind == POINT_FUNCTION) {
		json_object_set_new(o, "kind", json_string("function"));
		json_object_set_new(o, "symbol", json_string(p->spec.symbol));
		json_object_set_new(o, "offset", json_integer(p->attach_off));
		json_object_set_new(o, "site", json_string(site_kind_name(p->site.kind)));
		/* How its calls are seen ending (docs/UNWIND.md), at every site. */
		json_object_set_new(o, "returns", json_string(clones__returns(p, rets, sizeof(rets))));
		if (p->nclones)
			json_object_set_new(o, "sites", sites_json(p));
		/* Its entry and return: one session link or the pair (docs/PROBES.md). */
		if (p->ret_mode == RET_PAIR)
			json_object_set_new(o, "probe", json_string(p->session ? "session" : "pair"));
		if (p->ret_mode == RET_EXITS)
			json_object_set_new(o, "exit_sites", json_integer(p->exits.n));
		if (p->ret_mode == RET_ENTRY_ONLY)
			json_object_set_new(o, "returns_why", json_string(*p->exits_why ?
					    p->exits_why : unwind_ret_why_text(p->ret_why)));
	} else {
		/* libsds's sites are 5-byte NOPs by construction. */
		json_object_set_new(o, "kind", json_string("guard"));
		json_object_set_new(o, "site", json_string("nop5"));
	}
	json_object_set_new(o, "total", counts_json(&stp->total, 0));
	json_object_set_new(o, "window", counts_json(&stp->window, SDS_WINDOW_S));
	json_object_set_new(o, "concurrency", json_integer(stp->concurrency));
	/* Calls in flight past the timeout, counted as the window's timeouts. */
	json_object_set_new(o, "stuck", json_integer(stp->stuck));

	lat = json_object();
	json_object_set_new(lat, "count", json_integer(stp->completed));
	json_object_set_new(lat, "p50", json_integer(
		window_hist_percentile(stp->hist, SDS_HIST_BUCKETS, 50)));
	json_object_set_new(lat, "p90", json_integer(
		window_hist_percentile(stp->hist, SDS_HIST_BUCKETS, 90)));
	json_object_set_new(lat, "p99", json_integer(
		window_hist_percentile(stp->hist, SDS_HIST_BUCKETS, 99)));
	json_object_set_new(o, "latency_ns", lat);
	lat = split_json(stp);
	if (lat)
		json_object_set_new(o, "split", lat);

	/* state, drill, overhead, then copy, then failfast. */
	st = sv->ops->point_state(sv->ctx, id, stp);
	if (!st) {
		json_decref(o);
		return NULL;
	}
	take(o, st, "state");
	take(o, st, "drill");
	take(o, st, "overhead");
	/* Traffic copy, on points that can copy. */
	cp = capture__point_json(*sv->capture, id);
	if (cp)
		json_object_set_new(o, "copy", cp);
	/* Fail-fast, on points with :failfast=; cluster shares, on cluster points. */
	take(o, st, "failfast");
	take(o, st, "delay");
	take(o, st, "cluster");
	take(o, st, "adaptive");
	/* Hot keys' limits, on points that have them (keys_run.c). */
	take(o, st, "key_limits");
	json_decref(st);
	return o;
}

static json_t *refused_json(const struct refusals *r)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}",
			 "connections", (json_int_t)r->connections,
			 "sessions", (json_int_t)r->sessions,
			 "points", (json_int_t)r->points,
			 "files", (json_int_t)r->files,
			 "denied", (json_int_t)r->denied,
			 "slow", (json_int_t)r->slow);
}

static json_t *head_json(struct serve *sv)
{
	json_t *o = json_object(), *d = sv->ops->head(sv->ctx);

	json_object_set_new(o, "app", json_string(sv->app));
	json_object_set_new(o, "group", json_string(sv->group));
	json_object_set_new(o, "pid", json_integer(getpid()));
	json_object_set_new(o, "target", json_string(sv->target));
	take(o, d, "strategies_version");
	json_object_set_new(o, "atomics", json_boolean(sv->probes->atomics));
	/* Timed calls never counted stuck: the table had no room (kernel/stuck.h). */
	json_object_set_new(o, "stuck_lost",
			    json_integer((json_int_t)probes__stuck_lost(sv->probes)));
	json_object_set_new(o, "split", split_head_json(sv->probes));
	take(o, d, "admin");
	json_object_set_new(o, "refused", refused_json(&sv->refused));
	take(o, d, "tick_late_ms");
	take(o, d, "tick_count");
	take(o, d, "folded_through");
	json_object_set_new(o, "copy_out", capture__out_json(*sv->capture));
	take(o, d, "budget");
	/* Host pressure rules (docs/PRESSURE.md). */
	take(o, d, "pressure");
	json_object_set_new(o, "builds", watch__json(sv->watch));
	json_decref(d);
	return o;
}

/*
 * `stats` is built a slice of points per pass of the loop (conn.c): a
 * reply of 256 points costs tens of ms of map reads, and the tick must
 * not wait for all of it.  Every point is read when its slice is built,
 * and written out as text at once, so that the end of the job is a
 * splice of text rather than one dump of the whole tree (~1 ms for 256
 * points, long enough to make a tick late).
 */
void serve__stats_begin(struct serve *sv, struct stats_job *j)
{
	memset(j, 0, sizeof(*j));
	j->o = head_json(sv);
	/* One read for the whole reply, held until its last slice. */
	j->snap = sv->ops->query_snapshot(sv->ctx);
}

void serve__stats_end(struct stats_job *j)
{
	snapshot__put(j->snap);
	json_decref(j->o);
	free(j->points);
	memset(j, 0, sizeof(*j));
}

/* Append @p (stolen) to the job's text of points; -1 when memory ran out. */
static int stats_append(struct stats_job *j, json_t *p)
{
	char *s = json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(6));
	size_t n = s ? strlen(s) : 0;

	json_decref(p);
	if (!s)
		return -1;
	if (j->len + n + 2 > j->cap) {
		size_t cap = (j->len + n + 2) * 2;
		char *t = realloc(j->points, cap);

		if (!t) {
			free(s);
			return -1;
		}
		j->points = t;
		j->cap = cap;
	}
	if (j->len)
		j->points[j->len++] = ',';
	memcpy(j->points + j->len, s, n);
	j->len += n;
	free(s);
	return 0;
}

/* The head's text with ,"points":[...] spliced in before its last brace. */
static char *stats_text(struct stats_job *j)
{
	char *head = json_dumps(j->o, JSON_COMPACT | JSON_REAL_PRECISION(6));
	size_t hn = head ? strlen(head) : 0;
	char *s;

	if (hn < 2 || head[hn - 1] != '}') {
		free(head);
		return NULL;
	}
	s = malloc(hn + j->len + 16);
	if (s)
		sprintf(s, "%.*s%s\"points\":[%.*s]}", (int)(hn - 1), head,
			hn > 2 ? "," : "", (int)j->len, j->len ? j->points : "");
	free(head);
	return s;
}

int serve__stats_step(struct serve *sv, struct stats_job *j, char **reply,
		      int tick_fd)
{
	int end = j->next + SERVE_STATS_SLICE;

	*reply = NULL;
	for (; j->next < sv->probes->npoints && j->next < end; j->next++) {
		json_t *p = point_json(sv, j->next, j->snap);

		if (!p || stats_append(j, p)) {
			serve__stats_end(j);
			return 1;	/* NULL: an internal error */
		}
		/* At least one point per turn; none more once the tick is due. */
		if (conn_io_tick_due(tick_fd)) {
			j->next++;
			break;
		}
	}
	if (j->next < sv->probes->npoints)
		return 0;
	*reply = stats_text(j);
	serve__stats_end(j);
	return 1;
}

static json_t *info_json(struct serve *sv)
{
	json_t *o = head_json(sv), *pts = json_array();
	int i;

	for (i = 0; i < sv->probes->npoints; i++)
		json_array_append_new(pts,
			json_string(probes__name(sv->probes, i)));
	json_object_set_new(o, "points", pts);
	return o;
}

static json_t *error_json(const char *fmt, const char *arg)
{
	char msg[256];

	snprintf(msg, sizeof(msg), fmt, arg);
	return json_pack("{s:s}", "error", msg);
}

static json_t *buckets_json(const __u64 *h)
{
	json_t *b = json_array();
	int i;

	for (i = 0; i < SDS_HIST_BUCKETS; i++)
		json_array_append_new(b, json_integer(h[i]));
	return b;
}

static json_t *split_hist_json(const struct point_stats *st)
{
	json_t *o = split_json(st);

	json_object_set_new(o, "on_cpu", buckets_json(st->split_hist.on_cpu));
	json_object_set_new(o, "runqueue", buckets_json(st->split_hist.runq));
	json_object_set_new(o, "blocked", buckets_json(st->split_hist.blocked));
	return o;
}

static json_t *hist_json(struct serve *sv, const char *name)
{
	const struct probes *pr = sv->probes;
	const struct point_stats *st;
	struct snapshot *snap;
	json_t *o, *b;
	int i, id;

	for (i = 0; i < pr->npoints; i++)
		if (!strcmp(probes__name(pr, i), name))
			break;
	if (i == pr->npoints)
		return error_json("no point '%s' in this app", name);
	/* A Go point, or one whose exits cannot all be probed. */
	if (probes__kind(pr, i) == POINT_FUNCTION &&
	    pr->pts[i].ret_mode == RET_ENTRY_ONLY)
		return error_json("point '%s' counts entries only: it has no latencies (stats --json says why: returns_why)",
				  name);
	id = i;
	snap = sv->ops->query_snapshot(sv->ctx);
	st = snapshot__point(snap, id);
	/* Unreadable: an internal error; added since the read: no calls yet. */
	if (!st && snap && id < snap->npoints) {
		snapshot__put(snap);
		return NULL;
	}
	if (!st) {
		static const struct point_stats none;

		st = &none;
	}
	o = json_object();
	json_object_set_new(o, "point", json_string(name));
	json_object_set_new(o, "unit", json_string("ns"));
	json_object_set_new(o, "count", json_integer(st->completed));
	b = json_array();
	for (i = 0; i < SDS_HIST_BUCKETS; i++)
		json_array_append_new(b, json_integer(st->hist[i]));
	json_object_set_new(o, "buckets", b);
	/* hist --split: the three parts' histograms, or why there are none. */
	if (st->split && st->split_hists)
		json_object_set_new(o, "split", split_hist_json(st));
	else
		json_object_set_new(o, "split_why", json_string(
			!pr->split.on ? (pr->split.why[0] ? pr->split.why : "no point yet") :
			"not read yet"));
	snapshot__put(snap);
	return o;
}

char *serve__request(struct serve *sv, const char *req)
{
	json_t *reply;
	char *s;

	if (!strcmp(req, "info"))
		reply = info_json(sv);
	else if (!strncmp(req, "hist ", 5))
		reply = hist_json(sv, req + 5);
	else if (!strncmp(req, "keys ", 5))
		reply = serve__keys_json(sv, req + 5);
	else if (!strcmp(req, "deps"))
		reply = sv->ops->deps(sv->ctx, NULL);
	else if (!strncmp(req, "deps ", 5))
		reply = sv->ops->deps(sv->ctx, req + 5);
	else if (!strcmp(req, "events") || !strncmp(req, "events ", 7))
		reply = events__json(sv->events,
				     req[6] ? strtoull(req + 7, NULL, 10) : 0);
	else
		reply = error_json("unknown request '%s'", req);
	if (!reply)
		return NULL;
	/* Reals are the tick lateness in ms: microseconds are enough. */
	s = json_dumps(reply, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(reply);
	return s;
}
