// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * heartbeat_copy.c - the traffic-copy parts of the heartbeat codec: a
 * point's copy counts and the reply's "copy" (plans and copy servers).
 * Kept apart from heartbeat.c so each file stays one concept.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heartbeat/heartbeat.h"
#include "names.h"

int heartbeat_point_copy_to_json(const struct sds_hb_point *p, json_t *po)
{
	/* Only when set: older admins refuse unknown point fields. */
	if (p->copy_captured &&
	    json_object_set_new(po, "copy_captured", json_integer((json_int_t)p->copy_captured)))
		return -1;
	if (p->copy_dropped &&
	    json_object_set_new(po, "copy_dropped", json_integer((json_int_t)p->copy_dropped)))
		return -1;
	if (p->copy_truncated &&
	    json_object_set_new(po, "copy_truncated", json_integer((json_int_t)p->copy_truncated)))
		return -1;
	return 0;
}

bool heartbeat_copy_addr_valid(const char *s)
{
	char host[SDS_HB_ADDR_MAX + 1], *end;
	unsigned char buf[16];
	const char *colon;
	size_t hlen;
	long port;

	if (!s || strlen(s) > SDS_HB_ADDR_MAX)
		return false;
	colon = strrchr(s, ':');
	if (!colon || colon == s || !colon[1] || colon[1] == '-' || colon[1] == '+')
		return false;
	port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535)
		return false;
	hlen = colon - s;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (host[0] == '[') {
		if (hlen < 3 || host[hlen - 1] != ']')
			return false;
		host[hlen - 1] = '\0';
		return inet_pton(AF_INET6, host + 1, buf) == 1;
	}
	return heartbeat_host_valid(host);
}

static json_t *plan_to_json(const struct sds_hb_copy_plan *p)
{
	json_t *pts = json_array(), *o;
	int i;

	for (i = 0; pts && i < p->npoints; i++)
		if (json_array_append_new(pts, json_string(p->points[i])))
			goto oom;
	if (!pts)
		return NULL;
	o = json_pack("{s:I, s:s, s:i, s:I, s:o}", "id", (json_int_t)p->id,
		      "name", p->name, "sample_pct", (int)p->sample_pct,
		      "expires_at", (json_int_t)p->expires_at, "points", pts);
	/* "diff" only when set: a plan without it reads as it always did. */
	if (o && p->diff && json_object_set_new(o, "diff", json_true())) {
		json_decref(o);
		return NULL;
	}
	return o;
oom:
	json_decref(pts);
	return NULL;
}

json_t *heartbeat_copy_to_json(const struct sds_hb_copy *c)
{
	json_t *sv = json_array(), *pl = json_array();
	int i;

	if (!sv || !pl)
		goto oom;
	for (i = 0; i < c->nservers; i++)
		if (json_array_append_new(sv, json_string(c->servers[i])))
			goto oom;
	for (i = 0; i < c->nplans; i++) {
		json_t *p = plan_to_json(&c->plans[i]);

		if (!p || json_array_append_new(pl, p))
			goto oom;
	}
	return json_pack("{s:o, s:o}", "servers", sv, "plans", pl);
oom:
	json_decref(sv);
	json_decref(pl);
	return NULL;
}

/* Only @keys in object @o; @err names the first other one. */
static int only_keys(json_t *o, const char *const *keys, const char *where,
		     char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	int i;

	json_object_foreach(o, key, v) {
		for (i = 0; keys[i]; i++)
			if (!strcmp(key, keys[i]))
				break;
		if (!keys[i]) {
			snprintf(err, errlen, "%s: unknown field '%.64s'", where, key);
			return -1;
		}
	}
	return 0;
}

static int int_field(json_t *o, const char *key, int64_t min, int64_t max,
		     int64_t *out)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max)
		return -1;
	*out = json_integer_value(v);
	return 0;
}

