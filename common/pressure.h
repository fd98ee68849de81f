/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Host pressure rules (docs/PRESSURE.md): the strategies document's
 * top-level "pressure" array and each point's "priority", as the loader
 * and the admin read them.
 *
 *   "pressure": [
 *     {"resource": "cpu", "kind": "some", "above_pct": 40, "for_ms": 5000,
 *      "action": "downgrade", "priority": "low"},
 *     {"resource": "memory", "kind": "full", "above_pct": 5, "for_ms": 1000,
 *      "action": "limits", "limits": {"order": {"token_rate": 100}}}]
 *
 * A rule fires when the share of wall time the resource stalled (PSI's
 * "total", over the rule's own window of for_ms) is above above_pct, and
 * clears when that share over clear_ms is at or below below_pct.
 * Validated whole here; whether this host reports the resource is the
 * loader's to say (loader/tick/pressure_run.c).
 *
 * The rules hold points' limits and the strategies hold the rules:
 * strategy.h includes this header once struct sds_strategy is defined,
 * and this one includes strategy.h first, so either can be included.
 */
#include "strategy.h"
#ifndef SDS_PRESSURE_H
#define SDS_PRESSURE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define SDS_PRESSURE_MAX_RULES	8	/* rules of one document */
#define SDS_PRESSURE_MAX_LIMITS	8	/* points one "limits" rule names */
#define SDS_PRESSURE_WIN_MIN_MS	500	/* the kernel's shortest PSI trigger window */
#define SDS_PRESSURE_WIN_MAX_MS	10000	/* ... and its longest */
#define SDS_PRESSURE_MARGIN_PCT	10	/* below_pct's default: above_pct minus this */

/* The resources /proc/pressure/ reports. */
enum sds_psi_resource {
	SDS_PSI_CPU,
	SDS_PSI_MEMORY,
	SDS_PSI_IO,
	SDS_PSI_NRES,
};

/* PSI's two lines: some task stalled, or every non-idle task stalled. */
enum sds_psi_kind {
	SDS_PSI_SOME,
	SDS_PSI_FULL,
};

/* A point's "priority": which downgrade rules shed it (low first). */
enum sds_priority {
	SDS_PRIO_LOW = 0,
	SDS_PRIO_NORMAL = 1,		/* the default: a point with no strategy is normal */
	SDS_PRIO_HIGH = 2,
};

enum sds_pressure_action {
	SDS_PRESSURE_DOWNGRADE,		/* downgrade the points of priority <= the rule's */
	SDS_PRESSURE_LIMITS,		/* the rule's limits replace the points' own */
};

/* One rule, validated. */
struct sds_pressure_rule {
	uint32_t resource;		/* enum sds_psi_resource */
	uint32_t kind;			/* enum sds_psi_kind */
	uint32_t action;		/* enum sds_pressure_action */
	uint32_t priority;		/* downgrade: the highest priority shed (default low) */
	int64_t above_pct;		/* 0..99: fires above this share of stalled time */
	int64_t below_pct;		/* 0..above_pct: clears at or below it */
	int64_t for_ms;			/* the window judged to fire, 500..10000 */
	int64_t clear_ms;		/* the window judged to clear, 500..10000 (default for_ms) */
	int nlimits;			/* limits: points in @limits, 1..SDS_PRESSURE_MAX_LIMITS */
	struct sds_strategy limits[SDS_PRESSURE_MAX_LIMITS];	/* sorted by point name */
};

struct sds_pressure_set {
	int n;				/* rules in @r */
	struct sds_pressure_rule r[SDS_PRESSURE_MAX_RULES];
};

struct sds_strategies;

/*
 * Parse and validate @arr (the document's "pressure", NULL: none) against
 * the points of @s (priorities already read) into @out.  On error returns
 * -1 with one line in @err naming the rule, e.g.
 *   "pressure rule 0: above_pct must be an integer 0..99"
 */
int pressure_set_from_json(json_t *arr, const struct sds_strategies *s,
			   struct sds_pressure_set *out, char *err, size_t errlen);
/* The rules as pressure_set_from_json() reads them; NULL: none to write. */
json_t *pressure_set_to_json(const struct sds_pressure_set *p);

/* "priority": "low" | "normal" | "high" into @out; -1: none of them. */
int pressure_priority_parse(const char *name, int64_t *out);
/* "low", "normal", "high"; "" for anything else. */
const char *pressure_priority_name(int64_t prio);
/* "cpu", "memory", "io"; "" for anything else. */
const char *pressure_resource_name(uint32_t res);
/* "some", "full"; "" for anything else. */
const char *pressure_kind_name(uint32_t kind);

/* Point @point's limits while rule @r fires; NULL: the rule names it not. */
const struct sds_strategy *pressure_rule_limits(const struct sds_pressure_rule *r,
						const char *point);

#endif /* SDS_PRESSURE_H */
