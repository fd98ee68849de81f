// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * apply.c - strategies checked against what each point can enforce, and
 * applied: from the file (SIGHUP), the admin, the cache or an adopted
 * loader's pins.  Only the points whose strategy changed start afresh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cmd.h"
#include "tick/engine.h"
#include "tick/engine_internal.h"
#include "keys/keys.h"
#include "kernel/probes.h"
#include "publish/flags.h"
#include "decide/keylimit.h"
#include "decide/enforce.h"

/*
 * A point's strategy is new: the BPF side's slow-call threshold (the
 * strategy's timeout_ms wins) and its adaptive limit, afresh.
 */
void engine__point_configure(struct engine *e, int id)
{
	const struct sds_strategy *st = engine__point_strategy(e, id);
	uint64_t timeout_ns = 0;

	if (st && st->timeout_ms > 0)
		timeout_ns = (uint64_t)st->timeout_ms * 1000000ULL;
	probes__configure(e->env.probes, id, timeout_ns);
	/* A keyed point's table at its key_capacity (docs/KEYS.md). */
	if (keys__keyed(e->env.probes, id)) {
		char err[256];

		if (keys__table(e->env.probes, id, st ? st->key_capacity : SDS_OFF,
				err, sizeof(err)))
			cmd_err("%s", err);
	}
	adaptive_run__configure(&e->adaptive, id, st, flags_now_ns());
	/* Key limits are the written strategy's: its overrides live in its document. */
	keys_run__configure(&e->keys, id, e->strategies, engine__point_written(e, id),
			    flags_now_ns());
}

int engine__check_key_limits(const struct sds_strategies *s,
			     const struct sds_strategy *st, bool function,
			     unsigned int key_kind, bool failfast, char *err,
			     size_t errlen)
{
	struct keylimit_override *ov;
	struct keylimit_limits def;
	int rc;

	if (!st || enforce__key_limits(st, function, key_kind != 0, failfast,
				       err, errlen))
		return st ? -1 : 0;
	if (!st->key_ov_n || (function && !key_kind))
		return 0;
	ov = calloc(SDS_KEY_OVERRIDES_MAX, sizeof(*ov));
	if (!ov) {
		snprintf(err, errlen, "point '%s': key_overrides: out of memory",
			 st->point);
		return -1;
	}
	rc = keylimit__from_strategy(s, st, function ? key_kind : SDS_KEY_BUF,
				     &def, ov, err, errlen);
	free(ov);
	return rc < 0 ? -1 : 0;
}

/* engine__check_key_limits of point @id of @pr. */
int engine__point_key_limits(const struct probes *pr, int id,
			     const struct sds_strategies *s,
			     const struct sds_strategy *st, char *err,
			     size_t errlen)
{
	const struct probe_point *pp = &pr->pts[id];

	return engine__check_key_limits(s, st, pp->kind == POINT_FUNCTION,
					pp->spec.key_kind,
					pp->spec.failfast_ops != 0, err, errlen);
}

int engine__check(const struct probes *pr, const struct sds_strategies *s,
		  char *err, size_t errlen)
{
	int i, id;

	for (i = 0; s && i < s->n; i++) {
		/* The blocked part needs the split, which this loader has not. */
		if (strategy_is_adaptive(&s->s[i]) &&
		    s->s[i].adaptive_signal == SDS_ADAPTIVE_BY_BLOCKED &&
		    (pr->split.off || (!pr->split.loaded && pr->split.why[0]))) {
			snprintf(err, errlen,
				 "point '%s': adaptive_signal \"blocked\" needs the split of calls' time, which this loader has not (%s; docs/SPLIT.md)",
				 s->s[i].point, pr->split.off ? "--no-split" : pr->split.why);
			return -1;
		}
		id = probes__find(pr, s->s[i].point);
		if (id >= 0 &&
		    (enforce__strategy(&s->s[i], pr->pts[id].kind == POINT_FUNCTION,
				       pr->pts[id].spec.failfast_ops != 0, err, errlen) ||
		     enforce__keys(&s->s[i], pr->pts[id].kind == POINT_FUNCTION,
				   pr->pts[id].spec.key_kind != 0, err, errlen) ||
		     engine__point_key_limits(pr, id, s, &s->s[i], err, errlen)))
			return -1;
	}
	return 0;
}

