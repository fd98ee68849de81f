/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The admin's storage, behind a table of operations so that another engine
 * can be added without touching the HTTP layer (store/sqlite/sqlite.c is the
 * embedded default).  Reads hand back JSON documents, ready for the API;
 * writes take plain C values that the caller has already validated.
 *
 * Every call returns STORE_OK or a negative STORE_* code and, on error,
 * writes a one-line message into @err (STORE_ERR_MAX bytes) that names the
 * thing, e.g. "app 'shop' not found in group 'default'".
 *
 * Organisation (docs/DESIGN.md §7): group -> app -> schemes (one active
 * per app) -> per-point strategies.  Each app has a strategies version
 * that starts at 1 and grows by one whenever what its hosts should enforce
 * changes: switching the active scheme, or changing the active scheme's
 * strategies.
 */
#ifndef SDS_ADMIN_STORE_H
#define SDS_ADMIN_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <jansson.h>
#include "heartbeat/heartbeat.h"
#include "store/stat_cols.h"
#include "strategy.h"

#define STORE_ERR_MAX	256

enum {
	STORE_OK = 0,
	STORE_NOTFOUND = -1,	/* 404 */
	STORE_EXISTS = -2,	/* 409: the name is taken */
	STORE_CONFLICT = -3,	/* 409: e.g. deleting the active scheme */
	STORE_ERROR = -4,	/* 500: the engine failed */
	STORE_FORBIDDEN = -5,	/* 403: e.g. a copy server name another token holds */
};

/* One stored row of statistics: one point of one host in one period. */
struct store_stat_row {
	int64_t period_start;		/* the 10-s period, Unix seconds */
	const char *point;		/* the point's name */
	const char *host;		/* the host that sent it */
	uint64_t visits, exceptions, timeouts, downgrades, max_concurrency;	/* the period's counts */
	uint64_t faults, delays;	/* what drills injected */
	bool suspended;			/* probes suspended for overhead at the period's end */
	uint64_t overhead_milli;	/* their estimated cost then, 1/1000 % of a CPU */
	STORE_STAT_FIELDS		/* store/stat_cols.h: adaptive_limit, adaptive_latency_ns, ... */
	int nhist;			/* entries of @hist */
	const uint64_t *hist;		/* the latency histogram, nhist entries */
};
typedef int (*store_stat_cb)(const struct store_stat_row *row, void *ctx);

/* What a heartbeat did. */
struct store_hb_result {
	int64_t version;		/* the app's strategies version */
	bool duplicate;			/* (host, period) was already stored: nothing added */
	bool created;			/* the app was registered by this heartbeat */
	struct sds_strategies *strategies;	/* if non-NULL and @want: the active scheme's */
	struct sds_hb_drill *drills;	/* if non-NULL: room for SDS_HB_MAX_DRILLS, filled */
	int ndrills;			/* the app's drills in force */
	int64_t drills_seq;		/* the app's drills' change counter as they were read */
	struct sds_hb_copy *copy;	/* if non-NULL: the app's plans and live copy servers */
	/*
	 * The sync's asker (GET /api/v1/sync?host=): only the drills handed
	 * to it; NULL: a loader that does not say, only the drills of every
	 * host.  A heartbeat's answer is its own host's (hb->host).
	 */
	const char *host;
};

#define ADMIN_WHO_MAX	600	/* "BY (token ID)" */

/* A drill to start (validated by the API). */
struct store_drill {
	const char *point;		/* the point it acts on */
	uint32_t kind;			/* enum sds_drill_kind */
	uint32_t ratio;			/* 0..100 */
	int64_t delay_ms;		/* delay drills */
	int64_t duration_s;		/* it ends by itself then */
	const char *by;			/* who, as they said (free text) */
	const char *token_id;		/* which token: a fingerprint, never the token */
	int32_t err;			/* error drills on failfast points: errno; 0: the point's */
	const char *hosts;		/* the hosts it is handed to, a JSON array; NULL: all */
	const struct sds_hb_stop *stop;	/* its stop conditions (@nstop; 0: none) */
	int nstop;
};

