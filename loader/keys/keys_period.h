/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * keys_period.h - a keyed point's keys' latency over one heartbeat
 * period (docs/KEYS.md "The heartbeat"): the kernel keeps one log2
 * histogram per key since the key entered its table (bpf/sds_keystat.h,
 * its layout untouched); the period's is that less the one the loader
 * marked as the last period closed.
 */
#ifndef SDS_KEYS_PERIOD_H
#define SDS_KEYS_PERIOD_H

#include <stddef.h>
#include <stdint.h>
#include "sds_keystat.h"

struct keys_entry;
struct keys_read;

/* One key's histogram at the last mark. */
struct keys_period_key {
	uint64_t hash;			/* sds_key_hash() of its key */
	uint32_t hist[SDS_KEY_HIST];
};

/*
 * One point's marks: at most its table's keys, sorted by hash; of the
 * table @table names (its struct probe_keys' base_inserted: a new table,
 * a new value), for a replaced table's counts start again.
 */
struct keys_period {
	size_t n;
	struct keys_period_key *k;
	uint64_t table;
};

/* The p-th percentile (0..100) of a key's log2 histogram, ns (a bucket's upper end); 0: none. */
uint64_t keys__hist_percentile(const uint32_t hist[SDS_KEY_HIST], unsigned int p);

/*
 * The p-th percentile (0..100, ns, a bucket's upper end) of @e's calls
 * that completed since @kp's mark; 0: none did.  A key the mark lacks
 * (new to the table, evicted and back) or whose buckets went back: its
 * whole histogram, all of it since it entered the table.  (Marks of a
 * replaced table are dropped by the caller: keys_period.table.)
 */
uint64_t keys_period__percentile(const struct keys_period *kp,
				 const struct keys_entry *e, unsigned int p);

/*
 * Mark every key of @r as the period closes, for the next one.  Out of
 * memory: no marks (the next period's percentiles are each key's whole
 * histogram's).
 */
void keys_period__mark(struct keys_period *kp, const struct keys_read *r,
		       uint64_t table);
void keys_period__free(struct keys_period *kp);

#endif /* SDS_KEYS_PERIOD_H */
