/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * attach_run.h - one `sds-bpf attach` in its three phases: resolve
 * (attach.c: arguments, TARGET, points, the app's lock), load or adopt
 * (attach_load.c: the BPF side fresh and pinned, or taken over from the
 * pins a loader left), serve (attach.c: the socket and the loop).  Each
 * phase undoes what it set up, and only that.
 */
#ifndef SDS_ATTACH_RUN_H
#define SDS_ATTACH_RUN_H

#include <limits.h>
#include <stdbool.h>
#include "capture/capture.h"
#include "serve/ctl.h"
#include "target/elfsym.h"
#include "state/keep.h"
#include "kernel/pins.h"

struct loader;
struct sds_strategies;

struct attach_run {
	struct loader *l;		/* the loader being set up */
	struct ctl_paths paths;		/* socket and lock */
	int lock;			/* the app's lock (resolve); -1: not held */
	char target_path[PATH_MAX];	/* TARGET, resolved */
	int npoints;			/* POINT=SYMBOL given */
	struct sds_sites sites;		/* libsds sites in TARGET */
	bool needs_libsds;		/* TARGET links libsds.so */
	struct sds_strategies *strategies;	/* to apply (owned until applied) */
	pid_t pid;			/* --pid, -1: every process */
	bool keep_pins;			/* --keep: leave the pins at a clean exit */
	struct pins pins;		/* the app's pin directory */
	struct keep keep;		/* the kept state */
	bool adopted;			/* took over a dead loader's pins */
	bool pinned;			/* the pins are ours to remove on failure */
	struct capture_opts copy;	/* --copy-to, --copy-ring */
};

/*
 * Load the BPF side and attach, or adopt what pins of a dead loader hold,
 * then set up counters, the uplink and the strategies.  0, or -1 (said).
 */
int attach_load(struct attach_run *a, uint64_t max_overhead);
/* Undo attach_load(); at a clean exit (@clean) remove the pins unless --keep. */
void attach_run__unload(struct attach_run *a, bool clean);
/*
 * attach_wire.c: fill the control socket's struct serve (what it reads
 * of @l, what it asks of it) once @l is loaded, before the loop.
 */
void attach_wire_serve(struct loader *l);
/*
 * attach_wire.c: point the drills (struct drill) at what they read and
 * write of @l, and at the engine for a point an admin's drill names;
 * once @l is zeroed, before anything runs.
 */
void attach_wire_drill(struct loader *l);
/*
 * attach_wire.c: the heartbeat's dependencies (docs/DEPS.md): each point's
 * edges since attach, read from l->deps (none without --deps), added to
 * @hb's points, heaviest first within its bounds.  The uplink's deps_fill.
 */
void attach_wire_deps_fill(void *l, struct sds_heartbeat *hb);

/* attach_usage.c: `sds-bpf attach --help`. */
extern const char attach_usage[];

#endif /* SDS_ATTACH_RUN_H */
