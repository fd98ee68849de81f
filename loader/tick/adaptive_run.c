// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* adaptive_run.c - adaptive points' limits, stepped at the tick. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "tick/adaptive_run.h"
#include "state/events.h"
#include "decide/verdict.h"
#include "heartbeat/heartbeat.h"
#include "kernel/snapshot.h"
#include "strategy.h"

void adaptive_run__configure(struct adaptive_run *ar, int id,
			     const struct sds_strategy *st, uint64_t now_ns)
{
	struct adaptive_point *p = &ar->pt[id];

	memset(p, 0, sizeof(*p));
	if (!strategy_is_adaptive(st))
		return;
	if (!ar->seed)
		ar->seed = ((uint64_t)getpid() << 32) ^ now_ns;
	p->cfg = (struct adaptive_cfg){
		.algo = (uint32_t)st->adaptive_limit,
		.min = st->adaptive_min,
		.max = st->adaptive_max,
		.initial = st->adaptive_initial > 0 ? st->adaptive_initial : 0,
	};
	p->signal = (uint32_t)st->adaptive_signal;
	p->used = p->signal;
	adaptive__reset(&p->st, &p->cfg, now_ns, ar->seed ^ ((uint64_t)id << 17));
	p->shown = p->st.published;
}

bool adaptive_run__any(const struct adaptive_run *ar, int npoints)
{
	int id;

	for (id = 0; id < npoints; id++)
		if (ar->pt[id].st.on)
			return true;
	return false;
}

/* A move worth an event: more than 10 % of the last limit shown. */
static bool limit_moved(int64_t shown, int64_t now)
{
	int64_t d = now > shown ? now - shown : shown - now;

	return d * 10 > shown;
}

/*
 * The calls completed since the last read and their time, by @signal:
 * the kernel's entry-to-return latency (completed calls, the gauges), or
 * their blocked part (the split's calls, docs/SPLIT.md).  false: @ps has
 * no such counts this tick.
 */
static bool signal_read(const struct point_stats *ps, uint32_t signal,
			uint64_t *calls, uint64_t *time_ns)
{
	if (!ps || !ps->ok)
		return false;
	if (signal == SDS_ADAPTIVE_BY_BLOCKED) {
		if (!ps->split)
			return false;
		*calls = ps->split_calls;
		*time_ns = ps->split_blocked_ns;
		return true;
	}
	/* Only a read with the gauges has completed calls (counters.c). */
	if (!ps->gauges)
		return false;
	*calls = ps->completed;
	*time_ns = ps->total.latency_sum;
	return true;
}

void adaptive_run__tick(struct adaptive_run *ar, int id,
			const struct point_stats *ps,
			const struct cell_counts *cells, uint64_t now_ns,
			struct events *ev, const char *name)
{
	struct adaptive_point *p = &ar->pt[id];
	struct adaptive_sample s = { .now_ns = now_ns, .inflight = -1 };
	uint64_t calls = 0, time_ns = 0;
	uint32_t used = p->signal;
	bool fed;
	char detail[EVENTS_DETAIL_MAX];

	if (!p->st.on)
		return;
	/* The split unreadable this tick: the whole latency, said as such. */
	fed = signal_read(ps, used, &calls, &time_ns);
	if (!fed && used == SDS_ADAPTIVE_BY_BLOCKED) {
		used = SDS_ADAPTIVE_BY_LATENCY;
		fed = signal_read(ps, used, &calls, &time_ns);
	}
	/* Another signal: its no-load latency is another number. */
	if (fed && p->fed && used != p->used) {
		adaptive__remeasure(&p->st);
		p->fed = false;
	}
	if (fed) {
		/* Counts only grow; a read that went back (a restart's) starts over. */
		if (p->fed && calls >= p->completed && time_ns >= p->time_ns) {
			s.calls = calls - p->completed;
			s.time_ns = time_ns - p->time_ns;
		}
		p->completed = calls;
		p->time_ns = time_ns;
		p->used = used;
	}
	if (ps && ps->ok && ps->gauges)
		s.inflight = ps->concurrency;
	if (cells) {
		if (p->fed && cells->refused_concurrent >= p->refused)
			s.refused = cells->refused_concurrent - p->refused;
		p->refused = cells->refused_concurrent;
	}
	p->fed = fed;
	adaptive__step(&p->st, &p->cfg, &s);
	if (!limit_moved(p->shown, p->st.published))
		return;
	snprintf(detail, sizeof(detail),
		 "%s by %s %.2f ms, no-load %.2f ms%s",
		 strategy_adaptive_name(p->cfg.algo),
		 strategy_adaptive_signal_name(p->used), p->st.rtt_ns / 1e6,
		 p->st.base_ns / 1e6, p->st.probing ? " (re-measuring)" : "");
	events__add_limit(ev, name, p->shown, p->st.published, detail);
	p->shown = p->st.published;
}

void adaptive_run__publish(const struct adaptive_run *ar, int id,
			   struct flag_state *fs)
{
	const struct adaptive_point *p = &ar->pt[id];

	if (!p->st.on)
		return;
	fs->active |= SDS_ACT_CONCURRENT;
	fs->concurrent_limit = p->st.published;
}

void adaptive_run__heartbeat(const struct adaptive_run *ar, int id,
			     struct sds_hb_point *hp)
{
	const struct adaptive_point *p = &ar->pt[id];

	if (!p->st.on)
		return;
	hp->adaptive_limit = (uint64_t)p->st.published;
	hp->adaptive_latency_ns = (uint64_t)p->st.rtt_ns;
}

json_t *adaptive_run__json(const struct adaptive_run *ar, int id)
{
	const struct adaptive_point *p = &ar->pt[id];

	if (!p->st.on)
		return NULL;
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:s, s:s, s:b, s:I}",
			 "algorithm", strategy_adaptive_name(p->cfg.algo),
			 "limit", (json_int_t)p->st.published,
			 "min", (json_int_t)p->cfg.min,
			 "max", (json_int_t)p->cfg.max,
			 "latency_ns", (json_int_t)p->st.rtt_ns,
			 "no_load_ns", (json_int_t)p->st.base_ns,
			 "signal", strategy_adaptive_signal_name(p->signal),
			 "steered_by", strategy_adaptive_signal_name(p->used),
			 "remeasuring", p->st.probing,
			 "remeasures", (json_int_t)p->st.remeasures);
}
