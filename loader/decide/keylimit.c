// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * keylimit.c - hot keys' limits of one keyed point: per key a token
 * bucket in debt or not and its visits, the blocks they ask for
 * (keylimit.h says what and why).
 *
 * Keys live in a fixed pool of @capacity entries, found by an open
 * addressing index (linear probing, deleted by backward shift, so no
 * tombstones pile up under churn) and kept in least-recently-seen order
 * on a list through the pool: a new key beyond the capacity takes the
 * oldest entry.  Tokens are counted in nano-calls (a call is 1e9), in
 * 128 bits: R calls/s times a tick's nanoseconds never rounds, and no
 * product of the bounded inputs overflows.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "strategy.h"
#include "sds_types.h"
#include "sds_flags.h"
#include "sds_keys.h"
#include "decide/keylimit.h"

#define NANO		1000000000LL
#define NIL		UINT32_MAX
/* Calls of one key in one tick believed: more is no kernel's count. */
#define PASSED_MAX	((uint64_t)1 << 40)

struct kl_entry {
	uint64_t hash;		/* the key; 0: free */
	__int128 tokens;	/* nano-calls in the bucket; < 0: debt */
	bool filled;		/* @tokens is a bucket's (a rate was in force) */
	uint64_t last_ns;	/* the bucket's last refill */
	uint64_t until_ns;	/* the block the changes last gave; 0: none */
	uint32_t why;		/* KEYLIMIT_* of that block */
	uint64_t passed;	/* this tick's observations */
	uint64_t visits;
	uint64_t obs_gen;	/* the tick that observed it last */
	uint32_t prev, next;	/* least recently seen first */
};

struct keylimit {
	uint32_t capacity;		/* entries of @e */
	uint32_t used;			/* entries taken (never given back but by eviction) */
	uint32_t mask;			/* @idx's size - 1 */
	uint32_t head, tail;		/* the seen list: head least recent */
	uint32_t blocked;		/* entries with a block */
	uint64_t gen;			/* ticks */
	struct kl_entry *e;
	uint32_t *idx;			/* entry + 1; 0: empty */
	struct keylimit_change *chg;	/* a tick's changes: 2 * capacity */
	struct keylimit_limits def;	/* the point's */
	struct keylimit_override *ov;	/* sorted by hash, one a hash */
	size_t nov;
};

struct keylimit *keylimit__new(uint32_t capacity)
{
	struct keylimit *kl;
	uint32_t size = 2;

	if (!capacity)
		capacity = SDS_KEY_CAPACITY_DEFAULT;
	if (capacity > SDS_KEY_CAPACITY_MAX) {
		errno = EINVAL;
		return NULL;
	}
	while (size < 2 * capacity)
		size <<= 1;
	kl = calloc(1, sizeof(*kl));
	if (!kl)
		return NULL;
	kl->capacity = capacity;
	kl->mask = size - 1;
	kl->head = kl->tail = NIL;
	kl->def.visit_threshold = kl->def.token_rate = kl->def.token_bucket = -1;
	kl->e = calloc(capacity, sizeof(*kl->e));
	kl->idx = calloc(size, sizeof(*kl->idx));
	kl->chg = calloc(2 * (size_t)capacity, sizeof(*kl->chg));
	if (!kl->e || !kl->idx || !kl->chg) {
		keylimit__free(kl);
		errno = ENOMEM;
		return NULL;
	}
	return kl;
}

void keylimit__free(struct keylimit *kl)
{
	if (!kl)
		return;
	free(kl->e);
	free(kl->idx);
	free(kl->chg);
	free(kl->ov);
	free(kl);
}

/* ---- limits ---- */

static void limits_norm(struct keylimit_limits *l)
{
	if (l->visit_threshold < 1)
		l->visit_threshold = -1;
	if (l->token_rate < 1) {
		l->token_rate = l->token_bucket = -1;
	} else if (l->token_bucket < 1) {
		l->token_bucket = l->token_rate;
	}
}

