/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * exact_run.h - exact trips at the tick (exact_run.c): the marks each point
 * hands its guards, from the tick's read and the point's strategy.
 */
#ifndef SDS_EXACT_RUN_H
#define SDS_EXACT_RUN_H

#include <stdbool.h>
#include <stdint.h>

struct loader;
struct flag_state;

/*
 * Before the chain, point @id's exact-trip marks at ring
 * second @sec (true: its visit budget is spent, a visit trip); after it,
 * a re-base if the chain reset the window, and SDS_ACT_BUDGET in @fs.
 */
bool exact__before(struct loader *l, int id, uint64_t sec);
/*
 * Make the cells map the guards get the BPF programs' (fresh loads only:
 * adopted links run the old programs), so slow calls count there: 0, or
 * -1 and the loader's own map stays (timeouts then trip at the tick).
 */
int exact__share_cells(struct loader *l);
void exact__after(struct loader *l, int id, uint64_t sec, bool reset,
		  struct flag_state *fs);

#endif /* SDS_EXACT_RUN_H */
