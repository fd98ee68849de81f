// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* heartbeat.c - the heartbeat JSON codec, validated (docs/DESIGN.md §7). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heartbeat/heartbeat.h"
#include "sdsjson.h"
#include "names.h"

struct sds_heartbeat *heartbeat_new(void)
{
	return calloc(1, sizeof(struct sds_heartbeat));
}

void heartbeat_free(struct sds_heartbeat *hb)
{
	free(hb);
}

void heartbeat_init(struct sds_heartbeat *hb, const char *group, const char *app,
		    const char *host, const char *ip, int64_t period_start,
		    int64_t version)
{
	/* Only the header: the points array is large and reset lazily. */
	memset(hb, 0, offsetof(struct sds_heartbeat, points));
	snprintf(hb->group, sizeof(hb->group), "%s", group ? group : "");
	snprintf(hb->app, sizeof(hb->app), "%s", app ? app : "");
	snprintf(hb->host, sizeof(hb->host), "%s", host ? host : "");
	snprintf(hb->ip, sizeof(hb->ip), "%s", ip ? ip : "");
	hb->period_start = period_start;
	hb->period_s = SDS_HB_PERIOD_S;
	hb->version = version;
	hb->n = 0;
	hb->nkeys = 0;
	hb->ndeps = 0;
}

