// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The baseline of the benchmark: the cheapest useful uprobe + uretprobe
 * pair, one atomic counter each and nothing else.  sds-bpf's own programs
 * are compared against these on the same function.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

__u64 enters = 0;
__u64 leaves = 0;

SEC("uprobe")
int bare_enter(void *ctx)
{
	__sync_fetch_and_add(&enters, 1);
	return 0;
}

SEC("uretprobe")
int bare_leave(void *ctx)
{
	__sync_fetch_and_add(&leaves, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
