/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * exact_run.h - exact trips at the tick (exact_run.c): the marks each point
 * hands its guards, from the tick's read and the point's strategy; and
 * those of function points (exact_fn.c): the marks the BPF side gets,
 * and the time of the call that crossed one.
 */
#ifndef SDS_EXACT_RUN_H
#define SDS_EXACT_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
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

/* Function points (exact_fn.c). */

/*
 * Publish point @id's marks (visit, exceptions, slow calls; UINT64_MAX:
 * none) to the BPF side, clearing the crossing of a mark @rebased; a
 * no-op where the BPF side cannot have them (exact_fn__armed false: not a function point, or
 * links adopted from pins).  @hold: no mark armed there rises (a
 * :failfast= point that trips keeps failing the calls past its old mark
 * until its downgrade is in force, exact__after).
 */
bool exact_fn__armed(const struct exact_run *x, int id);
void exact_fn__publish(struct exact_run *x, int id, const uint64_t upto[3],
		       const bool rebased[3], bool hold);
/*
 * After point @id's tick at @now_ns on the read taken at @snap_ns, whose
 * shown reason went from @was to @shown: the CLOCK_MONOTONIC time of the
 * call that crossed the mark of a trip opening now (0: none, or not
 * believed: the tick dates it), and the crossings a trip's end or a stale
 * stamp leave are cleared.
 */
uint64_t exact_fn__tick(struct exact_run *x, int id, uint64_t snap_ns,
			uint32_t was, uint32_t shown, uint64_t now_ns);
/* `stats`' "crossed" of point @id: {"reason", "time_ms"} or null. */
json_t *exact_fn__json(const struct exact_run *x, int id);

#endif /* SDS_EXACT_RUN_H */
