// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* plan.c - the plans file: read, checked whole, or refused with one line. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diff.h"
#include "names.h"
#include "plan.h"
#include "sdsjson.h"

int plan_framing_parse(const char *s)
{
	if (!strcmp(s, "raw"))
		return COPY_FRAMING_RAW;
	if (!strcmp(s, "http"))
		return COPY_FRAMING_HTTP;
	return -1;
}

const char *plan_framing_name(enum copy_framing f)
{
	return f == COPY_FRAMING_HTTP ? "http" : "raw";
}

/* The file, read without following a link or blocking on a FIFO. */
static char *file_read(const char *path, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return snprintf(err, errlen, "%s: %s", path, strerror(errno)), NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_size > COPY_PLANS_FILE_MAX) {
		snprintf(err, errlen, "%s: larger than %d bytes", path, COPY_PLANS_FILE_MAX);
		goto out;
	}
	buf = malloc(st.st_size + 1);
	if (!buf)
		goto out;
	n = read(fd, buf, st.st_size);
	if (n != st.st_size) {
		snprintf(err, errlen, "%s: short read", path);
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[n] = '\0';
	*len = n;
out:
	close(fd);
	return buf;
}

/* An integer member in [lo, hi], @def when absent; -1 with @err. */
static int int_member(json_t *o, const char *key, long long lo, long long hi,
		      long long def, long long *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);

	if (!v) {
		if (def < lo)
			return snprintf(err, errlen, "no \"%s\"", key), -1;
		*out = def;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > hi)
		return snprintf(err, errlen, "\"%s\" not an integer in %lld..%lld",
				key, lo, hi), -1;
	*out = json_integer_value(v);
	return 0;
}

static int name_member(json_t *o, const char *key, char *out, char *err,
		       size_t errlen)
{
	const char *s = json_string_value(json_object_get(o, key));

	if (!s || !sds_name_valid(s))
		return snprintf(err, errlen, "\"%s\" not a name of 1..64 of [A-Za-z0-9_-]",
				key), -1;
	strcpy(out, s);
	return 0;
}

static int points_parse(json_t *o, struct copy_plan_cfg *c, char *err,
			size_t errlen)
{
	json_t *a = json_object_get(o, "points"), *v;
	size_t i, j;

	if (!json_is_array(a) || !json_array_size(a) ||
	    json_array_size(a) > COPY_POINTS_MAX)
		return snprintf(err, errlen, "\"points\" not a list of 1..%d names",
				COPY_POINTS_MAX), -1;
	json_array_foreach(a, i, v) {
		const char *s = json_string_value(v);

		if (!s || !sds_name_valid(s))
			return snprintf(err, errlen, "points[%zu] not a name of 1..64 of [A-Za-z0-9_-]", i), -1;
		for (j = 0; j < i; j++)
			if (!strcmp(c->points[j], s))
				return snprintf(err, errlen, "point %s twice", s), -1;
		strcpy(c->points[i], s);
	}
	c->npoints = (int)i;
	return 0;
}

/* A shadow: "HOST:PORT", or {"addr": "HOST:PORT", "weight": W}. */
static int shadow_parse(json_t *v, size_t i, bool numeric,
			struct copy_shadow_cfg *s, char *err, size_t errlen)
{
	char why[256];
	long long w = 1;
	const char *addr = json_string_value(v);
	const char *key;
	json_t *x;

	if (json_is_object(v)) {
		json_object_foreach(v, key, x)
			if (strcmp(key, "addr") && strcmp(key, "weight"))
				return snprintf(err, errlen, "shadows[%zu]: unknown key \"%s\"",
						i, key), -1;
		addr = json_string_value(json_object_get(v, "addr"));
		if (int_member(v, "weight", 1, COPY_WEIGHT_MAX, 1, &w, why, sizeof(why)))
			return snprintf(err, errlen, "shadows[%zu]: %s", i, why), -1;
	}
	if (!addr)
		return snprintf(err, errlen, "shadows[%zu] not \"HOST:PORT\" or {\"addr\", \"weight\"}", i), -1;
	if (addr_resolve(addr, numeric, &s->addr, why, sizeof(why)))
		return snprintf(err, errlen, "shadows[%zu]: %s", i, why), -1;
	s->weight = (int)w;
	return 0;
}

static const char *const plan_keys[] = {
	"name", "app", "points", "amplification", "shadows", "framing",
	"writes", "rate", "pool", "expires_at", "sample_pct", "diff", "ignore", NULL,
};

static int keys_check(json_t *o, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	int i;

	json_object_foreach(o, key, v) {
		for (i = 0; plan_keys[i] && strcmp(plan_keys[i], key); i++)
			;
		if (!plan_keys[i])
			return snprintf(err, errlen, "unknown key \"%s\"", key), -1;
	}
	return 0;
}

/*
 * "diff": true and "ignore": [RULE...] (docs/COPY.md "Live diff").  The
 * rules are compiled here once to be refused whole, and again by the
 * plan that takes them (a compiled rule set is too large to copy).
 */
