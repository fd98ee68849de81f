/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_session.bpf.h - the session path of a function point (docs/PROBES.md).
 *
 * One program, attached as a uprobe session (BPF_TRACE_UPROBE_SESSION,
 * kernel >= 6.12), runs at a call's entry and again at its return.  The
 * kernel keeps an 8-byte cookie per call instance, so the entry's time
 * travels in it to the return: no per-thread frame stack, and recursion
 * and nesting pair by themselves.  The cookie also names the point and
 * this loader (@session_tag), so that a call instance the kernel drops
 * without running the return handler can still be given back:
 *
 *   - a longjmp out of the call: the kernel drops the dead instances at
 *     the next entry of a return-probed function on that thread, right
 *     after its handlers ran, all of them, and only when it keeps a
 *     return for that entry (below its depth limit); our entry finds
 *     them first (session_reap), under the same condition
 *   - a thread that dies inside the call: sds_thread_exit walks the
 *     thread's live instances (sched_process_exit runs before exit_mm
 *     frees them on this kernel: the tracepoint has its group_dead
 *     argument)
 *   - a call past the kernel's 64 nested return instances: never gets
 *     one, so it is counted unpaired at once
 *
 * Included by sds.bpf.c after the helpers it shares (slot_get, call_done,
 * frame_drop); libbpf 1.1 has no section name for sessions, so the loader
 * sets the expected attach type (57) before the load (probes_session.c).
 */
#ifndef SDS_SESSION_BPF_H
#define SDS_SESSION_BPF_H

/* __weak: a kernel without them still loads everything else (the pair). */
extern __u64 *bpf_session_cookie(void) __ksym __weak;
extern bool bpf_session_is_return(void) __ksym __weak;

/*
 * The cookie: tag (6 bits) | point (10) | entry time (low 48 bits, ~78 h:
 * a latency is the difference modulo 2^48).
 */
#define SDS_SESS_TS_MASK	((1ULL << 48) - 1)
#define SDS_SESS_PT_SHIFT	48
#define SDS_SESS_PT_MASK	0x3ffULL
#define SDS_SESS_TAG_MASK	(~0ULL << 58)
/* The kernel's MAX_URETPROBE_DEPTH: no return instance past it. */
#define SDS_SESS_MAX_DEPTH	64
_Static_assert(SDS_SPLIT_DEPTH == SDS_SESS_MAX_DEPTH,
	       "a split slot per return instance (sds_split.bpf.h)");

/* This loader's tag in bits 58-63 (set at load, never 0). */
const volatile __u64 session_tag = 0;

_Static_assert(SDS_MAX_POINTS <= SDS_SESS_PT_MASK + 1,
	       "a point id must fit the session cookie");

/*
 * The kernel's structures are read by plain loads through BTF pointers
 * (the verifier makes them fault-safe): no helper call per field.
 */

/* The point of return instance @ri if its first consumer is ours, else -1. */
static __always_inline int session_point_of(struct return_instance *ri)
{
	__u64 ck = ri->consumer.cookie;

	if ((ck & SDS_SESS_TAG_MASK) != session_tag)
		return -1;
	return (ck >> SDS_SESS_PT_SHIFT) & SDS_SESS_PT_MASK;
}

/* Return instance @ri will never see its return handler: give it back. */
static __always_inline void session_drop(struct return_instance *ri)
{
	int point = session_point_of(ri);

	if (point >= 0) {
		frame_drop(point);
		/* Ours are only ever dropped on their own thread (reap, exit). */
		sds_stuck_drop(stuck_tid(), point, ri->consumer.cookie);
	}
}

/*
 * A call enters at stack pointer @sp on a thread whose newest return
 * instances are @ri...: those at or below @sp were left by longjmp and
 * the kernel frees them right after these handlers (its
 * cleanup_return_instances).  At exactly @sp the one instance that lives
 * on is a tail call's caller, whose return address at [sp] the kernel
 * already replaced by its trampoline.
 */
