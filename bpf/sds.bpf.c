// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * sds.bpf.c - counting for function points and guard points.
 *
 * The same few programs serve every point of a loader; the point id is
 * the BPF cookie (for guard points, libsds's first argument).  Where the
 * kernel has uprobe sessions a function point is one program on one link,
 * sds_session (sds_session.bpf.h, docs/PROBES.md); else, and for points
 * with :failfast=, its entry (sds_enter) pairs with a uretprobe (sds_leave) or, where
 * TARGET can unwind, with a probe on each of its rets (sds_enter_exits,
 * sds_exit; calls unwound are counted at the catch, sds_catch); Go and
 * functions whose exits cannot all be found count entries only
 * (sds_enter_only).  Guard points: sds_guard.bpf.h.  Per point they keep
 * a per-CPU ring of one-second slots, a per-CPU log2 latency histogram and
 * an in-flight gauge.  Entry and end are paired through a small
 * per-thread stack in task local storage: no hash map on the hot path,
 * and recursion pairs by the stack pointer.
 *
 * Every nanosecond here is paid on every call of a production function, so
 * the common path is: one cookie read, one clock read, two array lookups,
 * one task-storage lookup and a handful of adds; a point with a timeout
 * also keeps each call in its thread's slot of the stuck table
 * (sds_stuck.bpf.h: the tid, two inlined array lookups, a few stores).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "sds_types.h"
#include "sds_flags.h"
#include "sds_common.bpf.h"

#define NSEC_PER_SEC	1000000000ULL


char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Bench-only switches, for the cost breakdown of `make bench`
 * (tools/bench/probe/variants/variants.mk builds a loader per variant).  A
 * normal build defines none of them: its instructions are the same as
 * without these lines.  They are for a function point's entry and end
 * (sds_enter or sds_enter_exits, sds_leave or sds_exit); NOFRAMES takes
 * the frame stack from guard points too, so a variant serves the
 * benchmark and nothing else:
 *
 *   SDS_VARIANT_NOCLOCK   the two clock reads are the constant 0: what
 *                         measuring latency costs.  Every latency is 0 and
 *                         every call lands in one second long past, so
 *                         only the gauges (calls completed) stay true.
 *   SDS_VARIANT_NOFRAMES  no per-thread frame stack (task storage): the
 *                         entry counts, the end counts a completed call
 *                         of latency 0.
 */
#ifdef SDS_VARIANT_NOCLOCK
#define point_clock()	0ULL
#else
#define point_clock()	bpf_ktime_get_ns()
#endif

/*
 * Point ids the maps hold (the loader sizes them at load, probes.c).  The
 * ring is second-major: slot (sec % SDS_RING_SLOTS) * point_cap + point,
 * so one second of every point is one run of keys, and a tick reads only
 * the seconds that can still change (loader/kernel/counters.c).
 */
const volatile __u32 point_cap = SDS_MAX_POINTS;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SDS_MAX_POINTS * SDS_RING_SLOTS);
	__type(key, __u32);
	__type(value, struct sds_slot);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SDS_MAX_POINTS);
	__type(key, __u32);
	__type(value, struct sds_gauge);
} gauges SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SDS_MAX_POINTS);
	__type(key, __u32);
	__type(value, struct sds_point_cfg);
} point_cfg SEC(".maps");

/*
 * The guards' cells (bpf/sds_flags.h): the loader makes the map it hands
 * the guards this one (loader/tick/exact_run.c), so that a call slower than
 * its point's timeout spends one of the exact trips' slow_spent as it
 * ends, where the kernel counts its timeout.  Written only there.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, SDS_CELLS_ELEMS);
	__type(key, __u32);
	__type(value, struct sds_cell);
} cells SEC(".maps");

/* Exact trips of function points: sds_fnmarks.bpf.h. */
#include "sds_fnmarks.bpf.h"
/* The semaphore and bucket of :failfast= points: sds_fnlimit.bpf.h. */
#include "sds_fnlimit.bpf.h"

/* Per CPU: the second last computed, so the hot path divides once a second. */
struct sds_sec_cache {
	__u64 start_ns;		/* the second's first ns (offset clock) */
	__u64 sec;		/* start_ns / 1e9 */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sds_sec_cache);
} sec_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sds_frames);
} frames SEC(".maps");

/*
 * @ts / 1e9.  A 64-bit division costs tens of cycles on every call; the
 * per-CPU cache of the current second turns it into a compare.
 */
/* Added to the clock so the ring's seconds begin with wall-clock ones. */
const volatile __u64 sec_offset_ns = 0;

