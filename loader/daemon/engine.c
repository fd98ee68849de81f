// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * engine.c - strategies in force, and every tick: fold the counters, run
 * the chain for each point over its sliding window, publish the flag
 * entries and record the transitions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "durable.h"
#include "cli/cmd.h"
#include "publish/failfast.h"
#include "daemon/loader.h"
#include "daemon/tick.h"
#include "capture/capture.h"
#include "deploy/watch.h"
#include "daemon/budget_run.h"
#include "daemon/drill.h"
#include "daemon/engine.h"
#include "daemon/exact_fn.h"
#include "daemon/exact_run.h"
#include "daemon/halfopen_cells.h"
#include "daemon/keep.h"
#include "heartbeat/heartbeat.h"
#include "publish/lbpub.h"
#include "report/uplink.h"
#include "report/metrics.h"

static const struct sds_strategy *point_strategy(struct loader *l, int id)
{
	if (!l->strategies)
		return NULL;
	return strategy_set_find(l->strategies, l->probes.pts[id].spec.name);
}

/* The BPF side's slow-call threshold: the strategy's timeout_ms wins. */
static void point_configure(struct loader *l, int id)
{
	const struct sds_strategy *st = point_strategy(l, id);
	uint64_t timeout_ns = 0;

	if (st && st->timeout_ms > 0)
		timeout_ns = (uint64_t)st->timeout_ms * 1000000ULL;
	probes__configure(&l->probes, id, timeout_ns);
}

int engine__point(struct loader *l, const char *name)
{
	int id = probes__find(&l->probes, name);

	if (id >= 0)
		return id;
	id = probes__add_guard(&l->probes, name);
	if (id < 0)
		return -1;
	memset(&l->run[id], 0, sizeof(l->run[id]));
	memset(&l->halfopen[id], 0, sizeof(l->halfopen[id]));
	flags__set_kind(&l->flags, id, POINT_GUARD);
	counters__track(&l->counters, l->probes.npoints);
	point_configure(l, id);
	return id;
}

/*
 * Open or close the point's event as its visible state changes.  A
 * function point's trip opens at the call that crossed its mark, when
 * that call left its time (exact_fn.c); else at the tick.
 */
static void point_events(struct loader *l, int id, uint32_t reason,
			 uint64_t now_ns)
{
	struct point_run *r = &l->run[id];
	const char *name = l->probes.pts[id].spec.name;

	uint64_t at = exact_fn__tick(&l->exact, id,
				     l->snap ? l->snap->taken_ns : now_ns,
				     r->shown_reason, reason, now_ns);

	if (reason == r->shown_reason)
		return;
	if (r->shown_reason)
		events__add(&l->events, name, r->shown_reason, false);
	if (reason && at)
		events__add_at_call(&l->events, name, reason,
				    l->exact.pt[id].cross_ms);
	else if (reason)
		events__add(&l->events, name, reason, true);
	r->shown_reason = reason;
}

/* Slots of the sessions open now: bit s for slot s (flags__repair). */
static uint64_t live_slots(const struct loader *l)
{
	uint64_t live = 0;
	int s;

	for (s = 0; s < SDS_MAX_PROCS; s++)
		if (l->sessions[s].fd >= 0)
			live |= 1ULL << s;
	return live;
}

/* Calls of point @id in flight at the tick's read; -1: unknown. */
static int64_t point_inflight(struct loader *l, int id)
{
	const struct point_stats *st = snapshot__point(l->snap, id);

	return st && st->gauges ? st->concurrency : -1;
}

