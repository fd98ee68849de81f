/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * pressure_run.h - host pressure rules at work (docs/PRESSURE.md): PSI
 * sampled at every tick (host/psi.c), each rule stepped by the pure
 * decider (decide/pressure.c), and what a firing rule does to a point's
 * verdict: a downgrade with reason "overload", or its limits in place of
 * the point's own.  The engine owns one; attach opens it before the
 * strategies are checked.
 */
#ifndef SDS_PRESSURE_RUN_H
#define SDS_PRESSURE_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "decide/pressure.h"
#include "decide/verdict.h"
#include "heartbeat/heartbeat.h"
#include "host/psi.h"

struct events;
struct probes;

struct pressure_run {
	bool opened;			/* @psi was opened (pressure_run__open) */
	struct psi psi;			/* the host's /proc/pressure files */
	struct pressure_ring ring[SDS_PSI_NRES];	/* samples per resource */
	bool readable[SDS_PSI_NRES];	/* the last read worked */
	const struct sds_pressure_set *rules;	/* the strategies' rules in force; NULL: none */
	struct pressure_state st[SDS_PRESSURE_MAX_RULES];	/* per rule */
	int64_t shed;			/* points of priority < @shed are downgraded; 0: none */
	bool shed_seen[SDS_MAX_POINTS];	/* per point id: downgraded by a rule since the last period closed */
};

/* Open the host's PSI files (once, at attach); -1 and @err: cannot. */
int pressure_run__open(struct pressure_run *pr, char *err, size_t errlen);
void pressure_run__close(struct pressure_run *pr);
/*
 * Can @s's rules be enforced here?  -1 and one line in @err when a rule
 * names a resource this host does not report, would downgrade a
 * function point of the first @npoints of @probes that has no
 * :failfast= (it cannot be downgraded), or gives a point limits it
 * cannot enforce (decide/enforce.c).
 */
int pressure_run__check(const struct pressure_run *pr,
			const struct sds_strategies *s,
			const struct probes *probes, int npoints,
			char *err, size_t errlen);
/*
 * @s's rules in force (NULL: none).  Rules that differ from those in
 * force start cleared (a firing one's end is an event); the same rules
 * in a new version keep their state.
 */
void pressure_run__set(struct pressure_run *pr, const struct sds_strategies *s,
		       struct events *ev);
/*
 * Sample PSI and step every rule at @now_ns; a rule that fires or clears
 * is an event.  True when a "limits" rule fired or cleared (the points'
 * strategies in force changed).
 */
bool pressure_run__tick(struct pressure_run *pr, uint64_t now_ns,
			struct events *ev);
/*
 * A point with strategy @written (NULL: none, priority normal) that a
 * firing downgrade rule sheds: downgraded in @fs, reason overload, and
 * @shown says so.  Otherwise untouched.
 */
void pressure_run__verdict(struct pressure_run *pr, int id,
			   const struct sds_strategy *written, uint64_t now_ns,
			   uint64_t tick_ns, struct flag_state *fs, uint32_t *shown);
/*
 * At a tick that closes a heartbeat period: point @id's "overload" (a
 * rule downgraded it since the last one closed) into @hp, and each
 * rule's state into @out (returns how many: 0 without rules).
 */
void pressure_run__hb_point(struct pressure_run *pr, int id, struct sds_hb_point *hp);
int pressure_run__hb_rules(const struct pressure_run *pr,
			   struct sds_hb_rule out[SDS_HB_MAX_RULES]);
/* Does a "limits" rule name @point (its strategy may change with the rule)? */
bool pressure_run__names(const struct pressure_run *pr, const char *point);
/* Point @point's limits from a firing "limits" rule; NULL: none. */
const struct sds_strategy *pressure_run__limits(const struct pressure_run *pr,
						const char *point);
/*
 * `stats`' "pressure": scope, each resource's share now (read only while
 * there are rules: null without), each rule's state.
 */
json_t *pressure_run__json(const struct pressure_run *pr, uint64_t now_ns);

#endif /* SDS_PRESSURE_RUN_H */
