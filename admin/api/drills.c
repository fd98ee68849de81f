// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/drills.c - the routes of fault drills.
 */
#include "errnames.h"
#include "names.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "auth.h"
#include "heartbeat/heartbeat.h"
#include "api/api.h"

/* ---- drills --------------------------------------------------------------- */

/*
 * Which token wrote: its fingerprint (auth.c), so the audit log can tell
 * tokens apart across a rotation without holding a secret.
 */
void api_token_id(const struct api_route *r, char out[24])
{
	snprintf(out, 24, "%s", r->rq->tok ? r->rq->tok->fp : "none");
}

static int drill_int(struct api_route *r, const char *key, int64_t min, int64_t max,
		     int64_t def, int64_t *out)
{
	json_t *v = json_object_get(r->doc, key);

	if (!v) {
		if (def < min) {
			api_fail(r, 400, "%s: required (an integer %lld..%lld)", key,
			     (long long)min, (long long)max);
			return -1;
		}
		*out = def;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max) {
		api_fail(r, 400, "%s must be an integer %lld..%lld", key, (long long)min,
		     (long long)max);
		return -1;
	}
	*out = json_integer_value(v);
	return 0;
}

/*
 * "errno": an error drill's errno at a function point with failfast=, by
 * the loader's names (common/errnames.c); absent or null: the point's own.
 */
static int drill_errno(struct api_route *r, struct store_drill *d)
{
	json_t *v = json_object_get(r->doc, "errno");

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		api_fail(r, 400, "errno must be an errno name (ECONNREFUSED, ETIMEDOUT, EIO, ...)");
		return -1;
	}
	d->err = errnames_parse(json_string_value(v));
	if (!d->err) {
		char names[512];

		errnames_list(names, sizeof(names));
		api_fail(r, 400, "errno: unknown name '%.32s' (%s)", json_string_value(v), names);
		return -1;
	}
	if (d->kind != SDS_DRILL_ERROR) {
		api_fail(r, 400, "errno is for error drills (a delay drill fails nothing)");
		return -1;
	}
	return 0;
}

static const char *const f_drill[] = {
	"point", "kind", "ratio", "delay_ms", "duration_s", "by", "errno",
	"hosts", "hosts_pct", "hosts_count", "stop_when", NULL
};

/*
 * The drill r->doc asks for, checked (a 400 and -1 when not): its fields
 * into @d, its conditions into @stop, its kind's name into *@kind and
 * the hosts chosen into *@hosts (malloc'ed JSON; NULL: every host).
 */
static int drill_parse(struct api_route *r, const char *g, const char *a,
		       struct store_drill *d, struct sds_hb_stop *stop, const char **kind,
		       char **hosts)
{
	int64_t ratio, delay, dur;

	if (api_only_fields(r, f_drill) ||
	    api_name_field(r, "point", true, &d->point) || api_text_field(r, "by", &d->by))
		return -1;
	*kind = json_string_value(json_object_get(r->doc, "kind"));
	if (!*kind || (strcmp(*kind, "error") && strcmp(*kind, "delay"))) {
		api_fail(r, 400, "kind must be \"error\" or \"delay\"");
		return -1;
	}
	d->kind = strcmp(*kind, "error") ? SDS_DRILL_DELAY : SDS_DRILL_ERROR;
	if (drill_int(r, "ratio", 0, 100, 100, &ratio) ||
	    drill_int(r, "duration_s", 1, 86400, -1, &dur) ||
	    drill_int(r, "delay_ms", d->kind == SDS_DRILL_DELAY ? 1 : 0,
		      SDS_HB_DRILL_DELAY_MAX, d->kind == SDS_DRILL_DELAY ? -1 : 0,
		      &delay))
		return -1;
	if (!d->by || !*d->by || strlen(d->by) > 256) {
		api_fail(r, 400, "by: required, 1-256 bytes (who starts the drill, free text)");
		return -1;
	}
	if (drill_errno(r, d))
		return -1;
	if (heartbeat_stops_from_json(json_object_get(r->doc, "stop_when"), "stop_when",
				      stop, &d->nstop, r->err, sizeof(r->err))) {
		api_fail(r, 400, "%s", r->err);
		return -1;
	}
	d->stop = stop;
	/* Last: it reads the app's hosts, and its refusal names them. */
	if (api_drill_hosts(r, g, a, d->point, *kind, hosts))
		return -1;
	d->hosts = *hosts;
	d->ratio = ratio;
	d->delay_ms = delay;
	d->duration_s = dur;
	return 0;
}

int api_drill_check(struct api_route *r, const char *g, const char *a, json_t *doc)
{
	struct sds_hb_stop stop[SDS_HB_MAX_STOPS];
	struct store_drill d = { 0 };
	json_t *saved = r->doc;
	const char *kind;
	char *hosts = NULL;
	int ret;

	r->doc = doc;
	ret = drill_parse(r, g, a, &d, stop, &kind, &hosts);
	r->doc = saved;
	free(hosts);
	return ret;
}

