// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* pressure_run.c - host pressure rules in the tick (pressure_run.h). */
#include <stdio.h>
#include <string.h>
#include "state/events.h"
#include "tick/pressure_run.h"
#include "decide/chain.h"
#include "decide/enforce.h"
#include "kernel/probes.h"

/* The share `stats` shows as a resource's pressure now. */
#define PRESSURE_NOW_NS		1000000000ULL

int pressure_run__open(struct pressure_run *pr, char *err, size_t errlen)
{
	memset(pr, 0, sizeof(*pr));
	if (psi__open(&pr->psi, NULL, err, errlen))
		return -1;
	pr->opened = true;
	return 0;
}

void pressure_run__close(struct pressure_run *pr)
{
	if (pr->opened)
		psi__close(&pr->psi);
	pr->opened = false;
	pr->rules = NULL;
}

/*
 * A "limits" rule's fields must be ones its points can enforce, as their
 * own strategies' (decide/enforce.c): a function point named there has
 * no token bucket or semaphore.
 */
static int limits_check(const struct sds_pressure_rule *r, int i,
			const struct probes *probes, int npoints,
			char *err, size_t errlen)
{
	char why[400];
	int k, id;

	for (k = 0; k < r->nlimits; k++)
		for (id = 0; id < npoints; id++) {
			const struct probe_point *pp = &probes->pts[id];

			if (strcmp(pp->spec.name, r->limits[k].point))
				continue;
			/* Before attach loads them, TARGET's points have no kind yet. */
			if (enforce__strategy(&r->limits[k], pp->kind != POINT_GUARD,
					      pp->spec.failfast_ops != 0,
					      why, sizeof(why))) {
				snprintf(err, errlen, "pressure rule %d: limits: %s", i, why);
				return -1;
			}
		}
	return 0;
}

bool pressure_run__names(const struct pressure_run *pr, const char *point)
{
	int i;

	for (i = 0; pr->rules && i < pr->rules->n; i++)
		if (pr->rules->r[i].action == SDS_PRESSURE_LIMITS &&
		    pressure_rule_limits(&pr->rules->r[i], point))
			return true;
	return false;
}

int pressure_run__check(const struct pressure_run *pr,
			const struct sds_strategies *s,
			const struct probes *probes, int npoints,
			char *err, size_t errlen)
{
	int i, id;

	for (i = 0; s && i < s->pressure.n; i++) {
		const struct sds_pressure_rule *r = &s->pressure.r[i];

		if (!pr->opened || !psi__has(&pr->psi, r->resource)) {
			snprintf(err, errlen,
				 "pressure rule %d: this host does not report %s pressure (no %s/%s)",
				 i, pressure_resource_name(r->resource),
				 pr->opened ? pr->psi.dir : PSI_DIR,
				 pressure_resource_name(r->resource));
			return -1;
		}
		if (r->action == SDS_PRESSURE_LIMITS &&
		    limits_check(r, i, probes, npoints, err, errlen))
			return -1;
		if (r->action != SDS_PRESSURE_DOWNGRADE)
			continue;
		/*
		 * A function point is downgraded only by failing its
		 * dependency calls (docs/FAILFAST.md): without :failfast= a
		 * rule could not shed it.
		 */
		for (id = 0; id < npoints; id++) {
			const struct probe_point *pp = &probes->pts[id];
			const struct sds_strategy *st =
				strategy_set_find(s, pp->spec.name);
			int64_t prio = st ? st->priority : SDS_PRIO_NORMAL;

			/* Before attach loads them, TARGET's points have no kind yet. */
			if (pp->kind == POINT_GUARD || pp->spec.failfast_ops ||
			    prio > (int64_t)r->priority)
				continue;
			snprintf(err, errlen,
				 "pressure rule %d: function point '%s' has no :failfast=, so it cannot be downgraded",
				 i, pp->spec.name);
			return -1;
		}
	}
	return 0;
}