static __always_inline __u64 sec_of(__u64 ts)
{
	struct sds_sec_cache *c;
	__u32 zero = 0;
	__u64 sec;

	ts += sec_offset_ns;
	c = bpf_map_lookup_elem(&sec_cache, &zero);
	if (c && ts >= c->start_ns && ts - c->start_ns < NSEC_PER_SEC)
		return c->sec;
	sec = ts / NSEC_PER_SEC;
	if (c) {
		c->sec = sec;
		c->start_ns = sec * NSEC_PER_SEC;
	}
	return sec;
}

/*
 * The slot of @point for second @sec, claimed for that second if it still
 * holds an older one.  The claim is a compare-and-swap on the stamp, so of
 * two writers racing into a new second only one zeroes the counters.
 */
static __always_inline struct sds_slot *slot_get(__u32 point, __u64 sec)
{
	__u32 idx = (sec & (SDS_RING_SLOTS - 1)) * point_cap + point;
	struct sds_slot *s;
	__u64 old;

	/* Past the cap the index would be another second's slot. */
	if (point >= point_cap)
		return NULL;

	s = bpf_map_lookup_elem(&slots, &idx);
	if (!s)
		return NULL;
	old = s->sec;
	if (old == sec)
		return s;
	if (!atomics)
		s->sec = sec;
	else if (__sync_val_compare_and_swap(&s->sec, old, sec) != old)
		return s;
	{
		s->visits = 0;
		s->exceptions = 0;
		s->timeouts = 0;
		s->downgrades = 0;
		s->latency_sum = 0;
	}
	return s;
}

static __always_inline bool is_exception(const struct sds_point_cfg *cfg,
					 __u64 rax)
{
	__s64 ret;

	if (cfg->err_mode == SDS_ERR_NONE)
		return false;
	/* An int return sets only eax: the upper half is not the sign. */
	ret = cfg->ret64 ? (__s64)rax : (__s64)(__s32)rax;
	switch (cfg->err_mode) {
	case SDS_ERR_NEG:
		return ret < 0;
	case SDS_ERR_ZERO:
		return ret == 0;
	case SDS_ERR_NONZERO:
		return ret != 0;
	}
	return false;
}

/* Calls in flight of points with a timeout: sds_stuck.bpf.h. */
#include "sds_stuck.bpf.h"
/* Where calls' time went, kept by the frames and the session: sds_split.bpf.h. */
#include "sds_split.bpf.h"

/* The frame stack: sds_frames.bpf.h. */
#include "sds_frames.bpf.h"
/* Hot keys, counted per key of a keyed point: sds_keys.bpf.h. */
#include "sds_keys.bpf.h"

/*
 * Count the entry of a call of @point at @ts and push its frame.  Function
 * points pair by the stack pointer @sp; guard frames (@guard) pair by the
 * point alone, since their enter and exit are two separate calls.  A
 * guard call that finds the stack full evicts the oldest guard frame:
 * only leaked calls fill it, and the thread must stay counted.
 */
static __always_inline void call_enter(__u32 point, __u64 ts, __u64 sp,
				       enum sds_frame_kind kind, __u64 key_hash,
				       __u8 key_blocked, __u8 part)
{
	struct task_struct *task;
	struct sds_frames *fr;
	struct sds_slot *s;
	struct sds_gauge *g;
	__u32 d, idx;
	__u8 refused = SDS_FNR_NONE, permit = 0;
	bool over = false;

	/* Before the visit: a tick that counted it sees the crossing too. */
	if (kind != SDS_FRAME_GUARD)
		over = fn_marks_enter(point, ts);
	s = slot_get(point, sec_of(ts));
	if (s)
		ADD(&s->visits, 1);

	g = bpf_map_lookup_elem(&gauges, &point);
	if (!g)
		return;
#ifdef SDS_VARIANT_NOFRAMES
	ADD(&g->entered, 1);
	return;
#endif
	task = bpf_get_current_task_btf();
	fr = bpf_task_storage_get(&frames, task, 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!fr)
		goto drop;
	frames_this_exec(fr, task);
	if (kind == SDS_FRAME_GUARD) {
		d = fr->depth;
		if (d >= SDS_MAX_DEPTH) {
			idx = guard_oldest(fr, SDS_MAX_DEPTH, SDS_MAX_POINTS);
			if (idx >= SDS_MAX_DEPTH)
				goto drop;	/* all function frames */
			d = guard_evict(fr, SDS_MAX_DEPTH, idx);
		}
	} else {
		d = frames_unwind(fr, sp, point, ts);
	}
	if (d >= SDS_MAX_DEPTH)
		goto drop;
	/*
	 * A function point's limits, once its frame has a place: a permit is
	 * given back with the frame, however it goes.  Past a mark the call
	 * fails fast already and spends neither token nor permit.
	 */
	if (over)
		refused = SDS_FNR_BUDGET;
	else if (kind != SDS_FRAME_GUARD)
		refused = fn_limit_enter(point, ts, &permit);
	fr->f[d].sp = sp;
	fr->f[d].ts = ts;
	fr->f[d].point = point;
	fr->f[d].guard = kind == SDS_FRAME_GUARD;
	fr->f[d].exits = kind == SDS_FRAME_EXITS;
	fr->f[d].ff_probe = 0;
	fr->f[d].key_hash = key_hash;
	fr->f[d].key_blocked = key_blocked;
	fr->f[d].refused = refused;
	fr->f[d].permit = permit;
	fr->f[d].part = part;
	fr->f[d].cont = 0;
	split_frame_enter(frame_at(fr, d), ts);
	fr->depth = d + 1;
	ADD(&g->entered, 1);
	stuck_enter(point, ts);
	return;
drop:
	/* Counted as a visit, but its end cannot be paired. */
	ADD(&g->unpaired, 1);
}

