// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * keys_period.c - a keyed point's keys' latency over one heartbeat period
 * (keys_period.h): the kernel's per-key histogram is cumulative, so the
 * loader keeps each key's buckets as the last period closed, sorted by
 * hash, and the period's p99 is taken from the difference.  Bounded by
 * the table's capacity (its read is as large), replaced whole each period.
 * Pure: no map is read here (tests/unit/kernel/test_keys_period.c).
 */
#include <stdlib.h>
#include <string.h>
#include "keys/keys.h"
#include "keys/keys_period.h"

uint64_t keys__hist_percentile(const uint32_t hist[SDS_KEY_HIST], unsigned int p)
{
	uint64_t total = 0, need, run = 0;
	int i;

	for (i = 0; i < SDS_KEY_HIST; i++)
		total += hist[i];
	if (!total)
		return 0;
	need = (total * p + 99) / 100;
	if (!need)
		need = 1;
	for (i = 0; i < SDS_KEY_HIST; i++) {
		run += hist[i];
		if (run >= need)
			return (2ULL << i) - 1;
	}
	return (2ULL << (SDS_KEY_HIST - 1)) - 1;
}

static int cmp_hash(const void *a, const void *b)
{
	uint64_t x = ((const struct keys_period_key *)a)->hash;
	uint64_t y = ((const struct keys_period_key *)b)->hash;

	return x < y ? -1 : x > y;
}

uint64_t keys_period__percentile(const struct keys_period *kp,
				 const struct keys_entry *e, unsigned int p)
{
	struct keys_period_key k = { .hash = sds_key_hash(&e->key) };
	const struct keys_period_key *was = kp->n ?
		bsearch(&k, kp->k, kp->n, sizeof(*kp->k), cmp_hash) : NULL;
	int i;

	for (i = 0; i < SDS_KEY_HIST; i++) {
		/* A bucket that went back: a new entry (evicted and back, a new table). */
		if (was && was->hist[i] > e->hist[i]) {
			was = NULL;
			break;
		}
	}
	for (i = 0; i < SDS_KEY_HIST; i++)
		k.hist[i] = e->hist[i] - (was ? was->hist[i] : 0);
	return keys__hist_percentile(k.hist, p);
}

void keys_period__mark(struct keys_period *kp, const struct keys_read *r,
		       uint64_t table)
{
	size_t i;

	free(kp->k);
	kp->k = NULL;
	kp->n = 0;
	kp->table = table;
	if (!r->n)
		return;
	kp->k = malloc(r->n * sizeof(*kp->k));
	if (!kp->k)
		return;
	for (i = 0; i < r->n; i++) {
		kp->k[i].hash = sds_key_hash(&r->e[i].key);
		memcpy(kp->k[i].hist, r->e[i].hist, sizeof(kp->k[i].hist));
	}
	qsort(kp->k, r->n, sizeof(*kp->k), cmp_hash);
	kp->n = r->n;
}

void keys_period__free(struct keys_period *kp)
{
	free(kp->k);
	kp->k = NULL;
	kp->n = 0;
}