static int diff_parse(json_t *o, struct copy_plan_cfg *c, char *err,
		      size_t errlen)
{
	json_t *v = json_object_get(o, "diff"), *a = json_object_get(o, "ignore");
	struct diff_rules rules;
	char why[512];
	size_t i;
	int rc = 0;

	if (v && !json_is_boolean(v))
		return snprintf(err, errlen, "\"diff\" not true or false"), -1;
	c->diff = json_is_true(v);
	if (!a)
		return 0;
	if (!c->diff)
		return snprintf(err, errlen, "\"ignore\" needs \"diff\": true"), -1;
	if (!json_is_array(a) || json_array_size(a) > COPY_IGNORE_MAX)
		return snprintf(err, errlen, "\"ignore\" not a list of at most %d rules",
				COPY_IGNORE_MAX), -1;
	memset(&rules, 0, sizeof(rules));
	json_array_foreach(a, i, v) {
		const char *r = json_string_value(v);

		if (!r || strlen(r) > COPY_IGNORE_LEN) {
			rc = snprintf(err, errlen, "ignore[%zu] not a string of at most %d bytes",
				      i, COPY_IGNORE_LEN);
			break;
		}
		if (diff_rules_add(&rules, r, why, sizeof(why))) {
			rc = snprintf(err, errlen, "ignore[%zu]: %s", i, why);
			break;
		}
		strcpy(c->ignore[i], r);
		c->nignore = (int)i + 1;
	}
	diff_rules_free(&rules);
	return rc ? -1 : 0;
}

static int plan_parse(json_t *o, int max_amp, int64_t now, bool numeric,
		      struct copy_plan_cfg *c, char *err, size_t errlen)
{
	json_t *a, *v;
	const char *fr;
	long long x;
	size_t i;

	if (!json_is_object(o))
		return snprintf(err, errlen, "not an object"), -1;
	if (keys_check(o, err, errlen) ||
	    name_member(o, "name", c->name, err, errlen) ||
	    name_member(o, "app", c->app, err, errlen) ||
	    points_parse(o, c, err, errlen))
		return -1;
	v = json_object_get(o, "amplification");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 1 ||
		  json_integer_value(v) > max_amp))
		return snprintf(err, errlen, "amplification not an integer in 1..%d (--max-amplification)",
				max_amp), -1;
	c->amplification = v ? (int)json_integer_value(v) : 1;
	a = json_object_get(o, "shadows");
	if (!json_is_array(a) || !json_array_size(a) ||
	    json_array_size(a) > COPY_SHADOWS_MAX)
		return snprintf(err, errlen, "\"shadows\" not a list of 1..%d endpoints",
				COPY_SHADOWS_MAX), -1;
	json_array_foreach(a, i, v)
		if (shadow_parse(v, i, numeric, &c->shadows[i], err, errlen))
			return -1;
	c->nshadows = (int)i;
	v = json_object_get(o, "framing");
	fr = v ? json_string_value(v) : "raw";
	if (!fr || plan_framing_parse(fr) < 0)
		return snprintf(err, errlen, "unknown framing (raw or http)"), -1;
	c->framing = plan_framing_parse(fr);
	v = json_object_get(o, "writes");
	if (v && !json_is_boolean(v))
		return snprintf(err, errlen, "\"writes\" not true or false"), -1;
	c->writes = json_is_true(v);
	if (int_member(o, "rate", 0, 1000000000, 0, &x, err, errlen))
		return -1;
	c->rate = x;
	if (int_member(o, "pool", 1, COPY_POOL_MAX, COPY_POOL_DEFAULT, &x, err, errlen))
		return -1;
	c->pool = (int)x;
	/* The capture side's (the loader samples); checked, not used here. */
	if (int_member(o, "sample_pct", 0, 100, 100, &x, err, errlen))
		return -1;
	/* A plan that never ends is how a forgotten copy floods a shadow. */
	if (!json_object_get(o, "expires_at"))
		return snprintf(err, errlen, "no \"expires_at\" (unix seconds): every plan must end"), -1;
	if (int_member(o, "expires_at", 0, INT64_MAX / 2, 0, &x, err, errlen))
		return -1;
	if (x <= now)
		return snprintf(err, errlen, "expires_at %lld is in the past", x), -1;
	c->expires_at = x;
	return diff_parse(o, c, err, errlen);
}

/* No record may belong to two plans: which would win is no one's guess. */
static int overlap_check(const struct copy_plans *p, int k, char *err,
			 size_t errlen)
{
	const struct copy_plan_cfg *c = &p->plans[k], *o;
	int i, a, b;

	for (i = 0; i < k; i++) {
		o = &p->plans[i];
		if (!strcmp(o->name, c->name))
			return snprintf(err, errlen, "name %s used twice", c->name), -1;
		if (strcmp(o->app, c->app))
			continue;
		for (a = 0; a < c->npoints; a++)
			for (b = 0; b < o->npoints; b++)
				if (!strcmp(c->points[a], o->points[b]))
					return snprintf(err, errlen, "%s/%s is also in plan %s",
							c->app, c->points[a], o->name), -1;
	}
	return 0;
}

