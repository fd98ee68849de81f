/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * exact_run.h - exact trips at the tick (exact_run.c): the marks each point
 * hands its guards, from the tick's read and the point's strategy.
 */
#ifndef SDS_EXACT_RUN_H
#define SDS_EXACT_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include "sds_flags.h"
#include "decide/exact.h"

struct flag_state;
struct flags_region;
struct point_run;
struct probes;
struct snapshot;
struct sds_strategy;

/* Exact trips' state: every point's marks, and what they are written to. */
struct exact_run {
	struct exact_point pt[SDS_MAX_POINTS];	/* per point id (exact_fn.c too) */
	bool slow;			/* the BPF side counts slow calls in the guards' cells */
	struct probes *probes;		/* the points: kinds, the skeleton's marks */
	struct flags_region *flags;	/* their entries and cells */
};

/* Before any tick: @x's marks go to @f's entries, for @p's points. */
void exact__init(struct exact_run *x, struct probes *p, struct flags_region *f);

/*
 * Before the chain, point @id's exact-trip marks at ring
 * second @sec (true: its visit budget is spent, a visit trip); after it,
 * a re-base if the chain reset the window, and SDS_ACT_BUDGET in @fs.
 * @r is the point's run state, @st its strategy (NULL: none), @snap the
 * tick's read (NULL before the first).
 */
bool exact__before(struct exact_run *x, int id, const struct point_run *r,
		   const struct sds_strategy *st, const struct snapshot *snap,
		   uint64_t sec);
/*
 * Make the cells map the guards get the BPF programs' (fresh loads only:
 * adopted links run the old programs), so slow calls count there: 0, or
 * -1 and the loader's own map stays (timeouts then trip at the tick).
 */
int exact__share_cells(struct exact_run *x);
void exact__after(struct exact_run *x, int id, const struct point_run *r,
		  const struct sds_strategy *st, const struct snapshot *snap,
		  uint64_t sec, bool reset, struct flag_state *fs);

#endif /* SDS_EXACT_RUN_H */
