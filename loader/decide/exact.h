/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * exact.h - exact count-based trips (docs/PROTOCOL.md, "Exact trips"):
 * the loader's mark arithmetic, pure (no maps, no clock) so that
 * tests/unit/decide/test_exact.c can drive it.  For a threshold N over the
 * window, the loader publishes each tick a monotone mark `upto` of a
 * cumulative count `spent` that the guards keep in the cell: a pass (or
 * an exception) is allowed while spent < upto.  loader/tick/exact_run.c is the
 * engine's glue.
 */
#ifndef SDS_EXACT_H
#define SDS_EXACT_H

#include <stdbool.h>
#include <stdint.h>
#include "window.h"

struct point_run;
struct snapshot;

/* One count's mark, what the loader keeps between ticks (plain data). */
struct exact_mark {
	bool based;		/* false: re-base at the next tick */
	int64_t threshold;	/* N the mark is for */
	uint64_t upto;		/* the mark published; only ever raised while based */
	uint64_t base;		/* spent at the last tick before @base_sec began, or at the re-base */
	uint64_t extra;		/* what the kernel counted in @base_sec before the re-base */
	uint64_t base_sec;	/* ring second @base and @extra are for */
	uint64_t prev;		/* spent read at the last tick */
	bool rebased;		/* the last tick re-based (or dropped) the mark */
};

/* A point's marks (tick/exact_run.h: struct exact_run's pt[id]). */
struct exact_point {
	struct exact_mark visit;	/* visit_threshold: passes */
	struct exact_mark exc;		/* exception_threshold: exceptions */
	struct exact_mark slow;		/* timeout_count_threshold: slow calls (BPF counts) */
	bool active;			/* some mark is in force: SDS_ACT_BUDGET */
	uint64_t down_seen;		/* the kernel's total downgrades at the last tick */
	uint64_t other_seen;		/* the guards' other refusals (raw cells) then */
	/* Function points (exact_fn.c): */
	uint64_t snap_ns;		/* the read (snapshot) the point's last tick evaluated */
	uint64_t prev_ns;		/* the read before it: a stamp must be later */
	uint64_t cross_ns;		/* the open trip's crossing call (CLOCK_MONOTONIC); 0: none */
	uint64_t cross_ms;		/* ... as Unix ms, as its event says */
	uint32_t cross_reason;		/* ... and the reason it crossed */
};

/* What one tick knows of a count besides the mark's own state. */
struct exact_in {
	int64_t threshold;	/* N; < 0: no such strategy (the mark is dropped) */
	uint64_t spent;		/* the cell's count now (untrusted) */
	uint64_t sec;		/* the ring second of the tick */
	uint64_t closed;	/* the kernel's count over the window's closed seconds */
	uint64_t cur;		/* the kernel's count of @sec so far (used at a re-base) */
	bool capped;		/* honest spent never passes upto (visits: claimed by CAS) */
	bool rebase;		/* start afresh: the window was reset */
};

/* Farther than this from the last read, a count is forged (flags.h's FLAGS_DELTA_MAX). */
#define EXACT_DELTA_MAX		(1ULL << 32)

/*
 * Advance @m by one tick with @in and return the mark to publish
 * (UINT64_MAX: none).  Re-bases when the threshold changed, @in->rebase,
 * or the count went back or leapt (forged).
 */
uint64_t exact_mark_tick(struct exact_mark *m, const struct exact_in *in);

/*
 * The window's closed seconds of point @id at ring second @sec: the
 * seconds [sec - SDS_WINDOW_S + 1, sec - 1], or from @r's reset if that
 * is later (engine_eval_window's rule), summed from @s into @w.
 */
void exact_closed(const struct point_run *r, const struct snapshot *s, int id,
		  uint64_t sec, struct sds_counts *w);

#endif /* SDS_EXACT_H */
