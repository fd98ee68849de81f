/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_fnmarks.bpf.h - exact trips at function points: the loader's marks
 * and the crossing call's stamp (bpf/sds.bpf.c includes it once, after the
 * cells map).
 */
#ifndef SDS_FNMARKS_BPF_H
#define SDS_FNMARKS_BPF_H

/*
 * Exact trips of function points (docs/PROTOCOL.md "Exact trips"): the
 * loader's marks, one entry per point in .bss, which the loader maps and
 * writes (loader/tick/exact_fn.c); zero (nothing armed) from the load.  A
 * point without a mark pays one load and a branch for them at entry.
 */
struct sds_fn_marks fn_marks[SDS_MAX_POINTS];

/*
 * The marks of @point (< SDS_MAX_POINTS), bounded for the verifier: the
 * mask is really applied (the empty asm hides that the compiler knows it
 * changes nothing), else clang indexes with a copy the verifier never saw
 * checked.
 */
static __always_inline struct sds_fn_marks *fn_marks_of(__u32 point)
{
	asm volatile("" : "+r"(point));
	return &fn_marks[point & (SDS_MAX_POINTS - 1)];
}

/* Stamp @cell with @ts unless this trip's crossing is there: first writer wins. */
static __always_inline void fn_stamp(__u64 *cell, __u64 ts)
{
	if (!*(volatile __u64 *)cell)
		__sync_val_compare_and_swap(cell, 0, ts);
}

/*
 * A call of function point @point with a mark armed enters at @ts.  A
 * function point cannot refuse a call, so every call is a pass (a
 * :failfast= point fails the operations of the calls past the mark, but
 * the call itself runs): it
 * counts one in visit_spent with a fetch-and-add (one atomic, no retry;
 * the value before it ranks the call exactly among every process's), and
 * the first call whose rank reaches the mark is the crossing: its time
 * goes to the cell.  Likewise the first call that enters once the
 * exceptions (exc_spent, counted at the return below) or the slow calls
 * (slow_spent) reached their mark: the call after the N-th.  Global, so
 * verified once on its own and kept off the unarmed path's code.  1 when
 * the call is at or past a mark (the crossing one or later), else 0.
 */
__noinline int sds_fn_cross(__u32 point, __u64 ts)
{
	struct sds_fn_marks *m;
	struct sds_cell *c;
	__u32 armed;

	int over = 0;

	if (point >= SDS_MAX_POINTS)
		return 0;
	m = fn_marks_of(point);
	armed = m->armed;
	c = bpf_map_lookup_elem(&cells, &point);
	if (!c)
		return 0;
	/* Shared with every CPU: always atomic. */
	if ((armed & SDS_FN_VISIT) &&
	    __sync_fetch_and_add(&c->visit_spent, 1) >= m->visit_upto) {
		fn_stamp(&c->visit_cross_ns, ts);
		over = 1;
	}
	if ((armed & SDS_FN_EXC) && c->exc_spent >= m->exc_upto) {
		fn_stamp(&c->exc_cross_ns, ts);
		over = 1;
	}
	if ((armed & SDS_FN_SLOW) && c->slow_spent >= m->slow_upto) {
		fn_stamp(&c->slow_cross_ns, ts);
		over = 1;
	}
	return over;
}

/*
 * The entry of function point @point (its callers checked it is below
 * SDS_MAX_POINTS) at @ts: its marks, if any is armed.  Unarmed, the
 * whole cost is the masked index, one load and a branch.  True when the
 * call is the crossing one or a later one: a :failfast= point fails its
 * operations from that call on (its frame says so, sds.bpf.c), not from
 * the tick that sees the trip; the tick confirms it (the point is then
 * downgraded) or clears it (a mark raised: the window had room again).
 */
static __always_inline bool fn_marks_enter(__u32 point, __u64 ts)
{
	if (fn_marks_of(point)->armed)
		return sds_fn_cross(point, ts);
	return false;
}

/* An exception of function point @point returned: one of exc_spent while armed. */
static __always_inline void fn_marks_exception(__u32 point)
{
	struct sds_cell *c;

	if (point >= SDS_MAX_POINTS || !(fn_marks_of(point)->armed & SDS_FN_EXC))
		return;
	c = bpf_map_lookup_elem(&cells, &point);
	if (c)
		__sync_fetch_and_add(&c->exc_spent, 1);
}

#endif /* SDS_FNMARKS_BPF_H */
