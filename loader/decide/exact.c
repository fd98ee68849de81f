// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * exact.c - the mark arithmetic of exact trips (exact.h).
 *
 * The rule.  At a tick T in ring second S, for a threshold N:
 *
 *	upto = max(upto, spent(T), base + N - closed - extra)
 *
 * where closed is what the kernel counted in the window's closed seconds
 * [S-9, S-1] (or since the window's reset), base the cell's count at the
 * last tick before S began, and extra the kernel's count of S before a
 * re-base in S (0 otherwise).  A re-base (new threshold, a window reset,
 * a forged count) sets base = spent(T), extra = the kernel's count of S so
 * far, and forgets the old mark.
 *
 * Why no window ever holds more than N (visits; exceptions likewise, with
 * "counted" for "passed").  Take the mark u published at T (if it is the
 * max(upto, ...) of an older mark, that mark's own tick proves it).  A
 * pass after T claims one unit of spent below u: at most u - spent(T) of
 * them.  Passes in S before T are the claims since base was read -- at a
 * tick before S began, so all of S's claims are in spent(T) - base --
 * plus, in a re-base second, those made before the budget was in force,
 * which the kernel had counted (extra).  Passes in the closed seconds are
 * closed.  So any window ending in S or later, which holds no second
 * before S-9, holds at most
 *
 *	closed + (spent(T) - base + extra) + (u - spent(T)) = N.
 *
 * The tail of S-1 after its last tick is counted twice (in closed and in
 * spent(T) - base): the bound is safe, and the mark loses those passes
 * only until the next second's ticks, when base moves past them.
 *
 * Why exactly N when the window was empty: closed = extra = 0 and
 * spent(T) = base, so u - spent(T) = N claims succeed, and the N+1st
 * finds spent = u.  And calls pass again at the first tick of the second
 * after the one holding the first passes left the window: closed drops
 * by them while base, read after them, keeps them, so u rises by as many.
 *
 * A mark never falls while the strategy stands: a lower one computed
 * later (a window that filled up by other ways, the double count above)
 * is kept out by max(), which is safe since each mark's own bound holds
 * from its tick on.  upto >= spent(T) always, so an honest visit count is
 * never above its mark: guards take one that is for a forgery.
 */
#include <string.h>
#include "decide/engine_eval.h"
#include "decide/exact.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static void rebase(struct exact_mark *m, const struct exact_in *in)
{
	m->based = true;
	m->threshold = in->threshold;
	m->upto = 0;
	m->base = in->spent;
	m->extra = in->cur;
	m->base_sec = in->sec;
}

/* A count no guard could have left since the last tick. */
static bool forged(const struct exact_mark *m, const struct exact_in *in)
{
	if (in->spent < m->prev || in->spent - m->prev > EXACT_DELTA_MAX)
		return true;
	return in->capped && in->spent > m->upto;
}

uint64_t exact_mark_tick(struct exact_mark *m, const struct exact_in *in)
{
	uint64_t want, sub;

	if (in->threshold < 0) {
		memset(m, 0, sizeof(*m));
		m->rebased = true;
		return UINT64_MAX;
	}
	m->rebased = !m->based || in->rebase || in->threshold != m->threshold ||
		     forged(m, in);
	if (m->rebased)
		rebase(m, in);
	else if (in->sec != m->base_sec) {
		/* The last tick read @prev in an earlier second. */
		m->base = m->prev;
		m->extra = 0;
		m->base_sec = in->sec;
	}
	m->prev = in->spent;
	want = sat_add(m->base, (uint64_t)in->threshold);
	sub = sat_add(in->closed, m->extra);
	want = want > sub ? want - sub : 0;
	if (want > m->upto)
		m->upto = want;
	if (in->spent > m->upto)
		m->upto = in->spent;
	/* UINT64_MAX means "no mark" to the guards. */
	if (m->upto == UINT64_MAX)
		m->upto = UINT64_MAX - 1;
	return m->upto;
}

void exact_closed(const struct point_run *r, const struct snapshot *s, int id,
		  uint64_t sec, struct sds_counts *w)
{
	uint64_t from = sec + 1 - SDS_WINDOW_S;

	memset(w, 0, sizeof(*w));
	if (r->reset_sec && r->reset_sec >= from) {
		/* Reset this second: its earlier part is out, the rest is not closed. */
		if (r->reset_sec >= sec)
			return;
		snapshot__sum(s, id, r->reset_sec, sec - 1, w);
		w->visits -= r->reset_base.visits;
		w->exceptions -= r->reset_base.exceptions;
		w->timeouts -= r->reset_base.timeouts;
		w->downgrades -= r->reset_base.downgrades;
		return;
	}
	snapshot__sum(s, id, from, sec - 1, w);
}