static int plan_points_from_json(json_t *a, size_t i, struct sds_hb_copy_plan *p,
				 char *err, size_t errlen)
{
	const char *s;
	json_t *v;
	size_t j;

	if (!json_is_array(a) || !json_array_size(a) ||
	    json_array_size(a) > SDS_HB_COPY_POINTS) {
		snprintf(err, errlen, "copy.plans[%zu].points must be an array of 1..%d names",
			 i, SDS_HB_COPY_POINTS);
		return -1;
	}
	json_array_foreach(a, j, v) {
		s = json_string_value(v);
		if (!s || strlen(s) != json_string_length(v) || !sds_name_valid(s)) {
			snprintf(err, errlen, "copy.plans[%zu].points[%zu]: bad name (1-64 of [A-Za-z0-9_-])",
				 i, j);
			return -1;
		}
		snprintf(p->points[j], sizeof(p->points[j]), "%s", s);
	}
	p->npoints = (int)json_array_size(a);
	return 0;
}

static int plan_from_json(json_t *o, size_t i, struct sds_hb_copy_plan *p,
			  char *err, size_t errlen)
{
	static const char *const keys[] = {
		"id", "name", "sample_pct", "expires_at", "points", "diff", NULL,
	};
	json_t *d;
	const char *name;
	int64_t pct;
	char where[48];

	memset(p, 0, sizeof(*p));
	snprintf(where, sizeof(where), "copy.plans[%zu]", i);
	if (!json_is_object(o)) {
		snprintf(err, errlen, "%s must be an object", where);
		return -1;
	}
	if (only_keys(o, keys, where, err, errlen))
		return -1;
	if (int_field(o, "id", 1, INT64_MAX, &p->id)) {
		snprintf(err, errlen, "%s.id must be a positive integer", where);
		return -1;
	}
	name = json_string_value(json_object_get(o, "name"));
	if (!name || !sds_name_valid(name)) {
		snprintf(err, errlen, "%s.name: bad name (1-64 of [A-Za-z0-9_-])", where);
		return -1;
	}
	snprintf(p->name, sizeof(p->name), "%s", name);
	if (int_field(o, "sample_pct", 0, 100, &pct)) {
		snprintf(err, errlen, "%s.sample_pct must be an integer 0..100", where);
		return -1;
	}
	p->sample_pct = (uint32_t)pct;
	if (int_field(o, "expires_at", 0, SDS_HB_TIME_MAX, &p->expires_at)) {
		snprintf(err, errlen, "%s.expires_at must be Unix seconds", where);
		return -1;
	}
	d = json_object_get(o, "diff");
	if (d && !json_is_boolean(d)) {
		snprintf(err, errlen, "%s.diff must be true or false", where);
		return -1;
	}
	p->diff = json_is_true(d);
	return plan_points_from_json(json_object_get(o, "points"), i, p, err, errlen);
}

static int servers_from_json(json_t *a, struct sds_hb_copy *c, char *err,
			     size_t errlen)
{
	const char *s;
	json_t *v;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) > SDS_HB_COPY_SERVERS) {
		snprintf(err, errlen, "copy.servers must be an array of at most %d addresses",
			 SDS_HB_COPY_SERVERS);
		return -1;
	}
	json_array_foreach(a, i, v) {
		s = json_string_value(v);
		if (!s || strlen(s) != json_string_length(v) ||
		    !heartbeat_copy_addr_valid(s)) {
			snprintf(err, errlen, "copy.servers[%zu]: not HOST:PORT", i);
			return -1;
		}
		snprintf(c->servers[i], sizeof(c->servers[i]), "%s", s);
	}
	c->nservers = (int)json_array_size(a);
	return 0;
}

int heartbeat_copy_from_json(json_t *v, struct sds_hb_copy *c, char *err,
			     size_t errlen)
{
	static const char *const keys[] = { "servers", "plans", NULL };
	json_t *pl;
	size_t i;

	memset(c, 0, sizeof(*c));
	if (!json_is_object(v)) {
		snprintf(err, errlen, "copy must be an object");
		return -1;
	}
	if (only_keys(v, keys, "copy", err, errlen) ||
	    servers_from_json(json_object_get(v, "servers"), c, err, errlen))
		return -1;
	pl = json_object_get(v, "plans");
	if (!json_is_array(pl) || json_array_size(pl) > SDS_HB_COPY_PLANS) {
		snprintf(err, errlen, "copy.plans must be an array of at most %d plans",
			 SDS_HB_COPY_PLANS);
		return -1;
	}
	for (i = 0; i < json_array_size(pl); i++) {
		if (plan_from_json(json_array_get(pl, i), i, &c->plans[i], err, errlen))
			return -1;
		c->nplans = (int)i + 1;
	}
	return 0;
}
