// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* chain.c - the strategy chain: trip, hold, probe, publish. */
#include <string.h>
#include "decide/chain.h"

static const char *const reason_names[SDS_REASON_MAX] = {
	[SDS_REASON_NONE] = "",
	[SDS_REASON_VISIT] = "visit",
	[SDS_REASON_TOKEN] = "token",
	[SDS_REASON_CONCURRENT] = "concurrent",
	[SDS_REASON_TIMEOUT] = "timeout",
	[SDS_REASON_EXCEPTION] = "exception",
	[SDS_REASON_EXCEPTION_RATE] = "exception_rate",
	[SDS_REASON_HOLD] = "hold",
	[SDS_REASON_DRILL] = "drill",
	[SDS_REASON_SLOW_RATE] = "slow_rate",
	[SDS_REASON_OVERLOAD] = "overload",
	[SDS_REASON_KEY] = "key",
};

const char *chain_reason_name(uint32_t reason)
{
	return reason < SDS_REASON_MAX ? reason_names[reason] : "";
}

/*
 * Last in the chain: the share of passed calls slower than timeout_ms,
 * judged as the exception rate is (above slow_rate_start visits, with
 * calls passed); 0 or no timeout_ms: off.
 */
static uint32_t chain_check_slow_rate(const struct sds_strategy *st,
				      const struct sds_counts *w, uint64_t passed)
{
	uint64_t start;

	if (st->slow_rate_threshold <= 0 || st->timeout_ms <= 0)
		return SDS_REASON_NONE;
	start = st->slow_rate_start > 0 ? (uint64_t)st->slow_rate_start : 0;
	if (w->visits > start && passed > 0 &&
	    w->timeouts * 100 / passed >= (uint64_t)st->slow_rate_threshold)
		return SDS_REASON_SLOW_RATE;
	return SDS_REASON_NONE;
}

uint32_t chain_check(const struct sds_strategy *st, const struct sds_counts *w)
{
	uint64_t passed;

	if (!st)
		return SDS_REASON_NONE;
	passed = w->visits > w->downgrades ? w->visits - w->downgrades : 0;
	/* 0 is the kill switch: in force before any call. */
	if (st->visit_threshold == 0)
		return SDS_REASON_VISIT;
	if (st->visit_threshold > 0 && passed > (uint64_t)st->visit_threshold)
		return SDS_REASON_VISIT;
	if (st->timeout_ms > 0 && st->timeout_count_threshold >= 1 &&
	    w->timeouts >= (uint64_t)st->timeout_count_threshold)
		return SDS_REASON_TIMEOUT;
	if (st->exception_threshold >= 1 &&
	    w->exceptions >= (uint64_t)st->exception_threshold)
		return SDS_REASON_EXCEPTION;
	if (st->exception_rate_threshold >= 0) {
		uint64_t start = st->exception_rate_start > 0 ?
				 (uint64_t)st->exception_rate_start : 0;

		if (w->visits > start && passed > 0 &&
		    w->exceptions * 100 / passed >=
		    (uint64_t)st->exception_rate_threshold)
			return SDS_REASON_EXCEPTION_RATE;
	}
	return chain_check_slow_rate(st, w, passed);
}

/* Half-open phases for this strategy and input (probe_calls >= 2). */
static bool chain_halfopen(const struct chain_input *in)
{
	return in->ho && in->st && in->st->retry_interval_ms > 0 &&
	       strategy_probe_calls(in->st) > 1;
}

static void hold_start(struct chain_state *cs, const struct chain_input *in)
{
	cs->hold_until_ns = in->now_ns + (uint64_t)in->st->delay_ms * 1000000ULL;
	cs->probes_ok_seen = in->probes_ok;
	cs->probes_failed_seen = in->probes_failed;
	/* The hold's first phase opens one interval on (engine.c). */
	if (chain_halfopen(in))
		halfopen_open(in->ho, in->probes_ok, in->probes_failed,
			      in->slow_total);
}

