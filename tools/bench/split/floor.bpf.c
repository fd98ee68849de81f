// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * floor.bpf.c - the floor the split's tracepoints are measured against
 * (split_bench.py): raw tracepoint programs on sched_switch and
 * sched_wakeup that do nothing, so their run time is what the kernel's
 * BPF statistics and the tracepoint's call cost alone.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("raw_tracepoint/sched_switch")
int sds_floor_switch(void *ctx)
{
	return 0;
}

SEC("raw_tracepoint/sched_wakeup")
int sds_floor_wakeup(void *ctx)
{
	return 0;
}