/*
 * A call of @point that entered @lat ns before @ts has ended: the gauge,
 * the histogram and the slot's latency and timeouts.  Returns whether its
 * return was an exception, for its key (sds_keys.bpf.h).
 */
static __always_inline bool call_done(__u32 point, __u64 ts, __u64 lat,
				      bool has_ret, __u64 rax)
{
	struct sds_point_cfg *cfg;
	struct sds_gauge *g;
	struct sds_slot *s;
	__u32 b;

	g = bpf_map_lookup_elem(&gauges, &point);
	if (!g)
		return false;
	b = log2_u64(lat);
	if (b < SDS_HIST_BUCKETS)
		ADD(&g->hist[b], 1);

	s = slot_get(point, sec_of(ts));
	if (!s)
		return false;
	ADD(&s->latency_sum, lat);
	cfg = bpf_map_lookup_elem(&point_cfg, &point);
	if (!cfg)
		return false;
	/* It entered at ts - lat (a session's: the cookie's 48 bits). */
	if (cfg->timeout_ns)
		stuck_end(stuck_tid(), point, ts - lat);
	if (cfg->timeout_ns && lat > cfg->timeout_ns) {
		struct sds_cell *c = bpf_map_lookup_elem(&cells, &point);

		ADD(&s->timeouts, 1);
		/* Shared with every guard of the app: always atomic. */
		if (c)
			__sync_fetch_and_add(&c->slow_spent, 1);
	}
	if (has_ret && is_exception(cfg, rax)) {
		ADD(&s->exceptions, 1);
		fn_marks_exception(point);
		return true;
	}
	return false;
}

/*
 * The current thread's frames and their depth, for an exit: NULL when the
 * thread never entered a counted call (nothing to pair).
 */
static __always_inline struct sds_frames *frames_current(__u32 *depth)
{
	struct sds_frames *fr;

	fr = bpf_task_storage_get(&frames, bpf_get_current_task_btf(), 0, 0);
	if (!fr || fr->depth > SDS_MAX_DEPTH)
		return NULL;
	*depth = fr->depth;
	return fr;
}

/*
 * A .part.N piece's entry (SDS_COOKIE_PART) at @sp that continues the
 * call of @point the thread is in (frames_continue()): a frame that
 * counts nothing, so that the piece's end (its uretprobe or exit probe)
 * finds it and ends the call below it when that call jumped here (the
 * same stack pointer), or ends nothing when the head called it.  Returns
 * whether it was one (then nothing more is counted).
 */
static __always_inline bool part_continues(__u32 point, __u64 ts, __u64 sp)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct sds_frames *fr;
	struct sds_frame *f;
	__u32 d;

	fr = bpf_task_storage_get(&frames, task, 0, 0);
	if (!fr || fr->depth > SDS_MAX_DEPTH)
		return false;
	frames_this_exec(fr, task);
	if (!frames_continue(fr, sp, point))
		return false;
	/* Frames left below @sp go; the call at @sp (a tail jump) stays. */
	d = frames_unwind(fr, sp, SDS_MAX_POINTS, ts);
	if (d >= SDS_MAX_DEPTH)
		return true;	/* full: the call's own end still ends it */
	f = frame_at(fr, d);
	__builtin_memset(f, 0, sizeof(*f));
	f->sp = sp;
	f->ts = ts;
	f->point = point;
	f->cont = 1;
	fr->depth = d + 1;
	return true;
}

