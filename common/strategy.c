// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* strategy.c - the strategies JSON codec and its validation. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "names.h"
#include "strategy.h"
#include "sds_keys.h"
#include "sdsjson.h"

#define LIMIT_MAX	((int64_t)1 << 40)	/* far above any sane limit */

/* One field of a strategy: its name, where it lives, what it accepts. */
struct field {
	const char *name;		/* JSON key */
	size_t off;			/* offset in struct sds_strategy */
	int64_t min;			/* smallest enabled value */
	int64_t max;			/* largest value */
	bool strict;			/* a setting with a default: a negative is refused */
};

#define F(n, lo, hi) { #n, offsetof(struct sds_strategy, n), lo, hi, false }
#define S(n, lo, hi) { #n, offsetof(struct sds_strategy, n), lo, hi, true }
static const struct field fields[] = {
	F(visit_threshold, 0, LIMIT_MAX),
	F(token_rate, 1, 1000000000),	/* 1 ns per token at most */
	F(token_bucket, 1, 1000000000),	/* burst_ns stays in 64 bits */
	F(concurrent_threshold, 0, LIMIT_MAX),
	F(timeout_ms, 1, 3600000),
	F(timeout_count_threshold, 1, LIMIT_MAX),
	F(exception_threshold, 1, LIMIT_MAX),
	F(exception_rate_threshold, 0, 100),
	F(exception_rate_start, 0, LIMIT_MAX),
	F(downgrade_rate, 0, 100),
	F(delay_ms, 0, 86400000),
	F(retry_interval_ms, 1, 86400000),
	S(probe_calls, 1, 1000),
	S(probe_failure_pct, 0, 100),
	S(slow_rate_threshold, 0, 100),
	S(slow_rate_start, 0, LIMIT_MAX),
	/* The fleet's limits: a negative is refused, not read as "off". */
	S(cluster_visit_threshold, 0, LIMIT_MAX),
	S(cluster_token_rate, 1, 1000000000),
	S(cluster_token_bucket, 1, 1000000000),
	/* Adaptive concurrency: bounds a negative cannot turn off. */
	S(adaptive_min, 1, SDS_ADAPTIVE_MAX),
	S(adaptive_max, 1, SDS_ADAPTIVE_MAX),
	S(adaptive_initial, 1, SDS_ADAPTIVE_MAX),
	/* Hot keys (docs/KEYS.md): the keys a keyed point's table keeps. */
	S(key_capacity, 1, 65536),
	/* Hot keys (docs/KEYS.md "Limits"): the same bounds as the point's. */
	F(key_visit_threshold, 1, LIMIT_MAX),
	F(key_token_rate, 1, 1000000000),
	F(key_token_bucket, 1, 1000000000),
};
/* The literal above is what tests/man reads against the page. */
_Static_assert(SDS_KEY_CAPACITY_MAX == 65536, "key_capacity's bound");
#undef F
#undef S
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static int64_t *field_ptr(struct sds_strategy *st, const struct field *f)
{
	return (int64_t *)((char *)st + f->off);
}

void strategy_init(struct sds_strategy *st, const char *point)
{
	size_t i;

	memset(st, 0, sizeof(*st));
	snprintf(st->point, sizeof(st->point), "%s", point);
	for (i = 0; i < NFIELDS; i++)
		*field_ptr(st, &fields[i]) = SDS_OFF;
	st->downgrade_rate = 100;
	st->priority = SDS_PRIO_NORMAL;
	st->adaptive_limit = SDS_ADAPTIVE_OFF;
	st->adaptive_signal = SDS_ADAPTIVE_BY_LATENCY;
}

static const char *const adaptive_names[] = {
	[SDS_ADAPTIVE_OFF] = "off",
	[SDS_ADAPTIVE_GRADIENT2] = "gradient2",
	[SDS_ADAPTIVE_VEGAS] = "vegas",
	[SDS_ADAPTIVE_AIMD] = "aimd",
};
static const char *const signal_names[] = {
	[SDS_ADAPTIVE_BY_LATENCY] = "latency",
	[SDS_ADAPTIVE_BY_BLOCKED] = "blocked",
};
#define NAMES(a) (sizeof(a) / sizeof((a)[0]))

