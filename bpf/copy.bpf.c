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
 * One size class: reserve a header + SZ bytes, copy @cap (<= SZ) bytes of
 * the caller's buffer.  0 when captured, -1 when dropped.
 */
#define COPY_CLASS(SZ)							\
static __noinline int copy_##SZ(__u32 point, __u64 ts, __u32 orig,	\
				__u32 cap, const void *buf)		\
{									\
	struct {							\
		struct sds_copy_event h;				\
		__u8 d[SZ];						\
	} *e;								\
									\
	e = bpf_ringbuf_reserve(&copy_ring, sizeof(*e), 0);		\
	if (!e)								\
		return -1;						\
	e->h.ts = ts;							\
	e->h.point = point;						\
	e->h.orig_len = orig;						\
	e->h.cap_len = cap;						\
	e->h.pad = 0;							\
	cap &= (SZ) * 2 - 1;	/* the verifier's bound; cap <= SZ */	\
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

static __always_inline int capture(__u32 point, const struct sds_copy_cfg *c,
				   const void *buf, __u64 len)
{
	struct sds_copy_count *n;
	__u32 orig, cap;
	__u64 ts;
	int r;

	if (c->rate < 100 && bpf_get_prandom_u32() % 100 >= c->rate)
		return 0;
	n = bpf_map_lookup_elem(&copy_counts, &point);
	if (!n)
		return 0;
	ts = bpf_ktime_get_ns();
	orig = len > 0xffffffffULL ? 0xffffffffU : (__u32)len;
	cap = orig < c->max ? orig : c->max;
	if (cap <= 256)
		r = copy_256(point, ts, orig, cap, buf);
	else if (cap <= 1024)
		r = copy_1024(point, ts, orig, cap, buf);
	else if (cap <= 4096)
		r = copy_4096(point, ts, orig, cap, buf);
	else if (cap <= 16384)
		r = copy_16384(point, ts, orig, cap, buf);
	else
		r = copy_65536(point, ts, orig, cap, buf);
	if (r) {
		ADD(&n->dropped, 1);
		return 0;
	}
	ADD(&n->captured, 1);
	if (cap < orig)
		ADD(&n->truncated, 1);
	return 0;
}

SEC("uprobe")
int sds_copy_fn(struct pt_regs *ctx)
{
	__u32 point = bpf_get_attach_cookie(ctx);
	struct sds_copy_cfg *c = bpf_map_lookup_elem(&copy_cfg, &point);

	if (!c || c->kind != SDS_COPY_FUNC || !c->rate)
		return 0;
	return capture(point, c, (const void *)arg_of(ctx, c->buf_arg),
		       arg_of(ctx, c->len_arg));
}

SEC("uprobe")
int sds_copy_site(struct pt_regs *ctx)
{
	__u32 point = (__u32)PT_REGS_PARM1(ctx);
	struct sds_copy_cfg *c = bpf_map_lookup_elem(&copy_cfg, &point);

	/* Out of the map's range: no config; not a guard copy point: nothing. */
	if (!c || c->kind != SDS_COPY_GUARD || !c->rate)
		return 0;
	return capture(point, c, (const void *)PT_REGS_PARM2(ctx),
		       PT_REGS_PARM3(ctx));
}
