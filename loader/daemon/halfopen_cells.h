/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * halfopen_cells.h - what a half-open phase (decide/halfopen.h) writes in
 * the flags region at the tick (halfopen_cells.c).
 */
#ifndef SDS_HALFOPEN_CELLS_H
#define SDS_HALFOPEN_CELLS_H

#include <stdint.h>

struct flag_state;
struct flags_region;
struct halfopen_run;
struct sds_strategy;

/*
 * Before point @id's entry is published with @fs (its phase @h, its
 * strategy @st or NULL, in region @f): with SDS_ACT_HALFOPEN,
 * the entry's probe_calls; for a phase just opened, cell.next_probe_ns
 * (one interval on) and then cell.probe_claimed (none claimed, the new
 * tag), in that order, so that
 * a guard that sees the new claim count also sees the new start.
 */
void halfopen__cells(struct halfopen_run *h, struct flags_region *f, int id,
		     const struct sds_strategy *st, uint64_t now_ns,
		     const struct flag_state *fs);

#endif /* SDS_HALFOPEN_CELLS_H */
