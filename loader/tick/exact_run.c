// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * exact_run.c - exact trips in the engine's tick (exact.h; docs/PROTOCOL.md,
 * "Exact trips"): per point, the visit and exception marks from the tick's
 * snapshot and the guards' counts, stored in the flag entry before the
 * entry's line 1 (which sets SDS_ACT_BUDGET) is published, and whether
 * the visit budget is spent -- a trip the chain then handles as any other
 * (hold, probes, events), with the reason "visit".
 *
 * The kernel's count of the second a budget ran out stamps the trip: the
 * guard cannot write events, and the event the tick opens names the
 * reason; the crossing call itself shows in the ring as the first
 * downgrade of that second.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "decide/engine_eval.h"
#include "decide/exact.h"
#include "kernel/probes.h"
#include "kernel/snapshot.h"
#include "publish/flags.h"
#include "strategy.h"
#include "tick/exact_run.h"
#include "sds.skel.h"

#define LD(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)

/*
 * SDS_EXACT_TRIPS=0 in the loader's environment: no marks, the tick
 * decides as before exact trips.  For the benchmark's "before" column
 * (tools/bench/exact/exact_bench.py) only; read once.
 */
static bool exact_off(void)
{
	static int off = -1;

	if (off < 0) {
		const char *v = getenv("SDS_EXACT_TRIPS");

		off = v && !strcmp(v, "0");
	}
	return off;
}

/* The visit threshold the guards count against; -1: none. */
static int64_t visit_n(const struct sds_strategy *st)
{
	return !exact_off() && st && st->visit_threshold >= 0 ?
	       st->visit_threshold : -1;
}

/* The exception threshold the guards count against; -1: none. */
static int64_t exc_n(const struct sds_strategy *st)
{
	return !exact_off() && st && st->exception_threshold >= 1 ?
	       st->exception_threshold : -1;
}

/* The slow-call threshold the BPF side counts against; -1: none. */
static int64_t slow_n(const struct exact_run *x, const struct sds_strategy *st)
{
	if (exact_off() || !x->slow || !st || st->timeout_ms <= 0 ||
	    st->timeout_count_threshold < 1)
		return -1;
	return st->timeout_count_threshold;
}

void exact__init(struct exact_run *x, struct probes *p, struct flags_region *f)
{
	x->probes = p;
	x->flags = f;
}

