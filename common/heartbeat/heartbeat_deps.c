// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * heartbeat_deps.c - a point's dependencies in the heartbeat
 * (docs/DEPS.md): "deps": [{"addr": "127.0.0.1", "port": 7000, "proto":
 * "tcp", "connects": N, "connect_errors": N, "sends": N, "send_errors": N,
 * "resets": N, "bytes": N}, ...], counted since the loader attached, at
 * most SDS_HB_POINT_DEPS a point and SDS_HB_MAX_DEPS a heartbeat, sent
 * only when a point has some (older admins refuse fields they do not
 * know).  What the admin reads is hostile: an address must be one
 * inet_pton reads and is kept as inet_ntop writes it back, so one peer has
 * one spelling; no edge twice in a point.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "heartbeat/heartbeat.h"

struct sds_hb_dep *heartbeat_add_dep(struct sds_heartbeat *hb, int point)
{
	struct sds_hb_dep *d;
	int i, n = 0;

	if (hb->ndeps >= SDS_HB_MAX_DEPS)
		return NULL;
	for (i = 0; i < hb->ndeps; i++)
		n += hb->deps[i].point == point;
	if (n >= SDS_HB_POINT_DEPS)
		return NULL;
	d = &hb->deps[hb->ndeps++];
	memset(d, 0, sizeof(*d));
	d->point = point;
	return d;
}

int heartbeat_point_deps_to_json(const struct sds_heartbeat *hb, int point,
				 json_t *po)
{
	json_t *a = NULL;
	int i;

	for (i = 0; i < hb->ndeps; i++) {
		const struct sds_hb_dep *d = &hb->deps[i];
		json_t *o;

		if (d->point != point)
			continue;
		if (!a && !(a = json_array()))
			return -1;
		o = json_pack("{s:s, s:i, s:s, s:I, s:I, s:I, s:I, s:I, s:I}",
			      "addr", d->addr, "port", (int)d->port, "proto", d->proto,
			      "connects", (json_int_t)d->connects,
			      "connect_errors", (json_int_t)d->connect_errors,
			      "sends", (json_int_t)d->sends,
			      "send_errors", (json_int_t)d->send_errors,
			      "resets", (json_int_t)d->resets,
			      "bytes", (json_int_t)d->bytes);
		if (!o || json_array_append_new(a, o)) {
			json_decref(a);
			return -1;
		}
	}
	if (a && json_object_set_new(po, "deps", a))
		return -1;
	return 0;
}

/* @s as an IPv4 or IPv6 address into @out, canonical; -1 if it is none. */
static int addr_canon(const char *s, size_t len, char *out, size_t outlen)
{
	unsigned char bin[16];

	if (len > SDS_HB_PEER_MAX || strlen(s) != len)
		return -1;
	if (inet_pton(AF_INET, s, bin) == 1)
		return inet_ntop(AF_INET, bin, out, (socklen_t)outlen) ? 0 : -1;
	if (inet_pton(AF_INET6, s, bin) == 1)
		return inet_ntop(AF_INET6, bin, out, (socklen_t)outlen) ? 0 : -1;
	return -1;
}

static const char *const dep_counts[] = {
	"connects", "connect_errors", "sends", "send_errors", "resets", "bytes",
};
#define DEP_NCOUNTS	(sizeof(dep_counts) / sizeof(dep_counts[0]))

static bool dep_field_known(const char *f)
{
	size_t i;

	if (!strcmp(f, "addr") || !strcmp(f, "port") || !strcmp(f, "proto"))
		return true;
	for (i = 0; i < DEP_NCOUNTS; i++)
		if (!strcmp(f, dep_counts[i]))
			return true;
	return false;
}

static uint64_t *dep_count_at(struct sds_hb_dep *d, size_t i)
{
	uint64_t *c[DEP_NCOUNTS] = { &d->connects, &d->connect_errors, &d->sends,
				     &d->send_errors, &d->resets, &d->bytes };

	return c[i];
}

int heartbeat_point_deps_from_json(const char *name, json_t *obj,
				   struct sds_heartbeat *hb, int point,
				   char *err, size_t errlen)
{
	json_t *a = json_object_get(obj, "deps"), *e, *v;
	const char *f;
	size_t i, k;
	int j;

	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > SDS_HB_POINT_DEPS) {
		snprintf(err, errlen, "points.%s.deps must be an array of at most %d dependencies",
			 name, SDS_HB_POINT_DEPS);
		return -1;
	}
	json_array_foreach(a, i, e) {
		json_t *addr = json_object_get(e, "addr"), *port = json_object_get(e, "port");
		json_t *proto = json_object_get(e, "proto");
		struct sds_hb_dep *d;
		char canon[SDS_HB_PEER_MAX + 1];

		if (!json_is_object(e)) {
			snprintf(err, errlen, "points.%s.deps[%zu] must be an object", name, i);
			return -1;
		}
		json_object_foreach(e, f, v) {
			if (!dep_field_known(f)) {
				snprintf(err, errlen, "points.%s.deps[%zu]: unknown field '%.64s'",
					 name, i, f);
				return -1;
			}
		}
		if (!json_is_string(addr) ||
		    addr_canon(json_string_value(addr), json_string_length(addr),
			       canon, sizeof(canon))) {
			snprintf(err, errlen, "points.%s.deps[%zu].addr must be an IPv4 or IPv6 address",
				 name, i);
			return -1;
		}
		if (!json_is_integer(port) || json_integer_value(port) < 1 ||
		    json_integer_value(port) > 65535) {
			snprintf(err, errlen, "points.%s.deps[%zu].port must be an integer 1..65535",
				 name, i);
			return -1;
		}
		if (!json_is_string(proto) || (strcmp(json_string_value(proto), "tcp") &&
					       strcmp(json_string_value(proto), "udp"))) {
			snprintf(err, errlen, "points.%s.deps[%zu].proto must be \"tcp\" or \"udp\"",
				 name, i);
			return -1;
		}
		for (j = 0; j < hb->ndeps; j++) {
			const struct sds_hb_dep *o = &hb->deps[j];

			if (o->point == point && o->port == json_integer_value(port) &&
			    !strcmp(o->addr, canon) &&
			    !strcmp(o->proto, json_string_value(proto))) {
				snprintf(err, errlen, "points.%s.deps[%zu]: %s port %d %s listed twice",
					 name, i, canon, (int)o->port, o->proto);
				return -1;
			}
		}
		d = heartbeat_add_dep(hb, point);
		if (!d) {
			snprintf(err, errlen, "points.%s.deps: more than %d dependencies in the heartbeat",
				 name, SDS_HB_MAX_DEPS);
			return -1;
		}
		snprintf(d->addr, sizeof(d->addr), "%s", canon);
		d->port = (uint16_t)json_integer_value(port);
		snprintf(d->proto, sizeof(d->proto), "%s", json_string_value(proto));
		for (k = 0; k < DEP_NCOUNTS; k++) {
			v = json_object_get(e, dep_counts[k]);
			if (v && (!json_is_integer(v) || json_integer_value(v) < 0 ||
				  json_integer_value(v) > SDS_HB_COUNT_MAX)) {
				snprintf(err, errlen,
					 "points.%s.deps[%zu].%s must be an integer 0..%lld",
					 name, i, dep_counts[k], (long long)SDS_HB_COUNT_MAX);
				return -1;
			}
			*dep_count_at(d, k) = v ? (uint64_t)json_integer_value(v) : 0;
		}
	}
	return 0;
}
