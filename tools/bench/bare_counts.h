/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * bare_counts.h - the baseline's skeleton opened the way sds-bpf's loader
 * opens its own (locked adds only on a preemptible kernel), and its
 * per-CPU counters summed.  Shared by bench-bare and bench-bare-up.
 */
#ifndef SDS_BARE_COUNTS_H
#define SDS_BARE_COUNTS_H

#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bare.skel.h"
#include "preempt.h"

static inline struct bare_bpf *bare_open_and_load(void)
{
	struct bare_bpf *skel = bare_bpf__open();

	if (!skel)
		return NULL;
	skel->rodata->atomics = sds_kernel_preemptible();
	if (bare_bpf__load(skel)) {
		bare_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/* Counter @key (0: entered, 1: returned) summed over the CPUs. */
static inline unsigned long long bare_count(struct bare_bpf *skel, __u32 key)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	unsigned long long sum = 0;
	__u64 *v;

	if (ncpu <= 0)
		return 0;
	v = calloc(ncpu, sizeof(*v));
	if (v && !bpf_map_lookup_elem(bpf_map__fd(skel->maps.counts), &key, v))
		for (i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

#endif /* SDS_BARE_COUNTS_H */
