// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * deps.bpf.c - dependencies found by themselves (issue 38, docs/DEPS.md).
 *
 * While a thread is inside a function or guard point (its frame stack
 * `frames`, sds.bpf.c's task storage, read as bpf/failfast.bpf.c and
 * bpf/delay.bpf.c read it), the peers its sockets reach are counted per
 * (innermost point, peer): an edge of a bounded hash, its events beyond
 * the table counted as overflow, never lost silently.
 *
 *  - connect(2): the cgroup connect4/connect6 hooks, in the caller's
 *    context, with the address it names.  A TCP socket connected so is
 *    marked in socket storage with its edge, and its state changes
 *    enabled for the sock_ops program.
 *  - a connection that fails: the sock_ops state callback, in whatever
 *    context the kernel changes the socket's state (a RST in softirq):
 *    SYN_SENT to CLOSE is a connect that failed (refused, timed out,
 *    unreachable), an established socket closed by the peer's reset is a
 *    reset; both found through the socket's mark, not the thread.
 *  - sends: the raw tracepoint sock_send_length, after every sendmsg of
 *    the host (send, write on a socket, sendmmsg's each), in the sender's
 *    context, with its result: a pooled connection, connected once
 *    outside the point, counts every send made inside it.
 *
 * Every program only counts: none refuses, changes or delays anything,
 * and a lookup that fails passes.  A thread outside every point pays one
 * task-storage lookup (no create) per connect and per send.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "sds_types.h"
#include "sds_deps.h"
#include "sds_common.bpf.h"
#include "sds_frameread.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define DP_AF_INET	2
#define DP_AF_INET6	10
#define DP_EAGAIN	11
#define DP_EINTR	4
#define DP_EPIPE	32
#define DP_ECONNRESET	104
#define DP_ERESTARTSYS	512

/* The edges; the loader sets max_entries (attach --deps-max) before the load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SDS_DEPS_EDGES);
	__type(key, struct sds_dep_key);
	__type(value, struct sds_dep_count);
} deps_edges SEC(".maps");

/* What could not be counted: SDS_DEPS_OVF_*. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SDS_DEPS_OVF_NR);
	__type(key, __u32);
	__type(value, __u64);
} deps_overflow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sds_dep_mark);
} deps_mark SEC(".maps");

static __always_inline void dp_overflow(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&deps_overflow, &slot);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/*
 * The innermost point on the current thread's frame stack, into *@point:
 * 1, or 0 for none.  Frames of an exec'd-over program and frames below
 * the user stack pointer (left by longjmp) are not the thread's now
 * (sds_frameread.bpf.h); a guard's frame has no stack pointer and counts
 * until its exit call pops it.
 */
static __always_inline int dp_point(__u32 *point)
{
	struct task_struct *task = bpf_get_current_task_btf();
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
		if (p >= SDS_MAX_POINTS || (f->sp && f->sp < usp))
			continue;
		*point = p;
		return 1;
	}
	return 0;
}

/*
 * Edge @k's counts, inserted zeroed if new; NULL when the table is full
 * (counted).  Two CPUs inserting one edge at once: one insert fails with
 * EEXIST, and both find the one entry.
 */
static __always_inline struct sds_dep_count *dp_edge(const struct sds_dep_key *k)
{
	struct sds_dep_count zero = {}, *c;

	c = bpf_map_lookup_elem(&deps_edges, k);
	if (c)
		return c;
	bpf_map_update_elem(&deps_edges, k, &zero, BPF_NOEXIST);
	c = bpf_map_lookup_elem(&deps_edges, k);
	if (!c)
		dp_overflow(SDS_DEPS_OVF_EDGES);
	return c;
}

/* An IPv4 address (network order) as ::ffff:a.b.c.d into @a. */
static __always_inline void dp_v4mapped(__u8 *a, __u32 ip4)
{
	__builtin_memset(a, 0, 10);
	a[10] = 0xff;
	a[11] = 0xff;
	__builtin_memcpy(a + 12, &ip4, 4);
}

/*
 * At connect(2): the edge of the thread's innermost point and the address
 * it names, counted; a TCP socket marked with it for the state callbacks.
 * Never refuses: 1.
 */
static __always_inline int dp_connect(struct bpf_sock_addr *ctx, bool v6)
{
	struct sds_dep_key k = {};
	struct sds_dep_count *c;
	struct sds_dep_mark *m;
	struct bpf_sock *sk;
	__u32 ip6[4];

	if (!dp_point(&k.point))
		return 1;
	if (ctx->protocol == SDS_DEP_TCP)
		k.proto = SDS_DEP_TCP;
	else if (ctx->protocol == SDS_DEP_UDP)
		k.proto = SDS_DEP_UDP;
	else
		return 1;
	k.port = bpf_ntohs((__u16)ctx->user_port);
	if (v6) {
		ip6[0] = ctx->user_ip6[0];
		ip6[1] = ctx->user_ip6[1];
		ip6[2] = ctx->user_ip6[2];
		ip6[3] = ctx->user_ip6[3];
		__builtin_memcpy(k.addr, ip6, 16);
	} else {
		dp_v4mapped(k.addr, ctx->user_ip4);
	}
	c = dp_edge(&k);
	if (!c)
		return 1;
	__sync_fetch_and_add(&c->connects, 1);
	if (k.proto != SDS_DEP_TCP)
		return 1;
	sk = ctx->sk;
	if (!sk)
		return 1;
	m = bpf_sk_storage_get(&deps_mark, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!m) {
		dp_overflow(SDS_DEPS_OVF_MARK);
		return 1;
	}
	m->key = k;
	return 1;
}