void pressure_run__set(struct pressure_run *pr, const struct sds_strategies *s,
			struct events *ev)
{
	const struct sds_pressure_set *old = pr->rules;
	const struct sds_pressure_set *new = s && s->pressure.n ? &s->pressure : NULL;
	char name[32];
	int i;

	/* The same rules in a new version: what they are doing goes on. */
	if (old && new && old->n == new->n &&
	    !memcmp(old->r, new->r, new->n * sizeof(new->r[0]))) {
		pr->rules = new;
		return;
	}
	for (i = 0; old && i < old->n; i++) {
		if (!pr->st[i].firing)
			continue;
		snprintf(name, sizeof(name), "pressure.%d", i);
		events__add(ev, name, SDS_REASON_OVERLOAD, false);
	}
	pr->rules = new;
	memset(pr->st, 0, sizeof(pr->st));
	for (i = 0; i < SDS_PRESSURE_MAX_RULES; i++)
		pr->st[i].pct_bp = -1;
	pr->shed = 0;
}

/* Rule @i cleared without its resource's samples: the app is never held by stale state. */
static bool rule_drop(struct pressure_run *pr, int i, uint64_t now_ns,
		      struct events *ev)
{
	struct pressure_state *s = &pr->st[i];
	char name[32];

	s->pct_bp = -1;
	if (!s->firing)
		return false;
	s->firing = false;
	s->since_ns = now_ns;
	snprintf(name, sizeof(name), "pressure.%d", i);
	events__add(ev, name, SDS_REASON_OVERLOAD, false);
	return true;
}

bool pressure_run__tick(struct pressure_run *pr, uint64_t now_ns,
			struct events *ev)
{
	bool limits = false;
	int64_t shed = 0;
	int i;

	if (!pr->opened)
		return false;
	for (i = 0; i < SDS_PSI_NRES; i++) {
		uint64_t some, full;

		/*
		 * No rules, nothing read: the tick costs what it did, and
		 * rules that come later judge no old samples.
		 */
		if (!pr->rules) {
			pr->ring[i].n = 0;
			pr->readable[i] = false;
			continue;
		}
		if (!psi__has(&pr->psi, i))
			continue;
		pr->readable[i] = !psi__read(&pr->psi, i, &some, &full);
		if (pr->readable[i])
			pressure_ring__add(&pr->ring[i], now_ns, some, full);
		else
			pr->ring[i].n = 0;
	}
	for (i = 0; pr->rules && i < pr->rules->n; i++) {
		const struct sds_pressure_rule *r = &pr->rules->r[i];
		struct pressure_state *s = &pr->st[i];
		bool changed;
		char name[32];

		if (!pr->readable[r->resource])
			changed = rule_drop(pr, i, now_ns, ev);
		else if ((changed = pressure_state__step(s, r, &pr->ring[r->resource],
							 now_ns))) {
			snprintf(name, sizeof(name), "pressure.%d", i);
			events__add(ev, name, SDS_REASON_OVERLOAD, s->firing);
		}
		if (changed && r->action == SDS_PRESSURE_LIMITS)
			limits = true;
		if (s->firing && r->action == SDS_PRESSURE_DOWNGRADE &&
		    (int64_t)r->priority + 1 > shed)
			shed = r->priority + 1;
	}
	pr->shed = shed;
	return limits;
}

void pressure_run__verdict(struct pressure_run *pr, int id,
			   const struct sds_strategy *written, uint64_t now_ns,
			   uint64_t tick_ns, struct flag_state *fs, uint32_t *shown)
{
	int64_t prio = written ? written->priority : SDS_PRIO_NORMAL;

	if (prio >= pr->shed)
		return;
	/* The heartbeat says the rule shed it this period (a flag: flushes repeat a tick). */
	if (id >= 0 && id < SDS_MAX_POINTS)
		pr->shed_seen[id] = true;
	/* A trip that downgrades every call already says why. */
	if ((fs->active & SDS_ACT_DOWNGRADE) && fs->rate >= 100 && *shown)
		return;
	fs->active |= SDS_ACT_DOWNGRADE;
	fs->reason = SDS_REASON_OVERLOAD;
	fs->rate = 100;
	/* Renewed every tick while it fires: a dead loader's lapses (fail open). */
	fs->expires_ns = now_ns + tick_ns + CHAIN_EXPIRY_NS;
	*shown = SDS_REASON_OVERLOAD;
}