struct sds_hb_point *heartbeat_add_point(struct sds_heartbeat *hb,
					 const char *name)
{
	struct sds_hb_point *p;
	int i;

	if (!sds_point_name_valid(name))
		return NULL;
	for (i = 0; i < hb->n; i++)
		if (!strcmp(hb->points[i].name, name))
			return &hb->points[i];
	if (hb->n >= SDS_HB_MAX_POINTS)
		return NULL;
	p = &hb->points[hb->n++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	return p;
}

bool heartbeat_host_valid(const char *s)
{
	size_t i;

	if (!s || !*s)
		return false;
	for (i = 0; s[i]; i++) {
		char c = s[i];

		if (i >= SDS_HB_HOST_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

static bool ip_valid(const char *s)
{
	unsigned char buf[16];

	if (!*s)
		return true;	/* unknown */
	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

static int hist_len(const uint64_t *h)
{
	int n = SDS_HIST_BUCKETS;

	while (n > 0 && !h[n - 1])
		n--;
	return n;
}

json_t *heartbeat_to_json(const struct sds_heartbeat *hb)
{
	json_t *o, *pts;
	int i, j;

	o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:i, s:I}",
		      "group", hb->group, "app", hb->app, "host", hb->host,
		      "ip", hb->ip, "period_start", (json_int_t)hb->period_start,
		      "period_s", hb->period_s ? hb->period_s : SDS_HB_PERIOD_S,
		      "version", (json_int_t)hb->version);
	pts = json_object();
	if (!o || !pts)
		goto oom;
	for (i = 0; i < hb->n; i++) {
		const struct sds_hb_point *p = &hb->points[i];
		int n = hist_len(p->latency_hist);
		json_t *h = json_array(), *po;

		if (!h)
			goto oom;
		for (j = 0; j < n; j++)
			json_array_append_new(h, json_integer((json_int_t)p->latency_hist[j]));
		po = json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}",
			       "visits", (json_int_t)p->visits,
			       "exceptions", (json_int_t)p->exceptions,
			       "timeouts", (json_int_t)p->timeouts,
			       "downgrades", (json_int_t)p->downgrades,
			       "max_concurrency", (json_int_t)p->max_concurrency,
			       "latency_hist", h);
		if (!po)
			goto oom;
		/* Only when a drill injected some: older admins refuse unknown fields. */
		if (p->faults)
			json_object_set_new(po, "faults", json_integer((json_int_t)p->faults));
		if (p->delays)
			json_object_set_new(po, "delays", json_integer((json_int_t)p->delays));
		if (p->max_stuck)
			json_object_set_new(po, "max_stuck",
					    json_integer((json_int_t)p->max_stuck));
		if (p->suspended)
			json_object_set_new(po, "suspended", json_true());
		if (p->overhead_milli)
			json_object_set_new(po, "overhead_pct",
					    json_real(p->overhead_milli / 1000.0));
		if (heartbeat_point_copy_to_json(p, po) ||
		    heartbeat_point_split_to_json(p, po) ||
		    heartbeat_point_keys_to_json(hb, i, po) ||
		    heartbeat_point_deps_to_json(hb, i, po))
			goto oom;
		if (p->overload)
			json_object_set_new(po, "overload", json_true());
		/* An adaptive point's limit at the period's end (docs/ADAPTIVE.md). */
		if (p->adaptive_limit) {
			json_object_set_new(po, "adaptive_limit",
					    json_integer((json_int_t)p->adaptive_limit));
			json_object_set_new(po, "adaptive_latency_ns",
					    json_integer((json_int_t)p->adaptive_latency_ns));
		}
		if (json_object_set_new(pts, p->name, po))
			goto oom;
	}
	if (hb->build_id[0] &&
	    json_object_set_new(o, "build", json_pack("{s:s, s:I}", "id", hb->build_id,
			       "deploys", (json_int_t)hb->deploys)))
		goto oom;
	if (heartbeat_pressure_to_json(hb, o) || heartbeat_refused_to_json(hb, o))
		goto oom;
	if (json_object_set_new(o, "points", pts))
		goto oom_o;
	return o;
oom:
	json_decref(pts);
oom_o:
	json_decref(o);
	return NULL;
}

/* A string field of the header: present, a string, valid by @ok. */
static int get_str(json_t *doc, const char *key, char *out, size_t outlen,
		   bool (*ok)(const char *), const char *what,
		   char *err, size_t errlen)
{
	json_t *v = json_object_get(doc, key);
	const char *s;

	if (!v) {
		snprintf(err, errlen, "%s: missing", key);
		return -1;
	}
	if (!json_is_string(v)) {
		snprintf(err, errlen, "%s: must be a string", key);
		return -1;
	}
	s = json_string_value(v);
	if (strlen(s) != json_string_length(v) || strlen(s) >= outlen || !ok(s)) {
		snprintf(err, errlen, "%s: bad %s", key, what);
		return -1;
	}
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

static bool ip_ok(const char *s)
{
	return ip_valid(s);
}

/* A non-negative integer count at most SDS_HB_COUNT_MAX. */
static int get_count(json_t *v, uint64_t *out)
{
	json_int_t x;

	if (!json_is_integer(v))
		return -1;
	x = json_integer_value(v);
	if (x < 0 || x > SDS_HB_COUNT_MAX)
		return -1;
	*out = (uint64_t)x;
	return 0;
}

static const char *const point_fields[] = {
	"visits", "exceptions", "timeouts", "downgrades", "max_concurrency",
	"faults", "delays", "copy_captured", "copy_dropped", "copy_truncated",
	"adaptive_limit", "adaptive_latency_ns", "max_stuck",
	"latency_hist", "suspended", "overhead_pct", "overload",
	"split_calls", "split_on_cpu_ns", "split_runqueue_ns", "split_blocked_ns",
	"keys",
	"deps",
};
#define POINT_COUNTS	13	/* point_fields before latency_hist */

/* The budget's fields: "suspended" a boolean, "overhead_pct" 0..SDS_HB_OVERHEAD_MAX. */
static int point_budget_from_json(const char *name, json_t *obj,
				  struct sds_hb_point *p, char *err,
				  size_t errlen)
{
	json_t *v = json_object_get(obj, "suspended");
	double pct;

	if (v && !json_is_boolean(v)) {
		snprintf(err, errlen, "points.%s.suspended must be true or false", name);
		return -1;
	}
	p->suspended = json_is_true(v);
	v = json_object_get(obj, "overhead_pct");
	if (!v)
		return 0;
	pct = json_number_value(v);
	/* A real or an integer; NaN fails both comparisons. */
	if (!json_is_number(v) || !(pct >= 0 && pct <= SDS_HB_OVERHEAD_MAX)) {
		snprintf(err, errlen, "points.%s.overhead_pct must be a number 0..%d",
			 name, SDS_HB_OVERHEAD_MAX);
		return -1;
	}
	p->overhead_milli = (uint64_t)(pct * 1000 + 0.5);
	return 0;
}

static int point_from_json(const char *name, json_t *obj, struct sds_hb_point *p,
			   char *err, size_t errlen)
{
	uint64_t *counts[POINT_COUNTS] = {
		&p->visits, &p->exceptions, &p->timeouts, &p->downgrades,
		&p->max_concurrency, &p->faults, &p->delays,
		&p->copy_captured, &p->copy_dropped, &p->copy_truncated,
		&p->adaptive_limit, &p->adaptive_latency_ns, &p->max_stuck,
	};
	const char *key;
	json_t *v, *h;
	size_t i;

	memset(p, 0, sizeof(*p));
	if (!sds_point_name_valid(name)) {
		snprintf(err, errlen, "points: bad point name '%.64s' (1-64 of [A-Za-z0-9_-])",
			 name);
		return -1;
	}
	snprintf(p->name, sizeof(p->name), "%s", name);
	if (!json_is_object(obj)) {
		snprintf(err, errlen, "points.%s: must be an object", name);
		return -1;
	}
	json_object_foreach(obj, key, v) {
		for (i = 0; i < sizeof(point_fields) / sizeof(point_fields[0]); i++)
			if (!strcmp(key, point_fields[i]))
				break;
		if (i == sizeof(point_fields) / sizeof(point_fields[0])) {
			snprintf(err, errlen, "points.%s: unknown field '%.64s'", name, key);
			return -1;
		}
	}
	/* Missing counts are 0: a point that saw nothing may send {}. */
	for (i = 0; i < POINT_COUNTS; i++) {
		v = json_object_get(obj, point_fields[i]);
		if (v && get_count(v, counts[i])) {
			snprintf(err, errlen, "points.%s.%s must be an integer 0..%lld",
				 name, point_fields[i], (long long)SDS_HB_COUNT_MAX);
			return -1;
		}
	}
	if (point_budget_from_json(name, obj, p, err, errlen) ||
	    heartbeat_point_overload_from_json(name, obj, p, err, errlen) ||
	    heartbeat_point_split_from_json(name, obj, p, err, errlen))
		return -1;
	h = json_object_get(obj, "latency_hist");
	if (!h)
		return 0;
	if (!json_is_array(h) || json_array_size(h) > SDS_HIST_BUCKETS) {
		snprintf(err, errlen, "points.%s.latency_hist must be an array of at most %d counts",
			 name, SDS_HIST_BUCKETS);
		return -1;
	}
	json_array_foreach(h, i, v) {
		if (get_count(v, &p->latency_hist[i])) {
			snprintf(err, errlen, "points.%s.latency_hist[%zu] must be an integer 0..%lld",
				 name, i, (long long)SDS_HB_COUNT_MAX);
			return -1;
		}
	}
	p->nhist = hist_len(p->latency_hist);
	return 0;
}

static const char *const top_fields[] = {
	"group", "app", "host", "ip", "period_start", "period_s", "version", "points",
	"build", "pressure", "refused",
};

/* Lowercase hex, 1..SDS_HB_BUILD_MAX digits. */
static bool build_id_ok(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n && !s[n] && n <= SDS_HB_BUILD_MAX;
}

/* The optional "build": {"id", "deploys"}, nothing else. */
static int build_from_json(json_t *doc, struct sds_heartbeat *out, char *err,
			   size_t errlen)
{
	json_t *b = json_object_get(doc, "build"), *v;
	const char *key;

	if (!b)
		return 0;
	if (!json_is_object(b)) {
		snprintf(err, errlen, "build must be an object");
		return -1;
	}
	json_object_foreach(b, key, v) {
		if (strcmp(key, "id") && strcmp(key, "deploys")) {
			snprintf(err, errlen, "build: unknown field '%.64s'", key);
			return -1;
		}
	}
	if (get_str(b, "id", out->build_id, sizeof(out->build_id), build_id_ok,
		    "build-id (1-64 lowercase hex digits)", err, errlen))
		return -1;
	v = json_object_get(b, "deploys");
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) >= SDS_HB_DEPLOYS_MAX) {
		snprintf(err, errlen, "build.deploys must be an integer 0..%lld",
			 (long long)SDS_HB_DEPLOYS_MAX - 1);
		return -1;
	}
	out->deploys = (uint32_t)json_integer_value(v);
	return 0;
}