static void point_tick(struct loader *l, int id, uint64_t now_ns,
		       uint64_t now_sec, uint64_t live, struct tick_point *tp)
{
	const struct sds_cell *c = flags__cell(&l->flags, id);
	const struct engine_eval_in in = {
		.st = point_strategy(l, id),
		.snap = l->snap,
		/* What guards wrote, as counts the loader bounded: never instructions. */
		.cells = flags__counts(&l->flags, id),
		.now_ns = now_ns,
		.tick_ns = l->tick_ns,
		.now_sec = now_sec,
		.ho = &l->halfopen[id],
		.visit_full = exact__before(&l->exact, id, &l->run[id],
					    point_strategy(l, id), l->snap, now_sec),
	};
	struct engine_eval_out out;

	engine_eval(&l->run[id], id, &in, &out);
	exact__after(&l->exact, id, &l->run[id], in.st, l->snap, now_sec,
		     out.reset, &out.fs);
	/* A hold that (re)starts lets its first probe through one interval on. */
	if (out.hold_started)
		flags__set_probe(&l->flags, id, now_ns + out.fs.probe_interval_ns);
	halfopen__cells(&l->halfopen[id], &l->flags, id, in.st, now_ns, &out.fs);
	drill__tick(&l->drill, id, now_ns, &out.fs);
	failfast__tick(l->failfast, id, now_ns, &out.fs, out.hold_started,
		       l->run[id].drill.err);
	flags__publish(&l->flags, id, &out.fs);
	/* The kernel's count of calls in flight bounds held permits. */
	flags__repair(&l->flags, id, &out.fs, now_ns, live,
		      __atomic_load_n(&c->permits, __ATOMIC_RELAXED) > 0 ?
		      point_inflight(l, id) : -1);
	point_events(l, id, out.shown, now_ns);
	/* The verdict in the tick's record. */
	tp->fs = out.fs;
	tp->shown = out.shown;
}

/*
 * The tick's one read of every point's counters: a new snapshot, unless
 * every buffer is held by queries (then the last one serves again and the
 * seconds are folded at the next tick: nothing is lost, windows lag).
 */
static void engine_read(struct loader *l, uint64_t now_ns, uint64_t now_sec)
{
	struct snapshot *s = snap_pool__take(&l->snaps);
	unsigned int what = COUNTERS_FOLD;
	int id;

	if (!s)
		return;
	/*
	 * The gauges (1 KB a point on 2 CPUs) only when someone reads them
	 * this tick: the heartbeat's concurrency and histogram marks, a
	 * provider's load for balancers (lbpub.c), or a semaphore's permits
	 * to bound.
	 */
	if (lbpub__wants_gauges(&l->lbpub, &l->probes) || l->uplink ||
	    (l->metrics && metrics__waiting(l->metrics)))
		what |= COUNTERS_GAUGES;
	for (id = 0; !(what & COUNTERS_GAUGES) && id < l->probes.npoints; id++)
		if (__atomic_load_n(&flags__cell(&l->flags, id)->permits,
				    __ATOMIC_RELAXED) > 0)
			what |= COUNTERS_GAUGES;
	s->taken_ns = now_ns;
	counters__snap(&l->counters, now_sec, what, s);
	snapshot__put(l->snap);
	l->snap = s;
}

/*
 * The tick's record (tick.h): one, rebuilt at every tick; engine__flush
 * updates the verdicts of the points it evaluates again.
 */
static struct tick_point tick_pts[SDS_MAX_POINTS];
static struct sds_heartbeat tick_build;	/* only build_id and deploys are used */
static struct tick tick_rec = { .pt = tick_pts };

/*
 * The owners of the heartbeat's per-point extras push them into @t: the
 * drills' injections every tick; at a tick that closes a period, the
 * probes' cost (budget_run.c), traffic copy's counts (capture.c) and the
 * build followed (watch.c).
 */
static void tick_heartbeat(struct loader *l, struct tick *t)
{
	int id;

	for (id = 0; id < t->npoints; id++) {
		const struct cell_counts *n = flags__counts(&l->flags, id);
		struct tick_point *tp = &t->pt[id];

		/* A function point's drill fails operations (failfast.c). */
		tp->drill_faults = tp->kind == POINT_FUNCTION ?
				   failfast__drilled(l->failfast, id) :
				   n->drill_faults;
		tp->drill_delays = n->drill_delays;
	}
	t->hb_close = uplink__closing(l->uplink, t->now_sec);
	t->build = NULL;
	if (!t->hb_close)
		return;
	for (id = 0; id < t->npoints; id++) {
		const struct point_stats *st = snapshot__point(t->snap, id);
		struct sds_hb_point *hp = &t->pt[id].hb;

		memset(hp, 0, sizeof(*hp));
		if (!st)
			continue;
		budget__hb_point(&l->budget, id, st, hp);
		capture__heartbeat(l->capture, id, hp);
	}
	tick_build.build_id[0] = '\0';
	tick_build.deploys = 0;
	watch__heartbeat(&l->watch, &tick_build);
	t->build = &tick_build;
}