/* A game day to store (validated by the API; docs/GAMEDAY.md). */
struct store_gameday {
	const char *name;		/* no other game day of the app has it */
	const char *body;		/* its definition, JSON: description, steps, schedule */
	int64_t every_s;		/* a schedule's period; 0: run only when asked */
	int64_t next_run;		/* the schedule's first run, Unix seconds; 0: none */
	int keep;			/* the last runs (reports) it keeps, 1..100 */
	const char *who;		/* "BY (token ID)", for the row and the audit log */
};

#define STORE_GAMEDAY_MAX_RUNS	100	/* a game day keeps this many reports at most */

#define STORE_COPY_LIVE_S	30	/* a copy server heard within this is offered to loaders */
#define STORE_COPY_SERVERS_PER_TOKEN 16	/* copy server names one token may hold */

/* A copy plan to start or its new settings (validated by the API). */
struct store_copy_plan {
	const char *name;		/* a name; no other active plan has it */
	int npoints;			/* entries of @points, 1..SDS_HB_COPY_POINTS */
	const char *points[SDS_HB_COPY_POINTS];	/* distinct names */
	uint32_t sample_pct;		/* 0..100: share of calls the loaders capture */
	int amplification;		/* copies per record, 1..--copy-max-amplification */
	const char *shadows;		/* JSON array, as in sds-copy's plans file */
	const char *framing;		/* "raw" or "http" */
	bool writes;			/* copy write points' records too */
	int64_t rate;			/* copies per second, 0: no cap */
	int64_t expires_at;		/* Unix seconds, in the future */
	const char *by;			/* who, as they said (free text) */
	const char *token_id;		/* which token: a fingerprint, never the token */
	const char *opts;		/* JSON {diff, ignore, ramp, stop_when, shadow_app}; NULL: none */
};

/* One plan's counts in a copy server's heartbeat (per period, not totals). */
struct store_copy_hb_plan {
	const char *name;		/* the plan's name */
	int64_t received, dispatched, shadow_errors, dropped;	/* in the period */
	int64_t unpaired;		/* diff: requests without a production response */
	json_t *diff_points;		/* diff: {POINT: {pairs, same, ..., examples}}, checked; or NULL */
};

/* A copy server's heartbeat (POST /api/v1/copy-servers/heartbeat). */
struct store_copy_hb {
	const char *name;		/* the server's --name */
	const char *addr;		/* where loaders reach it, "HOST:PORT" */
	const char *owner;		/* fingerprint of the token that sent it */
	bool operator;			/* an operator's token: may re-point any name */
	int64_t period_start;		/* the 10-s period the counts are of */
	int nplans;			/* entries of @plans */
	const struct store_copy_hb_plan *plans;	/* each plan's counts */
};

/* What the store holds, for /metrics. */
struct store_counts {
	int64_t groups, apps, hosts, stat_rows;	/* rows of each */
};

struct store;

/*
 * What a store's listener (store_ops.listen) calls, from a thread of its
 * own: @changed for app @g/@a written through another admin of the same
 * store, @broken when its connection broke (it reconnects by itself).
 */
struct store_listener {
	void (*changed)(void *ctx, const char *g, const char *a);
	void (*broken)(void *ctx, const char *why);
};

struct store_ops {
	/* Close the store and free it; @st is gone after. */
	void (*close)(struct store *st);

	/* Every group, by name: [{"name", "description", "created", "apps"}]. */
	int (*group_list)(struct store *st, json_t **out, char *err);
	/* One group as group_list lists it; STORE_NOTFOUND if none. */
	int (*group_get)(struct store *st, const char *g, json_t **out, char *err);
	/* A new group; STORE_EXISTS if the name is taken. */
	int (*group_create)(struct store *st, const char *g, const char *desc, char *err);
	/* Set a group's description. */
	int (*group_update)(struct store *st, const char *g, const char *desc, char *err);
	/* Delete an empty group; STORE_CONFLICT while it has apps. */
	int (*group_delete)(struct store *st, const char *g, char *err);

