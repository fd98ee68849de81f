// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/api.h - what the files of the REST routes share: the route being
 * served and the helpers that reply and check bodies.  Private to admin/api/;
 * the server sees only api_handle() in admin.h.
 */
#ifndef SDS_ADMIN_API_H
#define SDS_ADMIN_API_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "admin.h"

#define MAX_SEGS	10

struct api_route {
	const struct api_req *rq;	/* the request */
	struct api_resp *rs;		/* the answer being made */
	struct admin *ad;		/* the admin serving it: its store and tokens */
	char *seg[MAX_SEGS];		/* the path's segments under /api/v1/ */
	int nseg;			/* entries of @seg */
	json_t *doc;		/* the parsed body, if any */
	char err[STORE_ERR_MAX];
};

/* api.c: replies, bodies, path segments */
void api_fail(struct api_route *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void api_reply(struct api_route *r, int status, json_t *body);
int api_store_rc(struct api_route *r, int rc);
bool api_is(const struct api_route *r, const char *m);
void api_not_allowed(struct api_route *r, const char *allow);
int api_body_object(struct api_route *r);
int api_only_fields(struct api_route *r, const char *const *allowed);
int api_text_field(struct api_route *r, const char *key, const char **out);
int api_name_field(struct api_route *r, const char *key, bool required,
	       const char **out);
int api_seg_name(struct api_route *r, int i, const char *what);
int api_query_int(struct api_route *r, const char *key, int64_t def, int64_t *out);

/* api/org.c: groups, apps, schemes, strategies */
void api_route_groups(struct api_route *r);
void api_route_group(struct api_route *r);
void api_route_apps(struct api_route *r, const char *g);
void api_route_app(struct api_route *r, const char *g, const char *a);
void api_route_schemes(struct api_route *r, const char *g, const char *a);
void api_route_scheme(struct api_route *r, const char *g, const char *a, const char *s);
void api_route_active_scheme(struct api_route *r, const char *g, const char *a);
void api_route_strategies(struct api_route *r, const char *g, const char *a,
		    const char *s);
void api_route_strategy(struct api_route *r, const char *g, const char *a,
		  const char *s, const char *point);

/* api/stats.c: stats, listings, heartbeat, sync */
void api_route_stats(struct api_route *r, const char *g, const char *a);
void api_route_listing(struct api_route *r, const char *g, const char *a, const char *what);
void api_route_heartbeat(struct api_route *r);
/* GET sync?group=G&app=A&version=V: a heartbeat's answer, read only (issue 32) */
void api_route_sync(struct api_route *r);

/* api/keys.c: GET {A}/points/{P}/keys, a keyed point's hot keys merged over hosts */
void api_route_point_keys(struct api_route *r, const char *g, const char *a,
			  const char *point);

/*
 * api/deps.c: GET {A}/deps and {A}/points/{P}/deps (@point), each point's
 * dependencies summed over the app's hosts (docs/DEPS.md)
 */
void api_route_deps(struct api_route *r, const char *g, const char *a,
		    const char *point);

/* api/shares.c: the cluster shares, and a strategy PUT's need of a live host */
void api_route_shares(struct api_route *r);
int api_cluster_check_hosts(struct api_route *r, const char *g, const char *a,
			    const struct sds_strategies *ss);

/* api/drills.c: drills, and the token fingerprint audit rows carry */
void api_token_id(const struct api_route *r, char out[24]);
void api_route_drills(struct api_route *r, const char *g, const char *a);
void api_route_drill_stop(struct api_route *r, const char *g, const char *a,
		const char *ids);
/* POST {A}/drills/ID/abort: a loader's stop condition broke (heartbeat token) */
void api_route_drill_abort(struct api_route *r, const char *g, const char *a,
			   const char *ids);
/*
 * A drill's body @doc checked as POST {A}/drills would (its hosts too),
 * nothing started: 0, or -1 after the 400 (or 404) it would give.
 */
int api_drill_check(struct api_route *r, const char *g, const char *a, json_t *doc);
/*
 * api/drill_hosts.c: the body's blast radius (hosts, hosts_pct,
 * hosts_count) as the JSON array of hosts chosen (*@out, malloc'ed;
 * NULL: every host); -1 after a 400 (or 404, 500).
 */
int api_drill_hosts(struct api_route *r, const char *g, const char *a,
		    const char *point, const char *kind, char **out);
/*
 * api/drill_judge.c: after heartbeat @hb was stored, the stop conditions
 * of @res's drills judged over the fleet's periods; one broken stops its
 * drill everywhere (audited drill.abort) and wakes the app's watchers.
 */
void api_drill_judge(struct api_route *r, const struct sds_heartbeat *hb,
		     struct store_hb_result *res);

/* api/gamedays.c: game days, their runs and reports (docs/GAMEDAY.md) */
void api_route_gamedays(struct api_route *r, const char *g, const char *a);
void api_route_gameday(struct api_route *r, const char *g, const char *a, const char *name,
		       const char *what, const char *run);
/*
 * api/gameday_plan.c: the definition r->doc asks for, checked against the
 * app (its copy plans, schemes, hosts): *@body the stored definition
 * (new reference), *@every_s and *@next_run its schedule (0: none),
 * *@keep its reports kept.  0, or -1 after a 400 (404 for the app).
 */
int api_gameday_plan(struct api_route *r, const char *g, const char *a, json_t **body,
		     int64_t *every_s, int64_t *next_run, int *keep);

/* api/copy.c, api/copy_servers.c: copy plans and copy servers */
void api_route_copy_plans(struct api_route *r, const char *g, const char *a);
/* api/copy_ramp.c: every ramping plan judged and stepped (at copy server heartbeats) */
void api_copy_ramp_tick(struct api_route *r, int64_t now);
/* api/copy_opts.c: a plan's diff and ramp settings; *opts JSON text or NULL (free it) */
int api_copy_opts(struct api_route *r, const char *g, const struct store_copy_plan *p,
		  int64_t *amp, char **opts);
void api_route_copy_plan(struct api_route *r, const char *g, const char *a, const char *ids,
	       const char *what);
void api_route_copy_servers(struct api_route *r);

/*
 * api/refused.c: the admin's strategies the hosts refused, gathered from
 * host_list's rows @hosts: [{"point", "version", "reason", "hosts",
 * "text"}] (new reference; NULL: out of memory); GET {A}/refused.
 */
json_t *api_refused(json_t *hosts);
void api_route_refused(struct api_route *r, const char *g, const char *a);

/* api/fleet.c: the dashboard's cockpit */
void api_route_fleet(struct api_route *r);
void api_route_stats_hosts(struct api_route *r, const char *g, const char *a);

#endif
