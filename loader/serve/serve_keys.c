// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * serve_keys.c - the `keys POINT [N]` reply: a keyed point's heaviest
 * keys over the window and its table's counts (docs/KEYS.md,
 * docs/PROTOCOL.md).  The table is read whole (kernel/keys.c: batch
 * lookups, bounded by the point's key_capacity), sorted, and the first
 * N sent; keys go out as text (keys__text), never as raw bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "kernel/keys.h"
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

/* One key of the reply. */
static json_t *entry_json(const struct keys_entry *e)
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
	a = json_array();
	for (i = 0; i < r.n && i < top; i++)
		json_array_append_new(a, entry_json(&r.e[i]));
	json_object_set_new(o, "top", a);
	keys__read_free(&r);
	return o;
}
