/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_stuck.bpf.h - the calls in flight of points with a timeout, kept
 * where the loader can read them (bpf/sds.bpf.c includes it once, after
 * point_cfg and before the frames).
 *
 * Frames live in task storage and session cookies in the kernel's return
 * instances: user space can walk neither.  So a call of a point whose
 * timeout is set also takes a slot in its thread's entry of a hash the
 * loader iterates at each tick (loader/kernel/stuck_bpf.c): the entry is
 * created at the thread's first timed call and deleted when the thread
 * exits, so a call pays a lookup and a store at each end, not an insert
 * and a delete.  Only the thread writes its entry (its slot's point
 * first, then its time: a reader that sees the time sees the point); the
 * loader only reads, and counts a slot older than the point's timeout as
 * a timeout of the window while it is at most SDS_WINDOW_S past it.  A
 * slot whose call was given up without being seen (a leaked guard, a
 * longjmp nothing reaped) stops counting then, and is taken again by a
 * later call once older than SDS_STUCK_STALE_NS.  Points without a
 * timeout pay one array lookup and a branch at entry.
 */
#ifndef SDS_STUCK_BPF_H
#define SDS_STUCK_BPF_H

/* The session cookie keeps 48 bits of the entry time: slots match on them. */
#define SDS_STUCK_TS_MASK	((1ULL << 48) - 1)
/* A slot this old is free to take (a call given up without being seen). */
#define SDS_STUCK_STALE_NS	(3600ULL * 1000000000ULL)
/* What a full preallocated hash answers an insert (no errno.h in BPF). */
#define SDS_STUCK_E2BIG		7

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SDS_STUCK_THREADS);
	__type(key, __u32);
	__type(value, struct sds_stuck_thread);
} stuck SEC(".maps");

/* Timed calls not tracked: no entry for their thread, or no free slot. */
__u64 stuck_lost = 0;

/* The current thread's id as the kernel knows it (the key). */
static __always_inline __u32 stuck_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* Slot @i of @t, bounded for the verifier (see frame_at). */
static __always_inline struct sds_stuck_call *stuck_slot(struct sds_stuck_thread *t,
							 __u32 i)
{
	asm volatile("" : "+r"(i));
	return &t->c[i & (SDS_STUCK_CALLS - 1)];
}

/* A call of @point enters at @ts: a slot if the point has a timeout. */
static __always_inline void stuck_enter(__u32 point, __u64 ts)
{
	struct sds_point_cfg *cfg = bpf_map_lookup_elem(&point_cfg, &point);
	struct sds_stuck_thread *t;
	__u32 tid, i;

	if (!cfg || !cfg->timeout_ns)
		return;
	tid = stuck_tid();
	t = bpf_map_lookup_elem(&stuck, &tid);
	if (!t) {
		/* The thread's first timed call: its entry, all slots free. */
		struct sds_stuck_thread zero = {};

		bpf_map_update_elem(&stuck, &tid, &zero, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&stuck, &tid);
		if (!t)
			goto lost;
	}
	for (i = 0; i < SDS_STUCK_CALLS; i++) {
		struct sds_stuck_call *c = stuck_slot(t, i);
		__u64 old = c->ts;

		if (old && ts - old < SDS_STUCK_STALE_NS)
			continue;
		c->point = point;
		/* The point before the time: the loader reads the time first. */
		asm volatile("" ::: "memory");
		c->ts = ts;
		return;
	}
lost:
	__sync_fetch_and_add(&stuck_lost, 1);
}

/*
 * The call of @point that thread @tid entered at @ts (its low 48 bits are
 * enough) is over: its slot is free again.
 */
static __always_inline void stuck_end(__u32 tid, __u32 point, __u64 ts)
{
	struct sds_stuck_thread *t = bpf_map_lookup_elem(&stuck, &tid);
	__u32 i;

	if (!t)
		return;
	for (i = 0; i < SDS_STUCK_CALLS; i++) {
		struct sds_stuck_call *c = stuck_slot(t, i);

		if (c->point == point && c->ts &&
		    !((c->ts ^ ts) & SDS_STUCK_TS_MASK)) {
			c->ts = 0;
			return;
		}
	}
}

/*
 * A call given up (longjmp, an eviction): a global function, verified
 * once, since it is called from the loops that give frames up (inlined
 * there it multiplies the verifier's states).
 */
__noinline int sds_stuck_drop(__u32 tid, __u32 point, __u64 ts)
{
	stuck_end(tid, point, ts);
	return 0;
}

/* Thread @tid exits: its entry goes, whatever calls it still held. */
static __always_inline void stuck_thread_exit(__u32 tid)
{
	bpf_map_delete_elem(&stuck, &tid);
}

#endif /* SDS_STUCK_BPF_H */
