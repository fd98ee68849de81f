// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The baseline of the benchmark: the cheapest useful uprobe + uretprobe
 * pair, one counter each and nothing else.  sds-bpf's own programs are
 * compared against these on the same function, so they count the same
 * way sds-bpf does: per CPU (no cache line shared between cores), with a
 * plain add where a uprobe program cannot be preempted and a locked one
 * where it can (@atomics, set at load from common/preempt.c, as sds-bpf's
 * loader sets its own).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

const volatile bool atomics = true;

/* Key 0: calls entered; key 1: calls returned.  Per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline void count(__u32 key)
{
	__u64 *c = bpf_map_lookup_elem(&counts, &key);

	if (!c)
		return;
	if (atomics)
		__sync_fetch_and_add(c, 1);
	else
		*c += 1;
}

SEC("uprobe")
int bare_enter(void *ctx)
{
	count(0);
	return 0;
}

SEC("uretprobe")
int bare_leave(void *ctx)
{
	count(1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
