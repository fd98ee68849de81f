/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_split.bpf.h - where a call's time went: on a CPU, waiting on the
 * run queue, blocked (docs/SPLIT.md).  Part of sds.bpf.c (included after
 * the maps and the frames; not a header for anything else).
 *
 * A thread inside a counted call (split_open > 0) keeps in its task
 * storage `split_task` its run-queue and blocked time so far, summed by
 * two raw tracepoints:
 *
 *   - sched_switch runs on the CPU the thread leaves, as that thread
 *     (prev is current): it folds the thread's last off-CPU spell, then
 *     marks it off, runnable (preempted) or blocked, from that instant.
 *     It also stamps, per CPU, which task comes on and when: the task
 *     coming on cannot be looked up here (a raw tracepoint's arguments
 *     are not pointers the verifier trusts), so it reads the stamp itself
 *     at its next event, on the CPU it runs on.  No thread inside a call
 *     off a CPU: nobody needs the stamp, and the switch skips it.
 *   - sched_wakeup runs as the waker: a blocked thread inside a call is
 *     parked in `split_park` (keyed by its task's address) and the wakeup
 *     writes when it became runnable there.
 *
 * A call keeps at its entry the thread's two sums (in its frame; on the
 * session path, which keeps no frames, in a slot of the task storage by
 * the kernel's return-instance depth); at its end the differences are
 * its run-queue and blocked time, and the rest of its latency its time on
 * a CPU.  Nested calls each get their own split (an outer call's includes
 * the inner one's).  A thread outside every call pays at sched_switch one
 * task-storage lookup and, while some thread inside a call is off a CPU
 * (split_off), a clock read and the per-CPU stamp; at sched_wakeup one
 * load, and while some is, a hash lookup (tools/bench/split measures
 * both).
 */
#ifndef SDS_SPLIT_BPF_H
#define SDS_SPLIT_BPF_H

/* The kernel's MAX_URETPROBE_DEPTH (SDS_SESS_MAX_DEPTH): session slots. */
#define SDS_SPLIT_DEPTH		64

/* What the thread was doing since split_task.since. */
enum sds_split_state {
	SDS_SPLIT_ON = 0,	/* on a CPU (or its off spell not folded yet: see since) */
	SDS_SPLIT_RUNQ = 1,	/* switched out runnable: preempted */
	SDS_SPLIT_BLOCKED = 2,	/* switched out asleep: blocked until a wakeup */
};

/* The session path's snapshot of one open call, by return-instance depth. */
struct sds_split_sess {
	__u64 ck;		/* the call's session cookie: whose slot it is */
	__u64 runq0;		/* the thread's sums at the call's entry */
	__u64 blocked0;
};

/* Per thread (task storage), created at its first counted call. */
struct sds_split_task {
	__u32 open;		/* counted calls open on the thread; 0: outside */
	__u32 state;		/* enum sds_split_state */
	__u64 since;		/* when @state began (switched out) */
	__u64 runq;		/* ns runnable and waiting, while @open */
	__u64 blocked;		/* ns asleep, while @open */
	struct sds_split_sess sess[SDS_SPLIT_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sds_split_task);
} split_task SEC(".maps");

/* Per CPU: the task that came on last and when (sched_switch's next). */
struct sds_split_cpu {
	__u64 task;		/* its task_struct's address */
	__u64 t_in;		/* bpf_ktime_get_ns() it came on at */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sds_split_cpu);
} split_cpu SEC(".maps");

/*
 * Blocked threads inside a call, by task address: the time of their
 * wakeup (0: none seen yet).  Bounded: a thread that finds it full has
 * its whole off spell counted blocked.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SDS_SPLIT_PARKED);
	__type(key, __u64);
	__type(value, __u64);
} split_park SEC(".maps");

/* Per point, per CPU, since load: the split of completed calls. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SDS_MAX_POINTS);
	__type(key, __u32);
	__type(value, struct sds_split_sum);
} split_sums SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SDS_MAX_POINTS);
	__type(key, __u32);
	__type(value, struct sds_split_hist);
} split_hist SEC(".maps");

/*
 * Set by the loader once both tracepoints are attached (and cleared
 * before they go): until then a call keeps no split, at one load.
 */
volatile __u32 split_on = 0;

/*
 * Threads inside a call that are off a CPU and have not folded that
 * spell yet: only they need the per-CPU stamp of their switch in, so
 * while there are none a switch costs the rest of the host one
 * task-storage lookup and this load, no clock read.  A thread is counted
 * from its switch out to its fold (or its call's end, or its exit), and
 * it cannot come on again before its switch out is counted (both happen
 * under run-queue locks).
 */
volatile __u64 split_off = 0;

/* @st is on a CPU again (folded, reset, exiting): no longer counted off. */
static __always_inline void split_set_on(struct sds_split_task *st)
{
	if (st->state == SDS_SPLIT_ON)
		return;
	st->state = SDS_SPLIT_ON;
	__sync_fetch_and_add(&split_off, -1);
}

/*
 * The thread @st is running now (@now) on this CPU: fold its off spell,
 * if it was off, into its sums.  It came on at this CPU's stamp if the
 * stamp is its own (no switch on this CPU since it came on), else now is
 * the best bound there is.
 */
static __always_inline void split_fold(struct sds_split_task *st, __u64 now)
{
	struct sds_split_cpu *c;
	__u64 self, t_in = now, t_wake, *w;
	__u32 zero = 0;

	if (st->state == SDS_SPLIT_ON)
		return;
	self = bpf_get_current_task();
	c = bpf_map_lookup_elem(&split_cpu, &zero);
	if (c && c->task == self && c->t_in >= st->since && c->t_in <= now)
		t_in = c->t_in;
	if (t_in < st->since)
		t_in = st->since;
	if (st->state == SDS_SPLIT_BLOCKED) {
		t_wake = t_in;
		w = bpf_map_lookup_elem(&split_park, &self);
		if (w) {
			if (*w >= st->since && *w <= t_in)
				t_wake = *w;
			bpf_map_delete_elem(&split_park, &self);
		}
		st->blocked += t_wake - st->since;
		st->runq += t_in - t_wake;
	} else {
		st->runq += t_in - st->since;
	}
	split_set_on(st);
	st->since = t_in;
}

/*
 * A spell @st will never fold (the thread's last call was given up while
 * it was off a CPU, or it exits): its parked entry goes too.
 */
static __always_inline void split_drop_park(struct sds_split_task *st)
{
	__u64 self;

	if (st->state != SDS_SPLIT_BLOCKED)
		return;
	self = bpf_get_current_task();
	bpf_map_delete_elem(&split_park, &self);
}

/*
 * One of @st's open calls is given up (@st->open > 0), on the running
 * thread: the last one leaves it outside, its unfolded spell forgotten.
 */
static __always_inline void split_close(struct sds_split_task *st)
{
	if (--st->open)
		return;
	split_drop_park(st);
	split_set_on(st);
}

/*
 * A counted call enters at @ts on the current thread: open it, and
 * return the thread's storage so the caller keeps its sums (NULL: this
 * call keeps no split).
 */
static __always_inline struct sds_split_task *split_enter(__u64 ts)
{
	struct sds_split_task *st;

	if (!split_on)
		return NULL;
	st = bpf_task_storage_get(&split_task, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st)
		return NULL;
	if (st->open == 0) {
		/* Outside until now: nothing of before counts. */
		split_drop_park(st);
		split_set_on(st);
		st->since = ts;
	} else {
		split_fold(st, ts);
	}
	st->open++;
	return st;
}

/*
 * An open call that will never be seen ending (unwound, dropped).  A
 * global function, as sds_count_exception: the loops that give frames up
 * call it.
 */
__noinline int sds_split_forget(void)
{
	struct sds_split_task *st;

	st = bpf_task_storage_get(&split_task, bpf_get_current_task_btf(), 0, 0);
	if (st && st->open)
		split_close(st);
	return 0;
}

/*
 * A call of @point that kept a split ends at @ts after @lat ns on the
 * thread of @st: its run-queue and blocked time since @runq0 and
 * @blocked0, the rest on a CPU, into the point's sums and histograms.
 */
static __always_inline void split_done(struct sds_split_task *st, __u32 point,
				       __u64 ts, __u64 lat, __u64 runq0,
				       __u64 blocked0)
{
	struct sds_split_hist *h;
	struct sds_split_sum *s;
	__u64 rq, bl, cpu;
	__u32 b;

	if (!st->open)
		return;
	split_fold(st, ts);
	st->open--;
	rq = st->runq - runq0;
	bl = st->blocked - blocked0;
	/* The sums and the latency are one clock: bound by it all the same. */
	if (bl > lat)
		bl = lat;
	if (rq > lat - bl)
		rq = lat - bl;
	cpu = lat - bl - rq;
	s = bpf_map_lookup_elem(&split_sums, &point);
	if (!s)
		return;
	ADD(&s->calls, 1);
	ADD(&s->on_cpu_ns, cpu);
	ADD(&s->runq_ns, rq);
	ADD(&s->blocked_ns, bl);
	h = bpf_map_lookup_elem(&split_hist, &point);
	if (!h)
		return;
	b = log2_u64(cpu);
	if (b < SDS_HIST_BUCKETS)
		ADD(&h->on_cpu[b], 1);
	b = log2_u64(rq);
	if (b < SDS_HIST_BUCKETS)
		ADD(&h->runq[b], 1);
	b = log2_u64(bl);
	if (b < SDS_HIST_BUCKETS)
		ADD(&h->blocked[b], 1);
}

/* A frame's call opens its split: the thread's sums kept in the frame. */
static __always_inline void split_frame_enter(struct sds_frame *f, __u64 ts)
{
	struct sds_split_task *st = split_enter(ts);

	f->split = st != NULL;
	if (st) {
		f->split_runq = st->runq;
		f->split_blocked = st->blocked;
	}
}

/* Frame @f's call ended at @ts after @lat ns. */
static __always_inline void split_frame_done(const struct sds_frame *f,
					     __u64 ts, __u64 lat)
{
	struct sds_split_task *st;

	if (!f->split)
		return;
	st = bpf_task_storage_get(&split_task, bpf_get_current_task_btf(), 0, 0);
	if (st)
		split_done(st, f->point, ts, lat, f->split_runq, f->split_blocked);
}

/* Frame @f's call will never be seen ending. */
static __always_inline void split_frame_forget(const struct sds_frame *f)
{
	if (f->split)
		sds_split_forget();
}

/*
 * The session path: the open call's sums in the slot of the kernel's
 * return-instance depth, which is the same at the call's return (the
 * kernel pops the instance before it runs the handler) as at its entry.
 */
static __always_inline __u32 split_sess_depth(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct uprobe_task *ut = t->utask;

	return ut ? (__u32)ut->depth : 0;
}

static __always_inline void split_sess_enter(__u64 ts, __u64 ck)
{
	struct sds_split_task *st;
	__u32 d;

	if (!split_on)
		return;
	d = split_sess_depth();
	if (d >= SDS_SPLIT_DEPTH)
		return;
	st = split_enter(ts);
	if (!st)
		return;
	st->sess[d].ck = ck;
	st->sess[d].runq0 = st->runq;
	st->sess[d].blocked0 = st->blocked;
}

static __always_inline void split_sess_done(__u32 point, __u64 ts, __u64 lat,
					    __u64 ck)
{
	struct sds_split_task *st;
	__u32 d;

	if (!split_on)
		return;
	st = bpf_task_storage_get(&split_task, bpf_get_current_task_btf(), 0, 0);
	if (!st)
		return;
	d = split_sess_depth();
	if (d >= SDS_SPLIT_DEPTH)
		return;
	/* Not this call's: it entered before the split was on. */
	if (st->sess[d].ck != ck)
		return;
	st->sess[d].ck = 0;
	split_done(st, point, ts, lat, st->sess[d].runq0, st->sess[d].blocked0);
}

/* A thread exits: its spell off a CPU, if counted, is over. */
static __always_inline void split_thread_exit(struct task_struct *task)
{
	struct sds_split_task *st;

	st = bpf_task_storage_get(&split_task, task, 0, 0);
	if (!st)
		return;
	split_drop_park(st);
	split_set_on(st);
}

/*
 * Session call instance @ck at depth @d will never return (longjmp):
 * its slot and its open count given back.  A global function, verified
 * once on its own: inlined into session_reap's loop it multiplies the
 * verifier's states past its limit.
 */
__noinline int sds_split_sess_forget(__u32 d, __u64 ck)
{
	struct sds_split_task *st;

	if (!split_on || d >= SDS_SPLIT_DEPTH)
		return 0;
	st = bpf_task_storage_get(&split_task, bpf_get_current_task_btf(), 0, 0);
	if (!st || st->sess[d].ck != ck)
		return 0;
	st->sess[d].ck = 0;
	if (st->open)
		split_close(st);
	return 0;
}

/*
 * sched_switch(preempt, prev, next, prev_state), on the CPU prev leaves,
 * as prev.  A thread outside every call returns after the stamp and one
 * task-storage lookup.
 */
SEC("raw_tracepoint/sched_switch")
int sds_split_switch(struct bpf_raw_tracepoint_args *ctx)
{
	struct sds_split_task *st;
	struct sds_split_cpu *c;
	__u64 now, self, zero64 = 0;
	__u32 zero = 0;

	st = bpf_task_storage_get(&split_task, bpf_get_current_task_btf(), 0, 0);
	if (st && st->open) {
		now = bpf_ktime_get_ns();
		split_fold(st, now);
		st->since = now;
		/* Preempted, or its sleep undone by a signal: still runnable. */
		if (ctx->args[0] || ctx->args[3] == 0) {
			st->state = SDS_SPLIT_RUNQ;
		} else {
			st->state = SDS_SPLIT_BLOCKED;
			self = bpf_get_current_task();
			bpf_map_update_elem(&split_park, &self, &zero64, BPF_ANY);
		}
		__sync_fetch_and_add(&split_off, 1);
	} else {
		/* No thread inside a call waits to come on: no stamp needed. */
		if (!split_off)
			return 0;
		now = bpf_ktime_get_ns();
	}
	c = bpf_map_lookup_elem(&split_cpu, &zero);
	if (c) {
		c->task = ctx->args[2];
		c->t_in = now;
	}
	return 0;
}

/* sched_wakeup(p): a parked thread is runnable from now. */
SEC("raw_tracepoint/sched_wakeup")
int sds_split_wakeup(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 key = ctx->args[0], *w;

	/*
	 * Nobody parked (a parked thread is counted off from its switch out,
	 * which the wakeup comes after: it waits for the switch to finish).
	 */
	if (!split_off)
		return 0;
	w = bpf_map_lookup_elem(&split_park, &key);
	if (w && !*w)
		*w = bpf_ktime_get_ns();
	return 0;
}

#endif /* SDS_SPLIT_BPF_H */
