/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_fnlimit.bpf.h - the semaphore and the token bucket of function
 * points with :failfast= (docs/FAILFAST.md "Limits"), kept at the call's
 * entry; bpf/sds.bpf.c includes it once, after the cells map.
 *
 * A uprobe cannot hold a call back, but a call its limits refuse has its
 * frame marked (sds_frame.refused), and bpf/failfast.bpf.c fails that
 * call's dependency operations as a downgraded call's.  The state is one
 * entry per point in the programs' .bss, which the loader maps and
 * configures (loader/publish/failfast_limit.c): every process of the app
 * runs these programs, so the limits are the app's, as a guard's are.
 * Clients never see it: nothing they write can move a limit.
 */
#ifndef SDS_FNLIMIT_BPF_H
#define SDS_FNLIMIT_BPF_H

/* Compare-and-swap rounds before a contended entry gives up and passes. */
#define FNL_CAS_TRIES	16

struct sds_fn_limit fn_limits[SDS_MAX_POINTS];

/* The limits of @point, bounded for the verifier (as fn_marks_of). */
static __always_inline struct sds_fn_limit *fn_limit_of(__u32 point)
{
	asm volatile("" : "+r"(point));
	return &fn_limits[point & (SDS_MAX_POINTS - 1)];
}

/*
 * GCRA, as libsds's token_take (PROTOCOL.md): a call at @now passes while
 * the theoretical arrival time is at most burst - interval ahead of it,
 * and moves it one interval on.  A tat further ahead than any call could
 * have put it (the loader changed the bucket under us) starts the bucket
 * full.  Contended past FNL_CAS_TRIES rounds: pass (fail open).
 */
static __always_inline bool fn_token_take(struct sds_fn_limit *l, __u64 now)
{
	__u64 iv = l->token_interval_ns, burst = l->token_burst_ns;
	__u64 tat, base, ahead;
	int i;

	if (iv > burst)
		return false;	/* a bucket smaller than one token */
	for (i = 0; i < FNL_CAS_TRIES; i++) {
		tat = *(volatile __u64 *)&l->tat_ns;
		base = tat > now ? tat : now;
		ahead = base - now;
		if (ahead > burst + iv) {
			__sync_val_compare_and_swap(&l->tat_ns, tat, 0);
			continue;
		}
		if (ahead > burst - iv)
			return false;
		if (__sync_val_compare_and_swap(&l->tat_ns, tat, base + iv) == tat)
			return true;
	}
	return true;
}

/*
 * The semaphore: a compare-and-swap, not add-then-undo, so that a refused
 * call's transient +1 never refuses one that fits (the limit is exact).
 * 1 with a permit, 0 refused, -1 contended past the tries: passes without
 * one (fail open).
 */
static __always_inline int fn_permit_take(struct sds_fn_limit *l)
{
	__s64 cur, lim = l->concurrent_limit;
	int i;

	for (i = 0; i < FNL_CAS_TRIES; i++) {
		cur = *(volatile __s64 *)&l->inflight;
		if (cur >= lim)
			return 0;
		if (__sync_val_compare_and_swap(&l->inflight, cur, cur + 1) == cur)
			return 1;
	}
	return -1;
}

/*
 * A call of @point refused by @why, counted where the loader reads the
 * point's (@l: exact, the BPF side's own) and where it reads a guard's
 * refusals (the cell: the point shows as downgraded, reason concurrent or
 * token, while they refuse; engine_eval.c).
 */
static __always_inline void fn_refused(struct sds_fn_limit *l, __u32 point,
				       bool token)
{
	struct sds_cell *c = bpf_map_lookup_elem(&cells, &point);

	__sync_fetch_and_add(token ? &l->refused_token : &l->refused_concurrent, 1);
	/* Shared with every guard of the app: always atomic. */
	if (c)
		__sync_fetch_and_add(token ? &c->refused_token :
				     &c->refused_concurrent, 1);
}

/*
 * The limits of a call of @point entering at @ts that is pushing a frame:
 * its refusal (enum sds_fn_refusal) and, in *@permit, whether it holds a
 * permit, given back when its frame goes (fn_permit_give).  The bucket
 * first, as a guard's: a call it refuses takes no permit.  Global,
 * verified once: the entry's code stays as it was for points without
 * limits, which pay one load and a branch (fn_limit_enter).
 */
__noinline int sds_fn_limit_take(__u32 point, __u64 ts, __u8 *permit)
{
	struct sds_fn_limit *l;
	__u32 armed;
	int r;

	if (!permit || point >= SDS_MAX_POINTS)
		return SDS_FNR_NONE;
	l = fn_limit_of(point);
	/* The loader stores the limits first, @armed last. */
	armed = *(volatile __u32 *)&l->armed;
	if ((armed & SDS_FNL_TOKEN) && !fn_token_take(l, ts)) {
		fn_refused(l, point, true);
		return SDS_FNR_TOKEN;
	}
	if (armed & SDS_FNL_CONC) {
		r = fn_permit_take(l);
		if (!r) {
			fn_refused(l, point, false);
			return SDS_FNR_CONC;
		}
		*permit = r > 0;
	}
	return SDS_FNR_NONE;
}

static __always_inline __u8 fn_limit_enter(__u32 point, __u64 ts, __u8 *permit)
{
	*permit = 0;
	if (!fn_limit_of(point)->armed)
		return SDS_FNR_NONE;
	return sds_fn_limit_take(point, ts, permit);
}

/* A frame that held a permit of @point has gone: the permit with it. */
static __always_inline void fn_permit_give(__u32 point)
{
	__sync_fetch_and_add(&fn_limit_of(point)->inflight, -1);
}

#endif /* SDS_FNLIMIT_BPF_H */
