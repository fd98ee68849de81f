/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds_keys.bpf.h - hot keys (docs/KEYS.md): each keyed point's calls
 * counted per key in a bounded table (bpf/sds_keystat.h), part of
 * sds.bpf.c (included there after the maps and the clock it uses).
 *
 * A function point's key is read from its arguments at entry
 * (key_cfg says where), a guard's from what libsds passes with
 * SDS_SITE_KEYED.  The key is hashed (sds_key_hash, the same in libsds and
 * the loader) and its entry found or inserted in the point's LRU table;
 * the hash travels to the call's end in its frame, where the latency and
 * the exception are added.  A key the kernel cannot read counts under one
 * key, (unreadable): the call itself is never failed.  An unkeyed point
 * pays one array load and a branch at entry for all this.
 */
#ifndef SDS_KEYS_BPF_H
#define SDS_KEYS_BPF_H

#include "sds_keystat.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SDS_MAX_POINTS);
	__type(key, __u32);
	__type(value, struct sds_key_cfg);
} key_cfg SEC(".maps");

/*
 * The inner tables' shape; the loader creates each point's with its
 * key_capacity as max_entries (the kernel compares key and value sizes
 * and flags of inner maps, not their size).
 */
struct key_table {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SDS_KEY_CAPACITY_DEFAULT);
	__type(key, __u64);
	__type(value, struct sds_key_stat);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SDS_MAX_POINTS);
	__type(key, __u32);
	__array(values, struct key_table);
} key_tables SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SDS_MAX_POINTS);
	__type(key, __u32);
	__type(value, struct sds_key_count);
} key_counts SEC(".maps");

/* Blocked keys of :failfast= points: written only by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SDS_KEY_BLOCKED_MAX);
	__type(key, struct sds_key_block);
	__type(value, __u64);		/* until_ns, CLOCK_MONOTONIC */
} key_blocked SEC(".maps");

/* Per CPU: the key being read, and the entry a new key is inserted from. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sds_key_stat);
} key_scratch SEC(".maps");

/*
 * Guard points with no table that were passed a key: the loader creates
 * their table at its next tick (guard points are keyed by what libsds
 * passes, which the loader cannot know before; a table per guard point
 * up front would cost its whole capacity for nothing).  Set here, cleared
 * by the loader.
 */
__u8 key_wanted[SDS_MAX_POINTS];

/*
 * Argument @n (1..6, System V order) of the call at @ctx.  The six
 * registers are read into the stack first, as copy.bpf.c's arg_of: a
 * switch over the context compiles to a variable context offset, which
 * the verifier refuses.
 */
static __always_inline __u64 key_arg(struct pt_regs *ctx, __u32 n)
{
	__u64 a[6] = {
		PT_REGS_PARM1(ctx), PT_REGS_PARM2(ctx), PT_REGS_PARM3(ctx),
		PT_REGS_PARM4(ctx), PT_REGS_PARM5(ctx),
		ctx->r9,	/* no PT_REGS_PARM6 in libbpf 1.1 */
	};

	n -= 1;
	if (n >= 6)
		return 0;
	return a[n];
}

static __always_inline void key_unreadable(struct sds_key *k)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->kind = SDS_KEY_UNREADABLE;
}

/*
 * Read the key of a function point's call at @ctx as @cfg says into @k
 * (zeroed first: the hash covers all 64 bytes).  A pointer the kernel
 * cannot read makes the key (unreadable).
 */
static __always_inline void key_read_fn(struct pt_regs *ctx,
					const struct sds_key_cfg *cfg,
					struct sds_key *k)
{
	__u64 p = key_arg(ctx, cfg->arg), n = cfg->max;
	long r;

	__builtin_memset(k, 0, sizeof(*k));
	if (n > SDS_KEY_MAX)
		n = SDS_KEY_MAX;
	switch (cfg->kind) {
	case SDS_KEY_INT:
		k->kind = SDS_KEY_INT;
		k->len = 8;
		*(__u64 *)k->bytes = p;
		return;
	case SDS_KEY_STR:
		/* n bytes and the NUL: the NUL may land past bytes[], in the
		 * entry's counts, which an insert zeroes anyway. */
		r = bpf_probe_read_user_str(k->bytes, (n & 127) + 1,
					    (const void *)p);
		if (r <= 0) {
			key_unreadable(k);
			return;
		}
		k->kind = SDS_KEY_STR;
		k->len = (__u8)(r - 1);
		/* The NUL at bytes[64] of a 64-byte key is not the key's. */
		return;
	case SDS_KEY_BUF:
		if (cfg->len_arg) {
			__u64 len = key_arg(ctx, cfg->len_arg);

			if (len < n)
				n = len;
		}
		n &= 127;
		if (n > SDS_KEY_MAX)
			n = SDS_KEY_MAX;
		if (n && bpf_probe_read_user(k->bytes, n, (const void *)p)) {
			key_unreadable(k);
			return;
		}
		k->kind = SDS_KEY_BUF;
		k->len = (__u8)n;
		return;
	}
	key_unreadable(k);
}

