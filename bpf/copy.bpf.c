// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * copy.bpf.c - traffic copy: capture the request a function receives.
 *
 * Its own object beside sds.bpf.c (which stays as it is): a second uprobe
 * on the same address shares the breakpoint, so a copy point costs the
 * call this program and nothing else.  Two programs:
 *
 *   sds_copy_fn    on a function point (cookie = point id): the buffer and
 *                  its length are in argument registers (the point's
 *                  :copy=BUF,LEN, System V order 1..6);
 *   sds_copy_site  on libsds's sds__site_copy(id, buf, len): the id comes
 *                  from the caller, so it is bounded by the map and must be
 *                  a guard copy point; anyone may call the site with
 *                  anything, and a wrong id or buffer costs one lookup or a
 *                  counted read fault.
 *
 * and two for the responses (docs/COPY.md, "Responses"):
 *
 *   sds_copy_fn_ret   a uretprobe on a function point with :copy_ret=BUF,LEN:
 *                     at the return, the buffer the function filled and the
 *                     length it wrote through its size_t * argument;
 *   sds_copy_site_ret on libsds's sds__site_copy_ret(id, buf, len), called by
 *                     sds_copy_response().
 *
 * A request that may get a response carries a pair id and leaves it in
 * copy_pending under its thread; the response of the same thread and point
 * takes it (one pending request per thread: the latest one).  The response
 * is not sampled again: it is captured exactly when its request was.
 *
 * Per point the loader writes a config (kind, rate, max, argument numbers);
 * rate 0 returns at once.  A sampled call copies up to max bytes with
 * bpf_probe_read_user() straight into a ring buffer reservation.
 * bpf_ringbuf_reserve() wants a constant size, so a capture takes the
 * smallest of five size classes that holds it (256 B .. 64 KiB): one copy
 * of the bytes and no per-CPU scratch (a per-CPU array value is capped at
 * 32 KiB, and a scratch + bpf_ringbuf_output() would copy every byte
 * twice); the price is ring space, at most 4x a capture just above a
 * class.  The call never waits: a full ring is a counted drop.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "sds_types.h"
#include "sds_common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";


struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SDS_MAX_POINTS);	/* sized to the loader's point cap */
	__type(key, __u32);
	__type(value, struct sds_copy_cfg);
} copy_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SDS_MAX_POINTS);
	__type(key, __u32);
	__type(value, struct sds_copy_count);
} copy_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SDS_COPY_PENDING);
	__type(key, __u64);			/* bpf_get_current_pid_tgid() */
	__type(value, struct sds_copy_pending);
} copy_pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);		/* --copy-ring sets it */
} copy_ring SEC(".maps");

/*
 * Argument @n (1..6) of a System V call at its first instruction.  The six
 * registers are read into the stack first: a switch over the context
 * compiles to a variable context offset, which the verifier refuses.
 */
static __always_inline __u64 arg_of(struct pt_regs *ctx, __u32 n)
{
	__u64 a[SDS_COPY_ARGS] = {
		PT_REGS_PARM1(ctx), PT_REGS_PARM2(ctx), PT_REGS_PARM3(ctx),
		PT_REGS_PARM4(ctx), PT_REGS_PARM5(ctx),
		ctx->r9,	/* no PT_REGS_PARM6 in libbpf 1.1 */
	};

	n -= 1;
	if (n >= SDS_COPY_ARGS)
		return 0;
	return a[n];
}

/*
 * One size class: reserve a header + SZ bytes, copy h->cap_len (<= SZ)
 * bytes of the caller's buffer.  0 when captured, -1 when dropped.  The
 * header comes by pointer: a BPF call takes five arguments at most.
 */
#define COPY_CLASS(SZ)							\
static __noinline int copy_##SZ(const struct sds_copy_event *h,		\
				const void *buf)			\
{									\
	struct {							\
		struct sds_copy_event h;				\
		__u8 d[SZ];						\
	} *e;								\
	__u32 cap;							\
									\
	e = bpf_ringbuf_reserve(&copy_ring, sizeof(*e), 0);		\
	if (!e)								\
		return -1;						\
	e->h = *h;							\
	cap = h->cap_len & ((SZ) * 2 - 1);	/* the verifier's bound */	\
	if (cap > (SZ) ||						\
	    bpf_probe_read_user(e->d, cap, buf)) {			\
		bpf_ringbuf_discard(e, BPF_RB_NO_WAKEUP);		\
		return -1;						\
	}								\
	bpf_ringbuf_submit(e, 0);					\
	return 0;							\
}

COPY_CLASS(256)
COPY_CLASS(1024)
COPY_CLASS(4096)
COPY_CLASS(16384)
COPY_CLASS(65536)

/*
 * Capture @len bytes at @buf for @point.  @flags/@pair: SDS_COPY_EV_* and
 * the pair id; @sample: draw against the rate (a response is not drawn
 * again).  1 when captured, 0 when not sampled or dropped.
 */
