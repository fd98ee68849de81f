// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * exact_fn.c - exact trips of function points (docs/PROTOCOL.md, "Exact
 * trips").  A function point cannot refuse a call, so its trips stay the
 * chain's, at the tick; what becomes exact is when they are said to
 * start.  The loader hands the BPF side the same marks the guards get
 * (the programs' fn_marks[], .bss, mapped by libbpf), and the entry of
 * the first call that crosses one leaves its CLOCK_MONOTONIC time in the
 * point's cell (bpf/sds.bpf.c, sds_fn_cross).  When the tick opens the
 * trip, its "started" event is dated by that call, and `stats` shows it.
 *
 * The cells are writable by every client of the app (docs/TRUST.md), so
 * a stamp is believed only within (the last tick, now]: a forged one can
 * move an event at most a tick, as the tick's own stamp would.  A stamp
 * belongs to one trip: the end of the trip clears it, and so does a
 * re-base of its mark; one the window did not confirm by the next tick
 * (older than the last tick while the point is not tripped) is cleared
 * too, with a compare-and-swap, so that a newer crossing is never lost.
 */
#include <string.h>
#include <time.h>
#include "decide/chain.h"
#include "decide/exact.h"
#include "kernel/probes.h"
#include "publish/flags.h"
#include "tick/exact_run.h"
#include "sds.skel.h"

/* A stamp this far past now is no call's: cleared even while it is young. */
#define CROSS_FUTURE_NS	1000000000ULL

/* The BPF side's marks of point @id; NULL: none can be published. */
static struct sds_fn_marks *fn_marks(const struct exact_run *x, int id)
{
	struct sds_bpf *s = x->probes->skel;

	/* Adopted links run the old programs: their cells are not these. */
	if (!x->slow || !s || !s->bss || id < 0 || id >= SDS_MAX_POINTS ||
	    x->probes->pts[id].kind != POINT_FUNCTION)
		return NULL;
	return &s->bss->fn_marks[id];
}

bool exact_fn__armed(const struct exact_run *x, int id)
{
	return fn_marks(x, id) != NULL;
}

void exact_fn__publish(struct exact_run *x, int id, const uint64_t in[3],
		       const bool rebased[3], bool hold)
{
	static const uint32_t bit[3] = { SDS_FN_VISIT, SDS_FN_EXC, SDS_FN_SLOW };
	static const uint32_t why[3] = { SDS_REASON_VISIT, SDS_REASON_EXCEPTION,
					 SDS_REASON_TIMEOUT };
	struct sds_fn_marks *m = fn_marks(x, id);
	uint64_t upto[3] = { in[0], in[1], in[2] }, cur[3];
	uint32_t armed = 0, was;
	int i;

	if (!m)
		return;
	/* Held: a mark armed now stays where it is if the new one is higher. */
	if (hold) {
		was = __atomic_load_n(&m->armed, __ATOMIC_RELAXED);
		cur[0] = m->visit_upto;
		cur[1] = m->exc_upto;
		cur[2] = m->slow_upto;
		for (i = 0; i < 3; i++)
			if ((was & bit[i]) && cur[i] < upto[i])
				upto[i] = cur[i];
	}
	for (i = 0; i < 3; i++) {
		if (upto[i] != UINT64_MAX)
			armed |= bit[i];
		/* A new budget: the crossing of the old one is no longer this trip's. */
		if (rebased[i])
			flags__clear_cross(x->flags, id, why[i]);
	}
	/* Withdrawn first, published last: the entry reads @armed, then the marks. */
	if (!armed)
		__atomic_store_n(&m->armed, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&m->visit_upto, upto[0], __ATOMIC_RELAXED);
	__atomic_store_n(&m->exc_upto, upto[1], __ATOMIC_RELAXED);
	__atomic_store_n(&m->slow_upto, upto[2], __ATOMIC_RELAXED);
	if (armed)
		__atomic_store_n(&m->armed, armed, __ATOMIC_RELEASE);
}

/* CLOCK_MONOTONIC @mono_ns as Unix milliseconds, the events' clock. */
static uint64_t wall_ms(uint64_t mono_ns)
{
	struct timespec rt, mo;
	int64_t off;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mo);
	off = ((int64_t)rt.tv_sec - mo.tv_sec) * 1000000000LL +
	      (rt.tv_nsec - mo.tv_nsec);
	return (uint64_t)((int64_t)mono_ns + off) / 1000000ULL;
}

uint64_t exact_fn__tick(struct exact_run *xr, int id, uint64_t snap_ns,
			uint32_t was, uint32_t shown, uint64_t now_ns)
{
	static const uint32_t why[3] = { SDS_REASON_VISIT, SDS_REASON_EXCEPTION,
					 SDS_REASON_TIMEOUT };
	struct exact_point *x = &xr->pt[id];
	uint64_t snap = snap_ns, prev, s;
	int i;

	/*
	 * The last tick is the last new read of the counters: a drill's
	 * re-evaluation between ticks (engine__flush) reuses the tick's.
	 */
	if (snap != x->snap_ns) {
		x->prev_ns = x->snap_ns;
		x->snap_ns = snap;
	}
	prev = x->prev_ns;
	if (!exact_fn__armed(xr, id))
		return 0;
	if (shown != was) {
		x->cross_ns = x->cross_ms = 0;
		x->cross_reason = SDS_REASON_NONE;
	}
	/* The trip ended: its crossings go with it. */
	if (was && !shown)
		for (i = 0; i < 3; i++)
			flags__clear_cross(xr->flags, id, why[i]);
	if (shown && shown != was) {
		s = flags__cross(xr->flags, id, shown);
		/* Bounded: a client may have written it (docs/TRUST.md). */
		if (s && prev && s > prev && s <= now_ns) {
			x->cross_ns = s;
			x->cross_ms = wall_ms(s);
			x->cross_reason = shown;
		}
		return x->cross_ns;
	}
	if (shown)
		return 0;
	/* Not tripped: a crossing the window did not confirm is forgotten. */
	for (i = 0; i < 3; i++) {
		s = flags__cross(xr->flags, id, why[i]);
		if (s && (s <= prev || s > now_ns + CROSS_FUTURE_NS))
			flags__forget_cross(xr->flags, id, why[i], s);
	}
	return 0;
}

json_t *exact_fn__json(const struct exact_run *xr, int id)
{
	const struct exact_point *x = &xr->pt[id];

	if (!x->cross_ns)
		return json_null();
	return json_pack("{s:s, s:I}", "reason", chain_reason_name(x->cross_reason),
			 "time_ms", (json_int_t)x->cross_ms);
}
