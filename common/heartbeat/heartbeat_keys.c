// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * heartbeat_keys.c - a keyed point's heaviest keys of the period in the
 * heartbeat (docs/KEYS.md): "keys": [{"key": "7", "kind": "int",
 * "calls": N, "exceptions": N, "downgrades": N, "p99_ns": N}, ...]
 * ("p99_ns" only when some call of the key completed in the period), at most
 * SDS_HB_POINT_KEYS a point and SDS_HB_MAX_KEYS a heartbeat, sent only
 * when a point has some (older admins refuse fields they do not know).
 * Keys are text: printable ASCII only, as the loader shows them.
 */
#include <stdio.h>
#include <string.h>
#include "heartbeat/heartbeat.h"

static const char *const key_kinds[] = { "int", "str", "buf", "unreadable" };

struct sds_hb_key *heartbeat_add_key(struct sds_heartbeat *hb, int point)
{
	struct sds_hb_key *k;
	int i, n = 0;

	if (hb->nkeys >= SDS_HB_MAX_KEYS)
		return NULL;
	for (i = 0; i < hb->nkeys; i++)
		n += hb->keys[i].point == point;
	if (n >= SDS_HB_POINT_KEYS)
		return NULL;
	k = &hb->keys[hb->nkeys++];
	memset(k, 0, sizeof(*k));
	k->point = point;
	return k;
}

int heartbeat_point_keys_to_json(const struct sds_heartbeat *hb, int point,
				 json_t *po)
{
	json_t *a = NULL;
	int i;

	for (i = 0; i < hb->nkeys; i++) {
		const struct sds_hb_key *k = &hb->keys[i];
		json_t *o;

		if (k->point != point)
			continue;
		if (!a && !(a = json_array()))
			return -1;
		o = json_pack("{s:s, s:s, s:I, s:I, s:I}", "key", k->key,
			      "kind", k->kind, "calls", (json_int_t)k->calls,
			      "exceptions", (json_int_t)k->exceptions,
			      "downgrades", (json_int_t)k->downgrades);
		if (o && k->p99_ns &&
		    json_object_set_new(o, "p99_ns", json_integer((json_int_t)k->p99_ns))) {
			json_decref(o);
			o = NULL;
		}
		if (!o || json_array_append_new(a, o)) {
			json_decref(a);
			return -1;
		}
	}
	if (a && json_object_set_new(po, "keys", a))
		return -1;
	return 0;
}

static bool key_text_ok(const char *s, size_t len)
{
	size_t i;

	if (len > SDS_HB_KEY_TEXT || strlen(s) != len)
		return false;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

static bool kind_ok(const char *s)
{
	size_t i;

	for (i = 0; s && i < sizeof(key_kinds) / sizeof(key_kinds[0]); i++)
		if (!strcmp(s, key_kinds[i]))
			return true;
	return false;
}

/* A count of a key: 0..SDS_HB_COUNT_MAX. */
static int key_count(json_t *o, const char *f, uint64_t *out)
{
	json_t *v = json_object_get(o, f);

	if (!v) {
		*out = 0;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > SDS_HB_COUNT_MAX)
		return -1;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

int heartbeat_point_keys_from_json(const char *name, json_t *obj,
				   struct sds_heartbeat *hb, int point,
				   char *err, size_t errlen)
{
	json_t *a = json_object_get(obj, "keys"), *e, *v;
	const char *f;
	size_t i;

	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > SDS_HB_POINT_KEYS) {
		snprintf(err, errlen, "points.%s.keys must be an array of at most %d keys",
			 name, SDS_HB_POINT_KEYS);
		return -1;
	}
	json_array_foreach(a, i, e) {
		struct sds_hb_key *k;
		json_t *key = json_object_get(e, "key"), *kind = json_object_get(e, "kind");

		if (!json_is_object(e)) {
			snprintf(err, errlen, "points.%s.keys[%zu] must be an object", name, i);
			return -1;
		}
		json_object_foreach(e, f, v) {
			if (strcmp(f, "key") && strcmp(f, "kind") && strcmp(f, "calls") &&
			    strcmp(f, "exceptions") && strcmp(f, "downgrades") &&
			    strcmp(f, "p99_ns")) {
				snprintf(err, errlen, "points.%s.keys[%zu]: unknown field '%.64s'",
					 name, i, f);
				return -1;
			}
		}
		if (!json_is_string(key) ||
		    !key_text_ok(json_string_value(key), json_string_length(key))) {
			snprintf(err, errlen,
				 "points.%s.keys[%zu].key must be printable text of at most %d characters",
				 name, i, SDS_HB_KEY_TEXT);
			return -1;
		}
		if (!json_is_string(kind) || !kind_ok(json_string_value(kind))) {
			snprintf(err, errlen,
				 "points.%s.keys[%zu].kind must be \"int\", \"str\", \"buf\" or \"unreadable\"",
				 name, i);
			return -1;
		}
		k = heartbeat_add_key(hb, point);
		if (!k) {
			snprintf(err, errlen, "points.%s.keys: more than %d keys in the heartbeat",
				 name, SDS_HB_MAX_KEYS);
			return -1;
		}
		snprintf(k->key, sizeof(k->key), "%s", json_string_value(key));
		snprintf(k->kind, sizeof(k->kind), "%s", json_string_value(kind));
		if (key_count(e, "calls", &k->calls) ||
		    key_count(e, "exceptions", &k->exceptions) ||
		    key_count(e, "downgrades", &k->downgrades) ||
		    key_count(e, "p99_ns", &k->p99_ns)) {
			snprintf(err, errlen,
				 "points.%s.keys[%zu]: calls, exceptions, downgrades and p99_ns must be integers 0..%lld",
				 name, i, (long long)SDS_HB_COUNT_MAX);
			return -1;
		}
	}
	return 0;
}
