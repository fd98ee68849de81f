// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * serve_keys.c - the `keys POINT [N]` reply: a keyed point's heaviest
 * keys over the window and its table's counts (docs/KEYS.md,
 * docs/PROTOCOL.md).  The table is read whole (keys/keys.c: batch
 * lookups, bounded by the point's key_capacity), sorted, and the first
 * N sent; keys go out as text (keys__text), never as raw bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "keys/keys.h"
#include "kernel/probes.h"
#include "names.h"
#include "serve/serve.h"

#define KEYS_TOP_DEFAULT	10
#define KEYS_TOP_MAX		1000	/* one reply: ~200 KB at most */

static json_t *keys_error(const char *fmt, const char *arg)
{
	char msg[256];

	snprintf(msg, sizeof(msg), fmt, arg);
	return json_pack("{s:s}", "error", msg);
}

/* One key of the reply; @blocked: by the point's key limits now. */
static json_t *entry_json(const struct keys_entry *e, bool blocked)
{
	char text[KEYS_TEXT_MAX];
	json_t *o = json_object();

	keys__text(&e->key, text, sizeof(text));
	json_object_set_new(o, "key", json_string(text));
	json_object_set_new(o, "kind", json_string(keys__kind_name(e->key.kind)));
	json_object_set_new(o, "calls", json_integer((json_int_t)e->calls));
	json_object_set_new(o, "exceptions", json_integer((json_int_t)e->exceptions));
	json_object_set_new(o, "downgrades", json_integer((json_int_t)e->downgrades));
	json_object_set_new(o, "window_calls", json_integer((json_int_t)e->win_calls));
	json_object_set_new(o, "window_exceptions",
			    json_integer((json_int_t)e->win_exceptions));
	json_object_set_new(o, "window_downgrades",
			    json_integer((json_int_t)e->win_downgrades));
	json_object_set_new(o, "rate", json_real((double)e->win_calls / SDS_WINDOW_S));
	json_object_set_new(o, "completed", json_integer((json_int_t)e->completed));
	json_object_set_new(o, "mean_ns", json_integer(e->completed ?
		(json_int_t)(e->latency_sum / e->completed) : 0));
	json_object_set_new(o, "p99_ns", json_integer((json_int_t)keys__percentile(e, 99)));
	json_object_set_new(o, "blocked", json_boolean(blocked));
	return o;
}

json_t *serve__keys_json(struct serve *sv, const char *args)
{
	const struct probes *pr = sv->probes;
	char name[SDS_NAME_MAX + 1], spec[32];
	const char *sp = strchr(args, ' ');
	size_t nlen = sp ? (size_t)(sp - args) : strlen(args);
	struct keys_read r;
	unsigned long top = KEYS_TOP_DEFAULT;
	json_t *o, *a;
	bool limits;
	size_t i;
	int id;

	if (!nlen || nlen > SDS_NAME_MAX)
		return keys_error("keys: bad point name%s", "");
	memcpy(name, args, nlen);
	name[nlen] = '\0';
	if (!sds_point_name_valid(name))
		return keys_error("keys: bad point name '%s'", name);
	if (sp) {
		char *end;

		top = strtoul(sp + 1, &end, 10);
		if (*end || end == sp + 1 || top < 1 || top > KEYS_TOP_MAX)
			return keys_error("keys: the top must be 1..1000, not '%s'", sp + 1);
	}
	id = probes__find(pr, name);
	if (id < 0)
		return keys_error("no point '%s' in this app", name);
	if (!keys__keyed(pr, id))
		return keys_error("point '%s' has no key (a function point needs :key=argN, strN or bufN,lenM; a guard point the keyed calls of libsds)",
				  name);
	if (keys__read(pr, id, &r)) {
		/* A guard point passed no key yet: its table comes at the tick. */
		memset(&r, 0, sizeof(r));
		r.cap = 0;
	}
	keys__top(&r);
	o = json_object();
	json_object_set_new(o, "point", json_string(name));
	pointspec_key_format(&pr->pts[id].spec, spec, sizeof(spec));
	json_object_set_new(o, "key", json_string(pr->pts[id].kind == POINT_FUNCTION ?
						  spec : "guard"));
	json_object_set_new(o, "capacity", json_integer(r.cap));
	json_object_set_new(o, "live", json_integer((json_int_t)r.live));
	json_object_set_new(o, "inserted", json_integer((json_int_t)r.inserted));
	json_object_set_new(o, "evicted", json_integer((json_int_t)r.evicted));
	json_object_set_new(o, "unreadable", json_integer((json_int_t)r.unreadable));
	json_object_set_new(o, "lost", json_integer((json_int_t)r.lost));
	json_object_set_new(o, "blocked", json_integer((json_int_t)r.blocked));
	json_object_set_new(o, "window_s", json_integer(SDS_WINDOW_S));
	/* Which keys the point's key limits block now (the tick's set). */
	limits = sv->ops->key_blocked ? sv->ops->key_blocked(sv->ctx, id, 0) >= 0 : false;
	json_object_set_new(o, "key_limits", json_boolean(limits));
	a = json_array();
	for (i = 0; i < r.n && i < top; i++)
		json_array_append_new(a, entry_json(&r.e[i], limits &&
			r.e[i].key.kind != SDS_KEY_UNREADABLE &&
			sv->ops->key_blocked(sv->ctx, id, sds_key_hash(&r.e[i].key)) > 0));
	json_object_set_new(o, "top", a);
	keys__read_free(&r);
	return o;
}

/* Two hex digits; -1 if either is not one. */
static int hex_byte(const char *s)
{
	int v = 0, i;

	for (i = 0; i < 2; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* @text as point @ps's key (as keys__text shows one); -1 if it cannot be one. */
static int key_of_text(const struct point_spec *ps, const char *text,
		       struct sds_key *k)
{
	size_t n = strlen(text), i;

	memset(k, 0, sizeof(*k));
	if (ps->key_kind == SDS_KEY_INT) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(text, &end, 10);
		if (!n || *end || errno)
			return -1;
		k->kind = SDS_KEY_INT;
		k->len = 8;
		memcpy(k->bytes, &v, sizeof(v));
		return 0;
	}
	k->kind = ps->key_kind;
	if (ps->key_kind == SDS_KEY_BUF && n > 2 && !strncmp(text, "0x", 2) &&
	    n % 2 == 0) {
		if ((n - 2) / 2 > ps->key_max)
			return -1;
		for (i = 0; i < (n - 2) / 2; i++) {
			int b = hex_byte(text + 2 + 2 * i);

			if (b < 0)
				return -1;
			k->bytes[i] = (__u8)b;
		}
		k->len = (__u8)((n - 2) / 2);
		return 0;
	}
	if (n > ps->key_max)
		return -1;
	memcpy(k->bytes, text, n);
	k->len = (__u8)n;
	return 0;
}

json_t *serve__keys_block(struct serve *sv, const char *args)
{
	struct probes *pr = sv->probes;
	char name[SDS_NAME_MAX + 1];
	unsigned long secs;
	const char *sp = strchr(args, ' '), *text;
	struct timespec ts;
	struct sds_key k;
	uint64_t hash, until = 0;
	char *end;
	int id;

	if (!sp || (size_t)(sp - args) > SDS_NAME_MAX)
		return keys_error("keys-block: expected POINT SECONDS KEY%s", "");
	memcpy(name, args, (size_t)(sp - args));
	name[sp - args] = '\0';
	secs = strtoul(sp + 1, &end, 10);
	if (end == sp + 1 || *end != ' ' || secs > 86400)
		return keys_error("keys-block: SECONDS must be 0..86400%s", "");
	text = end + 1;
	id = probes__find(pr, name);
	if (id < 0)
		return keys_error("no point '%s' in this app", name);
	if (pr->pts[id].kind != POINT_FUNCTION || !pr->pts[id].spec.key_kind ||
	    !pr->pts[id].spec.failfast_ops)
		return keys_error("keys-block: point '%s' is not a keyed function point with failfast= (docs/KEYS.md)",
				  name);
	if (key_of_text(&pr->pts[id].spec, text, &k))
		return keys_error("keys-block: '%s' is not a key of the point", text);
	hash = sds_key_hash(&k);
	if (secs) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		until = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec +
			secs * 1000000000ULL;
	}
	if (secs ? keys__block(pr, id, hash, until) : keys__unblock(pr, id, hash))
		return keys_error("keys-block: the kernel refused: %s", strerror(errno));
	return json_pack("{s:s, s:s, s:I}", "point", name, "key", text,
			 "seconds", (json_int_t)secs);
}
