// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The session floor of the benchmark (issue 14): the cheapest probe that
 * measures latency on this kernel, nothing else.  One program attached as
 * a uprobe session: on entry a counter and the time into the session
 * cookie; on return a counter, the second clock read and a log2 histogram.
 * Counts per CPU like bare.bpf.c (plain adds where a uprobe program cannot
 * be preempted).  The loader sets the expected attach type (57) before the
 * load: libbpf 1.1 has no section name for it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "sds_common.bpf.h"

extern __u64 *bpf_session_cookie(void) __ksym;
extern bool bpf_session_is_return(void) __ksym;

/* Key 0: calls entered; key 1: calls returned.  Per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

/* The log2 latency histogram, 64 buckets, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

static __always_inline void add(void *map, __u32 key)
{
	__u64 *c = bpf_map_lookup_elem(map, &key);

	if (!c)
		return;
	ADD(c, 1);
}

SEC("kprobe")
int floor_session(void *ctx)
{
	__u64 *ck = bpf_session_cookie();

	if (!bpf_session_is_return()) {
		add(&counts, 0);
		*ck = bpf_ktime_get_ns();
		return 0;
	}
	add(&counts, 1);
	add(&hist, log2_u64(bpf_ktime_get_ns() - *ck));
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
