// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * failfast.bpf.c - a downgraded function point fails its dependency calls
 * at once (issue 15, docs/FAILFAST.md).
 *
 * A uprobe cannot skip a function or change its return (docs/DESIGN.md §3),
 * but a BPF LSM program may refuse an operation with an errno.  The
 * thread's frame stack (task storage `frames`, kept by sds.bpf.c and
 * shared with this object by the loader) says which function points the
 * thread is inside; for connect, sendmsg and open, a point on that stack
 * whose :failfast= names the operation and which the loader says is
 * downgraded makes the syscall return -errno.  Everything else passes.
 *
 * Loaded only when some point has :failfast=: a host without one pays
 * nothing.  With it, a thread outside every point pays one task-storage
 * lookup (no create) per operation.  Any lookup that fails passes: this
 * object must never deny what it was not told to.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "sds_types.h"
#include "sds_failfast.h"
#include "sds_common.bpf.h"
#include "sds_frameread.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SDS_MAX_POINTS);
	__type(key, __u32);
	__type(value, struct sds_ff_state);
} failfast_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SDS_MAX_POINTS);
	__type(key, __u32);
	__type(value, struct sds_ff_probe);
} failfast_probe SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SDS_MAX_POINTS);
	__type(key, __u32);
	__type(value, struct sds_ff_count);
} failfast_count SEC(".maps");

/*
 * A hold lets one op through per probe interval: the first thread to
 * swap the next probe time forward passes, the others are denied.
 */
static __always_inline bool ff_probe_claim(__u32 point,
					   const struct sds_ff_state *st,
					   __u64 now)
{
	struct sds_ff_probe *pr;
	__u64 next;

	if (!st->probe_interval_ns)
		return false;
	pr = bpf_map_lookup_elem(&failfast_probe, &point);
	if (!pr)
		return true;	/* fail open */
	next = pr->next_ns;
	if (now < next)
		return false;
	return __sync_val_compare_and_swap(&pr->next_ns, next,
					   now + st->probe_interval_ns) == next;
}

/* What ff_point_denies decided. */
enum ff_why {
	FF_PASS = 0,		/* the operation runs */
	FF_DENY = 1,		/* failed: the point is downgraded */
	FF_DRILL = 2,		/* failed: the point's error drill */
	FF_PROBE = 3,		/* runs: the hold's probe, claimed now */
};

/* What point @point does to operation @op now (enum ff_why). */
static __always_inline int ff_point_denies(__u32 point, __u32 op, __u64 *now,
					   struct sds_ff_state **stp)
{
	struct sds_ff_state *st;
	struct sds_ff_count *c;

	st = bpf_map_lookup_elem(&failfast_state, &point);
	if (!st || !(st->ops & op))
		return 0;
	*stp = st;
	/* A passing point costs no clock read: most of a thread's points are. */
	if (!st->deny && !st->drill_ratio)
		return 0;
	if (!*now)
		*now = bpf_ktime_get_ns();
	if (st->deny && *now < st->expires_ns && frameread_hit(st->rate)) {
		if (!ff_probe_claim(point, st, *now))
			return FF_DENY;
		c = bpf_map_lookup_elem(&failfast_count, &point);
		if (c)
			ADD(&c->probes, 1);
		return FF_PROBE;
	}
	if (st->drill_ratio && *now < st->drill_expires_ns &&
	    frameread_hit(st->drill_ratio))
		return FF_DRILL;
	return FF_PASS;
}

/*
 * A frame of @point marked at its entry fails operation @op as a
 * downgraded point's would, whatever the point's own state: a key the
 * loader blocked (@refused 0), or a refusal of its limits (enum
 * sds_fn_refusal).  The errno (counted in denied), or 0: @op is not the
 * point's, or the call is past an exact mark and the loader's downgrade
 * of the point is in force: it has seen the trip, and its rate, hold and
 * probes decide, as a guard's do (libsds/guard.c, "exact trips").  A
 * global function, verified once on its own: inlined into ff_check's
 * loop its branches multiply the verifier's states.
 */
__noinline int ff_marked(__u32 point, __u32 op, __u32 refused)
{
	struct sds_ff_state *st;
	struct sds_ff_count *c;

	st = bpf_map_lookup_elem(&failfast_state, &point);
	if (!st || !(st->ops & op))
		return 0;
	if (refused == SDS_FNR_BUDGET && st->deny)
		return 0;
	c = bpf_map_lookup_elem(&failfast_count, &point);
	if (c)
		ADD(&c->denied, 1);
	return op == SDS_FF_OPEN ? st->file_errno : st->sock_errno;
}

/*
 * The verdict for operation @op of the current thread: 0, or -errno of
 * the innermost point on its frame stack that fails @op now.
 */
