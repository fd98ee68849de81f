/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * guard_budget.h - the guard's side of exact trips (docs/PROTOCOL.md,
 * "Exact trips"), part of guard.c (included there only).  The loader
 * publishes per point monotone marks (flag.visit_upto, exc_upto,
 * slow_upto); the guards count in the cell (visit_spent, exc_spent,
 * slow_spent).  A pass claims one unit of visit_spent with a CAS while it
 * is below its mark; a call is refused while exc_spent or slow_spent has
 * reached its mark.  So the call that crosses a threshold is refused by
 * the guard itself, whatever the tick, and the loader's window, holds and
 * recovery stay the loader's.
 *
 * The cell is writable by every client of the app: an honest visit_spent
 * is never above its mark (a claim only moves it below), so one above is
 * forged and the claim fails open; counts that leap further than
 * SDS_BUDGET_LEAP past their mark are forged too.  The loader re-bases
 * both at its next tick (loader/decide/exact.c).
 */
#ifndef SDS_GUARD_BUDGET_H
#define SDS_GUARD_BUDGET_H

/* Farther past its mark than this, a count no guard could have left. */
#define SDS_BUDGET_LEAP	(1ULL << 32)

/* The marks, read only when the entry has SDS_ACT_BUDGET. */
struct budget_marks {
	__u64 visit_upto;	/* passes allowed while visit_spent < this */
	__u64 exc_upto;		/* calls pass while exc_spent < this */
	__u64 slow_upto;	/* calls pass while slow_spent < this */
};

/*
 * Read @e's marks.  Not under the sequence counter: each mark is one
 * aligned word the loader only raises, stored before the line 1 that the
 * caller has just read with acquire, so a mark read here is at least the
 * one published with that line (a newer one is only larger).
 */
static inline void budget_read(const struct sds_flag *e, struct budget_marks *m)
{
	m->visit_upto = __atomic_load_n(&e->visit_upto, __ATOMIC_RELAXED);
	m->exc_upto = __atomic_load_n(&e->exc_upto, __ATOMIC_RELAXED);
	m->slow_upto = __atomic_load_n(&e->slow_upto, __ATOMIC_RELAXED);
}

/* A count at or past its mark (and not so far past that it is forged). */
static inline bool budget_reached(const __u64 *count, __u64 upto)
{
	__u64 n;

	if (upto == UINT64_MAX)
		return false;
	n = __atomic_load_n(count, __ATOMIC_RELAXED);
	return n >= upto && n - upto <= SDS_BUDGET_LEAP;
}

/* The exception and slow-call marks: true if the call must be refused. */
static inline bool budget_refuses(struct sds_cell *c, const struct budget_marks *m)
{
	return budget_reached(&c->exc_spent, m->exc_upto) ||
	       budget_reached(&c->slow_spent, m->slow_upto);
}

/* No pass left: checked before the limits that spend (tokens, permits). */
static inline bool budget_visit_spent(struct sds_cell *c, const struct budget_marks *m)
{
	__u64 n;

	if (m->visit_upto == UINT64_MAX)
		return false;
	n = __atomic_load_n(&c->visit_spent, __ATOMIC_RELAXED);
	return n == m->visit_upto;	/* above: forged, budget_claim passes */
}

/*
 * Claim one pass: visit_spent + 1 while it stays at most the mark.
 * Returns false when none is left.  A count above the mark is forged
 * (claims never put it there): fail open, the loader re-bases it.  A cell
 * rewritten under us SDS_CAS_TRIES times: fail open too.
 */
static inline bool budget_claim(struct sds_cell *c, const struct budget_marks *m)
{
	__u64 n;
	int i;

	if (m->visit_upto == UINT64_MAX)
		return true;
	n = __atomic_load_n(&c->visit_spent, __ATOMIC_RELAXED);
	for (i = 0; i < SDS_CAS_TRIES; i++) {
		if (n > m->visit_upto)
			return true;
		if (n == m->visit_upto)
			return false;
		if (__atomic_compare_exchange_n(&c->visit_spent, &n, n + 1, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return true;
	}
	return true;
}

#endif /* SDS_GUARD_BUDGET_H */