int engine__set_files(struct engine *e, const char *strategies_path,
		      const char *cache_dir, const char *group, const char *app)
{
	e->strategies_path = strategies_path;
	e->cache_path[0] = '\0';
	if (!cache_dir)
		return 0;
	if (snprintf(e->cache_path, sizeof(e->cache_path),
		     "%s/%s.%s.strategies.json", cache_dir, group, app) >=
	    (int)sizeof(e->cache_path)) {
		e->cache_path[0] = '\0';
		return -1;
	}
	return 0;
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

int engine__apply(struct engine *e, struct sds_strategies *s)
{
	struct sds_strategies *old = e->strategies;
	/* Each point's limits from a firing pressure rule before the change. */
	const struct sds_strategy *lim[SDS_MAX_POINTS];
	int i, id, n = e->env.probes->npoints;
	char err[512];

	/*
	 * A field no point here can enforce, or a pressure rule this host
	 * cannot (docs/PRESSURE.md): refused whole, the old ones stay.
	 */
	if (engine__check(e->env.probes, s, err, sizeof(err)) ||
	    pressure_run__check(&e->pressure, s, e->env.probes,
				e->env.probes->npoints, err, sizeof(err))) {
		snprintf(e->apply_err, sizeof(e->apply_err), "%s", err);
		free(s);
		return cmd_err("%s; the strategies in force stay", err);
	}
	for (id = 0; id < n; id++)
		lim[id] = pressure_run__limits(&e->pressure, e->env.probes->pts[id].spec.name);
	e->strategies = s;
	pressure_run__set(&e->pressure, s, e->env.events);
	/* Points named in a strategy get their entries before anyone calls. */
	for (i = 0; s && i < s->n; i++)
		if (engine__point(e, s->s[i].point) < 0)
			cmd_err("strategy for '%s': no room for more points (at most %d)",
				s->s[i].point, e->env.probes->cap);
	/*
	 * Only the points whose strategy changed start afresh: a new version
	 * for one point must not end another point's hold.
	 */
	for (id = 0; id < e->env.probes->npoints; id++) {
		if (!strategy_changed(old, s, e->env.probes->pts[id].spec.name))
			continue;
		memset(&e->run[id].cs, 0, sizeof(e->run[id].cs));
		/* The tag goes on: a claim of an old phase must never fit a new one. */
		e->halfopen[id] = (struct halfopen_run){ .tag = e->halfopen[id].tag };
		engine__point_configure(e, id);
		/* New limits start with a full bucket and no pending probe. */
		flags__reset_cell(e->env.flags, id);
	}
	/* A firing "limits" rule the new rules changed or dropped: reconfigured. */
	for (id = 0; id < n; id++) {
		const struct sds_strategy *now =
			pressure_run__limits(&e->pressure, e->env.probes->pts[id].spec.name);

		if (lim[id] && (!now || memcmp(lim[id], now, sizeof(*now))))
			engine__point_configure(e, id);
	}
	free(old);
	/* In force now, not at the next tick: the kill switch trips at once. */
	engine__tick(e);
	return 0;
}

void engine__adopt(struct engine *e, struct sds_strategies *s)
{
	int i, id;

	e->strategies = s;
	pressure_run__set(&e->pressure, s, e->env.events);
	for (i = 0; s && i < s->n; i++)
		if (engine__point(e, s->s[i].point) < 0)
			cmd_err("strategy for '%s': no room for more points (at most %d)",
				s->s[i].point, SDS_MAX_POINTS);
	/* The kept chain states stand: only the BPF side is configured. */
	for (id = 0; id < e->env.probes->npoints; id++)
		engine__point_configure(e, id);
	engine__tick(e);
}

int engine__reload(struct engine *e)
{
	struct sds_strategies *s;
	char err[512];

	if (!e->strategies_path)
		return 0;
	s = malloc(sizeof(*s));
	if (!s)
		return cmd_err("loading strategies: out of memory");
	if (strategy_set_load_file(e->strategies_path, s, err, sizeof(err))) {
		free(s);
		return cmd_err("%s; the strategies in force stay", err);
	}
	return engine__apply(e, s);
}