const char *strategy_adaptive_name(int64_t algo)
{
	return algo >= 0 && (size_t)algo < NAMES(adaptive_names) ?
	       adaptive_names[algo] : "off";
}

const char *strategy_adaptive_signal_name(int64_t signal)
{
	return signal >= 0 && (size_t)signal < NAMES(signal_names) ?
	       signal_names[signal] : "latency";
}

/* The index of @m in @names[0..n), or -1. */
static int name_index(const char *const *names, size_t n, const char *m)
{
	size_t i;

	for (i = 0; m && i < n; i++)
		if (!strcmp(names[i], m))
			return (int)i;
	return -1;
}

/*
 * The string fields of adaptive concurrency: 1 handled, 0 not one of
 * them, -1 refused (@err written).
 */
static int adaptive_from_json(const char *name, const char *key, json_t *v,
			      struct sds_strategy *st, char *err, size_t errlen)
{
	int i;

	if (!strcmp(key, "adaptive_limit")) {
		i = name_index(adaptive_names, NAMES(adaptive_names),
			       json_string_value(v));
		if (i < 0) {
			snprintf(err, errlen,
				 "point '%s': adaptive_limit must be \"gradient2\", \"vegas\", \"aimd\" or \"off\"",
				 name);
			return -1;
		}
		st->adaptive_limit = i;
		return 1;
	}
	if (!strcmp(key, "adaptive_signal")) {
		i = name_index(signal_names, NAMES(signal_names),
			       json_string_value(v));
		if (i < 0) {
			snprintf(err, errlen,
				 "point '%s': adaptive_signal must be \"latency\" or \"blocked\"",
				 name);
			return -1;
		}
		st->adaptive_signal = i;
		return 1;
	}
	return 0;
}

/* The fields of adaptive concurrency together: 0, or -1 (@err written). */
static int adaptive_check(const char *name, const struct sds_strategy *st,
			  char *err, size_t errlen)
{
	bool any = st->adaptive_min != SDS_OFF || st->adaptive_max != SDS_OFF ||
		   st->adaptive_initial != SDS_OFF ||
		   st->adaptive_signal != SDS_ADAPTIVE_BY_LATENCY;

	if (!strategy_is_adaptive(st)) {
		if (any)
			snprintf(err, errlen,
				 "point '%s': adaptive_min, adaptive_max, adaptive_initial and adaptive_signal need adaptive_limit",
				 name);
		return any ? -1 : 0;
	}
	if (st->adaptive_min == SDS_OFF || st->adaptive_max == SDS_OFF) {
		snprintf(err, errlen,
			 "point '%s': adaptive_limit needs adaptive_min and adaptive_max (the floor and the ceiling)",
			 name);
		return -1;
	}
	if (st->adaptive_min > st->adaptive_max) {
		snprintf(err, errlen,
			 "point '%s': adaptive_min %lld is above adaptive_max %lld",
			 name, (long long)st->adaptive_min,
			 (long long)st->adaptive_max);
		return -1;
	}
	if (st->adaptive_initial != SDS_OFF &&
	    (st->adaptive_initial < st->adaptive_min ||
	     st->adaptive_initial > st->adaptive_max)) {
		snprintf(err, errlen,
			 "point '%s': adaptive_initial must lie in adaptive_min..adaptive_max",
			 name);
		return -1;
	}
	/* Two limits on one semaphore: which wins would be a surprise. */
	if (st->concurrent_threshold != SDS_OFF) {
		snprintf(err, errlen,
			 "point '%s': adaptive_limit and concurrent_threshold: choose one (adaptive_max is the ceiling)",
			 name);
		return -1;
	}
	return 0;
}

static const struct field *field_find(const char *name)
{
	size_t i;

	for (i = 0; i < NFIELDS; i++)
		if (!strcmp(fields[i].name, name))
			return &fields[i];
	return NULL;
}

/* The three key limits an override may set: their fields' entries. */
static const struct field *key_field(const char *key)
{
	const struct field *f = field_find(key);

	if (f && (f->off == offsetof(struct sds_strategy, key_visit_threshold) ||
		  f->off == offsetof(struct sds_strategy, key_token_rate) ||
		  f->off == offsetof(struct sds_strategy, key_token_bucket)))
		return f;
	return NULL;
}

