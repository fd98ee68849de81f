/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * loader.h - the state of one running `sds-bpf attach`, shared by its
 * modules: attach.c (lifecycle), engine.c (strategies, ticks),
 * session.c (guard processes), serve.c (queries).
 */
#ifndef SDS_LOADER_H
#define SDS_LOADER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "decide/budget.h"
struct capture;
struct failfast;
struct metrics;
#include "decide/chain.h"
#include "serve/ctl.h"
#include "kernel/counters.h"
#include "daemon/drill.h"
#include "decide/engine_eval.h"
#include "daemon/events.h"
#include "decide/exact.h"
#include "publish/flags.h"
#include "daemon/keep.h"
#include "publish/lbpub.h"
#include "kernel/probes.h"
#include "serve/register.h"
#include "serve/serve.h"
#include "kernel/snapshot.h"
#include "strategy.h"
#include "report/uplink.h"
#include "deploy/watch.h"

/* The control socket's limits, connections and sessions: serve/serve.h. */

/* Lateness of the tick: how long after each timerfd expiry it was served. */
#define TICK_LATE_RING		4096	/* samples kept (41 s at a 10 ms tick) */
#define TICK_LATE_WINDOW_NS	10000000000ULL	/* `stats` reports the last 10 s */
struct tick_late {
	uint32_t us[TICK_LATE_RING];	/* lateness, microseconds */
	uint64_t at_ns[TICK_LATE_RING];	/* CLOCK_MONOTONIC when it was served */
	uint32_t pos;			/* next sample goes there */
	uint32_t n;			/* samples in the ring */
	uint64_t done;			/* ticks done since start (stats: tick_count) */
};

/* struct point_run, what the engine keeps per point: engine_eval.h. */

struct loader {
	char group[SDS_NAME_MAX + 1];	/* --group */
	char app[SDS_NAME_MAX + 1];	/* --app */
	const char *target;		/* TARGET as given */
	struct reg_policy reg;		/* who may register (register.c) */
	uint64_t key;			/* guard sites pass it: filters other loaders' apps */
	uint64_t epoch;			/* this run, for the guards */
	uint64_t tick_ns;		/* --tick-ms */
	uint64_t sec_offset_ns;		/* the ring's clock offset (counters_align) */
	int64_t wall_offset;		/* Unix seconds minus the ring's seconds */
	struct keep *keep;		/* the state kept across loaders (keep.c); NULL: none */
	struct probes probes;		/* BPF programs and points */
	struct counters counters;	/* sums of the BPF maps */
	struct counters_bpf counters_src;	/* @counters' source: the maps */
	struct snap_pool snaps;		/* buffers of the reads */
	struct snapshot *snap;		/* the last tick's read (held); NULL before the first */
	uint8_t drill_dirty[SDS_MAX_POINTS];	/* drill.c: evaluate the point before the next tick */
	bool drill_any_dirty;		/* drill.c: some @drill_dirty is set */
	struct flags_region flags;	/* the region the guards map */
	struct events events;		/* downgrade transitions */
	const char *strategies_path;	/* --strategies FILE, or NULL */
	struct sds_strategies *strategies;	/* in force; NULL: none */
	struct point_run run[SDS_MAX_POINTS];	/* per point id */
	struct halfopen_run halfopen[SDS_MAX_POINTS];	/* per point id: its half-open phase */
	struct exact_point exact[SDS_MAX_POINTS];	/* exact trips' marks (exact_run.c) */
	bool exact_slow;		/* the BPF side counts slow calls in the guards' cells */
	struct session sessions[SDS_MAX_PROCS];	/* slot = index */
	struct uplink *uplink;		/* heartbeat to sds-admin; NULL without --admin */
	char cache_path[512];		/* last strategies from the admin, for restarts */
	struct serve serve;		/* the control socket (serve.h; cli/attach_wire.c fills it) */
	struct tick_late tick_late;	/* lateness of the last ticks (stats) */
	struct budget budget;		/* --max-overhead: the probes' cost (budget_run.c) */
	struct watch watch;		/* TARGET's builds across deploys (watch.c) */
	struct capture *capture;	/* traffic copy (capture.c); NULL: off */
	struct lbpub *lbpub;		/* providers' load for balancers (lbpub.c); NULL: none yet */
	struct failfast *failfast;	/* LSM fail-fast (failfast.c); NULL: no :failfast= point */
	struct metrics *metrics;	/* --metrics (metrics.h); NULL: off */
};

