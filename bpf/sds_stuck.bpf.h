/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_stuck.bpf.h - the calls in flight of points with a timeout, kept
 * where the loader can read them (bpf/sds.bpf.c includes it once, after
 * point_cfg and before the frames).
 *
 * Frames live in task storage and session cookies in the kernel's return
 * instances: user space can walk neither.  So a call of a point whose
 * timeout is set also takes a slot in its thread's entry of an mmapable
 * array the loader reads with plain loads at each tick
 * (loader/kernel/stuck_bpf.c).  The entry is the thread's from its first
 * timed call (claimed by a compare-and-swap at one of SDS_STUCK_PROBES
 * places its tid hashes to) until it exits, so a call pays two inlined
 * array lookups and a few stores, no helper but the tid's and no hash
 * map's lock.  Only the thread writes its slots (the point first, then
 * the time: a reader that sees the time sees the point); the loader
 * counts a slot older than the point's timeout as a timeout of the window
 * while it is at most SDS_WINDOW_S past it.  A slot whose call was given
 * up without being seen (a leaked guard, a longjmp nothing reaped) stops
 * counting then, and is taken again by a later call once older than
 * SDS_STUCK_STALE_NS.  Points without a timeout pay one array lookup and
 * a branch at entry.
 */
#ifndef SDS_STUCK_BPF_H
#define SDS_STUCK_BPF_H

/* The session cookie keeps 48 bits of the entry time: slots match on them. */
#define SDS_STUCK_TS_MASK	((1ULL << 48) - 1)
/* A slot this old is free to take (a call given up without being seen). */
#define SDS_STUCK_STALE_NS	(3600ULL * 1000000000ULL)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SDS_STUCK_THREADS);
	__type(key, __u32);
	__type(value, struct sds_stuck_thread);
} stuck SEC(".maps");

/* Timed calls not tracked: no entry for their thread, or no free slot. */
__u64 stuck_lost = 0;

/* The current thread's id as the kernel knows it (the owner). */
static __always_inline __u32 stuck_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* The @i-th place thread @tid's entry may be (Fibonacci hashing). */
static __always_inline struct sds_stuck_thread *stuck_place(__u32 tid, __u32 i)
{
	__u32 k = ((tid * 2654435761u) >> (32 - SDS_STUCK_THREADS_SHIFT)) + i;

	k &= SDS_STUCK_THREADS - 1;
	return bpf_map_lookup_elem(&stuck, &k);
}

/* Thread @tid's entry; with @claim, a free place taken if it has none. */
static __always_inline struct sds_stuck_thread *stuck_thread(__u32 tid,
							     bool claim)
{
	struct sds_stuck_thread *t;
	__u32 i;

	for (i = 0; i < SDS_STUCK_PROBES; i++) {
		t = stuck_place(tid, i);
		if (t && t->tid == tid)
			return t;
	}
	if (!claim || !tid)
		return NULL;
	for (i = 0; i < SDS_STUCK_PROBES; i++) {
		t = stuck_place(tid, i);
		if (t && !t->tid && !__sync_val_compare_and_swap(&t->tid, 0, tid))
			return t;
	}
	return NULL;
}

/*
 * Slot @i (< SDS_STUCK_CALLS) of @t, bounded for the verifier: the empty
 * asm hides what the compiler knows of @i, so the bound is really checked
 * (see frame_at).
 */
static __always_inline struct sds_stuck_call *stuck_slot(struct sds_stuck_thread *t,
							 __u32 i)
{
	asm volatile("" : "+r"(i));
	if (i >= SDS_STUCK_CALLS)
		i = 0;
	return &t->c[i];
}

/* A call of @point enters at @ts: a slot if the point has a timeout. */
static __always_inline void stuck_enter(__u32 point, __u64 ts)
{
	struct sds_point_cfg *cfg = bpf_map_lookup_elem(&point_cfg, &point);
	struct sds_stuck_thread *t;
	__u32 i;

	if (!cfg || !cfg->timeout_ns)
		return;
	t = stuck_thread(stuck_tid(), true);
	if (!t)
		goto lost;
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
	struct sds_stuck_thread *t = stuck_thread(tid, false);
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

/* Thread @tid exits: its slots are freed, then its entry. */
static __always_inline void stuck_thread_exit(__u32 tid)
{
	struct sds_stuck_thread *t = stuck_thread(tid, false);
	__u32 i;

	if (!t)
		return;
	for (i = 0; i < SDS_STUCK_CALLS; i++)
		stuck_slot(t, i)->ts = 0;
	asm volatile("" ::: "memory");
	t->tid = 0;
}

#endif /* SDS_STUCK_BPF_H */