/* Pools are per endpoint and plan: bound what all of them may hold. */
static int conns_check(const struct copy_plans *p, char *err, size_t errlen)
{
	long total = 0;
	int i;

	for (i = 0; i < p->n; i++)
		total += (long)p->plans[i].nshadows * p->plans[i].pool;
	if (total > COPY_CONNS_MAX)
		return snprintf(err, errlen, "the plans' pools add up to %ld connections, more than %d: use smaller pools",
				total, COPY_CONNS_MAX), -1;
	return 0;
}

/* In @skip mode, add "plan I (NAME): WHY" to @err (bounded), separated by "; ". */
static void skipped(char *err, size_t errlen, size_t i, const char *name,
		    const char *why)
{
	size_t n = strlen(err);

	if (n + 1 < errlen)
		snprintf(err + n, errlen - n, "%splan %zu%s%s%s: %s", n ? "; " : "", i,
			 name[0] ? " (" : "", name, name[0] ? ")" : "", why);
}

/* The plans of @root's "plans", each checked; see plan_parse_text(). */
static int plans_take(json_t *a, const char *what, int max_amp, int64_t now,
		      bool skip, struct copy_plans *p, char *err, size_t errlen)
{
	long conns = 0;
	char why[512];
	json_t *v;
	size_t i;

	json_array_foreach(a, i, v) {
		struct copy_plan_cfg *c = &p->plans[p->n];

		memset(c, 0, sizeof(*c));
		/* The admin's plans (@skip) arrive on the loop: numeric only. */
		if (!plan_parse(v, max_amp, now, skip, c, why, sizeof(why)) &&
		    !overlap_check(&(struct copy_plans){ p->plans, p->n + 1 }, p->n,
				   why, sizeof(why))) {
			/* Skipping, a plan over the connections bound goes alone. */
			if (!skip || conns + (long)c->nshadows * c->pool <= COPY_CONNS_MAX) {
				conns += (long)c->nshadows * c->pool;
				p->n++;
				continue;
			}
			snprintf(why, sizeof(why), "its pools would take the plans over %d connections",
				 COPY_CONNS_MAX);
		}
		if (!skip) {
			snprintf(err, errlen, "%s: plan %zu%s%s%s: %s", what, i,
				 c->name[0] ? " (" : "", c->name, c->name[0] ? ")" : "", why);
			return -1;
		}
		skipped(err, errlen, i, c->name, why);
	}
	if (conns_check(p, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", what, why);
		return -1;
	}
	return 0;
}

int plan_parse_text(const char *text, size_t len, const char *what, int max_amp,
		    int64_t now, bool skip, struct copy_plans *out, char *err,
		    size_t errlen)
{
	struct copy_plans p = { 0 };
	size_t max = skip ? SIZE_MAX : COPY_PLANS_MAX;
	char why[512];
	json_t *root, *a;

	memset(out, 0, sizeof(*out));
	err[0] = '\0';
	root = sdsjson_load(text, len, why, sizeof(why));
	if (!root)
		return snprintf(err, errlen, "%s: %s", what, why), -1;
	a = json_object_get(root, "plans");
	if (!json_is_object(root) || json_object_size(root) != 1 ||
	    !json_is_array(a) || json_array_size(a) > max) {
		snprintf(err, errlen, "%s: not {\"plans\": [at most %d plans]}",
			 what, COPY_PLANS_MAX);
		goto err;
	}
	if (json_array_size(a) > COPY_PLANS_MAX) {
		snprintf(err, errlen, "%zu plans: the first %d taken",
			 json_array_size(a), COPY_PLANS_MAX);
		while (json_array_size(a) > COPY_PLANS_MAX)
			json_array_remove(a, COPY_PLANS_MAX);
	}
	p.plans = calloc(json_array_size(a) + 1, sizeof(*p.plans));
	if (!p.plans) {
		snprintf(err, errlen, "%s: out of memory", what);
		goto err;
	}
	if (plans_take(a, what, max_amp, now, skip, &p, err, errlen))
		goto err;
	json_decref(root);
	*out = p;
	return 0;
err:
	json_decref(root);
	copy_plans__free(&p);
	return -1;
}

int plan_load(const char *path, int max_amp, int64_t now,
	      struct copy_plans *out, char *err, size_t errlen)
{
	size_t len = 0;
	char *text;
	int ret;

	memset(out, 0, sizeof(*out));
	text = file_read(path, &len, err, errlen);
	if (!text)
		return -1;
	ret = plan_parse_text(text, len, path, max_amp, now, false, out, err, errlen);
	free(text);
	return ret;
}

void copy_plans__free(struct copy_plans *p)
{
	free(p->plans);
	p->plans = NULL;
	p->n = 0;
}