static int64_t *key_ov_field(struct sds_key_override *o, const struct field *f)
{
	if (f->off == offsetof(struct sds_strategy, key_visit_threshold))
		return &o->key_visit_threshold;
	if (f->off == offsetof(struct sds_strategy, key_token_rate))
		return &o->key_token_rate;
	return &o->key_token_bucket;
}

void strategy_key_override_limits(const struct sds_strategy *st,
				  const struct sds_key_override *o,
				  int64_t *visit_threshold, int64_t *token_rate,
				  int64_t *token_bucket)
{
	*visit_threshold = o->key_visit_threshold == SDS_KEY_INHERIT ?
			   st->key_visit_threshold : o->key_visit_threshold;
	if (o->key_token_rate == SDS_KEY_INHERIT) {
		*token_rate = st->key_token_rate;
		*token_bucket = o->key_token_bucket == SDS_KEY_INHERIT ?
				st->key_token_bucket : o->key_token_bucket;
	} else {
		*token_rate = o->key_token_rate;
		*token_bucket = o->key_token_bucket == SDS_KEY_INHERIT ?
				o->key_token_rate : o->key_token_bucket;
	}
	if (*token_rate == SDS_OFF)
		*token_bucket = SDS_OFF;
	else if (*token_bucket == SDS_OFF)
		*token_bucket = *token_rate;
}

/*
 * @key as an error line shows it: a key may hold any byte, the line must
 * stay one line of text (each byte outside printable ASCII a '?').
 */
static const char *key_shown(const char *key, char out[SDS_KEY_MAX + 1])
{
	size_t i;

	for (i = 0; key[i] && i < SDS_KEY_MAX; i++)
		out[i] = (unsigned char)key[i] >= 0x20 && (unsigned char)key[i] < 0x7f ?
			 key[i] : '?';
	out[i] = '\0';
	return out;
}

/*
 * "key_overrides": {"KEY": {key_visit_threshold, key_token_rate,
 * key_token_bucket}, ...} of point @name into @s's pool: 0, or -1 (@err).
 */
static int key_overrides_from_json(const char *name, json_t *obj,
				   struct sds_strategies *s,
				   struct sds_strategy *st, char *err, size_t errlen)
{
	const char *key, *fk;
	char shown[SDS_KEY_MAX + 1], fshown[SDS_KEY_MAX + 1];
	json_t *v, *fv;

	if (!json_is_object(obj)) {
		snprintf(err, errlen,
			 "point '%s': key_overrides must be an object of key -> {key_visit_threshold, key_token_rate, key_token_bucket}",
			 name);
		return -1;
	}
	if (json_object_size(obj) > SDS_KEY_OVERRIDES_MAX) {
		snprintf(err, errlen, "point '%s': key_overrides: %zu keys (at most %d)",
			 name, json_object_size(obj), SDS_KEY_OVERRIDES_MAX);
		return -1;
	}
	if (s->nkey_ov + (int)json_object_size(obj) > SDS_KEY_OVERRIDES_ALL) {
		snprintf(err, errlen,
			 "point '%s': key_overrides: more than %d keys in all points",
			 name, SDS_KEY_OVERRIDES_ALL);
		return -1;
	}
	st->key_ov_first = s->nkey_ov;
	st->key_ov_n = 0;
	json_object_foreach(obj, key, v) {
		struct sds_key_override *o = &s->key_ov[s->nkey_ov];
		size_t len = strlen(key);

		if (!len) {
			snprintf(err, errlen, "point '%s': key_overrides: an empty key", name);
			return -1;
		}
		if (len > SDS_KEY_MAX) {
			snprintf(err, errlen,
				 "point '%s': key_overrides: key '%.32s...' is %zu bytes (at most %d)",
				 name, key_shown(key, shown), len, SDS_KEY_MAX);
			return -1;
		}
		if (!json_is_object(v)) {
			snprintf(err, errlen,
				 "point '%s': key_overrides '%s': expected an object of key_visit_threshold, key_token_rate, key_token_bucket",
				 name, key_shown(key, shown));
			return -1;
		}
		memset(o, 0, sizeof(*o));
		memcpy(o->key, key, len);
		o->key_visit_threshold = o->key_token_rate = o->key_token_bucket =
			SDS_KEY_INHERIT;
		json_object_foreach(v, fk, fv) {
			const struct field *f = key_field(fk);
			int64_t x;

			if (!f) {
				snprintf(err, errlen,
					 "point '%s': key_overrides '%s': unknown field '%.64s'; an override has key_visit_threshold, key_token_rate, key_token_bucket",
					 name, key_shown(key, shown), key_shown(fk, fshown));
				return -1;
			}
			if (json_is_null(fv))
				continue;
			x = json_is_integer(fv) ? json_integer_value(fv) : 0;
			if (!json_is_integer(fv) || (x >= 0 && (x < f->min || x > f->max))) {
				snprintf(err, errlen,
					 "point '%s': key_overrides '%s': %s must be an integer %lld..%lld (negative: off for this key)",
					 name, key_shown(key, shown), f->name, (long long)f->min,
					 (long long)f->max);
				return -1;
			}
			*key_ov_field(o, f) = x < 0 ? SDS_OFF : x;
		}
		st->key_ov_n++;
		s->nkey_ov++;
	}
	return 0;
}

