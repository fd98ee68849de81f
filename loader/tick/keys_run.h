/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * keys_run.h - hot keys' limits at the tick (keys_run.c, docs/KEYS.md
 * "Limits"): per keyed point with key limits, its key table read once a
 * tick (bounded by its key_capacity), fed to the decision
 * (decide/keylimit.c), and each change published where the point's
 * calls look: a guard point's blocked-key table in the flags region
 * (flags__key_block), a :failfast= function point's BPF hash
 * (keys__block).
 */
#ifndef SDS_KEYS_RUN_H
#define SDS_KEYS_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "sds_types.h"

struct events;
struct flags_region;
struct keylimit;
struct probes;
struct sds_strategies;
struct sds_strategy;

/* A key's cumulative passed calls at the previous tick (sorted by hash). */
struct keys_run_prev {
	uint64_t hash;
	uint64_t passed;	/* calls - downgrades, as the kernel counted them */
};

/* One keyed point's key limits. */
struct keys_run_point {
	struct keylimit *kl;		/* NULL: no key limits */
	uint32_t cap;			/* the capacity @kl tracks */
	bool guard;			/* a guard point: the flags region's table */
	bool primed;			/* @prev is a read's: deltas are the calls since */
	struct keys_run_prev *prev;	/* at most @cap */
	size_t nprev;
	uint64_t *blocked;		/* the keys blocked now, sorted; at most @cap */
	size_t nblocked;
	uint64_t blocks, lifts;		/* keys blocked and lifted, since configured */
	uint64_t enospc;		/* blocks the flags region had no slot for */
	uint64_t failed;		/* writes that failed otherwise */
};

struct keys_run {
	struct keys_run_point pt[SDS_MAX_POINTS];	/* per point id */
	struct probes *probes;
	struct flags_region *flags;
};

/* Events a tick writes a point, each way: the rest are counted in the last. */
#define KEYS_RUN_EVENTS	3

/* Before any configure: the points and their flags region. */
void keys_run__init(struct keys_run *kr, struct probes *pr,
		    struct flags_region *f);
/*
 * Point @id's written strategy @st (of document @s; NULL: none) at
 * @now_ns: its key limits set (the buckets of a point that keeps its
 * capacity kept), or gone (every block lifted).  Its limits must have
 * passed engine__check (enforce__key_limits).
 */
void keys_run__configure(struct keys_run *kr, int id,
			 const struct sds_strategies *s,
			 const struct sds_strategy *st, uint64_t now_ns);
/* Whether point @id has key limits. */
bool keys_run__on(const struct keys_run *kr, int id);
/*
 * The tick at @now_ns: point @id's table read, its keys' calls that
 * passed since the last tick and visits over the window fed to the
 * decision, its changes published; a key first blocked or lifted is an
 * event of point @name (at most KEYS_RUN_EVENTS each way a tick).
 */
void keys_run__tick(struct keys_run *kr, int id, uint64_t now_ns,
		    struct events *ev, const char *name);
/* Every point's limits gone (the loader stops). */
void keys_run__close(struct keys_run *kr);
/* Whether point @id has the key of @hash blocked now (stats --keys). */
bool keys_run__is_blocked(const struct keys_run *kr, int id, uint64_t hash);
/*
 * {"reason": "key", "keys_seen", "blocked", "tracked", "blocks", "lifts",
 * "enospc", "failed"} of point @id, or NULL: no key limits.
 */
json_t *keys_run__json(const struct keys_run *kr, int id);

#endif /* SDS_KEYS_RUN_H */
