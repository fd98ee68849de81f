/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_frames.bpf.h - the per-thread frame stack of the pair path and of
 * guard points (bpf/sds.bpf.c includes it once, after the maps).
 *
 * A call's frame (its stack pointer, entry time, point) is pushed at entry
 * and found again at its end; frames below the stack pointer of a later
 * entry were left by longjmp or by a return the kernel did not report and
 * are given up, so the in-flight gauge cannot drift.  The session path
 * (sds_session.bpf.h) keeps no frames: it shares frame_drop() only.
 * A frame given up also leaves the stuck table (sds_stuck.bpf.h).
 */
#ifndef SDS_FRAMES_BPF_H
#define SDS_FRAMES_BPF_H

/*
 * Frame @i of @fr, bounded for the verifier.  The empty asm hides what the
 * compiler knows of @i, so the mask is really applied and the address is
 * computed from it (else clang strength-reduces the loop into a pointer
 * increment the verifier cannot bound).
 */
static __always_inline struct sds_frame *frame_at(struct sds_frames *fr,
						  __u32 i)
{
	asm volatile("" : "+r"(i));
	return &fr->f[i & (SDS_MAX_DEPTH - 1)];
}

/* A frame given up: its call will never be seen returning. */
static __always_inline void frame_drop(__u32 point)
{
	struct sds_gauge *g;

	g = bpf_map_lookup_elem(&gauges, &point);
	if (!g)
		return;
	ADD(&g->dropped, 1);
}

/*
 * The call of a frame, on the current thread, given up: the gauge, its
 * entry in the stuck table if it has one (sds_stuck.bpf.h), its split
 * (sds_split.bpf.h).  Every caller runs on the frames' own thread: an
 * exit, an entry, a return.  A global function, verified once: the loops
 * that give frames up call it at each of their (unrolled) iterations, and
 * inlined there its branches multiply the verifier's states past its
 * limit.
 */
__noinline int sds_frame_given_up(__u32 point, __u64 ts, __u32 split,
				  __u32 permit)
{
	frame_drop(point);
	/* Its permit of the point's semaphore (sds_fnlimit.bpf.h) goes too. */
	if (permit && point < SDS_MAX_POINTS)
		fn_permit_give(point);
	sds_stuck_drop(stuck_tid(), point, ts);
	if (split)
		sds_split_forget();
	return 0;
}

static __always_inline void frame_given_up(const struct sds_frame *f)
{
	/* A piece's continuation was never counted: the call below is. */
	if (f->cont)
		return;
	sds_frame_given_up(f->point, f->ts, f->split, f->permit);
}

/* Give up every frame of @fr: calls that will never be seen ending. */
static __always_inline void frames_drop_all(struct sds_frames *fr)
{
	__u32 i, d = fr->depth;

	for (i = 0; i < SDS_MAX_DEPTH; i++) {
		if (i >= d)
			break;
		frame_given_up(frame_at(fr, i));
	}
	fr->depth = 0;
}

/*
 * The frames of @fr as the current thread @task may push onto: those of
 * the program it ran before an execve() (from inside a call: that call
 * never returns, and nothing ends it in the new program) are given up.
 * The kernel's exec counter, not the mm's address: a freed mm's address
 * is soon another's; the low half of an exec count comes back only
 * after 2^32 execs of the thread.
 */
static __always_inline void frames_this_exec(struct sds_frames *fr,
					     struct task_struct *task)
{
	__u32 exec_id = (__u32)task->self_exec_id;

	if (fr->exec_id == exec_id)
		return;
	frames_drop_all(fr);
	fr->exec_id = exec_id;
}

/*
 * Frame @f is below the stack pointer of a call entering or leaving at
 * @ts: its call is over without being seen to end.  A pair's was left by
 * longjmp or past the kernel's return-probe depth; a call whose every ret
 * is probed left by unwinding, an exception (or longjmp, which C++ and
 * Rust code rarely uses): counted as one.
 */