/* The key limits of @st together, overrides resolved: 0, or -1 (@err). */
static int key_limits_check(const char *name, const struct sds_strategies *s,
			    const struct sds_strategy *st, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < st->key_ov_n; i++) {
		const struct sds_key_override *o = &s->key_ov[st->key_ov_first + i];
		if (o->key_token_bucket >= 0 && o->key_token_rate == SDS_KEY_INHERIT &&
		    st->key_token_rate == SDS_OFF) {
			snprintf(err, errlen,
				 "point '%s': key_overrides '%s': key_token_bucket needs key_token_rate",
				 name, o->key);
			return -1;
		}
		if (o->key_token_bucket >= 0 && o->key_token_rate == SDS_OFF) {
			snprintf(err, errlen,
				 "point '%s': key_overrides '%s': key_token_bucket needs key_token_rate",
				 name, o->key);
			return -1;
		}
	}
	return 0;
}

static int point_from_json(const char *name, json_t *obj, struct sds_strategies *s,
			   struct sds_strategy *st, char *err, size_t errlen)
{
	json_t *key_ov = NULL;
	const struct field *f;
	const char *key;
	json_t *v;

	if (!sds_point_name_valid(name)) {
		snprintf(err, errlen, "point '%.64s': bad name (1-64 of [A-Za-z0-9_-])",
			 name);
		return -1;
	}
	if (!json_is_object(obj)) {
		snprintf(err, errlen, "point '%s': expected an object of limits", name);
		return -1;
	}
	strategy_init(st, name);
	json_object_foreach(obj, key, v) {
		int64_t x;

		/* Traffic copy (docs/COPY.md): is the point a read or a write? */
		if (!strcmp(key, "copy")) {
			const char *m = json_string_value(v);

			if (!m || (strcmp(m, "read") && strcmp(m, "write"))) {
				snprintf(err, errlen,
					 "point '%s': copy must be \"read\" or \"write\"",
					 name);
				return -1;
			}
			st->copy_write = !strcmp(m, "write");
			continue;
		}
		/* Which host pressure rules shed the point (docs/PRESSURE.md). */
		if (!strcmp(key, "priority")) {
			if (!json_is_string(v) ||
			    pressure_priority_parse(json_string_value(v), &st->priority)) {
				snprintf(err, errlen,
					 "point '%s': priority must be \"low\", \"normal\" or \"high\"",
					 name);
				return -1;
			}
			continue;
		}
		/* Hot keys' overrides: read once the point's own limits are. */
		if (!strcmp(key, "key_overrides")) {
			key_ov = v;
			continue;
		}
		switch (adaptive_from_json(name, key, v, st, err, errlen)) {
		case 1:
			continue;
		case -1:
			return -1;
		}
		f = field_find(key);
		if (!f) {
			snprintf(err, errlen, "point '%s': unknown field '%.64s'",
				 name, key);
			return -1;
		}
		if (json_is_null(v))
			continue;
		if (!json_is_integer(v))
			goto bad;
		x = json_integer_value(v);
		if (x < 0) {
			/*
			 * Negative disables (docs/DESIGN.md §4), but not
			 * downgrade_rate.
			 */
			if (f->strict ||
			    f->off == offsetof(struct sds_strategy, downgrade_rate))
				goto bad;
			x = SDS_OFF;
		} else if (x < f->min || x > f->max) {
			goto bad;
		}
		*field_ptr(st, f) = x;
		continue;
bad:
		snprintf(err, errlen, "point '%s': %s must be an integer %lld..%lld",
			 name, f->name, (long long)f->min, (long long)f->max);
		return -1;
	}
	if (st->token_bucket != SDS_OFF && st->token_rate == SDS_OFF) {
		snprintf(err, errlen, "point '%s': token_bucket needs token_rate", name);
		return -1;
	}
	if (st->token_rate != SDS_OFF && st->token_bucket == SDS_OFF)
		st->token_bucket = st->token_rate;
	if (st->cluster_token_bucket != SDS_OFF &&
	    st->cluster_token_rate == SDS_OFF) {
		snprintf(err, errlen, "point '%s': cluster_token_bucket needs cluster_token_rate",
			 name);
		return -1;
	}
	if (st->cluster_token_rate != SDS_OFF &&
	    st->cluster_token_bucket == SDS_OFF)
		st->cluster_token_bucket = st->cluster_token_rate;
	if (st->key_token_bucket != SDS_OFF && st->key_token_rate == SDS_OFF) {
		snprintf(err, errlen, "point '%s': key_token_bucket needs key_token_rate", name);
		return -1;
	}
	if (st->key_token_rate != SDS_OFF && st->key_token_bucket == SDS_OFF)
		st->key_token_bucket = st->key_token_rate;
	if (key_ov && (key_overrides_from_json(name, key_ov, s, st, err, errlen) ||
		       key_limits_check(name, s, st, err, errlen)))
		return -1;
	/* "Slow" is slower than timeout_ms: without it nothing is slow. */
	if (st->slow_rate_threshold > 0 && st->timeout_ms == SDS_OFF) {
		snprintf(err, errlen, "point '%s': slow_rate_threshold needs timeout_ms",
			 name);
		return -1;
	}
	return adaptive_check(name, st, err, errlen);
}