void api_route_drills(struct api_route *r, const char *g, const char *a)
{
	struct store *st = r->ad->store;
	struct sds_hb_stop stop[SDS_HB_MAX_STOPS];
	struct store_drill d = { 0 };
	const char *kind = NULL;
	char tid[24], *hosts = NULL;
	int64_t id;
	json_t *out;

	if (api_is(r, "GET")) {
		if (!api_store_rc(r, st->ops->drill_list(st, g, a, &out, r->err)))
			api_reply(r, 200, out);
		return;
	}
	if (!api_is(r, "POST"))
		return api_not_allowed(r, "GET, POST");
	if (api_body_object(r) || drill_parse(r, g, a, &d, stop, &kind, &hosts))
		return;
	api_token_id(r, tid);
	d.token_id = tid;
	if (api_store_rc(r, st->ops->drill_create(st, g, a, &d, store_now_s(), &id, r->err))) {
		free(hosts);
		return;
	}
	api_reply(r, 201, json_pack("{s:I, s:s, s:s, s:i, s:I, s:I, s:o, s:o, s:o}",
				"id", (json_int_t)id,
				"point", d.point, "kind", kind, "ratio", (int)d.ratio,
				"delay_ms", (json_int_t)d.delay_ms,
				"expires_at", (json_int_t)(store_now_s() + d.duration_s),
				"errno", d.err ? json_string(errnames_name(d.err)) :
						 json_null(),
				"hosts", hosts ? json_loads(hosts, 0, NULL) : json_string("all"),
				"stop_when", heartbeat_stops_to_json(stop, d.nstop)));
	free(hosts);
}

static const char *const f_drill_stop[] = { "by", NULL };

void api_route_drill_stop(struct api_route *r, const char *g, const char *a,
		const char *ids)
{
	struct store *st = r->ad->store;
	const char *by = NULL;
	char tid[24], *end;
	long long id;

	if (!api_is(r, "POST"))
		return api_not_allowed(r, "POST");
	id = strtoll(ids, &end, 10);
	if (*end || id < 1) {
		api_fail(r, 404, "no drill '%s'", ids);
		return;
	}
	if (api_body_object(r) || api_only_fields(r, f_drill_stop) || api_text_field(r, "by", &by))
		return;
	if (!by || !*by || strlen(by) > 256) {
		api_fail(r, 400, "by: required, 1-256 bytes (who stops the drill, free text)");
		return;
	}
	api_token_id(r, tid);
	if (!api_store_rc(r, st->ops->drill_stop(st, g, a, id, by, tid, NULL, store_now_s(),
						 r->err)))
		api_reply(r, 200, json_pack("{s:I, s:b}", "id", (json_int_t)id, "stopped", 1));
}

static const char *const f_drill_abort[] = { "host", "reason", NULL };

/*
 * A loader saw one of drill @ids's stop conditions broken on its host
 * (loader/decide/drill_stop.c) and stopped it there: stop it for every
 * host, with the loader's reason.  The heartbeat token's (auth.c); the
 * write wakes the app's watchers, so the others stop it within a second.
 */
void api_route_drill_abort(struct api_route *r, const char *g, const char *a,
			   const char *ids)
{
	struct store *st = r->ad->store;
	const char *host, *reason;
	char tid[24], by[300], *end;
	long long id;

	if (!api_is(r, "POST"))
		return api_not_allowed(r, "POST");
	id = strtoll(ids, &end, 10);
	if (*end || id < 1)
		return api_fail(r, 404, "no drill '%s'", ids);
	if (r->rq->tok && !auth_in_scope(r->rq->tok, g, a))
		return api_fail(r, 403, "this token is not for %s/%s", g, a);
	if (api_body_object(r) || api_only_fields(r, f_drill_abort) ||
	    api_text_field(r, "host", &host) || api_text_field(r, "reason", &reason))
		return;
	if (!host || !heartbeat_host_valid(host))
		return api_fail(r, 400, "host: required, a host name (1-253 of [A-Za-z0-9._-])");
	if (!reason || !*reason || strlen(reason) > SDS_HB_STOP_REASON_MAX)
		return api_fail(r, 400, "reason: required, 1-%d bytes", SDS_HB_STOP_REASON_MAX);
	snprintf(by, sizeof(by), "host %s", host);
	api_token_id(r, tid);
	if (!api_store_rc(r, st->ops->drill_stop(st, g, a, id, by, tid, reason,
						 store_now_s(), r->err)))
		api_reply(r, 200, json_pack("{s:I, s:b}", "id", (json_int_t)id, "stopped", 1));
}