void engine__tick(struct loader *l)
{
	struct tick *t = &tick_rec;
	uint64_t now_ns = flags_now_ns();
	uint64_t now_sec = counters_now_sec();
	uint64_t live = live_slots(l);
	int id;

	engine_read(l, now_ns, now_sec);
	if (l->snap)
		now_sec = l->snap->sec;
	t->snap = l->snap;
	t->now_ns = now_ns;
	t->now_sec = now_sec;
	t->strategies_version = l->strategies ? l->strategies->version : 0;
	t->npoints = l->probes.npoints;
	t->group = l->group;
	t->app = l->app;
	for (id = 0; id < t->npoints; id++) {
		const struct probe_point *pp = &l->probes.pts[id];

		t->pt[id].name = pp->spec.name;
		t->pt[id].kind = pp->kind;
		t->pt[id].latency = pp->kind != POINT_FUNCTION ||
				    pp->ret_mode != RET_ENTRY_ONLY;
	}
	if (l->uplink) {
		tick_heartbeat(l, t);
		uplink__tick(l->uplink, t);
	}
	for (id = 0; id < t->npoints; id++) {
		drill__take_dirty(&l->drill, id);
		point_tick(l, id, now_ns, now_sec, live, &t->pt[id]);
	}
	lbpub__tick(l->lbpub, &l->flags, t);
	flags__tick(&l->flags, now_ns);
	budget__tick(&l->budget, &l->probes, &l->events, t);
	/* The tick's state whole in the pinned copy (keep.c). */
	keep__commit(l->keep);
}

void engine__flush(struct loader *l)
{
	uint64_t now_ns, live;
	int id;

	if (!drill__dirty(&l->drill) || !l->snap)
		return;
	now_ns = flags_now_ns();
	live = live_slots(l);
	for (id = 0; id < l->probes.npoints; id++)
		if (drill__take_dirty(&l->drill, id))
			point_tick(l, id, now_ns, l->snap->sec, live, &tick_pts[id]);
}

const struct tick *engine__last_tick(const struct loader *l)
{
	(void)l;
	return &tick_rec;
}

struct snapshot *engine__query_snapshot(struct loader *l)
{
	uint64_t now_ns = flags_now_ns();
	struct snapshot *s;
	int i, busy = 0;

	for (i = 0; i < SNAP_POOL; i++)
		busy += l->snaps.s[i] && l->snaps.s[i]->refs;
	/*
	 * Fresh enough and with the gauges (a tick reads them only when it
	 * needs them), or the pool nearly held: the tick's serves.
	 */
	if (l->snap && ((l->snap->gauges &&
			 now_ns - l->snap->taken_ns < 1000000ULL) ||
			busy >= SNAP_POOL - 1))
		return snapshot__get(l->snap);
	s = snap_pool__take(&l->snaps);
	if (!s)
		return snapshot__get(l->snap);
	s->taken_ns = now_ns;
	counters__snap(&l->counters, counters_now_sec(), COUNTERS_GAUGES, s);
	return s;
}

/* Did point @id's strategy change between @old and @new? */
static bool strategy_changed(const struct sds_strategies *old,
			     const struct sds_strategies *new, const char *name)
{
	const struct sds_strategy *a = old ? strategy_set_find(old, name) : NULL;
	const struct sds_strategy *b = new ? strategy_set_find(new, name) : NULL;

	if (!a || !b)
		return a != b;
	return memcmp(a, b, sizeof(*a)) != 0;
}

int engine__apply(struct loader *l, struct sds_strategies *s)
{
	struct sds_strategies *old = l->strategies;
	int i, id;

	l->strategies = s;
	/* Points named in a strategy get their entries before anyone calls. */
	for (i = 0; s && i < s->n; i++)
		if (engine__point(l, s->s[i].point) < 0)
			cmd_err("strategy for '%s': no room for more points (at most %d)",
				s->s[i].point, l->probes.cap);
	/*
	 * Only the points whose strategy changed start afresh: a new version
	 * for one point must not end another point's hold.
	 */
	for (id = 0; id < l->probes.npoints; id++) {
		if (!strategy_changed(old, s, l->probes.pts[id].spec.name))
			continue;
		memset(&l->run[id].cs, 0, sizeof(l->run[id].cs));
		/* The tag goes on: a claim of an old phase must never fit a new one. */
		l->halfopen[id] = (struct halfopen_run){ .tag = l->halfopen[id].tag };
		point_configure(l, id);
		/* New limits start with a full bucket and no pending probe. */
		flags__reset_cell(&l->flags, id);
	}
	free(old);
	/* In force now, not at the next tick: the kill switch trips at once. */
	engine__tick(l);
	return 0;
}