static __always_inline int capture(__u32 point, const struct sds_copy_cfg *c,
				   const void *buf, __u64 len, __u64 ts,
				   __u32 flags, __u64 pair, bool sample)
{
	struct sds_copy_event h = { .ts = ts, .point = point, .flags = flags,
				    .pair = pair };
	struct sds_copy_count *n;
	__u32 orig, cap;
	int r;

	if (sample && c->rate < 100 && bpf_get_prandom_u32() % 100 >= c->rate)
		return 0;
	n = bpf_map_lookup_elem(&copy_counts, &point);
	if (!n)
		return 0;
	orig = len > 0xffffffffULL ? 0xffffffffU : (__u32)len;
	cap = orig < c->max ? orig : c->max;
	h.orig_len = orig;
	h.cap_len = cap;
	if (cap <= 256)
		r = copy_256(&h, buf);
	else if (cap <= 1024)
		r = copy_1024(&h, buf);
	else if (cap <= 4096)
		r = copy_4096(&h, buf);
	else if (cap <= 16384)
		r = copy_16384(&h, buf);
	else
		r = copy_65536(&h, buf);
	if (r) {
		ADD(&n->dropped, 1);
		return 0;
	}
	if (flags & SDS_COPY_EV_RESPONSE)
		ADD(&n->responses, 1);
	else
		ADD(&n->captured, 1);
	if (cap < orig)
		ADD(&n->truncated, 1);
	return 1;
}

/*
 * A request that a response may follow: captured with a pair id, which
 * is left for the thread's response with what it needs to find it.
 */
static __always_inline int capture_request(__u32 point,
					   const struct sds_copy_cfg *c,
					   const void *buf, __u64 len,
					   __u64 rbuf, __u64 rlenp)
{
	__u64 tid = bpf_get_current_pid_tgid();
	__u64 ts = bpf_ktime_get_ns();
	struct sds_copy_pending p = {
		/* Unique per capture: one thread captures once per ns at most,
		 * and two threads in the same ns differ in their low tid bits. */
		.pair = ts ^ (tid << 40),
		.buf = rbuf,
		.lenp = rlenp,
		.point = point,
	};

	if (!capture(point, c, buf, len, ts, SDS_COPY_EV_PAIRED, p.pair, true))
		return 0;
	bpf_map_update_elem(&copy_pending, &tid, &p, BPF_ANY);
	return 0;
}

/* The pending request of this thread at @point, taken: 0, or -1 if none. */
static __always_inline int pending_take(__u32 point, struct sds_copy_pending *out)
{
	__u64 tid = bpf_get_current_pid_tgid();
	struct sds_copy_pending *p = bpf_map_lookup_elem(&copy_pending, &tid);

	if (!p || p->point != point)
		return -1;
	*out = *p;
	bpf_map_delete_elem(&copy_pending, &tid);
	return 0;
}

SEC("uprobe")
int sds_copy_fn(struct pt_regs *ctx)
{
	__u32 point = bpf_get_attach_cookie(ctx);
	struct sds_copy_cfg *c = bpf_map_lookup_elem(&copy_cfg, &point);

	if (!c || c->kind != SDS_COPY_FUNC || !c->rate)
		return 0;
	if (c->ret_buf_arg)
		return capture_request(point, c,
				       (const void *)arg_of(ctx, c->buf_arg),
				       arg_of(ctx, c->len_arg),
				       arg_of(ctx, c->ret_buf_arg),
				       arg_of(ctx, c->ret_len_arg));
	capture(point, c, (const void *)arg_of(ctx, c->buf_arg),
		arg_of(ctx, c->len_arg), bpf_ktime_get_ns(), 0, 0, true);
	return 0;
}

/*
 * The return of a :copy_ret= point: what the function wrote into the
 * buffer, *lenp bytes (a size_t).  An unreadable length is a drop.
 */
SEC("uretprobe")
int sds_copy_fn_ret(struct pt_regs *ctx)
{
	__u32 point = bpf_get_attach_cookie(ctx);
	struct sds_copy_cfg *c = bpf_map_lookup_elem(&copy_cfg, &point);
	struct sds_copy_pending p;
	struct sds_copy_count *n;
	__u64 len;

	if (!c || c->kind != SDS_COPY_FUNC || !c->ret_buf_arg ||
	    pending_take(point, &p))
		return 0;
	if (bpf_probe_read_user(&len, sizeof(len), (const void *)p.lenp)) {
		n = bpf_map_lookup_elem(&copy_counts, &point);
		if (n)
			ADD(&n->dropped, 1);
		return 0;
	}
	capture(point, c, (const void *)p.buf, len, bpf_ktime_get_ns(),
		SDS_COPY_EV_PAIRED | SDS_COPY_EV_RESPONSE, p.pair, false);
	return 0;
}

SEC("uprobe")
int sds_copy_site(struct pt_regs *ctx)
{
	__u32 point = (__u32)PT_REGS_PARM1(ctx);
	struct sds_copy_cfg *c = bpf_map_lookup_elem(&copy_cfg, &point);

	/* Out of the map's range: no config; not a guard copy point: nothing. */
	if (!c || c->kind != SDS_COPY_GUARD || !c->rate)
		return 0;
	return capture_request(point, c, (const void *)PT_REGS_PARM2(ctx),
			       PT_REGS_PARM3(ctx), 0, 0);
}

/* sds__site_copy_ret(id, buf, len): the response of this thread's request. */
SEC("uprobe")
int sds_copy_site_ret(struct pt_regs *ctx)
{
	__u32 point = (__u32)PT_REGS_PARM1(ctx);
	struct sds_copy_cfg *c = bpf_map_lookup_elem(&copy_cfg, &point);
	struct sds_copy_pending p;

	if (!c || c->kind != SDS_COPY_GUARD || pending_take(point, &p))
		return 0;
	capture(point, c, (const void *)PT_REGS_PARM2(ctx), PT_REGS_PARM3(ctx),
		bpf_ktime_get_ns(), SDS_COPY_EV_PAIRED | SDS_COPY_EV_RESPONSE,
		p.pair, false);
	return 0;
}
