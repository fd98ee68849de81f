/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_frameread.bpf.h - sds.bpf.c's per-thread frame stack as the other
 * objects read it (failfast.bpf.c, delay.bpf.c): the map, given its fd by
 * the loader before the load, a frame bounded for the verifier, the stack
 * of the current thread as it stands now, and a share hit at random.
 * Included once, after sds_types.h and sds_common.bpf.h.
 */
#ifndef SDS_FRAMEREAD_BPF_H
#define SDS_FRAMEREAD_BPF_H

/*
 * sds.bpf.c's map, given its fd by the loader before the load
 * (bpf_map__reuse_fd): the declaration must match it exactly.  Only read
 * here, never created: a thread with no frames is outside every point.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sds_frames);
} frames SEC(".maps");

/* Frame @i of @fr, bounded for the verifier (as sds.bpf.c's frame_at). */
static __always_inline struct sds_frame *frameread_at(struct sds_frames *fr,
						      __u32 i)
{
	asm volatile("" : "+r"(i));
	return &fr->f[i & (SDS_MAX_DEPTH - 1)];
}

/*
 * The frame stack of the current thread @task, its depth into *@d and its
 * user stack pointer at the hook into *@usp; NULL for none that is the
 * thread's now.
 *
 * Frames pushed before an execve() (called from inside a point: its call
 * never returns) are the old program's: the thread runs another now,
 * inside none of its points.  One load of the task's exec counter (the
 * stack's is beside depth); sds.bpf.c gives the frames up at the thread's
 * next push or its exit.
 *
 * A frame is popped lazily, at the thread's next probed entry or exit: one
 * left by longjmp (or an unwound exception) is still there although its
 * call is over.  A call in progress has its frame above the stack pointer;
 * one below it (f->sp < *@usp) is over, and must not count for what the
 * thread does now: the caller skips it.
 */
static __always_inline struct sds_frames *
frameread_stack(struct task_struct *task, __u32 *d, __u64 *usp)
{
	struct sds_frames *fr;

	fr = bpf_task_storage_get(&frames, task, 0, 0);
	if (!fr)
		return NULL;
	*d = fr->depth;
	if (!*d || *d > SDS_MAX_DEPTH)
		return NULL;
	if (fr->exec_id != (__u32)task->self_exec_id)
		return NULL;
	*usp = PT_REGS_SP((struct pt_regs *)bpf_task_pt_regs(task));
	return fr;
}

/* Share @pct of 100 hit, by the kernel's PRNG. */
static __always_inline bool frameread_hit(__u32 pct)
{
	if (pct >= 100)
		return true;
	return pct && bpf_get_prandom_u32() % 100 < pct;
}

#endif
