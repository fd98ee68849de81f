/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * pressure.h - host pressure rules judged from PSI samples, pure
 * (docs/PRESSURE.md): a ring of (time, stalled µs) samples per resource,
 * the share of wall time stalled over any window the ring covers, and a
 * rule's state stepped by it with hysteresis.  No files, no clock: the
 * reading is tick/pressure_run.c's; tests/unit/decide/test_pressure.c
 * drives it with made-up samples.
 */
#ifndef SDS_DECIDE_PRESSURE_H
#define SDS_DECIDE_PRESSURE_H

#include <stdbool.h>
#include <stdint.h>
#include "strategy.h"

#define PRESSURE_SAMPLES	256	/* samples kept per resource */
/*
 * At most one sample this often: 256 of them cover 12.8 s, more than
 * the longest window (SDS_PRESSURE_WIN_MAX_MS) whatever --tick-ms.
 */
#define PRESSURE_SAMPLE_NS	50000000ULL

/* One resource's recent samples of PSI's cumulative "total" fields. */
struct pressure_ring {
	uint64_t at_ns[PRESSURE_SAMPLES];	/* CLOCK_MONOTONIC of the read */
	uint64_t us[PRESSURE_SAMPLES][2];	/* [enum sds_psi_kind]: stalled µs so far */
	uint32_t pos;			/* the next sample goes there */
	uint32_t n;			/* samples held */
};

/* What a rule is doing (plain old data, kept per rule). */
struct pressure_state {
	bool firing;			/* downgrading or limiting now */
	uint64_t since_ns;		/* when it last fired or cleared; 0: never */
	int64_t pct_bp;			/* the share over the window judged now, in 1/100 %; -1: not covered */
	uint64_t fired;			/* times it fired since the rules came */
};

/*
 * A new sample (@some_us, @full_us stalled so far) at @now_ns.  Samples
 * closer than PRESSURE_SAMPLE_NS to the last are skipped.  A total that
 * goes back (which the kernel never does) empties the ring: nothing is
 * judged from it until a window of samples is there again.
 */
void pressure_ring__add(struct pressure_ring *r, uint64_t now_ns,
			uint64_t some_us, uint64_t full_us);
/*
 * The share of wall time @kind stalled over the last @window_ns before
 * the newest sample, in 1/100 % (0..10000), from samples taken at or
 * after @since_ns only; -1: they do not cover the window yet.
 */
int64_t pressure_ring__pct(const struct pressure_ring *r, uint32_t kind,
			   uint64_t window_ns, uint64_t since_ns);
/*
 * Step rule @rule's state from its resource's ring at @now_ns: it fires
 * when the share over for_ms is above above_pct, clears when the share
 * over clear_ms is at or below below_pct, each judged from samples since
 * the last change only (a rule that cleared on a short clear_ms does not
 * fire again on the long for_ms of the stall it cleared from).  Returns
 * true when it fired or cleared at this step.
 */
bool pressure_state__step(struct pressure_state *s,
			  const struct sds_pressure_rule *rule,
			  const struct pressure_ring *r, uint64_t now_ns);

#endif /* SDS_DECIDE_PRESSURE_H */
