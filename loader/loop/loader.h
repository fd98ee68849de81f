/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * loader.h - the state of one running `sds-bpf attach`, whole only in
 * attach (cli/attach*.c: its lifecycle, and the wiring that hands each
 * module what it reads) and the loop (loop/loop.c).  Every other
 * module sees only its own part and what attach handed it: the engine
 * its struct engine (engine.h), the control socket its struct serve
 * (serve/serve.h), the drills their struct drill_ctx, and so on.
 */
#ifndef SDS_LOADER_H
#define SDS_LOADER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
/* What struct loader holds by value; the rest by pointer, declared here. */
#include "decide/budget.h"
#include "state/drill.h"
#include "tick/engine.h"
#include "state/events.h"
#include "kernel/counters.h"
#include "kernel/probes.h"
#include "publish/flags.h"
#include "serve/register.h"
#include "serve/serve.h"
#include "deploy/watch.h"

struct capture;
struct delaydrill;
struct failfast;
struct keep;
struct metrics;
struct uplink;

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
	struct stuck_table stuck;	/* @counters' stuck calls: the BPF side's table */
	struct drill drill;		/* fault drills (drill.c; cli/attach_wire.c wires it) */
	struct flags_region flags;	/* the region the guards map */
	struct events events;		/* downgrade transitions */
	struct engine engine;		/* strategies, the tick and its record (engine.h) */
	struct uplink *uplink;		/* heartbeat to sds-admin; NULL without --admin */
	struct serve serve;		/* the control socket (serve.h; cli/attach_wire.c fills it) */
	struct tick_late tick_late;	/* lateness of the last ticks (stats) */
	struct budget budget;		/* --max-overhead: the probes' cost (budget_run.c) */
	struct watch watch;		/* TARGET's builds across deploys (watch.c) */
	struct capture *capture;	/* traffic copy (capture.c); NULL: off */
	struct failfast *failfast;	/* LSM fail-fast (failfast.c); NULL: no :failfast= point */
	struct delaydrill *delay;	/* delay drills at function points (delaydrill.c); NULL: no failfast=connect point */
	struct metrics *metrics;	/* --metrics (metrics.h); NULL: off */
	struct deps *deps;		/* --deps: each point's peers (deps/deps.h); NULL: off */
};

#endif /* SDS_LOADER_H */
