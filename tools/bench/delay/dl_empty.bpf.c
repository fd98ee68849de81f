// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * dl_empty.bpf.c - an empty tc program: what a tc egress program alone
 * costs a packet, beside the delay drills' (tools/bench/delay/dl_egress.py).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tc")
int sds_bench_dl_empty(struct __sk_buff *skb)
{
	return -1;	/* TC_ACT_UNSPEC: as if no program were there */
}
