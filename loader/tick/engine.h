/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * engine.h - the strategies in force and the tick (engine.c): points by
 * name, the tick and the drills' re-evaluation, the tick's read, the
 * strategies applied from a file, the admin or the cache.
 *
 * struct engine owns what deciding needs between ticks (the strategies,
 * each point's run and half-open state, the exact marks, the reads, the
 * tick's record) and borrows the modules it drives (struct engine_env,
 * filled by attach once they exist).  It never sees struct loader.
 */
#ifndef SDS_ENGINE_H
#define SDS_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include "decide/engine_eval.h"
#include "decide/halfopen.h"
#include "tick/adaptive_run.h"
#include "tick/exact_run.h"
#include "tick/keys_run.h"
#include "keys/keys_period.h"
#include "tick/pressure_run.h"
#include "tick/tick.h"
#include "heartbeat/heartbeat.h"
#include "kernel/snapshot.h"
#include "report/uplink.h"

struct budget;
struct capture;
struct counters;
struct drill;
struct events;
struct failfast;
struct flag_state;
struct flags_region;
struct keep;
struct lbpub;
struct metrics;
struct probes;
struct sds_strategies;
struct session;
struct uplink;
struct watch;

/*
 * What the engine reads and drives, owned by other modules; valid from
 * engine__init until the loop ends.  The pointers that may be NULL say so.
 */
struct engine_env {
	const char *group;		/* --group */
	const char *app;		/* --app */
	uint64_t tick_ns;		/* --tick-ms */
	struct probes *probes;		/* the points (it adds guard points) */
	struct counters *counters;	/* the tick's reads come from here */
	struct flags_region *flags;	/* the verdicts go here (flags.c writes) */
	struct events *events;		/* downgrade transitions */
	struct drill *drill;		/* fault drills: their flags at each tick */
	struct budget *budget;		/* --max-overhead, at each tick */
	struct watch *watch;		/* the build followed, for the heartbeat */
	const struct session *sessions;	/* the control socket's SDS_MAX_PROCS sessions: which are open */
	struct uplink *uplink;		/* the heartbeat; NULL without --admin */
	struct capture *capture;	/* traffic copy; NULL: off */
	struct failfast *failfast;	/* LSM fail-fast; NULL: no :failfast= point */
	struct metrics *metrics;	/* --metrics; NULL: off */
	struct keep *keep;		/* the crash-only copy, committed each tick; NULL: none */
};

struct engine {
	struct engine_env env;		/* what it borrows (engine__init) */
	const char *strategies_path;	/* --strategies FILE, or NULL (engine__set_files) */
	char cache_path[512];		/* the admin's last strategies, for restarts; "": none */
	struct sds_strategies *strategies;	/* in force; NULL: none */
	struct point_run run[SDS_MAX_POINTS];	/* per point id: its chain, window, drill */
	struct halfopen_run halfopen[SDS_MAX_POINTS];	/* per point id: its half-open phase */
	struct exact_run exact;		/* exact trips' marks (exact_run.c) */
	struct adaptive_run adaptive;	/* adaptive points' limits (adaptive_run.c) */
	struct keys_run keys;		/* hot keys' limits (keys_run.c) */
	struct snap_pool snaps;		/* buffers of the reads */
	struct snapshot *snap;		/* the last tick's read (held); NULL before the first */
	struct lbpub *lbpub;		/* providers' load for balancers; NULL: none yet */
	/* The tick's record (tick.h): rebuilt at every tick, engine__flush updates verdicts. */
	struct tick tick;
	struct tick_point tick_pts[SDS_MAX_POINTS];	/* @tick.pt */
	struct sds_heartbeat tick_build;	/* @tick.build: only build_id and deploys */
	/* Cluster-wide limits (docs/CLUSTER.md): the admin's grants, per point id. */
	struct uplink_share_grant shares[SDS_MAX_POINTS];
	uint64_t shares_at_ns;		/* CLOCK_MONOTONIC when they came; 0: never */
	int share_hosts;		/* the app's live hosts then */
	bool share_reporting;		/* a point had a cluster field at the last tick */
	struct uplink_share_report share_rep[SDS_MAX_POINTS];	/* the tick's reports */
	struct sds_strategy eff[SDS_MAX_POINTS];	/* a cluster point's strategy with its share */
	/* Host pressure rules (docs/PRESSURE.md): attach opens it, the tick steps it. */
	struct pressure_run pressure;
	struct sds_hb_rule tick_rules[SDS_HB_MAX_RULES];	/* @tick.rules */
	/*
	 * The admin's strategies refused (a field a point cannot enforce):
	 * the heartbeat reports them (@tick.refused) until the loader
	 * accepts a later version from the admin.  @apply_err is
	 * engine__apply's last refusal, for engine__admin_reply.
	 */
	int nrefused;
	struct sds_hb_refusal refused[SDS_HB_MAX_REFUSED];
	char apply_err[512];
	struct sds_hb_key tick_keys[SDS_HB_MAX_KEYS];	/* @tick.keys */
	struct keys_period keys_period[SDS_MAX_POINTS];	/* per point: its keys' latency at the last period's close */
};

