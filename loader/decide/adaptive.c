// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* adaptive.c - the adaptive concurrency limit of one point, tick by tick. */
#include "decide/adaptive.h"

/*
 * Smoothing of gradient2's new limit: Netflix's default is 0.2; a queue of
 * ours costs every call behind it, so a limit too high comes down faster.
 */
#define GRADIENT2_SMOOTHING	0.5
/* A gradient this close to 1 is the noise of a tick's mean, not a queue. */
#define GRADIENT2_NOISE		0.97
/* AIMD: a tick's mean this much above the no-load latency is a queue. */
#define AIMD_TOLERANCE		1.10
#define AIMD_BACKOFF		0.90

static double clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* xorshift64: the epochs' jitter, +-20 %. */
static uint64_t epoch_ns(struct adaptive_state *r)
{
	uint64_t x = r->seed ? r->seed : 0x9e3779b97f4a7c15ULL;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	r->seed = x;
	return ADAPTIVE_EPOCH_NS / 5 * 4 + x % (ADAPTIVE_EPOCH_NS / 5 * 2);
}

void adaptive__reset(struct adaptive_state *r, const struct adaptive_cfg *cfg,
		     uint64_t now_ns, uint64_t seed)
{
	double init = cfg->initial > 0 ? (double)cfg->initial :
		      (double)(cfg->max / 2 > cfg->min ? cfg->max / 2 : cfg->min);

	*r = (struct adaptive_state){
		.on = true,
		.algo = cfg->algo,
		.limit = clampd(init, (double)cfg->min, (double)cfg->max),
		.seed = seed | 1,
	};
	/* The first no-load latency is measured before anything else. */
	r->probe_saved = r->limit;
	r->probing = true;
	r->published = cfg->min;
}

/* The increase of one tick: at least a quarter call, else a share of the limit. */
static double step_up(double limit, double share)
{
	double up = limit * share;

	return up > 0.25 ? up : 0.25;
}

static double gradient2(double limit, double base, double rtt, bool used)
{
	double g = clampd(base / rtt, 0.5, 1.0);
	/* The queue Gradient2 allows: a quarter call, or 2 % of a large limit. */
	double q = 0.25 + 0.02 * limit;

	/* Within the noise of a tick's mean: no queue, try one more. */
	if (g >= GRADIENT2_NOISE)
		return used ? limit + step_up(limit, 0.05) : limit;
	return limit * (1.0 - GRADIENT2_SMOOTHING) +
	       (limit * g + q) * GRADIENT2_SMOOTHING;
}

static double vegas(double limit, double pub, double base, double rtt,
		    bool used)
{
	double queue = pub * (1.0 - base / rtt);
	double alpha = 0.3 + 0.02 * pub, beta = 2.0 * alpha;

	if (queue <= alpha)
		return used ? limit + step_up(limit, 0.05) : limit;
	if (queue >= beta) {
		double down = queue - alpha;

		return limit - (down < limit / 2 ? down : limit / 2);
	}
	return limit;
}

static double aimd(double limit, double base, double rtt, bool used)
{
	if (rtt > base * AIMD_TOLERANCE)
		return limit * AIMD_BACKOFF;
	return used ? limit + step_up(limit, 0.02) : limit;
}

/* A re-measure begins: the limit is the floor for a while (Envoy's way). */
void adaptive__remeasure(struct adaptive_state *r)
{
	r->probe_saved = r->limit;
	r->probing = true;
	r->probe_ticks = 0;
	r->remeasures++;
	r->floor_since_ns = 0;
	r->high_since_limit = 0.0;
}

int64_t adaptive__step(struct adaptive_state *r, const struct adaptive_cfg *cfg,
		       const struct adaptive_sample *s)
{
	double lo = (double)cfg->min, hi = (double)cfg->max;
	double rtt = s->calls >= ADAPTIVE_MIN_CALLS ?
		     (double)s->time_ns / (double)s->calls : 0.0;
	double pub = (double)r->published;
	int64_t before = r->inflight;	/* in flight at the last read */
	bool used;

	r->inflight = s->inflight;
	if (rtt > 0.0)
		r->rtt_ns = rtt;
	if (r->probing) {
		r->probe_ticks++;
		/*
		 * The calls of a tick that began with no more than the floor in
		 * flight were admitted at the floor: no queue of ours in their
		 * time, whatever was in flight when the re-measure began (a
		 * strategy applied under load ticks at once).
		 */
		if (rtt > 0.0 && before >= 0 && before <= cfg->min &&
		    r->probe_ticks >= ADAPTIVE_PROBE_TICKS)
			r->base_ns = rtt;
		/*
		 * No such tick yet: an idle point keeps measuring (it has no
		 * base to steer by); one that had a base keeps it after
		 * ADAPTIVE_PROBE_MAX ticks.
		 */
		else if (r->probe_ticks < ADAPTIVE_PROBE_MAX || r->base_ns <= 0.0)
			goto publish;
		r->probing = false;
		r->limit = r->probe_saved;
		r->epoch_end_ns = s->now_ns + epoch_ns(r);
		goto publish;
	}
	if (rtt > 0.0 && (r->base_ns <= 0.0 || rtt < r->base_ns))
		r->base_ns = rtt;
	if (s->now_ns >= r->epoch_end_ns ||
	    (r->floor_since_ns && s->now_ns - r->floor_since_ns >= ADAPTIVE_FLOOR_NS)) {
		adaptive__remeasure(r);
		goto publish;
	}
	if (rtt <= 0.0 || r->base_ns <= 0.0)
		goto publish;
	/* In use: refused calls, or at least half the limit in flight. */
	used = s->refused > 0 || (s->inflight >= 0 && (double)s->inflight * 2.0 >= pub);
	switch (cfg->algo) {
	case SDS_ADAPTIVE_GRADIENT2:
		r->limit = gradient2(r->limit, r->base_ns, rtt, used);
		break;
	case SDS_ADAPTIVE_VEGAS:
		r->limit = vegas(r->limit, pub, r->base_ns, rtt, used);
		break;
	case SDS_ADAPTIVE_AIMD:
		r->limit = aimd(r->limit, r->base_ns, rtt, used);
		break;
	}
	r->limit = clampd(r->limit, lo, hi);
	/*
	 * A queue of ours empties when the limit halves; latency that stays
	 * high while it did is the dependency's own: its no-load latency rose.
	 */
	if (rtt > r->base_ns * ADAPTIVE_STALE_RATIO) {
		if (!r->high_since_limit)
			r->high_since_limit = pub;
		else if (pub * 2.0 <= r->high_since_limit) {
			adaptive__remeasure(r);
			goto publish;
		}
	} else {
		r->high_since_limit = 0.0;
	}
	if (r->limit < lo + 1.0) {
		if (!r->floor_since_ns)
			r->floor_since_ns = s->now_ns;
	} else {
		r->floor_since_ns = 0;
	}
publish:
	if (r->probing) {
		r->published = cfg->min;
	} else {
		r->published = (int64_t)clampd(r->limit, lo, hi);
	}
	return r->published;
}
