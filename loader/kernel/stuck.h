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
 * the window never holds it twice at once.  Entries past that (calls left
 * by longjmp that nothing gave back, points whose timeout was removed)
 * are deleted by the read, so the table is bounded by time too.
 *
 * stuck.c is the pure part (tests/unit/kernel/test_stuck.c), stuck_bpf.c
 * the map's reading.
 */
#ifndef SDS_STUCK_H
#define SDS_STUCK_H

#include <stdbool.h>
#include <stdint.h>
#include "sds_types.h"

struct snapshot;

/* What one entry of the table is at a read. */
enum stuck_class {
	STUCK_YOUNG = 0,	/* within its timeout: not a timeout (yet) */
	STUCK_COUNTED = 1,	/* stuck: a timeout of the window */
	STUCK_EXPIRED = 2,	/* past the window, or no timeout now: delete it */
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
 * @npoints are expired.  The indices of the expired ones go to @expired,
 * at most @max_expired (the rest wait for a later read); returns how many.
 */
int stuck_tally(const struct stuck_entry *e, int n, uint64_t now_ns,
		const uint64_t *timeout_ns, int npoints, uint32_t *counts,
		int *expired, int max_expired);

/* Entries read per batch, and expired ones deleted per read at most. */
#define STUCK_CHUNK	1024

/* stuck_bpf.c: the table of a loader's BPF side. */
struct stuck_table {
	int fd;				/* the hash of struct sds_stuck_key -> entry ns */
	int cfg_fd;			/* point_cfg: each point's timeout in force */
	struct sds_stuck_key keys[STUCK_CHUNK];	/* scratch */
	uint64_t vals[STUCK_CHUNK];
	struct stuck_entry ents[STUCK_CHUNK];
	struct sds_point_cfg cfg[STUCK_CHUNK];
	__u32 cfg_keys[STUCK_CHUNK];
	int expired[STUCK_CHUNK];
	uint64_t timeout_ns[SDS_MAX_POINTS];
	uint32_t counts[SDS_MAX_POINTS];
	bool per_key;			/* no batched lookups of hashes here */
};

/* @t reads table @fd with the timeouts of @cfg_fd (the skeleton's maps). */
void stuck_table__init(struct stuck_table *t, int fd, int cfg_fd);
/*
 * Each point's stuck calls into @out (pts[].stuck, stuck_read), and the
 * expired entries deleted.  Read after the ring: a stuck call that ends
 * between the two reads is in neither (never in both).  0, or -1 with
 * errno (then stuck_read stays false: unknown this time).
 */
int stuck_table__read(struct stuck_table *t, struct snapshot *out);

#endif /* SDS_STUCK_H */