/* The entry of a function point (the cookie) whose end is seen as @kind. */
static __always_inline int function_enter(struct pt_regs *ctx,
					  enum sds_frame_kind kind)
{
	__u64 ck = bpf_get_attach_cookie(ctx);
	__u32 point = (__u32)ck;
	__u8 part = !!(ck & SDS_COOKIE_PART);
	struct sds_key_cfg *kc;
	__u64 ts, h = 0;
	__u8 blocked = 0;

	if (point >= SDS_MAX_POINTS)
		return 0;
	ts = point_clock();
	if (part && part_continues(point, ts, PT_REGS_SP(ctx)))
		return 0;
	/* An unkeyed point pays this load and branch for hot keys. */
	kc = bpf_map_lookup_elem(&key_cfg, &point);
	if (kc && kc->kind)
		h = sds_key_fn_enter(ctx, point, ts, &blocked);
	call_enter(point, ts, PT_REGS_SP(ctx), kind, h, blocked, part);
	return 0;
}

/* Paired with a uretprobe, sds_leave. */
SEC("uprobe")
int sds_enter(struct pt_regs *ctx)
{
	return function_enter(ctx, SDS_FRAME_PAIR);
}

/* Paired with an sds_exit probe on each of the function's rets. */
SEC("uprobe")
int sds_enter_exits(struct pt_regs *ctx)
{
	return function_enter(ctx, SDS_FRAME_EXITS);
}

/*
 * A function point with no probe on its end: in a Go binary (its runtime
 * walks and moves stacks), or in a TARGET that can unwind where not every
 * exit of the function can be found (loader/target/exits.c; a uretprobe there
 * would turn an exception through it into std::terminate, docs/UNWIND.md).
 * It counts its visits only: no frame, so no latency, no concurrency and
 * no exits.
 */
SEC("uprobe")
int sds_enter_only(struct pt_regs *ctx)
{
	__u64 ck = bpf_get_attach_cookie(ctx);
	__u32 point = (__u32)ck;
	struct sds_key_cfg *kc;
	struct sds_frames *fr;
	struct sds_slot *s;
	__u8 blocked = 0;
	__u64 ts;

	if (point >= SDS_MAX_POINTS)
		return 0;
	/* A piece whose call below it has a frame: that call, going on. */
	if (ck & SDS_COOKIE_PART) {
		fr = bpf_task_storage_get(&frames, bpf_get_current_task_btf(), 0, 0);
		if (fr && fr->depth <= SDS_MAX_DEPTH &&
		    frames_continue(fr, PT_REGS_SP(ctx), point))
			return 0;
	}
	ts = bpf_ktime_get_ns();
	fn_marks_enter(point, ts);
	s = slot_get(point, sec_of(ts));
	if (s)
		ADD(&s->visits, 1);
	/* Keyed: its calls by key (no frame: no latency, no exceptions). */
	kc = bpf_map_lookup_elem(&key_cfg, &point);
	if (kc && kc->kind)
		sds_key_fn_enter(ctx, point, ts, &blocked);
	return 0;
}

/*
 * A call a fail-fast hold let through as its probe (bpf/failfast.bpf.c
 * marked its frame) has ended with @rax: judged by err= as a guard's
 * probe is by sds_exception_sign(), and counted in the point's cell where
 * a guard counts its probes, so the loader ends or renews the hold from
 * the same counts (chain.c).  Slow probes are the kernel's timeouts, as
 * for guards.
 */
static __always_inline void ff_probe_done(__u32 point, __u64 rax)
{
	struct sds_point_cfg *cfg = bpf_map_lookup_elem(&point_cfg, &point);
	struct sds_cell *c = bpf_map_lookup_elem(&cells, &point);

	if (!cfg || !c)
		return;
	/* Shared with every guard of the app: always atomic. */
	if (is_exception(cfg, rax))
		__sync_fetch_and_add(&c->probes_failed, 1);
	else
		__sync_fetch_and_add(&c->probes_ok, 1);
}

/*
 * A call of function point @point ends at stack pointer @sp (where its
 * return address was at entry) with return value @rax.
 */
