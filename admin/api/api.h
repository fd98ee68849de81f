// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api.h - what the files of the REST routes share: the route being served
 * and the helpers that reply and check bodies.  Private to admin/api*.c;
 * the server sees only api_handle() in admin.h.
 */
#ifndef SDS_ADMIN_API_H
#define SDS_ADMIN_API_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "admin.h"

#define MAX_SEGS	10

struct route {
	const struct api_req *rq;
	struct api_resp *rs;
	struct admin *ad;
	char *seg[MAX_SEGS];
	int nseg;
	json_t *doc;		/* the parsed body, if any */
	char err[STORE_ERR_MAX];
};

/* api.c: replies, bodies, path segments */
void fail(struct route *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void reply(struct route *r, int status, json_t *body);
int store_rc(struct route *r, int rc);
bool is(const struct route *r, const char *m);
void not_allowed(struct route *r, const char *allow);
int body_object(struct route *r);
int only_fields(struct route *r, const char *const *allowed);
int text_field(struct route *r, const char *key, const char **out);
int name_field(struct route *r, const char *key, bool required,
	       const char **out);
int seg_name(struct route *r, int i, const char *what);
int query_int(struct route *r, const char *key, int64_t def, int64_t *out);

/* api/org.c: groups, apps, schemes, strategies */
void groups(struct route *r);
void group(struct route *r);
void apps(struct route *r, const char *g);
void app(struct route *r, const char *g, const char *a);
void schemes(struct route *r, const char *g, const char *a);
void scheme(struct route *r, const char *g, const char *a, const char *s);
void active_scheme(struct route *r, const char *g, const char *a);
void strategies_all(struct route *r, const char *g, const char *a,
		    const char *s);
void strategy_one(struct route *r, const char *g, const char *a,
		  const char *s, const char *point);

/* api/stats.c: stats, listings, heartbeat */
void stats(struct route *r, const char *g, const char *a);
void listing(struct route *r, const char *g, const char *a, const char *what);
void heartbeat(struct route *r);

/* api/drills.c: drills, and the token fingerprint audit rows carry */
void token_id(const struct route *r, char out[24]);
void drills(struct route *r, const char *g, const char *a);
void drill_stop(struct route *r, const char *g, const char *a,
		const char *ids);

/* api/copy.c, api/copy_servers.c: copy plans and copy servers */
void copy_plans(struct route *r, const char *g, const char *a);
void copy_plan(struct route *r, const char *g, const char *a, const char *ids,
	       const char *what);
void copy_servers(struct route *r);

static inline int64_t now_s(void)
{
	return (int64_t)time(NULL);
}

#endif