/* Keys' limits as strategy.c bounds them (and no product overflows). */
static bool limits_ok(const struct keylimit_limits *l)
{
	return l->token_rate <= 1000000000 && l->token_bucket <= 1000000000 &&
	       l->visit_threshold <= ((int64_t)1 << 40);
}

struct ov_sort {
	struct keylimit_override o;
	size_t i;		/* its place in the caller's array: the last wins */
};

static int ov_cmp(const void *a, const void *b)
{
	const struct ov_sort *x = a, *y = b;

	if (x->o.hash != y->o.hash)
		return x->o.hash < y->o.hash ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int keylimit__set_limits(struct keylimit *kl, const struct keylimit_limits *def,
			 const struct keylimit_override *ov, size_t n)
{
	struct keylimit_override *out = NULL;
	struct keylimit_limits d = *def;
	struct ov_sort *s;
	size_t i, m = 0;

	if (n > SDS_KEY_OVERRIDES_MAX || (n && !ov) || !limits_ok(&d)) {
		errno = EINVAL;
		return -1;
	}
	limits_norm(&d);
	if (n) {
		s = calloc(n, sizeof(*s));
		out = calloc(n, sizeof(*out));
		if (!s || !out) {
			free(s);
			free(out);
			errno = ENOMEM;
			return -1;
		}
		for (i = 0; i < n; i++) {
			s[i].o = ov[i];
			s[i].i = i;
			if (!ov[i].hash || !limits_ok(&ov[i].lim)) {
				free(s);
				free(out);
				errno = EINVAL;
				return -1;
			}
			limits_norm(&s[i].o.lim);
		}
		qsort(s, n, sizeof(*s), ov_cmp);
		for (i = 0; i < n; i++) {
			if (i + 1 < n && s[i + 1].o.hash == s[i].o.hash)
				continue;	/* a later one of the same hash wins */
			out[m++] = s[i].o;
		}
		free(s);
	}
	free(kl->ov);
	kl->ov = out;
	kl->nov = m;
	kl->def = d;
	return 0;
}

const struct keylimit_limits *keylimit__limits_of(const struct keylimit *kl,
						  uint64_t hash)
{
	size_t lo = 0, hi = kl->nov;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (kl->ov[mid].hash == hash)
			return &kl->ov[mid].lim;
		if (kl->ov[mid].hash < hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &kl->def;
}

/* ---- the index and the seen list ---- */

static uint32_t idx_home(const struct keylimit *kl, uint64_t hash)
{
	/* The hash's high half: the flags table's window takes its low bits. */
	return (uint32_t)(hash >> 32 ^ hash >> 7) & kl->mask;
}

/* The slot of @idx holding @hash, or the empty one where it would go. */
static uint32_t idx_find(const struct keylimit *kl, uint64_t hash)
{
	uint32_t i = idx_home(kl, hash);

	while (kl->idx[i] && kl->e[kl->idx[i] - 1].hash != hash)
		i = (i + 1) & kl->mask;
	return i;
}

/* Remove slot @i of the index: later slots of the run shifted back. */
static void idx_delete(struct keylimit *kl, uint32_t i)
{
	uint32_t j = i, home;

	kl->idx[i] = 0;
	for (;;) {
		j = (j + 1) & kl->mask;
		if (!kl->idx[j])
			return;
		home = idx_home(kl, kl->e[kl->idx[j] - 1].hash);
		/* Does j's entry belong at or before the hole, cyclically? */
		if (((j - home) & kl->mask) >= ((j - i) & kl->mask)) {
			kl->idx[i] = kl->idx[j];
			kl->idx[j] = 0;
			i = j;
		}
	}
}

static void list_unlink(struct keylimit *kl, uint32_t x)
{
	struct kl_entry *e = &kl->e[x];

	if (e->prev != NIL)
		kl->e[e->prev].next = e->next;
	else
		kl->head = e->next;
	if (e->next != NIL)
		kl->e[e->next].prev = e->prev;
	else
		kl->tail = e->prev;
	e->prev = e->next = NIL;
}

static void list_append(struct keylimit *kl, uint32_t x)
{
	struct kl_entry *e = &kl->e[x];

	e->prev = kl->tail;
	e->next = NIL;
	if (kl->tail != NIL)
		kl->e[kl->tail].next = x;
	else
		kl->head = x;
	kl->tail = x;
}

static void emit(struct keylimit *kl, size_t *nch, uint64_t hash,
		 uint64_t until_ns, uint32_t why)
{
	struct keylimit_change *c = &kl->chg[(*nch)++];

	c->hash = hash;
	c->until_ns = until_ns;
	c->why = why;
}

/*
 * The entry of @hash, made if new: the least recently seen one evicted
 * when all are taken (its block lifted by a change).
 */
static uint32_t entry_get(struct keylimit *kl, uint64_t hash, size_t *nch)
{
	uint32_t slot = idx_find(kl, hash), x;
	struct kl_entry *e;

	if (kl->idx[slot])
		return kl->idx[slot] - 1;
	if (kl->used < kl->capacity) {
		x = kl->used++;
	} else {
		x = kl->head;
		e = &kl->e[x];
		if (e->until_ns) {
			emit(kl, nch, e->hash, 0, KEYLIMIT_NONE);
			kl->blocked--;
		}
		list_unlink(kl, x);
		idx_delete(kl, idx_find(kl, e->hash));
		slot = idx_find(kl, hash);	/* the delete may have moved it */
	}
	e = &kl->e[x];
	memset(e, 0, sizeof(*e));
	e->hash = hash;
	e->prev = e->next = NIL;
	kl->idx[slot] = x + 1;
	list_append(kl, x);
	return x;
}

/* ---- the tick ---- */

/* @e's bucket at @now after its calls of this tick: refilled, then spent. */
static void bucket_run(struct kl_entry *e, const struct keylimit_limits *l,
		       uint64_t now)
{
	__int128 cap = (__int128)l->token_bucket * NANO;
	__int128 floor = -(__int128)l->token_rate * (__int128)SDS_KEY_BLOCK_MAX_NS;

	if (!e->filled) {
		/* A new key, or a rate new to it: the bucket starts full. */
		e->tokens = cap;
		e->filled = true;
	} else if (now > e->last_ns) {
		e->tokens += (__int128)l->token_rate * (now - e->last_ns);
	}
	if (e->tokens > cap)
		e->tokens = cap;
	e->last_ns = now;
	e->tokens -= (__int128)e->passed * NANO;
	/* Debt beyond a long block's worth is forgotten: it could not be enforced. */
	if (e->tokens < floor)
		e->tokens = floor;
}

size_t keylimit__tick(struct keylimit *kl, uint64_t now_ns,
		      const struct keylimit_obs *obs, size_t n,
		      const struct keylimit_change **out)
{
	size_t nch = 0, i;
	uint32_t x;

	kl->gen++;
	if (n > KEYLIMIT_OBS_MAX(kl->capacity))
		n = KEYLIMIT_OBS_MAX(kl->capacity);
	for (i = 0; i < n; i++) {
		struct kl_entry *e;

		if (!obs[i].hash)
			continue;
		x = entry_get(kl, obs[i].hash, &nch);
		e = &kl->e[x];
		list_unlink(kl, x);
		list_append(kl, x);	/* seen: the most recent */
		if (e->obs_gen != kl->gen) {
			e->obs_gen = kl->gen;
			e->passed = 0;
		}
		e->passed += obs[i].passed < PASSED_MAX ? obs[i].passed : PASSED_MAX;
		if (e->passed > PASSED_MAX)
			e->passed = PASSED_MAX;
		e->visits = obs[i].visits;
	}

	for (x = kl->head; x != NIL; x = kl->e[x].next) {
		struct kl_entry *e = &kl->e[x];
		const struct keylimit_limits *l = keylimit__limits_of(kl, e->hash);
		uint64_t want = 0, end;
		uint32_t why = KEYLIMIT_NONE;

		if (e->obs_gen != kl->gen)
			e->passed = e->visits = 0;	/* nothing counted this tick */
		if (l->token_rate > 0) {
			bucket_run(e, l, now_ns);
			if (e->tokens < 0) {
				__int128 ns = (-e->tokens + l->token_rate - 1) / l->token_rate;

				want = now_ns + (ns < (__int128)SDS_KEY_BLOCK_MAX_NS ?
						 (uint64_t)ns : SDS_KEY_BLOCK_MAX_NS);
				why = KEYLIMIT_TOKEN;
			}
		} else {
			e->filled = false;	/* a rate that comes back starts full */
		}
		e->passed = 0;
		if (l->visit_threshold > 0 && e->visits >= (uint64_t)l->visit_threshold) {
			/* Until the visits fall: lifted by a change, renewed by one. */
			end = now_ns + SDS_KEY_BLOCK_MAX_NS;
			if (end > want) {
				want = end;
				why = KEYLIMIT_VISIT;
			}
		}

		if (!want) {
			if (e->until_ns) {
				emit(kl, &nch, e->hash, 0, KEYLIMIT_NONE);
				kl->blocked--;
			}
			e->until_ns = 0;
			e->why = KEYLIMIT_NONE;
			continue;
		}
		/* A visit block stands while over half its horizon is left. */
		if (why == KEYLIMIT_VISIT && e->why == KEYLIMIT_VISIT &&
		    e->until_ns >= now_ns + SDS_KEY_BLOCK_MAX_NS / 2)
			continue;
		if (want == e->until_ns && why == e->why)
			continue;
		if (!e->until_ns)
			kl->blocked++;
		emit(kl, &nch, e->hash, want, why);
		e->until_ns = want;
		e->why = why;
	}
	*out = kl->chg;
	return nch;
}

uint32_t keylimit__tracked(const struct keylimit *kl)
{
	return kl->used;
}

uint32_t keylimit__blocked(const struct keylimit *kl)
{
	return kl->blocked;
}

/* ---- from a strategy ---- */

int keylimit__key_of_text(unsigned int kind, const char *text,
			  struct sds_key *out)
{
	size_t len = strlen(text);

	memset(out, 0, sizeof(*out));
	out->kind = kind;
	if (kind == SDS_KEY_INT) {
		unsigned long long u;
		char *end;
		int i;

		errno = 0;
		if (text[0] == '-')
			u = (unsigned long long)strtoll(text, &end, 10);
		else
			u = strtoull(text, &end, 10);
		if (!len || *end || errno || text[0] == '+' || text[0] == ' ')
			return -1;
		out->len = 8;
		for (i = 0; i < 8; i++)
			out->bytes[i] = (__u8)(u >> (8 * i));
		return 0;
	}
	if ((kind != SDS_KEY_STR && kind != SDS_KEY_BUF) || !len || len > SDS_KEY_MAX)
		return -1;
	out->len = (__u8)len;
	memcpy(out->bytes, text, len);
	return 0;
}

int keylimit__from_strategy(const struct sds_strategies *s,
			    const struct sds_strategy *st, unsigned int kind,
			    struct keylimit_limits *def,
			    struct keylimit_override *ov, char *err, size_t errlen)
{
	const struct sds_key_override *o;
	struct sds_key k;
	int i, n;

	def->visit_threshold = st->key_visit_threshold;
	def->token_rate = st->key_token_rate;
	def->token_bucket = st->key_token_bucket;
	o = strategy_key_overrides(s, st, &n);
	for (i = 0; i < n; i++) {
		if (keylimit__key_of_text(kind, o[i].key, &k)) {
			snprintf(err, errlen,
				 "point '%s': key_overrides '%s': no key of this point (its keys are %s)",
				 st->point, o[i].key,
				 kind == SDS_KEY_INT ? "integers" : "1-64 bytes");
			return -1;
		}
		ov[i].hash = sds_key_hash(&k);
		strategy_key_override_limits(st, &o[i], &ov[i].lim.visit_threshold,
					     &ov[i].lim.token_rate,
					     &ov[i].lim.token_bucket);
	}
	return n;
}
