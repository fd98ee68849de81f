/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_stuck.bpf.h - the calls in flight of points with a timeout, kept
 * where the loader can read them (bpf/sds.bpf.c includes it once, after
 * point_cfg and before the frames).
 *
 * Frames live in task storage and session cookies in the kernel's return
 * instances: user space can walk neither.  So a call of a point whose
 * timeout is set also gets an entry in a hash the loader iterates at each
 * tick (loader/kernel/stuck.c): the key is the thread, the point and the
 * entry time, which every end and every drop can rebuild (the frame's
 * time, or the cookie's 48 bits), and the value the full entry time.  The
 * loader counts an entry older than the point's timeout as a timeout of
 * the window while it lasts, and deletes entries past the window (a call
 * left by longjmp whose frame nothing gave back, a table full of them), so
 * the table is bounded by SDS_STUCK_MAX and by time.  Points without a
 * timeout pay one array lookup and a branch at entry.
 */
#ifndef SDS_STUCK_BPF_H
#define SDS_STUCK_BPF_H

#define SDS_STUCK_TS_MASK	((1ULL << 48) - 1)
/* What a full preallocated hash answers an insert (no errno.h in BPF). */
#define SDS_STUCK_E2BIG		7

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SDS_STUCK_MAX);
	__type(key, struct sds_stuck_key);
	__type(value, __u64);
} stuck SEC(".maps");

/* Calls not tracked because the table was full (the loader reads it). */
__u64 stuck_lost = 0;

/* The current thread's id as the kernel knows it (the key's tid). */
static __always_inline __u32 stuck_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* A call of @point enters at @ts: tracked if the point has a timeout. */
static __always_inline void stuck_enter(__u32 point, __u64 ts)
{
	struct sds_point_cfg *cfg = bpf_map_lookup_elem(&point_cfg, &point);
	struct sds_stuck_key k;

	if (!cfg || !cfg->timeout_ns)
		return;
	k.tid = stuck_tid();
	k.point = point;
	k.ts = ts & SDS_STUCK_TS_MASK;
	if (bpf_map_update_elem(&stuck, &k, &ts, BPF_NOEXIST) == -SDS_STUCK_E2BIG)
		__sync_fetch_and_add(&stuck_lost, 1);
}

/* The call of @point that thread @tid entered at @ts is over. */
static __always_inline void stuck_end(__u32 tid, __u32 point, __u64 ts)
{
	struct sds_stuck_key k = {
		.tid = tid,
		.point = point,
		.ts = ts & SDS_STUCK_TS_MASK,
	};

	bpf_map_delete_elem(&stuck, &k);
}

/*
 * A call given up (longjmp, a thread's exit, an eviction): a global
 * function, verified once, since it is called from the loops that give
 * frames up (inlined there it multiplies the verifier's states).  The
 * entry exists only if the point had a timeout at the call's entry.
 */
__noinline int sds_stuck_drop(__u32 tid, __u32 point, __u64 ts)
{
	stuck_end(tid, point, ts);
	return 0;
}

#endif /* SDS_STUCK_BPF_H */