/*
 * A guard's key: the struct sds_key libsds passes (bpf/sds_types.h,
 * SDS_SITE_KEYED), read whole; a kind or length no guard writes makes
 * it (unreadable).
 */
static __always_inline void key_read_guard(struct pt_regs *ctx,
					   struct sds_key *k)
{
	if (bpf_probe_read_user(k, sizeof(*k), (const void *)PT_REGS_PARM3(ctx)) ||
	    k->len > SDS_KEY_MAX || k->kind < SDS_KEY_INT ||
	    k->kind > SDS_KEY_BUF) {
		key_unreadable(k);
		return;
	}
	/* The first word is kind and length, the padding zero. */
	*(__u64 *)k = (__u64)k->kind | (__u64)k->len << 8;
}

/* @point's key counts (per CPU): NULL only past the map. */
static __always_inline struct sds_key_count *key_count_of(__u32 point)
{
	return bpf_map_lookup_elem(&key_counts, &point);
}

/*
 * The entry of key @sc->key (hash @h) in @point's table, inserted if
 * missing; NULL (the call counted as lost) when the point has no table
 * or the insert failed.  Of two CPUs inserting one key at once, one
 * succeeds and counts the insertion: evictions (inserted - live) stay
 * exact.
 */
static __always_inline struct sds_key_stat *key_entry(__u32 point, __u64 h,
						      struct sds_key_stat *sc,
						      struct sds_key_count *kc)
{
	struct sds_key_stat *st;
	void *tbl;

	tbl = bpf_map_lookup_elem(&key_tables, &point);
	if (!tbl) {
		if (point < SDS_MAX_POINTS && !key_wanted[point])
			key_wanted[point] = 1;
		if (kc)
			ADD(&kc->lost, 1);
		return NULL;
	}
	st = bpf_map_lookup_elem(tbl, &h);
	if (st)
		return st;
	/* Zero but the key (the tail too: a string's NUL may be there). */
	__builtin_memset(sc, 0, __builtin_offsetof(struct sds_key_stat, key));
	__builtin_memset(sc->pad, 0, sizeof(sc->pad));
	if (!bpf_map_update_elem(tbl, &h, sc, BPF_NOEXIST) && kc)
		ADD(&kc->inserted, 1);
	st = bpf_map_lookup_elem(tbl, &h);
	if (!st && kc)
		ADD(&kc->lost, 1);
	return st;
}

/*
 * @st's calls are in second @sec: the first of them claims it and marks
 * the totals at its start in its ring slot.  Only a claimer writes a
 * slot, and a claim is of a second later than any before it.
 */
static __always_inline void key_mark(struct sds_key_stat *st, __u64 sec)
{
	struct sds_key_mark *m;
	__u32 now = (__u32)sec, old = st->sec;

	if (old == now)
		return;
	if (__sync_val_compare_and_swap(&st->sec, old, now) != old)
		return;
	m = &st->ring[now & (SDS_KEY_RING - 1)];
	m->calls = (__u32)st->calls;
	m->exceptions = (__u32)st->exceptions;
	m->downgrades = (__u32)st->downgrades;
	m->sec = now;
}

/*
 * Count a call of key @sc->key at @point entering at @ts (@downgraded: a
 * guard's refusal or a blocked key); its hash, for its end, or 0 when it
 * was not counted by key.
 */