	/* @g NULL: the apps of every group. */
	int (*app_list)(struct store *st, const char *g, json_t **out, char *err);
	/* One app as app_list lists it. */
	int (*app_get)(struct store *st, const char *g, const char *a, json_t **out, char *err);
	/* Creates the group if missing, and a scheme "default", active. */
	int (*app_create)(struct store *st, const char *g, const char *a,
			  const char *desc, char *err);
	/* Set an app's description. */
	int (*app_update)(struct store *st, const char *g, const char *a,
			  const char *desc, char *err);
	/* Delete an app with its schemes, statistics, hosts and audit log. */
	int (*app_delete)(struct store *st, const char *g, const char *a, char *err);

	/* The app's schemes, by name, the active one marked. */
	int (*scheme_list)(struct store *st, const char *g, const char *a,
			   json_t **out, char *err);
	/* One scheme as scheme_list lists it. */
	int (*scheme_get)(struct store *st, const char *g, const char *a,
			  const char *s, json_t **out, char *err);
	/* @clone_from non-NULL: copy that scheme's strategies. */
	int (*scheme_create)(struct store *st, const char *g, const char *a,
			     const char *s, const char *desc, const char *clone_from,
			     const char *comment, char *err);
	/* Set a scheme's description. */
	int (*scheme_update)(struct store *st, const char *g, const char *a,
			     const char *s, const char *desc, char *err);
	/*
	 * Rename scheme @s to @to (audited, "scheme.rename"): its strategies,
	 * and whether it is active, stay; STORE_CONFLICT when @to exists.
	 */
	int (*scheme_rename)(struct store *st, const char *g, const char *a,
			     const char *s, const char *to, const char *comment,
			     char *err);
	/* Delete a scheme (audited); STORE_CONFLICT if it is the active one. */
	int (*scheme_delete)(struct store *st, const char *g, const char *a,
			     const char *s, const char *comment, char *err);
	/* Make @s the active scheme; *version gets the app's version after. */
	int (*scheme_activate)(struct store *st, const char *g, const char *a,
			       const char *s, const char *comment,
			       int64_t *version, char *err);

	/*
	 * The strategies of scheme @s (NULL: the active one); out->version is
	 * the app's version.  *scheme (if non-NULL) gets the scheme's name.
	 */
	int (*strategies_get)(struct store *st, const char *g, const char *a,
			      const char *s, struct sds_strategies *out,
			      char scheme[SDS_NAME_MAX + 1], char *err);
	/* Replace all strategies of @s; bumps the version if @s is active. */
	int (*strategies_put)(struct store *st, const char *g, const char *a,
			      const char *s, const struct sds_strategies *in,
			      const char *comment, int64_t *version, char *err);
	/*
	 * Set (insert or replace) one point's strategy: @in is a document of
	 * that one point (in->s[0]), which holds its key_overrides.
	 */
	int (*strategy_put)(struct store *st, const char *g, const char *a,
			    const char *s, const struct sds_strategies *in,
			    const char *comment, int64_t *version, char *err);
	/* Delete one point's strategy (audited); bumps the version if @s is active. */
	int (*strategy_delete)(struct store *st, const char *g, const char *a,
			       const char *s, const char *point,
			       const char *comment, int64_t *version, char *err);

	/*
	 * Store one heartbeat (registering its group and app if new) at
	 * wall-clock time @now.  A (host, period) already stored adds nothing.
	 * If res->strategies is non-NULL and the version differs from
	 * hb->version, the active scheme's strategies are written there.
	 */
	int (*heartbeat)(struct store *st, const struct sds_heartbeat *hb,
			 int64_t now, struct store_hb_result *res, char *err);