/*
 * exact_run.c: before the chain, point @id's exact-trip marks at ring
 * second @sec (true: its visit budget is spent, a visit trip); after it,
 * a re-base if the chain reset the window, and SDS_ACT_BUDGET in @fs.
 */
bool exact__before(struct loader *l, int id, uint64_t sec);
/*
 * Make the cells map the guards get the BPF programs' (fresh loads only:
 * adopted links run the old programs), so slow calls count there: 0, or
 * -1 and the loader's own map stays (timeouts then trip at the tick).
 */
int exact__share_cells(struct loader *l);
void exact__after(struct loader *l, int id, uint64_t sec, bool reset,
		  struct flag_state *fs);

/*
 * exact_fn.c: function points' exact trips.  Publish point @id's marks
 * (visit, exceptions, slow calls; UINT64_MAX: none) to the BPF side,
 * clearing the crossing of a mark @rebased; a no-op where the BPF side
 * cannot have them (exact_fn__armed false: not a function point, or
 * links adopted from pins).
 */
bool exact_fn__armed(const struct loader *l, int id);
void exact_fn__publish(struct loader *l, int id, const uint64_t upto[3],
		       const bool rebased[3]);
/*
 * After point @id's tick at @now_ns, whose shown reason went from @was
 * to @shown: the CLOCK_MONOTONIC time of the call that crossed the mark
 * of a trip opening now (0: none, or not believed: the tick dates it),
 * and the crossings a trip's end or a stale stamp leave are cleared.
 */
uint64_t exact_fn__tick(struct loader *l, int id, uint32_t was,
			uint32_t shown, uint64_t now_ns);
/* `stats`' "crossed" of point @id: {"reason", "time_ms"} or null. */
json_t *exact_fn__json(const struct loader *l, int id);

/* engine.c */
int engine__point(struct loader *l, const char *name);
void engine__tick(struct loader *l);
/* Evaluate the points a drill changed since the tick, from the tick's read. */
void engine__flush(struct loader *l);
/* The last tick's read (never NULL after the first tick). */
const struct snapshot *engine__snapshot(const struct loader *l);
/* A read no older than ~1 ms for a query (held: snapshot__put it). */
struct snapshot *engine__query_snapshot(struct loader *l);
int engine__apply(struct loader *l, struct sds_strategies *s);
int engine__reload(struct loader *l);
void engine__admin_reply(struct loader *l);
int engine__load_cache(struct loader *l, struct sds_strategies **out);
/*
 * A loader that adopted kept state: @s in force without starting any
 * point afresh (holds and drills continue), published at once.
 */
void engine__adopt(struct loader *l, struct sds_strategies *s);
bool engine__state(struct loader *l, int id, uint32_t *reason, uint32_t *rate);

/* budget_run.c: the probe-cost budget (budget.h) */
void budget__init(struct loader *l, uint64_t max_ns, const char *target,
		  pid_t pid);
/* A loader that adopted kept counts: the rates start from them. */
void budget__adopt(struct loader *l);
/* attach's first second: -1 (said) if a stepped point is refused. */
int budget__first_second(struct loader *l);
void budget__tick(struct loader *l, uint64_t now_ns, uint64_t now_sec);
/* `stats`: a point's "overhead" object, and the app's "budget". */
json_t *budget__point_json(struct loader *l, int id,
			   const struct point_stats *st);
json_t *budget__json(struct loader *l);
/* The heartbeat's point fields: suspended, overhead_pct. */
void budget__hb_point(struct loader *l, int id, const struct point_stats *st,
		      struct sds_hb_point *hp);

#endif /* SDS_LOADER_H */
