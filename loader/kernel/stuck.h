/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * stuck.h - calls in flight longer than their point's timeout ("stuck"),
 * counted at each read from the BPF side's table of timed calls in flight
 * (bpf/sds_stuck.bpf.h).
 *
 * The rule (docs/LIMITS.md "Stuck calls"): a call of a point with a
 * timeout T that entered at E and has not ended is stuck at time t when
 * t - E > T (the kernel's own test at a return: lat > T), and it counts
 * while t - E - T <= SDS_WINDOW_S seconds: like a slow call's timeout,
 * which the window holds for SDS_WINDOW_S seconds after it.  When it ends
 * it leaves the table as the kernel counts its timeout in the ring, so
 * the window never holds it twice at once.  A call past that (one that
 * never ends: a leaked guard, a longjmp nothing reaped) counts no more;
 * the table is the BPF side's to bound (bpf/sds_stuck.bpf.h): the loader
 * only reads it.
 *
 * stuck.c is the pure part (tests/unit/kernel/test_stuck.c), stuck_bpf.c
 * the map's reading.
 */
#ifndef SDS_STUCK_H
#define SDS_STUCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sds_types.h"

struct snapshot;

/* What one entry of the table is at a read. */
enum stuck_class {
	STUCK_YOUNG = 0,	/* within its timeout: not a timeout (yet) */
	STUCK_COUNTED = 1,	/* stuck: a timeout of the window */
	STUCK_EXPIRED = 2,	/* past the window, or no timeout now: counts no more */
};

/* An entry entered at @entered_ns, at @now_ns, for a point of timeout @timeout_ns (0: none). */
enum stuck_class stuck_classify(uint64_t entered_ns, uint64_t now_ns,
				uint64_t timeout_ns);

/* One entry as read: the key's point and the value (the full entry time). */
struct stuck_entry {
	uint32_t point;
	uint64_t entered_ns;
};

/*
 * Add the @n entries @e to @counts (per point id, @npoints of them) by
 * their class at @now_ns under @timeout_ns[point]; entries of ids past
 * @npoints count nowhere.  Returns how many were counted.
 */
int stuck_tally(const struct stuck_entry *e, int n, uint64_t now_ns,
		const uint64_t *timeout_ns, int npoints, uint32_t *counts);

/* stuck_bpf.c: the table of a loader's BPF side, mapped read-only. */
struct stuck_table {
	const volatile struct sds_stuck_thread *map;	/* SDS_STUCK_THREADS entries; NULL: none */
	size_t map_bytes;		/* the mapping's length */
	int cfg_fd;			/* point_cfg: each point's timeout in force */
	struct sds_point_cfg cfg[256];	/* scratch of the timeouts' read */
	__u32 cfg_keys[256];
	struct stuck_entry ents[SDS_STUCK_CALLS];
	uint64_t timeout_ns[SDS_MAX_POINTS];
	uint32_t counts[SDS_MAX_POINTS];
};

/*
 * @t maps table @fd (read-only) and reads the timeouts of @cfg_fd (the
 * skeleton's maps).  0, or -1 with errno.
 */
int stuck_table__init(struct stuck_table *t, int fd, int cfg_fd);
void stuck_table__free(struct stuck_table *t);
/*
 * Each point's stuck calls into @out (pts[].stuck, stuck_read).  Read
 * after the ring: a stuck call that ends between the two reads is in
 * neither (never in both).  0, or -1 with errno (then stuck_read stays
 * false: unknown this time).
 */
int stuck_table__read(struct stuck_table *t, struct snapshot *out);

#endif /* SDS_STUCK_H */