/*
 * What the hold's probes say: > 0 the dependency is back, < 0 a probe
 * (phase) failed, 0 nothing yet.  One probe (probe_calls 1): its first
 * result decides, as it always did.  N probes: the phase's verdict; a
 * hold without an open phase (after an upgrade with --keep) opens one.
 */
static int chain_probe_verdict(struct chain_state *cs,
			       const struct chain_input *in)
{
	const struct sds_strategy *st = in->st;

	if (chain_halfopen(in)) {
		if (!in->ho->open) {
			halfopen_open(in->ho, in->probes_ok, in->probes_failed,
				      in->slow_total);
			return 0;
		}
		return halfopen_verdict(in->ho, strategy_probe_calls(st),
					st->probe_failure_pct > 0 ?
					(uint64_t)st->probe_failure_pct : 0,
					in->probes_ok, in->probes_failed,
					in->slow_total, in->snap_gen);
	}
	if (in->probes_ok > cs->probes_ok_seen)
		return 1;
	if (in->probes_failed > cs->probes_failed_seen)
		return -1;
	return 0;
}

bool chain_eval(struct chain_state *cs, const struct chain_input *in,
		struct flag_state *out)
{
	const struct sds_strategy *st = in->st;
	bool has_hold = st && st->delay_ms > 0;
	bool reset = false;
	uint32_t reason = chain_check(st, &in->window);

	/*
	 * Exact trips: the guards refuse the call past the visit threshold
	 * themselves, so the window never shows it; a spent budget is the
	 * trip (visit comes first in the order).
	 */
	if (in->visit_full && st && st->visit_threshold >= 0)
		reason = SDS_REASON_VISIT;

	if (!has_hold)
		cs->hold_until_ns = 0;
	if (cs->hold_until_ns) {
		int probe = chain_probe_verdict(cs, in);

		if (probe > 0) {
			/* A probe got through fine: the dependency is back. */
			cs->hold_until_ns = 0;
			cs->tripped = false;
			reset = true;
			/* Only the kill switch survives an empty window. */
			reason = chain_check(st, &(struct sds_counts){});
			if (reason) {
				cs->tripped = true;
				cs->reason = reason;
				hold_start(cs, in);
			}
		} else if (probe < 0) {
			hold_start(cs, in);
		} else if (in->now_ns >= cs->hold_until_ns) {
			cs->hold_until_ns = 0;
			cs->tripped = reason != SDS_REASON_NONE;
			if (cs->tripped) {
				cs->reason = reason;
				hold_start(cs, in);
			}
		}
	} else if (reason) {
		cs->tripped = true;
		cs->reason = reason;
		if (has_hold)
			hold_start(cs, in);
	} else {
		cs->tripped = false;
	}
	if (!cs->tripped)
		cs->reason = SDS_REASON_NONE;
	/* No hold, no phase: a later hold opens its own. */
	if (in->ho && !cs->hold_until_ns)
		in->ho->open = false;

	memset(out, 0, sizeof(*out));
	out->concurrent_limit = -1;
	if (cs->tripped) {
		out->active |= SDS_ACT_DOWNGRADE;
		out->reason = cs->reason;
		out->rate = st ? (uint32_t)st->downgrade_rate : 100;
		out->expires_ns = in->now_ns + in->tick_ns + CHAIN_EXPIRY_NS;
		if (cs->hold_until_ns && st->retry_interval_ms > 0) {
			out->active |= SDS_ACT_PROBE;
			out->probe_interval_ns = (uint64_t)st->retry_interval_ms * 1000000ULL;
			if (chain_halfopen(in))
				out->active |= SDS_ACT_HALFOPEN;
		}
	}
	if (st && st->concurrent_threshold >= 0) {
		out->active |= SDS_ACT_CONCURRENT;
		out->concurrent_limit = st->concurrent_threshold;
	}
	if (st && st->token_rate > 0) {
		out->active |= SDS_ACT_TOKEN;
		out->token_interval_ns = 1000000000ULL / (uint64_t)st->token_rate;
		out->token_burst_ns = out->token_interval_ns * (uint64_t)st->token_bucket;
	}
	return reset;
}