	/* The app's hosts, by name: ip, first and last seen, last period, version. */
	int (*host_list)(struct store *st, const char *g, const char *a,
			 json_t **out, char *err);
	/* Every row with period_start in [from, to); @point NULL: all points. */
	int (*stats_scan)(struct store *st, const char *g, const char *a,
			  const char *point, int64_t from, int64_t to,
			  store_stat_cb cb, void *ctx, char *err);
	/* Point names the app has strategies or statistics for. */
	int (*point_list)(struct store *st, const char *g, const char *a,
			  json_t **out, char *err);
	/* Periods with downgrades in [from, to), newest first, at most @limit. */
	int (*events)(struct store *st, const char *g, const char *a, int64_t from,
		      int64_t to, int limit, json_t **out, char *err);
	/* The app's audit log, newest first. */
	int (*audit)(struct store *st, const char *g, const char *a, int limit,
		     json_t **out, char *err);

	/* Drills: start (audited), list (newest first), stop (audited). */
	/* Start drill @d at @now (audited); *id gets its id. */
	int (*drill_create)(struct store *st, const char *g, const char *a,
			    const struct store_drill *d, int64_t now, int64_t *id,
			    char *err);
	/* The app's last 200 drills, newest first. */
	int (*drill_list)(struct store *st, const char *g, const char *a,
			  json_t **out, char *err);
	/*
	 * Stop drill @id (audited); STORE_CONFLICT if it has ended.  @reason
	 * (NULL: an operator's stop) is a broken stop condition's, said in
	 * its row and audited as "drill.abort".
	 */
	int (*drill_stop)(struct store *st, const char *g, const char *a,
			  int64_t id, const char *by, const char *token_id,
			  const char *reason, int64_t now, char *err);

	/*
	 * Copy plans: start (audited; 409 when the name or a point is taken
	 * by an active plan), update (audited), list (newest first), get,
	 * stop (audited), per-period statistics in [from, to).
	 */
	/* Start plan @p (audited); *id gets its id. */
	int (*copy_plan_create)(struct store *st, const char *g, const char *a,
				const struct store_copy_plan *p, int64_t now,
				int64_t *id, char *err);
	/* New settings for active plan @id (audited). */
	int (*copy_plan_update)(struct store *st, const char *g, const char *a,
				int64_t id, const struct store_copy_plan *p,
				int64_t now, char *err);
	/* The app's last 200 plans, newest first, each one's state ("active", "stopped", "expired") as of @now. */
	int (*copy_plan_list)(struct store *st, const char *g, const char *a,
			      int64_t now, json_t **out, char *err);
	/* One plan as copy_plan_list lists it. */
	int (*copy_plan_get)(struct store *st, const char *g, const char *a,
			     int64_t id, int64_t now, json_t **out, char *err);
	/* Stop plan @id (audited); STORE_CONFLICT if it has ended. */
	int (*copy_plan_stop)(struct store *st, const char *g, const char *a,
			      int64_t id, const char *by, const char *token_id,
			      int64_t now, char *err);
	/* Plan @id's loader and server counts per period in [from, to). */
	int (*copy_plan_stats)(struct store *st, const char *g, const char *a,
			       int64_t id, int64_t from, int64_t to,
			       json_t **out, char *err);
	/* Store a copy server's heartbeat; *plans: every active plan, as sds-copy reads them. */
	int (*copy_server_heartbeat)(struct store *st, const struct store_copy_hb *hb,
				     int64_t now, json_t **plans, char *err);
	/* Every copy server, in registration order, "live" as of @now. */
	int (*copy_server_list)(struct store *st, int64_t now, json_t **out, char *err);
	/* Every active plan with a ramp, of every app, as copy_plan_get shows it. */
	int (*copy_ramps)(struct store *st, int64_t now, json_t **out, char *err);
	/* A ramping plan's amplification and what its ramp found (JSON text). */
	int (*copy_ramp_set)(struct store *st, int64_t id, int amplification,
			     const char *result, char *err);

	/*
	 * Forget statistics of periods before @before.  SQLite deletes those
	 * rows; PostgreSQL drops the day partitions that end by @before, so it
	 * keeps up to a day more (dropping is free, deleting rows is not).
	 */
	int (*prune)(struct store *st, int64_t before, char *err);
	/* How many groups, apps, hosts and statistics rows (for /metrics). */
	int (*counts)(struct store *st, struct store_counts *out, char *err);

