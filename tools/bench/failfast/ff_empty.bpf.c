// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * ff_empty.bpf.c - an empty cgroup/connect4 program: what the hook alone
 * costs a connect(2), beside fail-fast's (tools/bench/failfast/ff_connect.py).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("cgroup/connect4")
int sds_bench_ff_empty(struct bpf_sock_addr *ctx)
{
	return 1;
}