SEC("cgroup/connect4")
int sds_dp_connect4(struct bpf_sock_addr *ctx)
{
	return dp_connect(ctx, false);
}

SEC("cgroup/connect6")
int sds_dp_connect6(struct bpf_sock_addr *ctx)
{
	return dp_connect(ctx, true);
}

/*
 * A marked TCP socket's life: its state changes are asked for when it
 * starts connecting (TCP_CONNECT_CB runs in connect(2), after the cgroup
 * hook marked it); a change to CLOSE from SYN_SENT is a connect that
 * failed, one from an established state with the socket's error
 * ECONNRESET or EPIPE a reset by the peer.  An orderly close, or the
 * application's own abort, counts nothing.  Always 1.
 */
SEC("sockops")
int sds_dp_sockops(struct bpf_sock_ops *skops)
{
	struct sds_dep_count *c;
	struct sds_dep_mark *m;
	struct bpf_sock *sk;
	struct tcp_sock *tp;
	__u32 old, new;
	int err;

	sk = skops->sk;
	if (!sk)
		return 1;
	if (skops->op == BPF_SOCK_OPS_TCP_CONNECT_CB) {
		if (bpf_sk_storage_get(&deps_mark, sk, 0, 0))
			bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags |
						  BPF_SOCK_OPS_STATE_CB_FLAG);
		return 1;
	}
	if (skops->op != BPF_SOCK_OPS_STATE_CB)
		return 1;
	old = skops->args[0];
	new = skops->args[1];
	if (new != BPF_TCP_CLOSE)
		return 1;
	m = bpf_sk_storage_get(&deps_mark, sk, 0, 0);
	if (!m)
		return 1;
	if (old == BPF_TCP_SYN_SENT) {
		c = bpf_map_lookup_elem(&deps_edges, &m->key);
		if (c)
			__sync_fetch_and_add(&c->connect_errors, 1);
		return 1;
	}
	if (old != BPF_TCP_ESTABLISHED && old != BPF_TCP_CLOSE_WAIT &&
	    old != BPF_TCP_FIN_WAIT1 && old != BPF_TCP_FIN_WAIT2 &&
	    old != BPF_TCP_LAST_ACK && old != BPF_TCP_CLOSING)
		return 1;
	tp = bpf_skc_to_tcp_sock(sk);
	if (!tp)
		return 1;
	err = tp->inet_conn.icsk_inet.sk.sk_err;
	if (err != DP_ECONNRESET && err != DP_EPIPE)
		return 1;
	c = bpf_map_lookup_elem(&deps_edges, &m->key);
	if (c)
		__sync_fetch_and_add(&c->resets, 1);
	return 1;
}

/*
 * After every sendmsg of the host (net/socket.c's sock_sendmsg_nosec):
 * a send by a thread inside a point on a connected TCP or UDP socket of
 * an inet family counts on the edge of its peer, with its bytes or its
 * error.  EAGAIN and an interrupted send are the application retrying,
 * not a send: not counted.  An unconnected datagram has no peer here: not
 * counted (docs/DEPS.md).
 */
SEC("raw_tp/sock_send_length")
int BPF_PROG(sds_dp_send, struct sock *sk, int ret, int flags)
{
	struct sds_dep_key k = {};
	struct sds_dep_count *c;
	__u16 family, proto, type;
	__u32 ip4;

	if (ret == -DP_EAGAIN || ret == -DP_EINTR || ret == -DP_ERESTARTSYS)
		return 0;
	if (!sk || !dp_point(&k.point))
		return 0;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	proto = BPF_CORE_READ(sk, sk_protocol);
	type = BPF_CORE_READ(sk, sk_type);
	if (proto == SDS_DEP_TCP && type == 1 /* SOCK_STREAM */)
		k.proto = SDS_DEP_TCP;
	else if (proto == SDS_DEP_UDP && type == 2 /* SOCK_DGRAM */)
		k.proto = SDS_DEP_UDP;
	else
		return 0;
	k.port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (family == DP_AF_INET) {
		ip4 = BPF_CORE_READ(sk, __sk_common.skc_daddr);
		if (!ip4)
			return 0;
		dp_v4mapped(k.addr, ip4);
	} else if (family == DP_AF_INET6) {
		BPF_CORE_READ_INTO(&k.addr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
	} else {
		return 0;
	}
	if (!k.port)
		return 0;
	c = dp_edge(&k);
	if (!c)
		return 0;
	__sync_fetch_and_add(&c->sends, 1);
	if (ret < 0)
		__sync_fetch_and_add(&c->send_errors, 1);
	else
		__sync_fetch_and_add(&c->bytes, ret);
	return 0;
}
