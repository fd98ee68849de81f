/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * bare_counts.h - the baseline's skeleton opened the way sds-bpf's loader
 * opens its own (locked adds only on a preemptible kernel).  Shared by
 * bench-bare and bench-bare-up; their counters are read with
 * bench_percpu_sum() (bench_probe.h).
 */
#ifndef SDS_BARE_COUNTS_H
#define SDS_BARE_COUNTS_H

#include "bare.skel.h"
#include "bench_probe.h"
#include "preempt.h"

static inline struct bare_bpf *bare_open_and_load(void)
{
	struct bare_bpf *skel = bare_bpf__open();

	if (!skel)
		return NULL;
	skel->rodata->atomics = preempt_kernel_preemptible();
	if (bare_bpf__load(skel)) {
		bare_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

#endif /* SDS_BARE_COUNTS_H */
