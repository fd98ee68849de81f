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
#include <jansson.h>
/* What struct loader holds by value; the rest by pointer, declared here. */
#include "decide/budget.h"
#include "decide/engine_eval.h"
#include "decide/exact.h"
#include "decide/halfopen.h"
#include "daemon/events.h"
#include "daemon/exact_run.h"
#include "kernel/counters.h"
#include "kernel/probes.h"
#include "kernel/snapshot.h"
#include "publish/flags.h"
#include "serve/ctl.h"
#include "serve/register.h"
#include "deploy/watch.h"

struct capture;
struct failfast;
struct keep;
struct lbpub;
struct metrics;
struct sds_strategies;
struct uplink;
#include "serve/serve.h"

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
	struct drill drill;		/* fault drills (drill.c; cli/attach_wire.c wires it) */
	struct flags_region flags;	/* the region the guards map */
	struct events events;		/* downgrade transitions */
	const char *strategies_path;	/* --strategies FILE, or NULL */
	struct sds_strategies *strategies;	/* in force; NULL: none */
	struct point_run run[SDS_MAX_POINTS];	/* per point id */
	struct halfopen_run halfopen[SDS_MAX_POINTS];	/* per point id: its half-open phase */
	struct exact_run exact;		/* exact trips' marks (exact_run.c) */
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





#endif /* SDS_LOADER_H */