static __always_inline int ff_check(__u32 op)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct sds_ff_state *st = NULL;
	struct sds_ff_count *c;
	struct sds_frames *fr;
	struct sds_frame *f;
	__u32 d, i, point;
	__u64 now, usp;
	enum ff_why why;
	int e;

	/* The thread's stack now (sds_frameread.bpf.h): none, no point. */
	fr = frameread_stack(task, &d, &usp);
	if (!fr)
		return 0;
	now = 0;
	for (i = 0; i < SDS_MAX_DEPTH; i++) {
		if (i >= d)
			break;
		f = frameread_at(fr, d - 1 - i);
		point = f->point;
		if (point >= SDS_MAX_POINTS || (f->sp && f->sp < usp))
			continue;
		/* A .part piece going on with the call below: that call's frame decides. */
		if (f->cont)
			continue;
		/*
		 * A hold's probe is a call, not one operation: every operation
		 * of the call the probe was claimed in runs, so that its
		 * outcome (reported at its end, sds.bpf.c) is the dependency's.
		 */
		if (f->ff_probe)
			continue;
		/*
		 * A call whose key the loader blocked (docs/KEYS.md), or that
		 * its point's semaphore, bucket or exact marks refused
		 * (sds_fnlimit.bpf.h, sds_fnmarks.bpf.h): sds.bpf.c marked its
		 * frame at entry (ff_marked).
		 */
		if (f->key_blocked || f->refused) {
			e = ff_marked(point, op, f->key_blocked ? 0 : f->refused);
			if (e > 0)
				return -e;
		}
		why = ff_point_denies(point, op, &now, &st);
		if (why == FF_PROBE)
			f->ff_probe = 1;
		if (why == FF_PASS || why == FF_PROBE || !st)
			continue;
		c = bpf_map_lookup_elem(&failfast_count, &point);
		if (c) {
			ADD(&c->denied, 1);
			if (why == FF_DRILL)
				ADD(&c->drilled, 1);
		}
		/* A drill may rehearse another failure than the point's own. */
		if (why == FF_DRILL && st->drill_errno > 0)
			return -st->drill_errno;
		return -(op == SDS_FF_OPEN ? st->file_errno : st->sock_errno);
	}
	return 0;
}

SEC("lsm/socket_connect")
int BPF_PROG(sds_ff_connect, struct socket *sock, struct sockaddr *address,
	     int addrlen, int ret)
{
	/* An earlier LSM's refusal stands. */
	if (ret)
		return ret;
	return ff_check(SDS_FF_CONNECT);
}

SEC("lsm/socket_sendmsg")
int BPF_PROG(sds_ff_sendmsg, struct socket *sock, struct msghdr *msg,
	     int size, int ret)
{
	if (ret)
		return ret;
	return ff_check(SDS_FF_SEND);
}

SEC("lsm/file_open")
int BPF_PROG(sds_ff_open, struct file *file, int ret)
{
	if (ret)
		return ret;
	return ff_check(SDS_FF_OPEN);
}

/*
 * The cgroup lever, for kernels that refuse LSM programs (a kernel
 * without BPF trampolines): the same decision from the cgroup sock_addr
 * hooks, attached by the loader to the cgroup2 root with bpf_links it
 * owns.  They run for every socket on the host, in the caller's context:
 * a connect(2) of a TCP or UDP socket (connect4/6) and a sendmsg(2) of
 * an unconnected UDP socket, the address named in the call (sendmsg4/6;
 * a connected socket's sends and TCP's run no hook).  An unconnected
 * datagram names its peer as a connect does, so it is judged as a
 * connect.  To deny: the errno as the hook's return value (the caller
 * sees it instead of the EPERM of a bare 0); 1 passes.
 */
static __always_inline int ff_cg(__u32 op)
{
	int e = ff_check(op);

	if (!e)
		return 1;
	bpf_set_retval(e);
	return 0;
}

SEC("cgroup/connect4")
int sds_ff_cg_connect4(struct bpf_sock_addr *ctx)
{
	return ff_cg(SDS_FF_CONNECT);
}

SEC("cgroup/connect6")
int sds_ff_cg_connect6(struct bpf_sock_addr *ctx)
{
	return ff_cg(SDS_FF_CONNECT);
}

SEC("cgroup/sendmsg4")
int sds_ff_cg_sendmsg4(struct bpf_sock_addr *ctx)
{
	return ff_cg(SDS_FF_CONNECT);
}

SEC("cgroup/sendmsg6")
int sds_ff_cg_sendmsg6(struct bpf_sock_addr *ctx)
{
	return ff_cg(SDS_FF_CONNECT);
}

/*
 * Dry run, for the tests on kernels that refuse LSM programs (the loader
 * loads these instead only under SDS_FAILFAST_DRYRUN, docs/FAILFAST.md):
 * the same decision from a uprobe on libc's connect, send and open,
 * counted in failfast_count exactly as the LSM programs count it, and
 * never enforced (a uprobe cannot fail a call).
 */
SEC("uprobe")
int sds_ff_dry_connect(struct pt_regs *ctx)
{
	ff_check(SDS_FF_CONNECT);
	return 0;
}

SEC("uprobe")
int sds_ff_dry_send(struct pt_regs *ctx)
{
	ff_check(SDS_FF_SEND);
	return 0;
}

SEC("uprobe")
int sds_ff_dry_open(struct pt_regs *ctx)
{
	ff_check(SDS_FF_OPEN);
	return 0;
}