int exact__share_cells(struct exact_run *x)
{
	struct flags_region *f = x->flags;
	struct bpf_map *m = x->probes->skel ? x->probes->skel->maps.cells : NULL;
	void *mem;
	int fd;

	if (!m || bpf_map__max_entries(m) != SDS_CELLS_ELEMS ||
	    bpf_map__value_size(m) != SDS_CELL_SIZE || bpf_map__fd(m) < 0)
		return -1;
	fd = fcntl(bpf_map__fd(m), F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -1;
	mem = mmap(NULL, f->cells_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		close(fd);
		return -1;
	}
	/* No guard has the loader's own map yet: the socket is not up. */
	munmap(f->cells, f->cells_size);
	close(f->cells_fd);
	f->cells = mem;
	f->cells_fd = fd;
	x->slow = true;
	return 0;
}

/* The passes and exceptions of ring second @sec so far, since a reset in it. */
static void current(const struct point_run *r, const struct snapshot *s, int id,
		    uint64_t sec, struct sds_counts *w)
{
	memset(w, 0, sizeof(*w));
	snapshot__sum(s, id, sec, sec, w);
	if (r->reset_sec == sec) {
		w->visits -= r->reset_base.visits;
		w->exceptions -= r->reset_base.exceptions;
		w->timeouts -= r->reset_base.timeouts;
		w->downgrades -= r->reset_base.downgrades;
	}
}

static uint64_t passes(const struct sds_counts *w)
{
	return w->visits > w->downgrades ? w->visits - w->downgrades : 0;
}

/*
 * Did a call find the spent budget since the last tick, or is the point
 * still tripped for it?  A spent budget alone is no trip (exactly N calls
 * in the window is not past the threshold); a call the budget refused
 * is.  The guard cannot tell the loader, but the kernel counts it as a
 * downgrade: downgrades the kernel counted since the last tick beyond the
 * refusals the guards counted for their other limits (token, semaphore,
 * error drill) were the budgets', while the loader itself downgrades
 * nothing.  The guards' counts are the app's own: a forgery only hides
 * or shows this app's visit trip, whose calls the guards refuse anyway.
 */
static bool visit_refused(struct exact_run *xr, int id,
			  const struct point_run *r, const struct snapshot *snap)
{
	const struct point_stats *ps = snap ? snapshot__point(snap, id) : NULL;
	const struct chain_state *cs = &r->cs;
	struct exact_point *x = &xr->pt[id];
	const struct sds_cell *c = flags__cell(xr->flags, id);
	uint64_t down, other, dd, dother;

	if (!ps)
		return false;
	down = ps->total.downgrades;
	other = LD(c->refused_token) + LD(c->refused_concurrent) +
		LD(c->drill_faults);
	dd = down > x->down_seen ? down - x->down_seen : 0;
	dother = other > x->other_seen ? other - x->other_seen : 0;
	x->down_seen = down;
	x->other_seen = other;
	if (cs->tripped && cs->reason == SDS_REASON_VISIT)
		return true;
	return !cs->tripped && dd > dother;
}

/*
 * Advance point @id's marks at ring second @sec (@rebase: its window was
 * just reset) and store them in its entry.  @hold: the BPF side's marks
 * may not rise this tick (exact_fn__publish).  Returns whether the visit
 * budget is spent.
 */
static bool marks_tick(struct exact_run *xr, int id, const struct point_run *r,
		       const struct sds_strategy *st, const struct snapshot *snap,
		       uint64_t sec, bool rebase, bool hold)
{
	struct exact_point *x = &xr->pt[id];
	const struct sds_cell *c = flags__cell(xr->flags, id);
	struct sds_counts closed = {}, cur = {};
	struct exact_in in = { .sec = sec, .rebase = rebase };
	uint64_t vu, eu, su, vspent;
	bool refused;

	if (snap && (visit_n(st) >= 0 || exc_n(st) >= 0 || slow_n(xr, st) >= 0)) {
		exact_closed(r, snap, id, sec, &closed);
		current(r, snap, id, sec, &cur);
	}
	in.threshold = visit_n(st);
	in.spent = vspent = LD(c->visit_spent);
	in.closed = passes(&closed);
	in.cur = passes(&cur);
	/* A function point refuses nothing: its BPF side counts every call. */
	in.capped = xr->probes->pts[id].kind != POINT_FUNCTION;
	vu = exact_mark_tick(&x->visit, &in);

	in.threshold = exc_n(st);
	in.spent = LD(c->exc_spent);
	in.closed = closed.exceptions;
	in.cur = cur.exceptions;
	in.capped = false;
	eu = exact_mark_tick(&x->exc, &in);

	in.threshold = slow_n(xr, st);
	in.spent = LD(c->slow_spent);
	in.closed = closed.timeouts;
	in.cur = cur.timeouts;
	su = exact_mark_tick(&x->slow, &in);

	/* Before line 1: a guard that sees SDS_ACT_BUDGET sees these or later. */
	flags__set_marks(xr->flags, id, vu, eu, su);
	x->active = vu != UINT64_MAX || eu != UINT64_MAX || su != UINT64_MAX;
	exact_fn__publish(xr, id, (const uint64_t[3]){ vu, eu, su },
			  (const bool[3]){ x->visit.rebased, x->exc.rebased,
					   x->slow.rebased }, hold);
	/* Every tick: it keeps what it saw for the next one. */
	refused = visit_refused(xr, id, r, snap);
	return vu != UINT64_MAX && vspent >= vu && refused;
}

bool exact__before(struct exact_run *x, int id, const struct point_run *r,
		   const struct sds_strategy *st, const struct snapshot *snap,
		   uint64_t sec)
{
	return marks_tick(x, id, r, st, snap, sec, false, false);
}

void exact__after(struct exact_run *x, int id, const struct point_run *r,
		  const struct sds_strategy *st, const struct snapshot *snap,
		  uint64_t sec, bool reset, struct flag_state *fs)
{
	/*
	 * A :failfast= point that trips now fails the calls past its mark
	 * from their entry; its downgrade reaches the fail-fast programs
	 * only later in this tick (failfast__tick), so the re-based marks
	 * reach the BPF side at the next tick: until then the calls past
	 * the old mark still fail, and no call slips through in between.
	 */
	if (reset)
		marks_tick(x, id, r, st, snap, sec, true,
			   (fs->active & SDS_ACT_DOWNGRADE) &&
			   x->probes->pts[id].spec.failfast_ops);
	if (x->pt[id].active)
		fs->active |= SDS_ACT_BUDGET;
}