__noinline int sds_count_exception(__u32 point, __u64 ts)
{
	struct sds_slot *s;

	/*
	 * A global function, verified once on its own: inlined into the
	 * loops that give frames up it multiplies the verifier's states
	 * past its limit.
	 */
	if (point >= SDS_MAX_POINTS)
		return 0;
	s = slot_get(point, sec_of(ts));
	if (s)
		ADD(&s->exceptions, 1);
	/* An exception as the kernel counts it: the exact trips' too. */
	fn_marks_exception(point);
	return 0;
}

static __always_inline void frame_unwound(const struct sds_frame *f, __u64 ts)
{
	frame_given_up(f);
	if (f->exits)
		sds_count_exception(f->point, ts);
}

/*
 * Remove frame @idx of the @d frames of @fr, closing the gap (the frames
 * above it are still live); returns the new depth.
 */
static __always_inline __u32 frame_remove(struct sds_frames *fr, __u32 d,
					  __u32 idx)
{
	__u32 i;

	for (i = idx; i < SDS_MAX_DEPTH; i++) {
		if (i + 1 >= d)
			break;
		*frame_at(fr, i) = *frame_at(fr, i + 1);
	}
	fr->depth = d - 1;
	return d - 1;
}

/*
 * The oldest of the @d frames of @fr that is a guard frame of @point (of
 * any point if @point is SDS_MAX_POINTS), or SDS_MAX_DEPTH if none.
 */
static __always_inline __u32 guard_oldest(struct sds_frames *fr, __u32 d,
					  __u32 point)
{
	__u32 i;

	for (i = 0; i < SDS_MAX_DEPTH; i++) {
		struct sds_frame *f;

		if (i >= d)
			break;
		f = frame_at(fr, i);
		if (f->guard && (point >= SDS_MAX_POINTS || f->point == point))
			return i;
	}
	return SDS_MAX_DEPTH;
}

/*
 * Give up guard frame @idx of the @d frames of @fr (its call leaked: a
 * missed finally, an exception, a longjmp), returning the new depth.
 * libsds does the same to its own stack when it is full, so the two stay
 * in step and the in-flight gauge counts the call as dropped.
 */
static __always_inline __u32 guard_evict(struct sds_frames *fr, __u32 d,
					 __u32 idx)
{
	frame_given_up(frame_at(fr, idx));
	return frame_remove(fr, d, idx);
}

/*
 * Drop the frames on top of @fr that cannot be live when a call enters
 * with stack pointer @sp, and return the new depth.  A live caller's frame
 * is at a higher address; one at a lower address was left by longjmp or
 * by a return the kernel did not report.  At the same address only a tail
 * call (a different function jumped to with the caller's frame) can be
 * live: the same point there means its earlier call was left by longjmp.
 */
static __always_inline __u32 frames_unwind(struct sds_frames *fr, __u64 sp,
					   __u32 point, __u64 ts)
{
	__u32 d = fr->depth, i;

	for (i = 0; i < SDS_MAX_DEPTH; i++) {
		struct sds_frame *top;

		if (d == 0 || d > SDS_MAX_DEPTH)
			break;
		top = frame_at(fr, d - 1);
		/* A guard frame is ended by its own exit, never unwound. */
		if (top->guard || top->sp > sp || (top->sp == sp && top->point != point))
			break;
		frame_unwound(top, ts);
		d--;
	}
	fr->depth = d;
	return d;
}

/*
 * A .part.N piece of @point entered with stack pointer @sp
 * (SDS_COOKIE_PART): does it continue the call the thread is in?  Yes
 * when the innermost live frame (at or above @sp: a lower one was left)
 * is @point's, entered at another of its sites (not a piece's, not a
 * continuation): the function's head calling or jumping to its rest.  A
 * piece entered from inside a piece (recursion, the head inlined) is a
 * call of its own, and so is one under another point's call.
 */
static __always_inline bool frames_continue(struct sds_frames *fr, __u64 sp,
					    __u32 point)
{
	__u32 d = fr->depth, i;

	for (i = 0; i < SDS_MAX_DEPTH; i++) {
		struct sds_frame *f;

		if (i >= d || d > SDS_MAX_DEPTH)
			break;
		f = frame_at(fr, d - 1 - i);
		if (f->guard)
			return false;
		if (f->sp < sp)
			continue;
		return f->point == point && !f->part && !f->cont;
	}
	return false;
}

#endif /* SDS_FRAMES_BPF_H */