/* Where a cluster point's limits in force come from (engine__cluster). */
enum engine_share_source {
	SHARE_ADMIN,			/* the admin's grant, fresher than its lease */
	SHARE_LOCAL,			/* no fresh grant: the strategy's own field */
	SHARE_EVEN,			/* no fresh grant, no own field: limit / hosts */
};

struct engine_cluster {
	int64_t visits;			/* visit_threshold in force; -1: no cluster visit limit */
	int64_t token_rate;		/* token_rate in force; -1: no cluster token limit */
	int64_t token_bucket;
	enum engine_share_source source;
	int hosts;			/* the app's live hosts, as of the last grant; 0: none yet */
	int64_t age_ms;			/* since the last grant; -1: none yet */
};

/*
 * The files: --strategies (@strategies_path, or NULL) and the admin's
 * cache (@cache_dir/GROUP.APP.strategies.json, or NULL: none).  -1: the
 * cache's path is too long.
 */
int engine__set_files(struct engine *e, const char *strategies_path,
		      const char *cache_dir, const char *group, const char *app);
/* Once every module in @env exists, before the first tick. */
void engine__init(struct engine *e, const struct engine_env *env);
/* The strategies, the reads and the balancing loads go. */
void engine__close(struct engine *e);

int engine__point(struct engine *e, const char *name);
/*
 * Can the points of @pr enforce every field of @s (decide/enforce.c)?
 * 0, or -1 with one line in @err.  engine__apply refuses what fails it.
 */
int engine__check(const struct probes *pr, const struct sds_strategies *s,
		  char *err, size_t errlen);
/*
 * Can a point (@function, keyed by @key_kind, with :failfast= or not)
 * enforce @st's key limits (enforce__key_limits), and do its
 * key_overrides (in document @s) name keys it can have?  0, or -1 with
 * one line in @err.
 */
int engine__check_key_limits(const struct sds_strategies *s,
			     const struct sds_strategy *st, bool function,
			     unsigned int key_kind, bool failfast, char *err,
			     size_t errlen);
void engine__tick(struct engine *e);
/* Evaluate the points a drill changed since the tick, from the tick's read. */
void engine__flush(struct engine *e);
/*
 * The last tick's record (tick.h): its read, time, verdicts and the
 * heartbeat extras pushed into it.
 */
const struct tick *engine__last_tick(const struct engine *e);
/* A read no older than ~1 ms for a query (held: snapshot__put it). */
struct snapshot *engine__query_snapshot(struct engine *e);
/* The version of the strategies in force; -1: none. */
int64_t engine__version(const struct engine *e);
int engine__apply(struct engine *e, struct sds_strategies *s);
int engine__reload(struct engine *e);
void engine__admin_reply(struct engine *e);
int engine__load_cache(struct engine *e, struct sds_strategies **out);
/*
 * A loader that adopted kept state: @s in force without starting any
 * point afresh (holds and drills continue), published at once.
 */
void engine__adopt(struct engine *e, struct sds_strategies *s);
bool engine__state(struct engine *e, int id, uint32_t *reason, uint32_t *rate);
/* Point @id's cluster-wide limits in force; false: it has none. */
bool engine__cluster(struct engine *e, int id, struct engine_cluster *out);
/*
 * The crash-only keep (keep.c): point @id's run state (chain, window
 * reset, drill), saved and restored.
 */
void engine__save(const struct engine *e, int id, struct point_run *out);
void engine__restore(struct engine *e, int id, const struct point_run *in);

/* What a half-open phase writes in the flags region at the tick (halfopen_cells.c). */
/*
 * Before point @id's entry is published with @fs (its phase @h, its
 * strategy @st or NULL, in region @f): with SDS_ACT_HALFOPEN,
 * the entry's probe_calls; for a phase just opened, cell.next_probe_ns
 * (one interval on) and then cell.probe_claimed (none claimed, the new
 * tag), in that order, so that
 * a guard that sees the new claim count also sees the new start.
 */
void halfopen__cells(struct halfopen_run *h, struct flags_region *f, int id,
		     const struct sds_strategy *st, uint64_t now_ns,
		     const struct flag_state *fs);

#endif /* SDS_ENGINE_H */
