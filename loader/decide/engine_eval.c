// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* engine_eval.c - one point's evaluation in a tick, pure (engine_eval.h). */
#include <string.h>
#include "decide/engine_eval.h"

void engine_eval_window(const struct point_run *r, const struct snapshot *s, int id,
		   uint64_t now_sec, struct sds_counts *w)
{
	uint64_t from = now_sec + 1 - SDS_WINDOW_S;

	memset(w, 0, sizeof(*w));
	if (r->reset_sec && r->reset_sec >= from) {
		snapshot__sum(s, id, r->reset_sec, now_sec, w);
		w->visits -= r->reset_base.visits;
		w->exceptions -= r->reset_base.exceptions;
		w->timeouts -= r->reset_base.timeouts;
		w->downgrades -= r->reset_base.downgrades;
		w->latency_sum -= r->reset_base.latency_sum;
		return;
	}
	snapshot__sum(s, id, from, now_sec, w);
}

void engine_eval(struct point_run *r, int id, const struct engine_eval_in *in,
		 struct engine_eval_out *out)
{
	const struct cell_counts *n = in->cells;
	struct chain_input ci = {
		.st = in->st,
		.now_ns = in->now_ns,
		.tick_ns = in->tick_ns,
		.probes_ok = n->probes_ok,
		.probes_failed = n->probes_failed,
		.ho = in->ho,
		.visit_full = in->visit_full,
	};
	const struct point_stats *ps = snapshot__point(in->snap, id);
	uint64_t hold_before = r->cs.hold_until_ns;

	memset(out, 0, sizeof(*out));
	engine_eval_window(r, in->snap, id, in->now_sec, &ci.window);
	/*
	 * Calls in flight past their timeout are timeouts of the window while
	 * they are stuck; the kernel counts each in the ring as it ends, when
	 * it leaves the stuck count (kernel/stuck.h): never both at once.
	 * Timed calls that passed, so the slow-call rate counts them too.
	 */
	if (ps && ps->stuck_read)
		ci.window.timeouts += ps->stuck;
	/* Slow probes are the kernel's to count: the guard has no clock at the end. */
	ci.slow_total = ps && ps->ok ? ps->total.timeouts : 0;
	ci.snap_gen = in->snap ? in->snap->gen : 0;
	if (chain_eval(&r->cs, &ci, &out->fs)) {
		/* Start the window afresh: what this second counted so far is out. */
		r->reset_sec = in->now_sec;
		out->reset = true;
		memset(&r->reset_base, 0, sizeof(r->reset_base));
		snapshot__sum(in->snap, id, in->now_sec, in->now_sec, &r->reset_base);
	}
	out->hold_started = r->cs.hold_until_ns &&
			    r->cs.hold_until_ns != hold_before &&
			    out->fs.probe_interval_ns;

	/* The guard's exact limits show as downgrades while they refuse. */
	if (n->refused_token > r->token_seen || n->refused_concurrent > r->conc_seen) {
		r->limit_reason = n->refused_token > r->token_seen ?
				  SDS_REASON_TOKEN : SDS_REASON_CONCURRENT;
		r->limit_last_ns = in->now_ns;
		r->token_seen = n->refused_token;
		r->conc_seen = n->refused_concurrent;
	}
	out->shown = r->cs.tripped ? r->cs.reason : 0;
	if (!out->shown && r->limit_reason &&
	    in->now_ns - r->limit_last_ns < 1000000000ULL)
		out->shown = r->limit_reason;
}