int heartbeat_from_json(json_t *doc, struct sds_heartbeat *out,
			char *err, size_t errlen)
{
	const char *key;
	json_t *v, *pts;
	size_t i;

	if (!json_is_object(doc)) {
		snprintf(err, errlen, "expected a JSON object");
		return -1;
	}
	json_object_foreach(doc, key, v) {
		for (i = 0; i < sizeof(top_fields) / sizeof(top_fields[0]); i++)
			if (!strcmp(key, top_fields[i]))
				break;
		if (i == sizeof(top_fields) / sizeof(top_fields[0])) {
			snprintf(err, errlen, "unknown field '%.64s'", key);
			return -1;
		}
	}
	memset(out, 0, offsetof(struct sds_heartbeat, points));
	out->nkeys = 0;
	out->ndeps = 0;
	if (get_str(doc, "group", out->group, sizeof(out->group), sds_name_valid,
		    "name (1-64 of [A-Za-z0-9_-])", err, errlen) ||
	    get_str(doc, "app", out->app, sizeof(out->app), sds_name_valid,
		    "name (1-64 of [A-Za-z0-9_-])", err, errlen) ||
	    get_str(doc, "host", out->host, sizeof(out->host), heartbeat_host_valid,
		    "host name (1-253 of [A-Za-z0-9._-])", err, errlen))
		return -1;
	if (!json_object_get(doc, "ip"))
		out->ip[0] = '\0';
	else if (get_str(doc, "ip", out->ip, sizeof(out->ip), ip_ok,
			 "IP address (IPv4, IPv6 or \"\")", err, errlen))
		return -1;

	v = json_object_get(doc, "period_start");
	if (!json_is_integer(v) || json_integer_value(v) < SDS_HB_TIME_MIN ||
	    json_integer_value(v) > SDS_HB_TIME_MAX) {
		snprintf(err, errlen, "period_start must be an integer (Unix seconds) %lld..%lld",
			 (long long)SDS_HB_TIME_MIN, (long long)SDS_HB_TIME_MAX);
		return -1;
	}
	out->period_start = json_integer_value(v);
	if (out->period_start % SDS_HB_PERIOD_S) {
		snprintf(err, errlen, "period_start must be a multiple of %d",
			 SDS_HB_PERIOD_S);
		return -1;
	}
	v = json_object_get(doc, "period_s");
	if (!json_is_integer(v) || json_integer_value(v) != SDS_HB_PERIOD_S) {
		snprintf(err, errlen, "period_s must be %d", SDS_HB_PERIOD_S);
		return -1;
	}
	out->period_s = SDS_HB_PERIOD_S;
	v = json_object_get(doc, "version");
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		snprintf(err, errlen, "version must be a non-negative integer");
		return -1;
	}
	out->version = json_integer_value(v);
	if (build_from_json(doc, out, err, errlen) ||
	    heartbeat_pressure_from_json(doc, out, err, errlen) ||
	    heartbeat_refused_from_json(doc, out, err, errlen))
		return -1;

	pts = json_object_get(doc, "points");
	if (!json_is_object(pts)) {
		snprintf(err, errlen, "points must be an object of point name -> counts");
		return -1;
	}
	if (json_object_size(pts) > SDS_HB_MAX_POINTS) {
		snprintf(err, errlen, "points: too many (%zu, at most %d)",
			 json_object_size(pts), SDS_HB_MAX_POINTS);
		return -1;
	}
	json_object_foreach(pts, key, v) {
		if (point_from_json(key, v, &out->points[out->n], err, errlen) ||
		    heartbeat_point_keys_from_json(key, v, out, out->n, err, errlen) ||
		    heartbeat_point_deps_from_json(key, v, out, out->n, err, errlen))
			return -1;
		out->n++;
	}
	return 0;
}