static int strategy_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sds_strategy *)a)->point,
		      ((const struct sds_strategy *)b)->point);
}

int strategy_set_from_json(json_t *doc, struct sds_strategies *out,
			   char *err, size_t errlen)
{
	struct sds_strategies *s;
	json_t *ver, *pts, *v;
	const char *key;

	if (!json_is_object(doc)) {
		snprintf(err, errlen, "expected a JSON object with \"version\" and \"points\"");
		return -1;
	}
	json_object_foreach(doc, key, v) {
		if (strcmp(key, "version") && strcmp(key, "points") &&
		    strcmp(key, "pressure")) {
			snprintf(err, errlen, "unknown field '%.64s' (version, points, pressure)",
				 key);
			return -1;
		}
	}
	ver = json_object_get(doc, "version");
	if (!json_is_integer(ver) || json_integer_value(ver) < 0) {
		snprintf(err, errlen, "version must be a non-negative integer");
		return -1;
	}
	pts = json_object_get(doc, "points");
	if (pts && !json_is_object(pts)) {
		snprintf(err, errlen, "points must be an object of point name -> limits");
		return -1;
	}
	if (json_object_size(pts) > SDS_MAX_STRATEGIES) {
		snprintf(err, errlen, "too many points: %zu (at most %d)",
			 json_object_size(pts), SDS_MAX_STRATEGIES);
		return -1;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->version = json_integer_value(ver);
	json_object_foreach(pts, key, v) {
		if (point_from_json(key, v, s, &s->s[s->n], err, errlen)) {
			free(s);
			return -1;
		}
		s->n++;
	}
	qsort(s->s, s->n, sizeof(s->s[0]), strategy_cmp);
	/* The rules last: a downgrade rule is judged by the points' priorities. */
	if (pressure_set_from_json(json_object_get(doc, "pressure"), s,
				   &s->pressure, err, errlen)) {
		free(s);
		return -1;
	}
	memcpy(out, s, sizeof(*s));
	free(s);
	return 0;
}

int strategy_set_parse(const char *text, size_t len, struct sds_strategies *out,
		       char *err, size_t errlen)
{
	json_t *doc;
	int ret;

	doc = sdsjson_load(text, len, err, errlen);
	if (!doc)
		return -1;
	ret = strategy_set_from_json(doc, out, err, errlen);
	json_decref(doc);
	return ret;
}

int strategy_set_load_file(const char *path, struct sds_strategies *out,
			   char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int ret = -1;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			char *nb;

			cap = cap ? cap * 2 : 4096;
			if (cap > (16 << 20)) {
				snprintf(err, errlen, "%s: larger than 16 MiB", path);
				goto out;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		goto out;
	}
	ret = strategy_set_parse(buf, len, out, err, errlen);
	if (ret) {
		/* Prefix the file, keep the message naming the point and field. */
		char tmp[512];

		snprintf(tmp, sizeof(tmp), "%s", err);
		snprintf(err, errlen, "%s: %s", path, tmp);
	}
out:
	free(buf);
	fclose(f);
	return ret;
}

json_t *strategy_to_json(const struct sds_strategy *st)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; i < NFIELDS; i++) {
		int64_t v = *field_ptr((struct sds_strategy *)st, &fields[i]);

		if (v != SDS_OFF)
			json_object_set_new(o, fields[i].name, json_integer(v));
	}
	if (st->copy_write)
		json_object_set_new(o, "copy", json_string("write"));
	if (st->priority != SDS_PRIO_NORMAL)
		json_object_set_new(o, "priority",
				    json_string(pressure_priority_name(st->priority)));
	if (strategy_is_adaptive(st)) {
		json_object_set_new(o, "adaptive_limit",
				    json_string(strategy_adaptive_name(st->adaptive_limit)));
		if (st->adaptive_signal != SDS_ADAPTIVE_BY_LATENCY)
			json_object_set_new(o, "adaptive_signal",
					    json_string(strategy_adaptive_signal_name(st->adaptive_signal)));
	}
	return o;
}