	/*
	 * Roles and retention (issue 16).  A store may leave any of these
	 * NULL: the admin then logs refusals to stderr, keeps hosts and the
	 * audit log, and scans statistics with stats_scan.
	 *
	 * audit_denied: a refused write to app @g/@a, as an audit row with
	 * action "denied", @detail ("METHOD PATH") and @who (role and token
	 * fingerprint) as its comment; STORE_NOTFOUND when there is no such app.
	 */
	int (*audit_denied)(struct store *st, const char *g, const char *a,
			    const char *detail, const char *who, char *err);
	/* Forget hosts last seen before @before and audit rows older than it. */
	int (*prune_meta)(struct store *st, int64_t before, char *err);
	/* stats_scan, without holding what heartbeats wait for. */
	int (*stats_scan_apart)(struct store *st, const char *g, const char *a,
				const char *point, int64_t from, int64_t to,
				store_stat_cb cb, void *ctx, char *err);

	/*
	 * The push channel (issue 32).  app_state: what a heartbeat of app
	 * @g/@a would be answered at @now, read only (GET /api/v1/sync):
	 * res->version, res->strategies (if non-NULL) when @have differs
	 * from it, the drills and copy plans as the heartbeat fills them;
	 * STORE_NOTFOUND for an unknown app (none is created).
	 */
	int (*app_state)(struct store *st, const char *g, const char *a, int64_t have,
			 int64_t now, struct store_hb_result *res, char *err);
	/*
	 * changed: tell the other admins of this store that a write of app
	 * @g/@a committed; listen: call @l's functions (with @ctx) for
	 * theirs, until close.  NULL for a store only one admin opens.
	 */
	int (*changed)(struct store *st, const char *g, const char *a, char *err);
	int (*listen)(struct store *st, const struct store_listener *l, void *ctx,
		      char *err);
	/*
	 * The app's first period with statistics still kept, *first 0 when it
	 * has none (the dashboard's charts start there).  May be NULL: the
	 * fleet then says null.
	 */
	int (*stats_first)(struct store *st, const char *g, const char *a, int64_t *first,
			   char *err);
	/*
	 * Hot keys (docs/KEYS.md): point @point's rows with period_start in
	 * [@from, @to), by period then host, each {"host", "period_start",
	 * "keys": the heartbeat's array}.  STORE_NOTFOUND for an unknown
	 * app.  May be NULL: the API then answers 501.
	 */
	int (*point_keys)(struct store *st, const char *g, const char *a, const char *point,
			  int64_t from, int64_t to, json_t **out, char *err);