static __always_inline int call_leave(__u32 point, __u64 sp, __u64 rax)
{
	struct sds_frames *fr;
	__u64 ts, lat;
	__u32 d, i, found = SDS_MAX_DEPTH;
	bool probe, exc;
	__u64 key_hash;

	if (point >= SDS_MAX_POINTS)
		return 0;
#ifdef SDS_VARIANT_NOFRAMES
	call_done(point, point_clock(), 0, true, rax);
	return 0;
#endif
	fr = frames_current(&d);
	if (!fr)
		return 0;
	ts = point_clock();

	/*
	 * Find our frame, innermost first.  Frames deeper than ours belong to
	 * calls that left without returning (an exception, longjmp, or beyond
	 * the kernel's return-probe depth): they are given up below.
	 */
	for (i = 0; i < SDS_MAX_DEPTH; i++) {
		struct sds_frame *f;

		if (i >= d)
			break;
		f = frame_at(fr, d - 1 - i);
		if (f->guard)
			continue;
		if (f->sp == sp && f->point == point) {
			found = d - 1 - i;
			break;
		}
		if (f->sp > sp)
			break;	/* an outer frame: our entry was never pushed */
	}
	if (found >= SDS_MAX_DEPTH)
		return 0;

	for (i = found + 1; i < SDS_MAX_DEPTH; i++) {
		if (i >= d)
			break;
		frame_unwound(frame_at(fr, i), ts);
	}
	/*
	 * A piece's continuation (part_continues()): gone, and with it the
	 * call below when that call jumped to the piece (its frame at the
	 * same stack pointer: the one return ends both); else the call goes
	 * on to its own end.
	 */
	if (frame_at(fr, found)->cont) {
		fr->depth = found;
		if (found == 0)
			return 0;
		found--;
		if (frame_at(fr, found)->guard || frame_at(fr, found)->sp != sp ||
		    frame_at(fr, found)->point != point)
			return 0;
	}
	lat = ts - frame_at(fr, found)->ts;
	probe = frame_at(fr, found)->ff_probe;
	key_hash = frame_at(fr, found)->key_hash;
	if (frame_at(fr, found)->permit)
		fn_permit_give(point);
	fr->depth = found;
	exc = call_done(point, ts, lat, true, rax);
	if (key_hash)
		sds_key_done(point, key_hash, ts, lat, exc);
	/* The frame is above the depth now, but nothing pushes before this. */
	split_frame_done(frame_at(fr, found), ts, lat);
	if (probe)
		ff_probe_done(point, rax);
	return 0;
}

SEC("uretprobe")
int sds_leave(struct pt_regs *ctx)
{
	/* After `ret` the stack pointer is one return address above entry. */
	return call_leave(bpf_get_attach_cookie(ctx), PT_REGS_SP(ctx) - 8,
			  PT_REGS_RC(ctx));
}

/*
 * On a `ret` of a function point (loader/target/exits.c), before it runs: the
 * stack pointer is where it was at entry, on the return address.  The
 * ret of a recursive call's inner level finds its own frame by it.
 */
SEC("uprobe")
int sds_exit(struct pt_regs *ctx)
{
	return call_leave(bpf_get_attach_cookie(ctx), PT_REGS_SP(ctx),
			  PT_REGS_RC(ctx));
}

/*
 * At the first call a catch makes (C++'s __cxa_begin_catch, Rust's
 * __rust_panic_cleanup; loader/target/exits.c), from the catching function's own
 * stack level: every probed call on the stack at or below it is over,
 * unwound by the exception just caught.
 */
SEC("uprobe")
int sds_catch(struct pt_regs *ctx)
{
	__u64 sp = PT_REGS_SP(ctx), ts;
	struct sds_frames *fr;
	__u32 d, i;

	fr = frames_current(&d);
	if (!fr || !d)
		return 0;
	ts = bpf_ktime_get_ns();
	for (i = 0; i < SDS_MAX_DEPTH; i++) {
		struct sds_frame *top;

		if (d == 0)
			break;
		top = frame_at(fr, d - 1);
		if (top->guard || top->sp > sp)
			break;
		frame_unwound(top, ts);
		d--;
	}
	fr->depth = d;
	return 0;
}

/* The session path of function points: no frames (sds_session.bpf.h). */
#include "sds_session.bpf.h"

/* libsds's guard points: their programs share the frames above. */
#include "sds_guard.bpf.h"

/*
 * A thread that exits with calls still entered (killed, pthread_exit from
 * inside a probed function) gives them back, so the gauge cannot drift.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(sds_thread_exit, struct task_struct *task)
{
	struct sds_frames *fr;

	session_thread_exit(task);
	split_thread_exit(task);
	fr = bpf_task_storage_get(&frames, task, 0, 0);
	if (fr)
		frames_drop_all(fr);
	stuck_thread_exit(task->pid);
	return 0;
}
