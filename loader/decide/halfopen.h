/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * halfopen.h - the half-open phase of a hold with probe_calls >= 2
 * (docs/PROTOCOL.md, "Half-open phases"): the loader opens a phase (the
 * guards then let exactly N calls through from cell.next_probe_ns on,
 * each claiming cell.probe_claimed), waits for the N results and judges
 * them.  Pure logic, no maps and no clock (tests/unit/decide/test_halfopen.c);
 * chain.c drives it, halfopen_cells.c writes the cells it asks for.
 *
 * With probe_calls 1 (the default) none of this runs: the hold keeps its
 * one probe per interval (guard.c's probe_take, chain.c's verdict).
 */
#ifndef SDS_HALFOPEN_H
#define SDS_HALFOPEN_H

#include <stdbool.h>
#include <stdint.h>

/*
 * What the loader keeps of one point's phase between ticks.  Not in the
 * kept state (keep.c): after an upgrade with --keep a hold goes on
 * without an open phase, and the chain opens a new one at its next tick.
 */
struct halfopen_run {
	uint32_t tag;		/* the current phase's: the high half of cell.probe_claimed */
	bool open;		/* a phase counts results against the bases below */
	bool done_seen;		/* the N results were in: judge on a later read of the kernel */
	uint64_t done_gen;	/* the snapshot (its gen) of the evaluation that saw them */
	bool reopen;		/* out: the engine must write next_probe_ns and probe_claimed */
	uint64_t ok_base;	/* the loader's count of probes_ok when the phase opened */
	uint64_t failed_base;	/* ... of probes_failed */
	uint64_t slow_base;	/* the kernel's timeouts of the point (since attach) then */
};

/* Verdicts of halfopen_verdict(). */
#define HALFOPEN_WAIT	0	/* the phase has not all its results yet */
#define HALFOPEN_CLOSE	1	/* few enough failed: the hold ends */
#define HALFOPEN_FAIL	(-1)	/* too many failed or were slow: a new hold */

/*
 * Open a phase of @h at these counts (the guards' probe results as the
 * loader counted them, the kernel's slow calls since attach): a new tag
 * (tick/halfopen_cells.c then takes the one after the cell's), and ask the
 * engine to write the cells (@h->reopen).
 */
void halfopen_open(struct halfopen_run *h, uint64_t ok, uint64_t failed,
		   uint64_t slow);

/*
 * Judge the open phase of @h, with @slow read from snapshot @gen:
 * HALFOPEN_WAIT until @n results came, and until a snapshot newer than
 * the one of the evaluation that saw them (its kernel counts were read
 * after those cells, so they hold every probe's exit: libsds calls the
 * exit site before it counts the probe in its cell); then CLOSE when
 * (failed + slow) * 100 <= @pct * @n, else FAIL; either closes the phase.
 */
int halfopen_verdict(struct halfopen_run *h, uint64_t n, uint64_t pct,
		     uint64_t ok, uint64_t failed, uint64_t slow, uint64_t gen);

/* The value of cell.probe_claimed that opens phase @tag: none claimed. */
static inline uint64_t halfopen_claimed0(uint32_t tag)
{
	return (uint64_t)tag << 32;
}

#endif /* SDS_HALFOPEN_H */