void pressure_run__hb_point(struct pressure_run *pr, int id, struct sds_hb_point *hp)
{
	if (id < 0 || id >= SDS_MAX_POINTS)
		return;
	hp->overload = pr->shed_seen[id];
	pr->shed_seen[id] = false;
}

int pressure_run__hb_rules(const struct pressure_run *pr,
			   struct sds_hb_rule out[SDS_HB_MAX_RULES])
{
	int i;

	for (i = 0; pr->rules && i < pr->rules->n && i < SDS_HB_MAX_RULES; i++) {
		out[i].firing = pr->st[i].firing;
		out[i].fired = pr->st[i].fired;
	}
	return i;
}

const struct sds_strategy *pressure_run__limits(const struct pressure_run *pr,
						const char *point)
{
	const struct sds_strategy *st;
	int i;

	for (i = 0; pr->rules && i < pr->rules->n; i++) {
		const struct sds_pressure_rule *r = &pr->rules->r[i];

		if (!pr->st[i].firing || r->action != SDS_PRESSURE_LIMITS)
			continue;
		st = pressure_rule_limits(r, point);
		if (st)
			return st;
	}
	return NULL;
}

/* A share in 1/100 % as a JSON number of percent; null: not known. */
static json_t *pct_json(int64_t bp)
{
	return bp < 0 ? json_null() : json_real((double)bp / 100.0);
}

json_t *pressure_run__json(const struct pressure_run *pr, uint64_t now_ns)
{
	json_t *o = json_object(), *res = json_object(), *rules = json_array();
	int i;

	/* The app's cgroup is not read: every rule is the host's. */
	json_object_set_new(o, "scope", json_string("host"));
	json_object_set_new(o, "dir", json_string(pr->opened ? pr->psi.dir : PSI_DIR));
	for (i = 0; i < SDS_PSI_NRES; i++) {
		const char *name = pressure_resource_name(i);

		if (!pr->opened || !psi__has(&pr->psi, i) || !pr->readable[i]) {
			json_object_set_new(res, name, json_null());
			continue;
		}
		json_object_set_new(res, name, json_pack("{s:o, s:o}",
			"some_pct", pct_json(pressure_ring__pct(&pr->ring[i], SDS_PSI_SOME,
								PRESSURE_NOW_NS, 0)),
			"full_pct", pct_json(pressure_ring__pct(&pr->ring[i], SDS_PSI_FULL,
								PRESSURE_NOW_NS, 0))));
	}
	json_object_set_new(o, "resources", res);
	for (i = 0; pr->rules && i < pr->rules->n; i++) {
		const struct sds_pressure_rule *r = &pr->rules->r[i];
		const struct pressure_state *s = &pr->st[i];

		json_array_append_new(rules, json_pack(
			"{s:i, s:s, s:s, s:s, s:b, s:o, s:o, s:I}",
			"rule", i,
			"resource", pressure_resource_name(r->resource),
			"kind", pressure_kind_name(r->kind),
			"action", r->action == SDS_PRESSURE_LIMITS ? "limits" : "downgrade",
			"firing", s->firing,
			"pct", pct_json(s->pct_bp),
			"since_ms", s->since_ns && now_ns >= s->since_ns ?
				    json_integer((json_int_t)((now_ns - s->since_ns) / 1000000)) :
				    json_null(),
			"fired", (json_int_t)s->fired));
	}
	json_object_set_new(o, "rules", rules);
	return o;
}
