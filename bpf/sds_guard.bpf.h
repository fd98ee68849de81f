/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_guard.bpf.h - the programs of libsds's guard points, part of
 * sds.bpf.c (included there, after the maps, the slots and the frames
 * they use; not a header for anything else).
 */
#ifndef SDS_GUARD_BPF_H
#define SDS_GUARD_BPF_H

/*
 * Guard points: libsds calls sds__site_<event>(id, key) at each event of a
 * guarded call.  The key tells this loader's processes from those of other
 * loaders sharing the same libsds.so.
 */
const volatile __u64 loader_key = 0;

/*
 * The point of a guard site's call at @ctx; *@keyed when libsds passed a
 * key with it (SDS_SITE_KEYED: its third and fourth arguments).
 */
static __always_inline int guard_point(struct pt_regs *ctx, __u32 *point,
				       bool *keyed)
{
	__u32 id;

	if (PT_REGS_PARM2(ctx) != loader_key)
		return -1;
	id = (__u32)PT_REGS_PARM1(ctx);
	*keyed = id & SDS_SITE_KEYED;
	*point = id & ~SDS_SITE_KEYED;
	return *point < SDS_MAX_POINTS ? 0 : -1;
}

SEC("uprobe")
int sds_guard_enter(struct pt_regs *ctx)
{
	__u64 ts, h = 0;
	__u32 point;
	bool keyed;

	if (guard_point(ctx, &point, &keyed))
		return 0;
	ts = bpf_ktime_get_ns();
	if (keyed)
		h = sds_key_guard(ctx, point, ts, 0);
	call_enter(point, ts, 0, SDS_FRAME_GUARD, h, 0, 0);
	return 0;
}

SEC("uprobe")
int sds_guard_downgrade(struct pt_regs *ctx)
{
	struct sds_slot *s;
	__u32 point;
	bool keyed;
	__u64 ts;

	if (guard_point(ctx, &point, &keyed))
		return 0;
	ts = bpf_ktime_get_ns();
	if (keyed)
		sds_key_guard(ctx, point, ts, 1);
	/* A downgraded call counts a visit and a downgrade, nothing else. */
	s = slot_get(point, sec_of(ts));
	if (!s)
		return 0;
	ADD(&s->visits, 1);
	ADD(&s->downgrades, 1);
	return 0;
}

SEC("uprobe")
int sds_guard_exception(struct pt_regs *ctx)
{
	struct sds_slot *s;
	__u32 point;
	bool keyed;
	__u64 ts;

	if (guard_point(ctx, &point, &keyed))
		return 0;
	ts = bpf_ktime_get_ns();
	if (keyed)
		sds_key_guard_exception(ctx, point, ts);
	s = slot_get(point, sec_of(ts));
	if (s)
		ADD(&s->exceptions, 1);
	return 0;
}

SEC("uprobe")
int sds_guard_exit(struct pt_regs *ctx)
{
	struct sds_frames *fr;
	struct sds_frame f;
	__u32 id, point, d, i, found = SDS_MAX_DEPTH;
	__u64 ts, lat;

	if (PT_REGS_PARM2(ctx) != loader_key)
		return 0;
	id = (__u32)PT_REGS_PARM1(ctx);
	/* A keyed call's key is in its frame: the exit need not read it. */
	point = id & ~(SDS_SITE_EVICT | SDS_SITE_KEYED);
	if (point >= SDS_MAX_POINTS)
		return 0;
	fr = frames_current(&d);
	if (!fr)
		return 0;
	if (id & SDS_SITE_EVICT) {
		/* libsds evicted its oldest frame, a call of @point. */
		found = guard_oldest(fr, d, point);
		if (found < SDS_MAX_DEPTH)
			guard_evict(fr, d, found);
		return 0;
	}
	ts = bpf_ktime_get_ns();
	/* The innermost guard frame of this point: SDS allows any order. */
	for (i = 0; i < SDS_MAX_DEPTH; i++) {
		struct sds_frame *f;

		if (i >= d)
			break;
		f = frame_at(fr, d - 1 - i);
		if (f->guard && f->point == point) {
			found = d - 1 - i;
			break;
		}
	}
	if (found >= SDS_MAX_DEPTH)
		return 0;
	f = *frame_at(fr, found);
	lat = ts - f.ts;
	frame_remove(fr, d, found);
	call_done(point, ts, lat, false, 0);
	if (f.key_hash)
		sds_key_done(point, f.key_hash, ts, lat, 0);
	split_frame_done(&f, ts, lat);
	return 0;
}

#endif /* SDS_GUARD_BPF_H */
