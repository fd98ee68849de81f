// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* halfopen_cells.c - what a half-open phase writes in the region (halfopen.h). */
#include "decide/halfopen.h"
#include "tick/engine.h"
#include "publish/flags.h"
#include "strategy.h"

void halfopen__cells(struct halfopen_run *h, struct flags_region *f, int id,
		     const struct sds_strategy *st, uint64_t now_ns,
		     const struct flag_state *fs)
{
	const struct sds_cell *c;

	if (!(fs->active & SDS_ACT_HALFOPEN))
		return;
	/* Before the entry is published with the bit (flags__publish's release). */
	flags__set_probe_calls(f, id, (uint32_t)strategy_probe_calls(st));
	if (!h->reopen)
		return;
	h->reopen = false;
	c = flags__cell(f, id);
	/*
	 * The tag after the cell's, not only after ours: a loader started
	 * anew (--keep) counts its tags from 1 again, and a claim read under
	 * the old loader's tag must still fail.
	 */
	h->tag = (uint32_t)(__atomic_load_n(&c->probe_claimed, __ATOMIC_RELAXED) >> 32) + 1;
	if (!h->tag)
		h->tag = 1;
	flags__open_phase(f, id, now_ns + fs->probe_interval_ns,
			  halfopen_claimed0(h->tag));
}
