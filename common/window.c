// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Window math: sums over the per-CPU one-second ring and percentiles of
 * log2 latency histograms.  See window.h for the contract.
 */
#include "window.h"

void window_sum(const struct sds_slot *slots, size_t n,
		uint64_t from_sec, uint64_t to_sec, struct sds_counts *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct sds_slot *s = &slots[i];

		/*
		 * A slot is reset only by the first writer of a new second,
		 * so one nobody touched lately still carries an old second's
		 * counts: its stamp is the only thing telling them apart.
		 */
		if (s->sec < from_sec || s->sec > to_sec)
			continue;
		out->visits += s->visits;
		out->exceptions += s->exceptions;
		out->timeouts += s->timeouts;
		out->downgrades += s->downgrades;
		out->latency_sum += s->latency_sum;
	}
}

void window_counts_add(struct sds_counts *a, const struct sds_counts *b)
{
	a->visits += b->visits;
	a->exceptions += b->exceptions;
	a->timeouts += b->timeouts;
	a->downgrades += b->downgrades;
	a->latency_sum += b->latency_sum;
}

int window_hist_bucket(uint64_t ns)
{
	if (ns < 2)
		return 0;
	return 63 - __builtin_clzll(ns);
}

uint64_t window_hist_total(const uint64_t *buckets, int nbuckets)
{
	uint64_t total = 0;
	int i;

	for (i = 0; i < nbuckets; i++)
		total += buckets[i];
	return total;
}

uint64_t window_hist_percentile(const uint64_t *buckets, int nbuckets, double pct)
{
	uint64_t total, cum = 0;
	double rank, lo, width, v;
	int i, last = -1;

	/* Bucket i covers [2^i, 2^(i+1)): beyond 63 it does not fit in ns. */
	if (nbuckets > 64)
		nbuckets = 64;
	total = window_hist_total(buckets, nbuckets);
	if (total == 0)
		return 0;
	/* Out of range (or NaN) is clamped rather than trusted. */
	if (!(pct > 0))
		pct = 0;
	if (pct > 100)
		pct = 100;
	/* Multiply first: 99 * 1000 / 100 is exactly 990, 0.99 * 1000 not. */
	rank = pct * (double)total / 100.0;

	for (i = 0; i < nbuckets; i++) {
		if (!buckets[i])
			continue;
		last = i;
		if ((double)(cum + buckets[i]) >= rank)
			break;
		cum += buckets[i];
	}
	/* Rounding can leave rank a hair above the total: take the top. */
	if (i == nbuckets) {
		i = last;
		cum = total - buckets[i];
	}

	/*
	 * Assume the samples of a bucket spread evenly over its range, as
	 * funclatency readers and Prometheus' histogram_quantile do: the
	 * k-th of c samples sits at lo + width * k / c, so the 100th
	 * percentile is the bucket's upper bound.
	 */
	lo = (double)(1ULL << i);
	width = lo;
	v = lo + width * ((rank - (double)cum) / (double)buckets[i]);
	if (v >= 18446744073709551615.0)
		return UINT64_MAX;
	return (uint64_t)v;
}
