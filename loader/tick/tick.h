/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * tick.h - the record of one tick, built by engine__tick (engine.c) and
 * read by the tick's consumers (the uplink, balancing loads, the budget,
 * metrics): the read, the time, each point's verdict, the strategies'
 * version, and what the owners of the heartbeat's per-point extras (the
 * probe budget, traffic copy, deploys, fail-fast, the guards' cells)
 * pushed into it.  The engine asks the owners; a consumer reads only this.
 */
#ifndef SDS_TICK_H
#define SDS_TICK_H

#include <stdbool.h>
#include <stdint.h>
#include "decide/verdict.h"
#include "heartbeat/heartbeat.h"

struct snapshot;

/* One point in a tick. */
struct tick_point {
	const char *name;		/* the point's name */
	uint32_t kind;			/* enum point_kind */
	bool latency;			/* its calls have latencies: a guard, or a function with a return probe */
	/* The verdict, as published (point_tick; 0s before its evaluation). */
	struct flag_state fs;		/* its flag entry, drill and fail-fast included */
	uint32_t shown;			/* the reason `events` and `stats` show; 0: none */
	/* Every tick the uplink runs: what drills injected so far. */
	uint64_t drill_faults;		/* a function point's failed operations (failfast.c), else its cells' drill_faults */
	uint64_t drill_delays;		/* its cells' drill_delays */
	/*
	 * At a tick that closes a heartbeat period (tick.hb_close), for a
	 * point in the read: the fields its owners fill (budget_run.c:
	 * suspended, overhead_milli; capture.c: copy_*, what was captured
	 * since the last period closed); the rest stays 0.
	 */
	struct sds_hb_point hb;
};

struct tick {
	const char *group;		/* the app's group and name (--group, --app) */
	const char *app;
	const struct snapshot *snap;	/* the tick's read; NULL before the first */
	uint64_t now_ns;		/* CLOCK_MONOTONIC of the tick */
	uint64_t now_sec;		/* the ring second of @snap */
	int64_t strategies_version;	/* of the strategies in force; 0: none */
	int npoints;			/* point ids in use: @pt[0 .. npoints-1] */
	struct tick_point *pt;		/* per point id */
	bool hb_close;			/* a heartbeat period closes: pt[].hb and @build are filled */
	/* At such a tick: TARGET's build (deploy/watch.c: build_id, deploys; "" and 0: none followed). */
	const struct sds_heartbeat *build;
	/*
	 * At such a tick: the keyed points' heaviest keys of the window
	 * (keys/keys.c), each naming its point id in .point.
	 */
	int nkeys;
	const struct sds_hb_key *keys;
	/* At such a tick: each host pressure rule's state (pressure_run.c); @nrules 0: none. */
	int nrules;
	const struct sds_hb_rule *rules;
	/* At such a tick: the admin's strategies refused (engine.c); @nrefused 0: none. */
	int nrefused;
	const struct sds_hb_refusal *refused;
};

#endif /* SDS_TICK_H */