static __always_inline void session_reap(struct task_struct *t,
					 struct return_instance *ri, __u64 sp)
{
	__u64 tramp = 0, ret = 0;
	__u32 i, depth = t->utask ? t->utask->depth : 0;

	/* The kernel frees every dead one: at most its depth limit. */
	for (i = 0; i < SDS_SESS_MAX_DEPTH; i++) {
		__u64 stack;

		if (!ri)
			break;
		stack = ri->stack;
		if (stack > sp)
			break;
		if (stack == sp) {
			tramp = t->mm->uprobes_state.xol_area->vaddr;
			bpf_probe_read_user(&ret, sizeof(ret), (void *)sp);
			if (ret == tramp)
				break;
		}
		session_drop(ri);
		/* The i-th newest instance: depth - 1 - i when it entered. */
		sds_split_sess_forget(depth - 1 - i, ri->consumer.cookie);
		ri = ri->next;
	}
}

/* The entry: count, reap, keep the time; 1 tells the kernel: no return. */
static __always_inline int session_enter(struct pt_regs *ctx, __u32 point,
					 __u64 ts, __u64 *ck)
{
	/* Plain loads through BTF pointers: no helper call on the hot path. */
	struct task_struct *t = bpf_get_current_task_btf();
	struct uprobe_task *ut = t->utask;
	struct sds_gauge *g;
	struct sds_slot *s;

	/* Before the visit: a tick that counted it sees the crossing too. */
	fn_marks_enter(point, ts);
	s = slot_get(point, sec_of(ts));
	if (s)
		ADD(&s->visits, 1);
	g = bpf_map_lookup_elem(&gauges, &point);
	if (!g)
		return 1;
	/* No return instance on the thread (the common case): depth 0. */
	if (ut && ut->return_instances) {
		/*
		 * Visited, but the kernel keeps no return for it, and so frees
		 * no dead instance either: they stay the thread's (until its
		 * exit, sds_thread_exit), and giving them back here would give
		 * them back again at every later entry.
		 */
		if (ut->depth >= SDS_SESS_MAX_DEPTH) {
			ADD(&g->unpaired, 1);
			return 1;
		}
		session_reap(t, ut->return_instances, PT_REGS_SP(ctx));
	}
	ADD(&g->entered, 1);
	stuck_enter(point, ts);
	*ck = session_tag | ((__u64)point << SDS_SESS_PT_SHIFT) |
	      (ts & SDS_SESS_TS_MASK);
	split_sess_enter(ts, *ck);
	return 0;
}

/*
 * Every function point on the session path: the link's cookie is the
 * point id.  The return handler has the call's own session cookie,
 * whatever the recursion, and reads the point from it: one helper call
 * fewer than asking the link again.
 */
SEC("kprobe")
int sds_session(struct pt_regs *ctx)
{
	__u64 *ck, ts, lat;
	__u32 point;

	ck = bpf_session_cookie();
	if (!ck)
		return 1;
	ts = point_clock();
	if (!bpf_session_is_return()) {
		point = bpf_get_attach_cookie(ctx);
		if (point >= SDS_MAX_POINTS)
			return 1;
		return session_enter(ctx, point, ts, ck);
	}
	point = (*ck >> SDS_SESS_PT_SHIFT) & SDS_SESS_PT_MASK;
#ifdef SDS_VARIANT_NOCLOCK
	lat = 0;
#else
	lat = (ts - *ck) & SDS_SESS_TS_MASK;
#endif
	call_done(point, ts, lat, true, PT_REGS_RC(ctx));
	split_sess_done(point, ts, lat, *ck);
	return 0;
}

/* A dying thread's live instances of ours: they will never return. */
static __always_inline void session_thread_exit(struct task_struct *task)
{
	struct return_instance *ri = NULL;
	struct uprobe_task *ut;
	__u32 i;

	if (!session_tag)
		return;
	ut = task->utask;
	if (ut)
		ri = ut->return_instances;
	for (i = 0; i < SDS_SESS_MAX_DEPTH; i++) {
		if (!ri)
			break;
		session_drop(ri);
		ri = ri->next;
	}
}

#endif /* SDS_SESSION_BPF_H */
