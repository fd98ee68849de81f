// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * delay.bpf.c - delay drills at function points (docs/DELAY.md).
 *
 * A uprobe cannot make a function slower, and no BPF program on a
 * syscall may sleep (docs/FAILFAST.md, "Why no delays").  The network
 * can be slow for it instead: a socket connected by a thread inside a
 * drilled point (the thread's frame stack `frames`, sds.bpf.c's task
 * storage, as bpf/failfast.bpf.c reads it) is marked at the cgroup
 * connect hook with socket storage, chosen per socket at the drill's
 * ratio; a tc egress program gives each packet of a marked socket an
 * earliest departure time (skb->tstamp) the drill's delay ahead, and the
 * fq qdisc on the interface holds the packet until then.  A TCP socket's
 * handshake is not delayed (its SYN leaves while the socket is in
 * SYN_SENT): every exchange after it is, so a call that connects, sends
 * its request and reads the answer takes the delay longer once.
 *
 * The marks outlive nothing that matters: the tc program checks the
 * point's drill (number and expiry) at every packet, and its link is the
 * loader's, so a drill that ends or a loader that is gone delays no
 * packet more.  Every lookup that fails passes the packet as it was.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "sds_types.h"
#include "sds_delay.h"
#include "sds_common.bpf.h"
#include "sds_frameread.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define DL_IPPROTO_TCP	6

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SDS_MAX_POINTS);
	__type(key, __u32);
	__type(value, struct sds_dl_state);
} delay_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SDS_MAX_POINTS);
	__type(key, __u32);
	__type(value, struct sds_dl_count);
} delay_count SEC(".maps");

/*
 * The peer ports the marked sockets connected to, a bit each: the tc
 * program looks a socket's storage up only for a packet to such a port,
 * so the host's other packets cost it two loads and an inlined array
 * lookup, not two helper calls (tools/bench/delay).  Cleared by the
 * loader when the last drill ends.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SDS_DL_PORT_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} delay_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sds_dl_mark);
} delay_mark SEC(".maps");

/*
 * The innermost point on the current thread's frame stack with a delay
 * drill running now, into *@point: 1, or 0 for none.  The same reading of
 * the stack as bpf/failfast.bpf.c's ff_check (sds_frameread.bpf.h): frames
 * of an exec'd-over program and frames below the user stack pointer (left
 * by longjmp) are not the thread's now.
 */
static __always_inline int dl_drilled_point(__u32 *point, __u64 *now,
					    struct sds_dl_state **stp)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct sds_dl_state *st;
	struct sds_frames *fr;
	struct sds_frame *f;
	__u32 d, i, p;
	__u64 usp;

	fr = frameread_stack(task, &d, &usp);
	if (!fr)
		return 0;
	for (i = 0; i < SDS_MAX_DEPTH; i++) {
		if (i >= d)
			break;
		f = frameread_at(fr, d - 1 - i);
		p = f->point;
		if (f->guard || p >= SDS_MAX_POINTS || (f->sp && f->sp < usp))
			continue;
		st = bpf_map_lookup_elem(&delay_state, &p);
		if (!st || !st->ratio)
			continue;
		if (!*now)
			*now = bpf_ktime_get_ns();
		if (*now >= st->expires_ns)
			continue;
		*point = p;
		*stp = st;
		return 1;
	}
	return 0;
}

/*
 * At connect(2): a socket connected inside a drilled point is chosen at
 * the drill's ratio, once per connect, and marked.  Never refuses: 1.
 */
static __always_inline int dl_connect(struct bpf_sock_addr *ctx)
{
	struct sds_dl_state *st = NULL;
	struct sds_dl_count *c;
	struct sds_dl_mark *m;
	struct bpf_sock *sk;
	__u32 point = 0, port, w;
	__u64 now = 0, *bits;

	if (!dl_drilled_point(&point, &now, &st) || !st)
		return 1;
	c = bpf_map_lookup_elem(&delay_count, &point);
	sk = ctx->sk;
	if (!sk)
		return 1;
	if (!frameread_hit(st->ratio)) {
		/* A socket reconnected (UDP) is judged again: not chosen now. */
		bpf_sk_storage_delete(&delay_mark, sk);
		if (c)
			ADD(&c->spared, 1);
		return 1;
	}
	m = bpf_sk_storage_get(&delay_mark, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!m)
		return 1;	/* no memory: the socket runs undelayed */
	m->point = point;
	m->gen = st->gen;
	port = bpf_ntohs((__u16)ctx->user_port);
	w = port >> 6;
	bits = bpf_map_lookup_elem(&delay_ports, &w);
	if (bits)
		__sync_fetch_and_or(bits, 1ULL << (port & 63));
	if (c)
		ADD(&c->marked, 1);
	return 1;
}

SEC("cgroup/connect4")
int sds_dl_connect4(struct bpf_sock_addr *ctx)
{
	return dl_connect(ctx);
}

SEC("cgroup/connect6")
int sds_dl_connect6(struct bpf_sock_addr *ctx)
{
	return dl_connect(ctx);
}

/*
 * Every packet leaving a hooked interface: a marked socket's, while its
 * drill runs, departs the delay later (fq holds it); all others, and the
 * SYN of a TCP handshake, as they were.  TCX_NEXT: the programs after
 * this one decide as if it were not there.
 */
SEC("tc")
int sds_dl_egress(struct __sk_buff *skb)
{
	struct sds_dl_state *st;
	struct sds_dl_count *c;
	struct sds_dl_mark *m;
	struct bpf_sock *sk;
	__u64 now, t, *bits;
	__u32 point, port, w;

	sk = skb->sk;
	if (!sk)
		return TCX_NEXT;
	/* No marked socket connected to this peer port: not ours. */
	port = bpf_ntohs(sk->dst_port);
	w = port >> 6;
	bits = bpf_map_lookup_elem(&delay_ports, &w);
	if (!bits || !(*bits & (1ULL << (port & 63))))
		return TCX_NEXT;
	sk = bpf_sk_fullsock(sk);
	if (!sk)
		return TCX_NEXT;
	m = bpf_sk_storage_get(&delay_mark, sk, 0, 0);
	if (!m)
		return TCX_NEXT;
	if (sk->protocol == DL_IPPROTO_TCP && sk->state == BPF_TCP_SYN_SENT)
		return TCX_NEXT;
	point = m->point;
	st = bpf_map_lookup_elem(&delay_state, &point);
	if (!st || !st->ratio || st->gen != m->gen)
		return TCX_NEXT;
	now = bpf_ktime_get_ns();
	if (now >= st->expires_ns)
		return TCX_NEXT;
	t = now + st->delay_ns;
	/* TCP's own pacing may already have it later: never earlier. */
	if (skb->tstamp > t)
		t = skb->tstamp;
	bpf_skb_set_tstamp(skb, t, BPF_SKB_CLOCK_MONOTONIC);
	c = bpf_map_lookup_elem(&delay_count, &point);
	if (c)
		ADD(&c->packets, 1);
	return TCX_NEXT;
}
