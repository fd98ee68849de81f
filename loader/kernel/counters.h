/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Reading the kernel's counters: per-CPU ring slots and gauges summed
 * into a snapshot (snapshot.h): per point its last seconds, totals since
 * attach, the 10-s sliding window, its gauges.
 *
 * The ring holds only 16 seconds, so every tick folds the seconds that
 * can no longer change (older than now - 1) into per-point totals; a
 * snapshot adds the seconds not folded yet.  The ring is second-major in
 * the kernel (bpf/sds.bpf.c), and a second that can no longer change is
 * read once: a read fetches the rows of the last three seconds (all 16
 * only at the start or after a pause), not 16 slots a point.
 *
 * Where the counts come from is a source (struct counters_source): the
 * BPF maps in a loader (counters_bpf.c), fakes in tests/unit.
 */
#ifndef SDS_COUNTERS_H
#define SDS_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>
#include "sds_types.h"
#include "kernel/snapshot.h"
#include "kernel/stuck.h"
#include "window.h"

/* Gauges read per call of the source: bounds the scratch buffer. */
#define COUNTERS_CHUNK	64
/* Ring slots (points of one second) read per call of the source. */
#define COUNTERS_ROW_CHUNK	1024

/* counters__snap's @what. */
#define COUNTERS_FOLD	(1u << 0)	/* the tick's read: fold complete seconds */
#define COUNTERS_GAUGES	(1u << 1)	/* read the gauges (concurrency, histogram) */
#define COUNTERS_SPLIT_HIST	(1u << 2)	/* read the split's histograms (`hist --split`) */

/* The last value read of one point's second (summed over CPUs). */
struct counters_sec {
	uint64_t sec;			/* the second; 0: none */
	struct sds_counts c;		/* its counts */
};

/* Running totals of one point. */
struct point_acc {
	struct sds_counts totals;	/* every second up to @folded_sec */
	uint64_t folded_sec;		/* last second added to @totals */
};

/* Where the per-CPU counts come from. */
struct counters_source {
	/*
	 * Ring slot @idx (second % SDS_RING_SLOTS) of points [@first,
	 * @first + @n) (@n <= COUNTERS_ROW_CHUNK) into @out, @ncpu slots a
	 * point.  0, or -1 with errno.
	 */
	int (*read_row)(void *ctx, int idx, int first, int n,
			struct sds_slot *out);
	/* Gauges of points [@first, @first + @n) (@n <= COUNTERS_CHUNK), @ncpu a point. */
	int (*read_gauges)(void *ctx, int first, int n, struct sds_gauge *out);
	/*
	 * The split's sums and histograms of points [@first, @first + @n)
	 * (@n <= COUNTERS_CHUNK), @ncpu a point: 0, 1 when the split is not
	 * available (NULL: never), -1 with errno.
	 */
	int (*read_split)(void *ctx, int first, int n, struct sds_split_sum *out);
	int (*read_split_hist)(void *ctx, int first, int n, struct sds_split_hist *out);
	void *ctx;			/* @read's first argument */
	int ncpu;			/* per-CPU copies of each key */
};

struct counters {
	struct counters_source src;	/* the kernel's maps, or a fake */
	int ncpu;			/* @src.ncpu */
	int npoints;			/* points tracked */
	struct sds_slot *ring;		/* scratch: COUNTERS_ROW_CHUNK points' slots */
	struct sds_gauge *gauge;	/* scratch: COUNTERS_CHUNK gauges */
	struct sds_split_sum *split;	/* scratch: COUNTERS_CHUNK points' split (counters_split.c) */
	struct sds_split_hist *split_hist;	/* ... and their histograms, on first use */
	struct point_acc *acc;		/* SDS_MAX_POINTS running totals */
	struct counters_sec *secs;	/* SDS_MAX_POINTS * SDS_RING_SLOTS: by point, second % 16 */
	uint64_t complete_upto;		/* seconds up to this were read complete */
	/* Called for every second folded, in order (the heartbeat's periods). */
	void (*on_second)(void *ctx, int point, uint64_t sec,
			  const struct sds_counts *c);
	void *hook_ctx;			/* @on_second's first argument */
	/*
	 * Read after the ring into every snapshot: the stuck calls (stuck.h,
	 * stuck_table__read in a loader); NULL: none.
	 */
	int (*read_stuck)(struct stuck_table *t, struct snapshot *out);
	struct stuck_table *stuck;	/* @read_stuck's first argument */
};

/*
 * The seconds the ring is kept in: CLOCK_MONOTONIC shifted by @offset_ns
 * (< 1 s) so that they begin when wall-clock seconds do, and every second
 * of the ring falls in exactly one natural 10-s period of the heartbeat.
 * The BPF side adds the same offset (its rodata sec_offset_ns).
 */
void counters_align(uint64_t offset_ns);
uint64_t counters_now_sec(void);
/*
 * Align with the wall clock now: returns the offset (for the BPF side)
 * and sets *@wall_offset to Unix seconds minus the ring's seconds.
 */
uint64_t counters_align_wall(int64_t *wall_offset);

/* Nothing before @now_sec counts (the maps are new). */
int counters__init(struct counters *c, const struct counters_source *src,
		   int npoints, uint64_t now_sec);
/* Points 0..@npoints-1 are in use (the table only grows). */
void counters__track(struct counters *c, int npoints);
/* The crash-only keep (keep.c): point @id's running totals, saved and restored. */
void counters__save(const struct counters *c, int id, struct point_acc *out);
void counters__restore(struct counters *c, int id, const struct point_acc *in);
/*
 * Read every point once into @out at second @now_sec.  COUNTERS_FOLD (the
 * tick's read): the seconds that are complete go into the totals and to
 * on_second; a query's read folds nothing.  Without COUNTERS_GAUGES the
 * points' gauges are not read (gauges false: no concurrency, histogram).
 * A point whose read failed is in @out with ok false.
 */
int counters__snap(struct counters *c, uint64_t now_sec, unsigned int what,
		   struct snapshot *out);
/* Point @id alone, not folded (attach's first second). */
int counters__read_point(struct counters *c, int id, uint64_t now_sec,
			 struct point_stats *out);
void counters__free(struct counters *c);
/* counters_split.c: every point's split into @out (counters__snap's part). */
void counters_split__snap(struct counters *c, unsigned int what,
			  struct snapshot *out);
void counters_split__free(struct counters *c);

/* counters_bpf.c: the source of a loader, the BPF maps */
struct counters_bpf {
	int slots_fd;			/* PERCPU_ARRAY of struct sds_slot */
	int gauges_fd;			/* PERCPU_ARRAY of struct sds_gauge */
	int cap;			/* point ids the maps hold: a ring row's length */
	bool per_key;			/* no batched lookups here: one key at a time */
	int split_sums_fd;		/* the split's maps (-1: not loaded) */
	int split_hist_fd;
	const bool *split_on;		/* the split's tracepoints run (probes' split.on) */
	__u32 keys[COUNTERS_ROW_CHUNK];	/* scratch for the batch's keys */
};
int counters_bpf__source(struct counters_bpf *b, int slots_fd, int gauges_fd,
			 int cap, struct counters_source *out);
/* The split's maps (-1: none) and whether they count now (@on). */
void counters_bpf__split(struct counters_bpf *b, int sums_fd, int hist_fd,
			 const bool *on, struct counters_source *out);

#endif /* SDS_COUNTERS_H */