static __always_inline __u64 key_count(__u32 point, struct sds_key_stat *sc,
				       __u64 ts, bool downgraded)
{
	struct sds_key_count *kc = key_count_of(point);
	struct sds_key_stat *st;
	__u64 h = sds_key_hash(&sc->key);

	if (sc->key.kind == SDS_KEY_UNREADABLE && kc)
		ADD(&kc->unreadable, 1);
	st = key_entry(point, h, sc, kc);
	if (!st)
		return 0;
	/* The mark first: it is of the totals before this second's calls. */
	key_mark(st, sec_of(ts));
	__sync_fetch_and_add(&st->calls, 1);
	if (downgraded)
		__sync_fetch_and_add(&st->downgrades, 1);
	return h;
}

/*
 * A keyed function point's call enters at @ts: counted by key, its hash
 * returned for the frame (0: not counted by key), and *@blocked set when
 * the key is blocked on a :failfast= point.
 */
__noinline __u64 sds_key_fn_enter(struct pt_regs *ctx, __u32 point, __u64 ts,
				  __u8 *blocked)
{
	struct sds_key_cfg *cfg;
	struct sds_key_stat *sc;
	struct sds_key_block b = {};
	__u32 zero = 0;
	__u64 h, *until;
	bool down = false;

	if (!blocked || point >= SDS_MAX_POINTS)
		return 0;
	cfg = bpf_map_lookup_elem(&key_cfg, &point);
	sc = bpf_map_lookup_elem(&key_scratch, &zero);
	if (!cfg || !sc)
		return 0;
	key_read_fn(ctx, cfg, &sc->key);
	if (cfg->failfast) {
		b.point = point;
		b.hash = sds_key_hash(&sc->key);
		until = bpf_map_lookup_elem(&key_blocked, &b);
		if (until && ts < *until) {
			struct sds_key_count *kc = key_count_of(point);

			down = true;
			if (kc)
				ADD(&kc->blocked, 1);
		}
	}
	h = key_count(point, sc, ts, down);
	*blocked = down;
	return h;
}

/*
 * A guard call with SDS_SITE_KEYED at @ctx enters (or, @downgraded, is
 * refused) at @ts: counted by key; its hash, for the frame.
 */
__noinline __u64 sds_key_guard(struct pt_regs *ctx, __u32 point, __u64 ts,
			       int downgraded)
{
	struct sds_key_stat *sc;
	__u32 zero = 0;

	if (point >= SDS_MAX_POINTS)
		return 0;
	sc = bpf_map_lookup_elem(&key_scratch, &zero);
	if (!sc)
		return 0;
	key_read_guard(ctx, &sc->key);
	return key_count(point, sc, ts, downgraded);
}

/*
 * A keyed call of @point (hash @h) has ended at @ts after @lat ns,
 * @exc if its return was an exception.  Its key may have been evicted
 * meanwhile: then only the point counts it.
 */
__noinline int sds_key_done(__u32 point, __u64 h, __u64 ts, __u64 lat, int exc)
{
	struct sds_key_stat *st;
	void *tbl;
	__u32 b;

	tbl = bpf_map_lookup_elem(&key_tables, &point);
	if (!tbl)
		return 0;
	st = bpf_map_lookup_elem(tbl, &h);
	if (!st)
		return 0;
	b = log2_u64(lat);
	if (b >= SDS_KEY_HIST)
		b = SDS_KEY_HIST - 1;
	/* Its completion is its bucket: the loader sums them. */
	__sync_fetch_and_add(&st->latency_sum, lat);
	__sync_fetch_and_add(&st->hist[b], 1);
	if (exc) {
		/* In the second it ends in: marked as a call's would be. */
		key_mark(st, sec_of(ts));
		__sync_fetch_and_add(&st->exceptions, 1);
	}
	return 0;
}

/* A guard's exception site with a key: the key's exception, no latency. */
__noinline int sds_key_guard_exception(struct pt_regs *ctx, __u32 point,
				       __u64 ts)
{
	struct sds_key_stat *sc, *st;
	__u32 zero = 0;
	void *tbl;
	__u64 h;

	if (point >= SDS_MAX_POINTS)
		return 0;
	sc = bpf_map_lookup_elem(&key_scratch, &zero);
	tbl = bpf_map_lookup_elem(&key_tables, &point);
	if (!sc || !tbl)
		return 0;
	key_read_guard(ctx, &sc->key);
	h = sds_key_hash(&sc->key);
	st = bpf_map_lookup_elem(tbl, &h);
	if (!st)
		return 0;
	key_mark(st, sec_of(ts));
	__sync_fetch_and_add(&st->exceptions, 1);
	return 0;
}

#endif /* SDS_KEYS_BPF_H */