json_t *strategy_to_json_in(const struct sds_strategies *s,
			    const struct sds_strategy *st)
{
	const struct sds_key_override *ov;
	json_t *o = strategy_to_json(st), *kv;
	int i, n;

	ov = strategy_key_overrides(s, st, &n);
	if (!n)
		return o;
	kv = json_object();
	for (i = 0; i < n; i++) {
		json_t *one = json_object();

		/* Off for this key is written as -1, as it was given. */
		if (ov[i].key_visit_threshold != SDS_KEY_INHERIT)
			json_object_set_new(one, "key_visit_threshold",
					    json_integer(ov[i].key_visit_threshold));
		if (ov[i].key_token_rate != SDS_KEY_INHERIT)
			json_object_set_new(one, "key_token_rate",
					    json_integer(ov[i].key_token_rate));
		if (ov[i].key_token_bucket != SDS_KEY_INHERIT)
			json_object_set_new(one, "key_token_bucket",
					    json_integer(ov[i].key_token_bucket));
		json_object_set_new(kv, ov[i].key, one);
	}
	json_object_set_new(o, "key_overrides", kv);
	return o;
}

json_t *strategy_set_to_json(const struct sds_strategies *s)
{
	json_t *o = json_object(), *pts = json_object();
	int i;

	json_object_set_new(o, "version", json_integer(s->version));
	for (i = 0; i < s->n; i++)
		json_object_set_new(pts, s->s[i].point, strategy_to_json_in(s, &s->s[i]));
	json_object_set_new(o, "points", pts);
	if (s->pressure.n)
		json_object_set_new(o, "pressure", pressure_set_to_json(&s->pressure));
	return o;
}

const struct sds_strategy *strategy_set_find(const struct sds_strategies *s,
					     const char *point)
{
	struct sds_strategy key;

	/* A longer name would be cut to SDS_NAME_MAX and match its prefix. */
	if (!point || strlen(point) > SDS_NAME_MAX)
		return NULL;
	snprintf(key.point, sizeof(key.point), "%s", point);
	return bsearch(&key, s->s, s->n, sizeof(s->s[0]), strategy_cmp);
}
