/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Strategies (docs/DESIGN.md §4): the per-point limits of one app, versioned as
 * a whole.  The JSON codec here is the one the loader (strategy file,
 * heartbeat replies) and the admin (API bodies, storage) share.
 *
 *   {"version": 3,
 *    "points": {"order": {"visit_threshold": 1000, "downgrade_rate": 100}}}
 *
 * Every limit is optional; a missing or negative value disables it and is
 * stored as -1 (SDS_OFF).  The half-open and slow-rate settings
 * (probe_calls, probe_failure_pct, slow_rate_*) are no limits that a
 * negative turns off but settings with a default: a negative is refused.
 * Unknown fields are refused, so a typo cannot silently disable a limit.
 */
#ifndef SDS_STRATEGY_H
#define SDS_STRATEGY_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "sds_types.h"
#include "sds_keys.h"

#define SDS_OFF			(-1)
#define SDS_MAX_STRATEGIES	SDS_MAX_POINTS

/* The limits of one point; SDS_OFF where not set. */
struct sds_strategy {
	char point[SDS_NAME_MAX + 1];	/* point name */
	int64_t visit_threshold;	/* visits - downgrades over the window; 0: kill switch */
	int64_t token_rate;		/* tokens per second of the guard's bucket */
	int64_t token_bucket;		/* most tokens the bucket holds (default token_rate) */
	int64_t concurrent_threshold;	/* calls in flight at once, per app on the host */
	int64_t timeout_ms;		/* slower calls count as timeouts */
	int64_t timeout_count_threshold;	/* >= 1: timeouts in the window that trip */
	int64_t exception_threshold;	/* >= 1: exceptions in the window that trip */
	int64_t exception_rate_threshold;	/* 0..100: percent of passed calls that failed */
	int64_t exception_rate_start;	/* the rate is judged only above this many visits */
	int64_t downgrade_rate;		/* 0..100, default 100: share of calls downgraded once tripped */
	int64_t delay_ms;		/* once tripped, stay downgraded this long */
	int64_t retry_interval_ms;	/* during the hold, open a probe phase this often */
	int64_t probe_calls;		/* 1..1000 (off: 1): probes of one half-open phase */
	int64_t probe_failure_pct;	/* 0..100 (off: 0): most failed or slow probes, %, that close */
	int64_t slow_rate_threshold;	/* 1..100: percent of passed calls slower than timeout_ms; 0: off */
	int64_t slow_rate_start;	/* the slow rate is judged only above this many visits */
	int64_t copy_write;		/* "copy": "write" (1) or "read" (0, default): the copy records' write flag */
	/*
	 * Cluster-wide limits (docs/CLUSTER.md): the whole app's, every host
	 * together; the admin divides them among the live hosts and each
	 * enforces its share as it would the local field.
	 */
	int64_t cluster_visit_threshold;	/* visits - downgrades of the app over the window */
	int64_t cluster_token_rate;	/* tokens per second, the fleet's */
	int64_t cluster_token_bucket;	/* the fleet's burst (default cluster_token_rate) */
	/*
	 * Adaptive concurrency (docs/ADAPTIVE.md): the loader finds the
	 * point's concurrency limit itself, between a floor and a ceiling.
	 */
	int64_t adaptive_limit;		/* enum sds_adaptive; SDS_ADAPTIVE_OFF: none */
	int64_t adaptive_min;		/* the floor, >= 1 (required with adaptive_limit) */
	int64_t adaptive_max;		/* the ceiling, <= SDS_ADAPTIVE_MAX (required) */
	int64_t adaptive_initial;	/* the first limit; off: the ceiling's half or min */
	int64_t adaptive_signal;	/* enum sds_adaptive_signal */
	/* Host pressure (docs/PRESSURE.md): enum sds_priority, default normal. */
	int64_t priority;
	/* Hot keys (docs/KEYS.md): keys a keyed point keeps, 1..65536; off: 4,096. */
	int64_t key_capacity;
	/*
	 * Hot keys (docs/KEYS.md "Limits"): the limits of each key of the
	 * point, and the keys with limits of their own (key_overrides):
	 * entries key_ov_first .. + key_ov_n of the document's
	 * sds_strategies.key_ov (strategy_key_overrides()).
	 */
	int64_t key_visit_threshold;	/* visits of one key over the window that block it */
	int64_t key_token_rate;		/* calls of one key a second */
	int64_t key_token_bucket;	/* one key's burst (default key_token_rate) */
	int32_t key_ov_first;
	int32_t key_ov_n;
};

/*
 * A key_overrides entry: a key with limits of its own.  A field it leaves
 * out is the point's (SDS_KEY_INHERIT); a negative one turns that limit
 * off for this key.
 */
