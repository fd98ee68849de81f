// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* stuck.c - which calls in flight are stuck, pure (stuck.h). */
#include "kernel/stuck.h"

#define NSEC_PER_SEC	1000000000ULL

enum stuck_class stuck_classify(uint64_t entered_ns, uint64_t now_ns,
				uint64_t timeout_ns)
{
	uint64_t age;

	if (!timeout_ns)
		return STUCK_EXPIRED;
	/* Entered after the read's clock: the youngest of all. */
	if (entered_ns >= now_ns)
		return STUCK_YOUNG;
	age = now_ns - entered_ns;
	if (age <= timeout_ns)
		return STUCK_YOUNG;
	if (age - timeout_ns <= (uint64_t)SDS_WINDOW_S * NSEC_PER_SEC)
		return STUCK_COUNTED;
	return STUCK_EXPIRED;
}

int stuck_tally(const struct stuck_entry *e, int n, uint64_t now_ns,
		const uint64_t *timeout_ns, int npoints, uint32_t *counts)
{
	int i, counted = 0;

	for (i = 0; i < n; i++) {
		if (e[i].point >= (uint32_t)npoints ||
		    stuck_classify(e[i].entered_ns, now_ns,
				   timeout_ns[e[i].point]) != STUCK_COUNTED)
			continue;
		counts[e[i].point]++;
		counted++;
	}
	return counted;
}