int heartbeat_parse(const char *text, size_t len, struct sds_heartbeat *out,
		    char *err, size_t errlen)
{
	json_t *doc;
	int ret;

	doc = sdsjson_load(text, len, err, errlen);
	if (!doc)
		return -1;
	ret = heartbeat_from_json(doc, out, err, errlen);
	json_decref(doc);
	return ret;
}

json_t *heartbeat_reply_to_json(int64_t version, bool changed,
				const struct sds_strategies *s)
{
	json_t *st = s ? strategy_set_to_json(s) : json_null();

	return json_pack("{s:I, s:b, s:o, s:[]}", "version", (json_int_t)version,
			 "changed", changed, "strategies", st, "drills");
}

int heartbeat_reply_parse(const char *text, size_t len, struct sds_hb_reply *r,
			  char *err, size_t errlen)
{
	struct sds_strategies *keep = r->strategies;
	json_t *doc, *v, *st;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	r->strategies = keep;
	doc = sdsjson_load(text, len, err, errlen);
	if (!doc)
		return -1;
	if (!json_is_object(doc)) {
		snprintf(err, errlen, "expected a JSON object");
		goto out;
	}
	v = json_object_get(doc, "version");
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		snprintf(err, errlen, "version must be a non-negative integer");
		goto out;
	}
	r->version = json_integer_value(v);
	v = json_object_get(doc, "changed");
	if (!json_is_boolean(v)) {
		snprintf(err, errlen, "changed must be true or false");
		goto out;
	}
	r->changed = json_is_true(v);
	if (heartbeat_drills_from_json(json_object_get(doc, "drills"), r, err, errlen))
		goto out;
	v = json_object_get(doc, "drills_seq");
	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			snprintf(err, errlen, "drills_seq must be a non-negative integer");
			goto out;
		}
		r->drills_seq = json_integer_value(v);
		r->has_drills_seq = true;
	}
	v = json_object_get(doc, "copy");
	if (v) {
		if (heartbeat_copy_from_json(v, &r->copy, err, errlen))
			goto out;
		r->has_copy = true;
	}
	st = json_object_get(doc, "strategies");
	if (st && !json_is_null(st) && keep) {
		char serr[256];

		if (strategy_set_from_json(st, keep, serr, sizeof(serr))) {
			snprintf(err, errlen, "strategies: %s", serr);
			goto out;
		}
		r->has_strategies = true;
	}
	ret = 0;
out:
	json_decref(doc);
	return ret;
}
