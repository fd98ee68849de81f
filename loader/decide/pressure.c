// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* pressure.c - host pressure rules from PSI samples, pure (pressure.h). */
#include <string.h>
#include "decide/pressure.h"

/* The sample @back steps before the newest (0: the newest). */
static uint32_t ring_at(const struct pressure_ring *r, uint32_t back)
{
	return (r->pos + PRESSURE_SAMPLES - 1 - back) % PRESSURE_SAMPLES;
}

void pressure_ring__add(struct pressure_ring *r, uint64_t now_ns,
			uint64_t some_us, uint64_t full_us)
{
	uint32_t last;

	if (r->n) {
		last = ring_at(r, 0);
		if (now_ns < r->at_ns[last] + PRESSURE_SAMPLE_NS)
			return;
		if (some_us < r->us[last][SDS_PSI_SOME] ||
		    full_us < r->us[last][SDS_PSI_FULL])
			r->n = 0;
	}
	r->at_ns[r->pos] = now_ns;
	r->us[r->pos][SDS_PSI_SOME] = some_us;
	r->us[r->pos][SDS_PSI_FULL] = full_us;
	r->pos = (r->pos + 1) % PRESSURE_SAMPLES;
	if (r->n < PRESSURE_SAMPLES)
		r->n++;
}

int64_t pressure_ring__pct(const struct pressure_ring *r, uint32_t kind,
			   uint64_t window_ns, uint64_t since_ns)
{
	uint32_t newest, back, old;
	uint64_t wall_us, stall_us;

	if (r->n < 2 || kind > SDS_PSI_FULL || !window_ns)
		return -1;
	newest = ring_at(r, 0);
	/* The newest sample at least @window_ns older than the newest. */
	for (back = 1; back < r->n; back++) {
		old = ring_at(r, back);
		if (r->at_ns[newest] - r->at_ns[old] >= window_ns)
			break;
	}
	if (back == r->n || r->at_ns[old] < since_ns)
		return -1;
	wall_us = (r->at_ns[newest] - r->at_ns[old]) / 1000;
	stall_us = r->us[newest][kind] - r->us[old][kind];
	if (!wall_us)
		return -1;
	/* The kernel's clock and ours differ by a little: never above 100 %. */
	if (stall_us >= wall_us)
		return 10000;
	return (int64_t)(stall_us * 10000 / wall_us);
}

bool pressure_state__step(struct pressure_state *s,
			  const struct sds_pressure_rule *rule,
			  const struct pressure_ring *r, uint64_t now_ns)
{
	uint64_t win = (uint64_t)(s->firing ? rule->clear_ms : rule->for_ms) * 1000000ULL;
	int64_t bp = pressure_ring__pct(r, rule->kind, win, s->since_ns);

	/* What `stats` shows: the window's share, the samples before the change too. */
	s->pct_bp = pressure_ring__pct(r, rule->kind, win, 0);
	/* Not enough samples: what it does stands (a restart fires nothing). */
	if (bp < 0)
		return false;
	if (!s->firing && bp > rule->above_pct * 100) {
		s->firing = true;
		s->since_ns = now_ns;
		s->fired++;
		return true;
	}
	if (s->firing && bp <= rule->below_pct * 100) {
		s->firing = false;
		s->since_ns = now_ns;
		return true;
	}
	return false;
}