void engine__adopt(struct loader *l, struct sds_strategies *s)
{
	int i, id;

	l->strategies = s;
	for (i = 0; s && i < s->n; i++)
		if (engine__point(l, s->s[i].point) < 0)
			cmd_err("strategy for '%s': no room for more points (at most %d)",
				s->s[i].point, SDS_MAX_POINTS);
	/* The kept chain states stand: only the BPF side is configured. */
	for (id = 0; id < l->probes.npoints; id++)
		point_configure(l, id);
	engine__tick(l);
}

int engine__reload(struct loader *l)
{
	struct sds_strategies *s;
	char err[512];

	if (!l->strategies_path)
		return 0;
	s = malloc(sizeof(*s));
	if (!s)
		return cmd_err("loading strategies: out of memory");
	if (strategy_set_load_file(l->strategies_path, s, err, sizeof(err))) {
		free(s);
		return cmd_err("%s; the strategies in force stay", err);
	}
	return engine__apply(l, s);
}

bool engine__state(struct loader *l, int id, uint32_t *reason, uint32_t *rate)
{
	struct point_run *r = &l->run[id];
	const struct sds_strategy *st = point_strategy(l, id);

	*reason = r->shown_reason;
	*rate = 0;
	if (!r->shown_reason)
		return false;
	*rate = r->cs.tripped && st ? (uint32_t)st->downgrade_rate : 100;
	return true;
}

void engine__save(const struct loader *l, int id, struct point_run *out)
{
	*out = l->run[id];
}

void engine__restore(struct loader *l, int id, const struct point_run *in)
{
	l->run[id] = *in;
}

#define CACHE_MAX	(1 << 20)	/* bytes: 256 points fit many times over */

/*
 * Keep the admin's strategies for a restart while the admin is away: a
 * reader sees the old cache or the new one, whole (common/durable.c).
 */
static void cache_write(struct loader *l)
{
	json_t *doc;
	char *text = NULL;

	if (!l->cache_path[0] || !l->strategies)
		return;
	doc = strategy_set_to_json(l->strategies);
	if (doc)
		text = json_dumps(doc, JSON_COMPACT);
	if (!text)
		errno = ENOMEM;
	if (!text || strlen(text) > CACHE_MAX ||
	    durable_write(l->cache_path, text, strlen(text)))
		cmd_err("caching strategies in %s: %s", l->cache_path,
			text && strlen(text) > CACHE_MAX ? "larger than 1 MiB" :
			strerror(errno));
	free(text);
	json_decref(doc);
}

void engine__admin_reply(struct loader *l)
{
	static struct sds_hb_drill drills[SDS_HB_MAX_DRILLS];
	struct sds_strategies *s = uplink__take_reply(l->uplink);
	int n;

	if (s) {
		engine__apply(l, s);
		cache_write(l);
	}
	n = uplink__take_drills(l->uplink, drills);
	if (n >= 0)
		drill__apply_admin(&l->drill, drills, n, time(NULL));
	engine__flush(l);
}

/*
 * Read the cache: only a regular file (O_NOFOLLOW; O_NONBLOCK and fstat
 * refuse a FIFO or device), at most CACHE_MAX bytes.  A missing cache is
 * normal; a bad one is said and ignored: the admin resends.
 */
int engine__load_cache(struct loader *l, struct sds_strategies **out)
{
	struct sds_strategies *s = NULL;
	char err[600], *buf = NULL;
	const char *why = NULL;
	struct stat st;
	ssize_t n = 0;
	int fd;

	*out = NULL;
	if (!l->cache_path[0])
		return 0;
	fd = open(l->cache_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			cmd_err("ignoring cached strategies: %s: %s", l->cache_path,
				errno == ELOOP ? "a symlink" : strerror(errno));
		return 0;
	}
	if (fstat(fd, &st))
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_size > CACHE_MAX)
		why = "larger than 1 MiB";
	if (!why) {
		buf = malloc(st.st_size + 1);
		s = malloc(sizeof(*s));
		if (!buf || !s) {
			close(fd);
			free(buf);
			free(s);
			return -1;
		}
		n = pread(fd, buf, st.st_size, 0);
		if (n < 0)
			why = strerror(errno);
	}
	close(fd);
	if (!why && strategy_set_parse(buf, n, s, err, sizeof(err)))
		why = err;
	free(buf);
	if (why) {
		cmd_err("ignoring cached strategies: %s: %s", l->cache_path, why);
		free(s);
		return 0;
	}
	*out = s;
	return 0;
}