	/*
	 * Game days (docs/GAMEDAY.md).  May be NULL: the API answers 501.
	 * gameday_create: @gd stored (audited "gameday.create"), STORE_EXISTS
	 * when the app has one by that name.  gameday_list: the app's, by
	 * name, each {"id", "name", "description", "steps", "schedule",
	 * "keep", "next_run", "created", "created_by", "running": the open
	 * run's id or null}; gameday_get: one, with "runs": its kept runs,
	 * newest first, each {"run", "started_by", "started_at", "ended_at",
	 * "result", "abort_by", "state"}.  gameday_delete (audited):
	 * STORE_CONFLICT while it runs.  gameday_run: a run opened at @now
	 * with @state (audited "gameday.run"), *@run its id; STORE_CONFLICT
	 * while any game day of the app runs (one at a time per app, over
	 * every admin of the store).  gameday_abort: its open run marked
	 * to abort (audited), STORE_CONFLICT when it does not run.
	 */
	int (*gameday_create)(struct store *st, const char *g, const char *a,
			      const struct store_gameday *gd, int64_t now, int64_t *id,
			      char *err);
	int (*gameday_list)(struct store *st, const char *g, const char *a, json_t **out,
			    char *err);
	int (*gameday_get)(struct store *st, const char *g, const char *a, const char *name,
			   json_t **out, char *err);
	int (*gameday_delete)(struct store *st, const char *g, const char *a,
			      const char *name, const char *who, char *err);
	int (*gameday_run)(struct store *st, const char *g, const char *a, const char *name,
			   const char *who, const char *state, int64_t now, int64_t *run,
			   char *err);
	int (*gameday_abort)(struct store *st, const char *g, const char *a,
			     const char *name, const char *who, char *err);
	/*
	 * The scheduler's tick (admin/gameday/run.c), as runner @runner at
	 * @now: every scheduled game day due opens a run with @state (or, while
	 * another runs on its app, a run ended at once, result "skipped: ...")
	 * and moves to its next time after @now; then every open run that
	 * @runner holds or whose lease lapsed is leased to it until @now +
	 * @lease_s and listed in *@claimed: [{"run", "group", "app",
	 * "gameday", "body", "state", "started_at", "abort_by",
	 * "started_by"}].  Several admins of one store: each due time opens one
	 * run, each run advances in one admin at a time.
	 */
	int (*gameday_tick)(struct store *st, const char *runner, int64_t now,
			    int64_t lease_s, const char *state, json_t **claimed, char *err);
	/*
	 * Run @run's @state, as @runner holds it; @ended_at nonzero: it ended
	 * then with @result, and only its game day's last "keep" ended runs
	 * stay.  STORE_CONFLICT when @runner no longer holds it.
	 */
	int (*gameday_save)(struct store *st, int64_t run, const char *runner,
			    const char *state, int64_t ended_at, const char *result,
			    char *err);
	/*
	 * Dependencies (docs/DEPS.md): a row per host of the app that sent
	 * some, by host, each {"host", "period_start", "updated", "deps":
	 * {"POINT": [edges as the heartbeat sent them]}}.  STORE_NOTFOUND
	 * for an unknown app.  May be NULL: the API then answers 501.
	 */
	int (*app_deps)(struct store *st, const char *g, const char *a, json_t **out,
			char *err);
};

/* An open store: an engine's struct starts with this. */
struct store {
	const struct store_ops *ops;	/* the engine's */
};

/* The SQLite engine: @path is the database file, created if missing. */
struct store *sqlite_store_open(const char *path, char *err);

/* The PostgreSQL engine (store/pg/pg.c): @url is postgresql://USER[:PW]@HOST[:PORT]/DB. */
struct store *pg_store_open(const char *url, char *err);

/*
 * The "store" extension interface (docs/EXTENSIONS.md): sds-admin opens
 * its store by name, the scheme of --db (NAME://WHERE; a value without
 * "://" is a SQLite file), built-in "sqlite" or a plugin's.  Bump
 * STORE_EXT_ABI whenever struct store_ops or anything it passes changes:
 * a plugin built against another version is refused, never called.
 */
#include "../../libsds/sds_ext.h"

#define STORE_EXT	"store"
#define STORE_EXT_ABI	7	/* 4: struct store_stat_row has store/stat_cols.h's fields; 5: split, max_stuck, overload; 6: point_keys; 7: strategy_put takes a one-point document (key_overrides), game days, app_deps */

struct store_ext {
	struct sds_ext_head head;	/* STORE_EXT, STORE_EXT_ABI, SDS_EXT_IMPL */
	/* Open the store at @where (the --db value after "NAME://"); NULL with @err. */
	struct store *(*open)(const struct store_ext *self, const char *where,
			      char *err);
};

/*
 * Open the store --db @db names (store/ext.c): the registry's "store"
 * @db's scheme names, at @db's rest.  NULL with @err (STORE_ERR_MAX): an
 * unknown store (listing the known ones), a refused plugin, the store's
 * own error.
 */
struct store *store_open(const char *db, char *err);

/* Register the interface and its built-in, for --ext-list. */
int store_ext_register(char *err, size_t errlen);

static inline void store_close(struct store *st)
{
	if (st)
		st->ops->close(st);
}

/* Unix seconds: the clock of every time the store and the API record. */
static inline int64_t store_now_s(void)
{
	return (int64_t)time(NULL);
}

#endif /* SDS_ADMIN_STORE_H */