#define SDS_KEY_INHERIT		(-2)
#define SDS_KEY_OVERRIDES_ALL	4096	/* key_overrides entries of all points */
struct sds_key_override {
	char key[SDS_KEY_MAX + 1];	/* the key's text (1..64 bytes), NUL-terminated */
	int64_t key_visit_threshold;	/* SDS_KEY_INHERIT, SDS_OFF or a limit */
	int64_t key_token_rate;
	int64_t key_token_bucket;	/* absent with a rate of its own: that rate */
};

/* The pressure rules hold points' limits: their header needs the struct above. */
#include "pressure.h"

/* "adaptive_limit": the algorithms (loader/decide/adaptive.h). */
enum sds_adaptive {
	SDS_ADAPTIVE_OFF = 0,		/* absent or "off" */
	SDS_ADAPTIVE_GRADIENT2 = 1,
	SDS_ADAPTIVE_VEGAS = 2,
	SDS_ADAPTIVE_AIMD = 3,
};
/* "adaptive_signal": what latency the limit steers by. */
enum sds_adaptive_signal {
	SDS_ADAPTIVE_BY_LATENCY = 0,	/* "latency" (default): the whole call */
	SDS_ADAPTIVE_BY_BLOCKED = 1,	/* "blocked": the call's blocked part (the split) */
};
#define SDS_ADAPTIVE_MAX	((int64_t)1 << 31)	/* the largest adaptive_max */

/* "gradient2", "vegas", "aimd"; "off". */
const char *strategy_adaptive_name(int64_t algo);
/* "latency", "blocked". */
const char *strategy_adaptive_signal_name(int64_t signal);

/* Does @st have an adaptive concurrency limit? */
static inline int strategy_is_adaptive(const struct sds_strategy *st)
{
	return st && st->adaptive_limit > SDS_ADAPTIVE_OFF;
}

/* Does @st have a cluster-wide limit? */
static inline int strategy_is_cluster(const struct sds_strategy *st)
{
	return st && (st->cluster_visit_threshold >= 0 || st->cluster_token_rate > 0);
}

/* All strategies of one app. */
struct sds_strategies {
	int64_t version;		/* >= 0; a new version replaces the old as a whole */
	int n;				/* points used in @s */
	struct sds_strategy s[SDS_MAX_STRATEGIES];	/* sorted by point name */
	struct sds_pressure_set pressure;	/* host pressure rules (pressure.h) */
	int nkey_ov;			/* entries used in @key_ov */
	struct sds_key_override key_ov[SDS_KEY_OVERRIDES_ALL];	/* by point, in its order */
};

/* The key_overrides of @st in @s, and their number in *@n. */
static inline const struct sds_key_override *
strategy_key_overrides(const struct sds_strategies *s,
		       const struct sds_strategy *st, int *n)
{
	*n = st->key_ov_n;
	return st->key_ov_n ? &s->key_ov[st->key_ov_first] : NULL;
}

/*
 * The limits override @o gives its key on point @st, resolved: the
 * point's where it says nothing, a bucket of its own rate where it sets
 * a rate and no bucket.
 */
void strategy_key_override_limits(const struct sds_strategy *st,
				  const struct sds_key_override *o,
				  int64_t *visit_threshold, int64_t *token_rate,
				  int64_t *token_bucket);

/* Reset @st to "everything off" for @point (downgrade_rate 100). */
void strategy_init(struct sds_strategy *st, const char *point);

/*
 * Parse and validate a strategies document.  On error returns -1 and
 * writes a message naming the point and field into @err, e.g.
 *   "point 'order': exception_rate_threshold must be an integer 0..100"
 *   "point 'order': unknown field 'visits_threshold'"
 *   "version must be a non-negative integer"
 * @out is only written on success.
 */
int strategy_set_from_json(json_t *doc, struct sds_strategies *out,
			   char *err, size_t errlen);
int strategy_set_parse(const char *text, size_t len, struct sds_strategies *out,
		       char *err, size_t errlen);
int strategy_set_load_file(const char *path, struct sds_strategies *out,
			   char *err, size_t errlen);

/* One point's strategy as a JSON object, fields that are off left out. */
json_t *strategy_to_json(const struct sds_strategy *st);
/*
 * The same with the point's key_overrides, which live in its document
 * @s: a strategy alone (strategy_to_json) leaves them out.
 */
json_t *strategy_to_json_in(const struct sds_strategies *s,
			    const struct sds_strategy *st);
/* The whole document, as strategy_set_from_json() reads it. */
json_t *strategy_set_to_json(const struct sds_strategies *s);

/* Probes of one half-open phase (probe_calls; 1 when off). */
static inline int64_t strategy_probe_calls(const struct sds_strategy *st)
{
	return st && st->probe_calls > 1 ? st->probe_calls : 1;
}

/* The strategy of @point, or NULL. */
const struct sds_strategy *strategy_set_find(const struct sds_strategies *s,
					     const char *point);

#endif /* SDS_STRATEGY_H */
