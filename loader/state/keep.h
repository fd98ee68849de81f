/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * keep.h - the loader's own state that must outlive it (docs/CRASH.md):
 * one pinned, mmapable BPF array that only the loader maps (the pin is
 * root's, 0600, in a 0700 directory), holding a header and two copies of
 * the state.  Every tick ends by writing the whole state into the copy
 * not in force and then, with one aligned store, making it the one in
 * force: a loader killed at any instruction leaves the state of the last
 * tick whole, and the seconds folded since are still in the kernel's
 * ring (16 s), so a new loader folds them again, exactly once.
 *
 * Kept: per point its name and kind, counters' running totals
 * (struct point_acc), the engine's struct point_run (chain state,
 * holds, the window's reset, the drill), the guards' cell totals, the
 * uplink's histogram marks and drill_seen; for the app the BPF
 * programs' constants (key, clock offset), the epoch, the wall offset,
 * the uplink's closed_upto/mark_at and the open periods' sums.
 */
#ifndef SDS_KEEP_H
#define SDS_KEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "kernel/pins.h"
#include "sds_types.h"

#define KEEP_MAGIC	0x3150454b53445300ULL	/* "\0SDSKEP1" */
/*
 * The layout of the kept state and of the pins beside it.  Bump it with
 * any change to what keep.c writes or to the BPF maps' shapes: a loader
 * that finds another layout removes the pins (they cannot be read).
 */
#define KEEP_LAYOUT	2	/* 2: the ring second-major, the maps sized to the points */
#define KEEP_PIN	"keep"	/* the pin's name in the app's directory */
#define KEEP_TARGET_MAX	256	/* bytes of TARGET's path kept, for messages */

/* The header: written once at creation but @active and @commits. */
struct keep_header {
	uint64_t magic;			/* KEEP_MAGIC */
	uint32_t layout;		/* KEEP_LAYOUT */
	uint32_t max_points;		/* per-point records in each copy */
	uint32_t hdr_size;		/* sizeof(struct keep_header) ... */
	uint32_t app_size;		/* ... struct keep_app ... */
	uint32_t point_size;		/* ... struct keep_point: a build with other structs does not match */
	uint32_t active;		/* the copy in force: 0 or 1 */
	uint64_t commits;		/* copies made in force; 0: nothing to adopt yet */
	uint64_t target_dev;		/* TARGET's identity: the same file ... */
	uint64_t target_ino;		/* ... or the pins are stale */
	char target[KEEP_TARGET_MAX];	/* TARGET's path, for the stale message */
	char group[SDS_NAME_MAX + 1];	/* the app's group ... */
	char app[SDS_NAME_MAX + 1];	/* ... and name: whose lock says it is live */
	uint16_t pad16;			/* zero */
	int32_t loader_pid;		/* the loader that created or adopted them last */
	uint64_t key;			/* the guard sites' key (the programs' rodata) */
	uint64_t epoch;			/* the run's epoch, for the guards */
	uint64_t sec_offset_ns;		/* the programs' clock offset (counters_align) */
	int64_t wall_offset;		/* Unix seconds minus the ring's seconds */
	uint32_t atomics;		/* the programs' rodata atomics */
	uint32_t pad;			/* zero */
};

struct counters;
struct flags_region;
struct point_run;
struct probes;
struct uplink;

/*
 * The owners keep__commit and keep__restore ask to save and restore
 * their parts: the points, their counters, their cells, the uplink's
 * periods, and the engine's run states (through @save_run/@restore_run,
 * on @run_ctx).
 */
struct keep_owners {
	struct probes *probes;
	struct counters *counters;
	struct flags_region *flags;
	struct uplink *const *uplink;	/* *uplink NULL: no --admin */
	void (*save_run)(const void *run_ctx, int id, struct point_run *out);
	void (*restore_run)(void *run_ctx, int id, const struct point_run *in);
	void *run_ctx;
};

struct keep {
	int fd;				/* the array map; -1: none */
	void *mem;			/* mapped read-write */
	size_t size;			/* bytes mapped */
	size_t copy_size;		/* bytes of one copy */
	struct keep_header *hdr;	/* at @mem */
	struct keep_owners own;		/* keep__set_owners */
};

/*
 * Create the kept state for a new run and pin it in @p's directory; the
 * header's identity is @id's (TARGET's dev and inode, group, app, key,
 * epoch, clock offsets; the rest of @id is not read).  0, or -1 with a
 * message.
 */
int keep__create(struct keep *k, const struct pins *p,
		 const struct keep_header *id, const char *target,
		 uint32_t atomics, char *err, size_t errlen);

/*
 * Open the kept state pinned in @p's directory and check it against
 * TARGET (@dev/@ino): 0 when it can be adopted; 1 when it is stale, with
 * why in @why (one line); -1 when it cannot be read, with why in @why.
 */
int keep__open(struct keep *k, const struct pins *p, dev_t dev, ino_t ino,
	       char *why, size_t whylen);

/* Do the kept points 0..@n-1 have @p's names (function points)?  Else why. */
bool keep__points_match(const struct keep *k, const struct probes *p, int n,
			char *why, size_t whylen);

/*
 * The kept header of the pins in directory @dir, if they are of this
 * layout, into @out: 0, else -1 (not ours to read).
 */
int keep__peek(const char *dir, struct keep_header *out);

/*
 * TARGET is now inode @dev/@ino at @path (a loader that follows a
 * replaced TARGET): the pins match it from now on.
 */
void keep__set_target(struct keep *k, dev_t dev, ino_t ino, const char *path);

/* Before the first commit or restore: who saves and restores what. */
void keep__set_owners(struct keep *k, const struct keep_owners *o);

/* Commit the owners' state (the end of every tick); @k NULL: no keep. */
void keep__commit(struct keep *k);

/*
 * Restore the kept state into the owners, once the probes, counters,
 * flags and uplink are set up (guard points are added back by name).
 */
void keep__restore(struct keep *k);

void keep__close(struct keep *k);

/*
 * detach.c: remove the pins of other apps whose TARGET is gone (deleted,
 * or another file at its path) and whose loader is dead: nothing can
 * adopt them, and their probes hold the old file.  One line each.
 * @skip: the caller's own directory.
 */
void detach__sweep(const char *skip);

#endif /* SDS_KEEP_H */
