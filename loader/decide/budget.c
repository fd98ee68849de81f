// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* budget.c - the probe-cost budget's arithmetic and decisions (budget.h). */
#include <string.h>
#include "decide/budget.h"

int budget_parse_pct(const char *s, uint64_t *max_ns)
{
	uint64_t whole = 0, milli = 0;
	int digits = 0, decimals = 0;

	/* By hand: strtod would take "1e1", "inf", "0x5" and a locale's comma. */
	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		whole = whole * 10 + (uint64_t)(*s - '0');
		if (whole > 100)
			return -1;
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, decimals++) {
			if (decimals == 3)
				return -1;
			milli = milli * 10 + (uint64_t)(*s - '0');
		}
		if (!decimals)
			return -1;
	}
	if (*s || !digits)
		return -1;
	while (decimals++ < 3)
		milli *= 10;
	milli += whole * 1000;
	if (milli > 100000)
		return -1;
	/* 1/1000 of a percent is 10^4 cpu ns/s. */
	*max_ns = milli * (BUDGET_PCT_NS / 1000);
	return 0;
}

uint64_t budget_cpu_ns(unsigned int cost_ns, uint64_t calls, uint64_t span_ns)
{
	if (!span_ns)
		return 0;
	/* 128 bits: 10^10 calls at 20 us over 10^9 ns would overflow 64. */
	return (uint64_t)((unsigned __int128)cost_ns * calls * 1000000000ULL /
			  span_ns);
}

uint64_t budget_rate(uint64_t calls, uint64_t span_ns)
{
	if (!span_ns)
		return 0;
	return (uint64_t)((unsigned __int128)calls * 1000000000ULL / span_ns);
}

uint64_t budget_pct_milli(uint64_t cpu_ns)
{
	uint64_t unit = BUDGET_PCT_NS / 1000;

	return (cpu_ns + unit / 2) / unit;
}

void budget_point_start(struct budget_point *bp, unsigned int cost_ns,
			uint64_t now_ns, uint64_t calls)
{
	memset(bp, 0, sizeof(*bp));
	bp->used = true;
	bp->cost_ns = cost_ns;
	bp->t_ns[0] = now_ns;
	bp->calls[0] = calls;
	bp->pos = 1;
	bp->n = 1;
}

/* Forget the samples (the probes were away): count afresh from @calls. */
static void point_restart(struct budget_point *bp, uint64_t now_ns,
			  uint64_t calls)
{
	bp->t_ns[0] = now_ns;
	bp->calls[0] = calls;
	bp->pos = 1;
	bp->n = 1;
	bp->known = false;
}

void budget_sample(struct budget_point *bp, uint64_t now_ns, uint64_t calls)
{
	int newest = (bp->pos + BUDGET_SAMPLES - 1) % BUDGET_SAMPLES;
	int i, k, from = -1;
	uint64_t span;

	if (!bp->n) {
		point_restart(bp, now_ns, calls);
		return;
	}
	/*
	 * The newest sample at least a window old, else the oldest: the
	 * rate of the last second, or of all there is since the attach.
	 */
	for (k = 0; k < bp->n; k++) {
		i = (newest + BUDGET_SAMPLES - k) % BUDGET_SAMPLES;
		from = i;
		if (now_ns - bp->t_ns[i] >= BUDGET_WINDOW_NS)
			break;
	}
	span = now_ns - bp->t_ns[from];
	if (span >= BUDGET_MIN_SPAN_NS && calls >= bp->calls[from]) {
		bp->rate = budget_rate(calls - bp->calls[from], span);
		bp->cpu_ns = budget_cpu_ns(bp->cost_ns, calls - bp->calls[from],
					   span);
		bp->known = true;
	}
	if (now_ns - bp->t_ns[newest] < BUDGET_SAMPLE_GAP_NS)
		return;
	bp->t_ns[bp->pos] = now_ns;
	bp->calls[bp->pos] = calls;
	bp->pos = (bp->pos + 1) % BUDGET_SAMPLES;
	if (bp->n < BUDGET_SAMPLES)
		bp->n++;
}

/* Suspend @bp at @now_ns; a failed try waits twice as long as the last. */
static enum budget_action point_suspend(struct budget_point *bp,
					uint64_t now_ns)
{
	enum budget_action act = BUDGET_SUSPEND;

	if (bp->state == BUDGET_TRYING) {
		bp->backoff_ns *= 2;
		if (bp->backoff_ns > BUDGET_BACKOFF_MAX_NS)
			bp->backoff_ns = BUDGET_BACKOFF_MAX_NS;
		act = BUDGET_RESUSPEND;
	} else {
		bp->backoff_ns = BUDGET_BACKOFF_NS;
		bp->suspensions++;
	}
	bp->state = BUDGET_SUSPENDED;
	bp->try_at_ns = now_ns + bp->backoff_ns;
	return act;
}

void budget_try_failed(struct budget_point *bp, uint64_t now_ns)
{
	bp->state = BUDGET_TRYING;
	point_suspend(bp, now_ns);
}

/* Attached and measured: what the point counts against the budget. */
static bool point_counted(const struct budget_point *bp)
{
	return bp->used && bp->state != BUDGET_SUSPENDED && bp->known;
}

void budget_decide(struct budget *b, int npoints, uint64_t now_ns,
		   enum budget_action *acts)
{
	uint64_t total = 0;
	int id, top;

	for (id = 0; id < npoints; id++) {
		acts[id] = BUDGET_NONE;
		if (point_counted(&b->pts[id]))
			total += b->pts[id].cpu_ns;
	}
	if (!b->max_ns)
		return;
	/* Most expensive first, until the rest fit. */
	while (total > b->max_ns) {
		top = -1;
		for (id = 0; id < npoints; id++)
			if (point_counted(&b->pts[id]) &&
			    (top < 0 || b->pts[id].cpu_ns > b->pts[top].cpu_ns))
				top = id;
		if (top < 0)
			break;
		total -= b->pts[top].cpu_ns;
		acts[top] = point_suspend(&b->pts[top], now_ns);
	}
	for (id = 0; id < npoints; id++) {
		struct budget_point *bp = &b->pts[id];

		if (!bp->used || acts[id] != BUDGET_NONE)
			continue;
		if (bp->state == BUDGET_TRYING && bp->known) {
			/* It fits with the others: on again, and the next
			 * suspension starts over at the first wait. */
			bp->state = BUDGET_ON;
			acts[id] = BUDGET_RESUME;
		} else if (bp->state == BUDGET_SUSPENDED &&
			   now_ns >= bp->try_at_ns) {
			bp->state = BUDGET_TRYING;
			point_restart(bp, now_ns, 0);
			bp->n = 0;	/* the caller's first sample starts it */
			acts[id] = BUDGET_TRY;
		}
	}
}

void budget_set_cost(struct budget *b, int id, unsigned int cost_ns)
{
	b->pts[id].cost_ns = cost_ns;
}
