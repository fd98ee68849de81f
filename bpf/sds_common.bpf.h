/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_common.bpf.h - what every BPF object of sds-bpf shares (sds.bpf.c,
 * copy.bpf.c, failfast.bpf.c; tools/bench/baseline/floor.bpf.c): the `atomics`
 * switch and ADD(), the per-CPU counter add, and log2_u64(), the
 * histograms' bucket.  Included once, after
 * vmlinux.h and bpf_helpers.h; each object gets its own `atomics`, which
 * the loader sets in that object's rodata before the load.
 *
 * Per-CPU counters only race with a program preempted on the same CPU,
 * which a kernel without involuntary preemption in kernel mode never does.
 * The loader sets `atomics` from the running kernel's preemption model
 * (common/preempt.c); the verifier prunes the branch not taken, so the
 * plain adds cost nothing extra on a preemptible kernel and save a locked
 * instruction each on one that is not.
 */
#ifndef SDS_COMMON_BPF_H
#define SDS_COMMON_BPF_H

const volatile bool atomics = true;

#define ADD(p, v)						\
	do {							\
		if (atomics)					\
			__sync_fetch_and_add((p), (v));		\
		else						\
			*(p) += (v);				\
	} while (0)

/*
 * floor(log2(v)) for v > 0, 0 for v == 0: a latency histogram's bucket.
 * By shifts: clang 14 crashes on __builtin_clzll in BPF.
 */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xFFFFFFFFULL) << 5; v >>= shift; r |= shift;
	shift = (v > 0xFFFF) << 4; v >>= shift; r |= shift;
	shift = (v > 0xFF) << 3; v >>= shift; r |= shift;
	shift = (v > 0xF) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

#endif
