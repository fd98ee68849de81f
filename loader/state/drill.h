/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Fault drills at guard points (issue 5): a drill makes a share of a
 * point's passed calls fail (SDS_FAULT) or sleep, until it is stopped or
 * its expiry comes.  The loader keeps one drill per point, publishes it in
 * line 3 of the point's flag entry every tick, and ends it at its expiry;
 * the guard ignores an expired drill by itself, so a loader that dies
 * cannot leave one running.  Drills come from `sds-bpf drill` (local,
 * root only) or from sds-admin through the heartbeat reply.
 */
#ifndef SDS_DRILL_H
#define SDS_DRILL_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "decide/verdict.h"

#define DRILL_MAX_S		86400	/* longest drill: a day */
#define DRILL_MAX_DELAY_MS	60000	/* longest injected delay */

/* The drill of one point; kind 0: none. */
struct drill_run {
	uint32_t kind;			/* enum sds_drill_kind */
	uint32_t ratio;			/* 0..100 */
	uint64_t delay_ns;		/* SDS_DRILL_DELAY */
	uint64_t expires_ns;		/* CLOCK_MONOTONIC */
	int64_t admin_id;		/* the admin's drill id; 0: started locally */
	int32_t err;			/* --errno: positive, failfast points only; 0: the point's */
	uint64_t faults_base;		/* entry's drill_faults when it started */
	uint64_t delays_base;		/* entry's drill_delays when it started */
};

struct delaydrill;
struct events;
struct failfast;
struct flags_region;
struct point_run;
struct probes;

/* What drills read and write of the loader (drill__init; cli/attach_wire.c). */
struct drill_ctx {
	struct probes *probes;		/* the points, by name */
	struct point_run *run;		/* per point id: its .drill */
	struct flags_region *flags;	/* the cells' bounded counts (flags__counts) */
	struct events *events;		/* a drill's start and end */
	struct failfast *const *failfast;	/* a function point's drilled operations */
	struct delaydrill *const *delay;	/* a function point's delay drills (delaydrill.h) */
	const char *app;		/* --app, in messages */
	/* Make point @name's entry (the engine's): its id, or -1. */
	int (*point)(void *point_ctx, const char *name);
	void *point_ctx;
};

/* The drills of one loader: which points to evaluate before the next tick. */
struct drill {
	uint8_t dirty[SDS_MAX_POINTS];	/* evaluate the point before the next tick */
	bool any_dirty;			/* some @dirty is set */
	struct drill_ctx c;
};

/* Before any tick or request: @dl works on what @ctx points to. */
void drill__init(struct drill *dl, const struct drill_ctx *ctx);
/* Was some point's drill changed since the last evaluation? */
bool drill__dirty(const struct drill *dl);

/*
 * Start a drill on point @name (replacing any).  @create: make the point's
 * entry if it has none yet (the admin's drills reach hosts before their
 * processes register the point).  On error returns -1 with a one-line
 * message in @err.
 */
int drill__start(struct drill *dl, const char *name, bool create,
		 const struct drill_run *d, char *err, size_t errlen);
/* Stop the drill on @name; -1 with @err if there is none. */
int drill__stop(struct drill *dl, const char *name, char *err, size_t errlen);

/*
 * Was point @id's drill changed since its last evaluation?  Clears it
 * (the engine asks for every point, in order, at each evaluation).
 */
bool drill__take_dirty(struct drill *dl, int id);
/* Every tick, for point @id: end an expired drill, fill @fs's drill part. */
void drill__tick(struct drill *dl, int id, uint64_t now_ns,
		 struct flag_state *fs);

/* {"kind","ratio","delay_ms","remaining_ms","faults","delays"} or null. */
json_t *drill__json(struct drill *dl, int id, uint64_t now_ns);

/*
 * The control socket's `drill ...` requests (the caller checked root):
 *   drill POINT error|delay RATIO DELAY_MS FOR_S [ERRNO]
 *   drill POINT stop
 */
char *drill__request(struct drill *dl, const char *args);

/*
 * Apply the admin's list of active drills: start the new ones, stop the
 * admin's drills no longer listed.  Local drills are left alone.
 */
struct sds_hb_drill;
void drill__apply_admin(struct drill *dl, const struct sds_hb_drill *d, int n,
			int64_t now_unix);

#endif /* SDS_DRILL_H */
