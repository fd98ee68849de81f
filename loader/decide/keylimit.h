/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * keylimit.h - hot keys' limits of one keyed point (docs/KEYS.md
 * "Limits"): which keys to block, and until when, from what the kernel
 * counted of each key.  Pure: no maps, no clock, no I/O
 * (tests/unit/decide/test_keylimit.c).
 *
 * The loader's tick (not this module) wires it:
 *
 *	kl = keylimit__new(capacity);			at the point's strategy
 *	keylimit__set_limits(kl, &def, ov, nov);	at every strategy (overrides by hash)
 *	each tick:
 *	  n = keylimit__tick(kl, now, obs, nobs, &ch);	obs: the point's per-key counts
 *	  for each ch[i]:  ch[i].until_ns ? flags__key_block(f, point, ch[i].hash, ch[i].until_ns)
 *	                                  : flags__key_clear(f, point, ch[i].hash);
 *	keylimit__free(kl);				the point or its key limits gone
 *	  (then flags__key_clear_all(f, point))
 *
 * Semantics, per key:
 *   - key_token_rate R, key_token_bucket B: a bucket of B tokens, R a
 *     second, that starts full; each tick the key's passed calls since
 *     the last are taken from it, into debt if need be.  A key in debt is
 *     blocked until the debt is paid (the guards lift the block by
 *     themselves at its end).  Calls pass unchecked only between a tick
 *     and the guards seeing the block, so over any T seconds a key passes
 *     at most R*T + B calls plus one tick's worth of its own calls (the
 *     debt, carried: the average holds).
 *   - key_visit_threshold V: the key is blocked while its visits over the
 *     last 10 s (as the point's visit_threshold counts them: calls that
 *     passed) are V or more; lifted at the first tick they are fewer.
 *   - key_overrides: a key whose hash has an override gets its limits
 *     instead of the point's (resolved at keylimit__set_limits).
 * At most @capacity keys are tracked; a new key beyond evicts the least
 * recently seen, lifting its block (it starts afresh, with a full
 * bucket, if it comes back).
 */
#ifndef SDS_KEYLIMIT_H
#define SDS_KEYLIMIT_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "sds_keys.h"

/* One key's limits; < 0 (SDS_OFF): that limit off. */
struct keylimit_limits {
	int64_t visit_threshold;	/* key_visit_threshold: >= 1 */
	int64_t token_rate;		/* key_token_rate: calls a second, >= 1 */
	int64_t token_bucket;		/* key_token_bucket: >= 1 with a rate */
};

/* A key_overrides entry: the key's sds_key_hash() and its limits. */
struct keylimit_override {
	uint64_t hash;
	struct keylimit_limits lim;
};

/* What the kernel counted of one key of the point, at this tick. */
struct keylimit_obs {
	uint64_t hash;		/* sds_key_hash() of the key; 0: ignored */
	uint64_t passed;	/* its calls that passed since the previous tick */
	uint64_t visits;	/* its visits (passed calls) over the last 10 s */
};

/* Why a key is blocked (struct keylimit_change.why). */
#define KEYLIMIT_NONE	0
#define KEYLIMIT_TOKEN	1	/* in debt to its bucket */
#define KEYLIMIT_VISIT	2	/* at or over its visit threshold */

/* A change to the point's blocked-key table. */
struct keylimit_change {
	uint64_t hash;		/* the key */
	uint64_t until_ns;	/* block until then (CLOCK_MONOTONIC); 0: lift its block */
	uint32_t why;		/* KEYLIMIT_TOKEN or _VISIT; _NONE when lifted */
};

/* The most observations one tick takes: the rest are ignored. */
#define KEYLIMIT_OBS_MAX(capacity)	(capacity)

struct keylimit;

/*
 * A point's key state, tracking at most @capacity keys (0: the default,
 * SDS_KEY_CAPACITY_DEFAULT; at most SDS_KEY_CAPACITY_MAX).  NULL: out of
 * memory, or @capacity too large (errno EINVAL).
 */
struct keylimit *keylimit__new(uint32_t capacity);
void keylimit__free(struct keylimit *kl);

/*
 * The point's key limits @def and @n overrides @ov (at most
 * SDS_KEY_OVERRIDES_MAX; a hash twice: the last wins), copied.  Keys
 * tracked keep their buckets (cut to a smaller bucket); a key whose
 * limit went is lifted at the next tick.  0, or -1 (errno EINVAL, or
 * ENOMEM) and the limits before stay.
 */
int keylimit__set_limits(struct keylimit *kl, const struct keylimit_limits *def,
			 const struct keylimit_override *ov, size_t n);

/*
 * One tick at CLOCK_MONOTONIC @now_ns with the point's @n observations
 * @obs (keys not in them counted nothing: no calls, no visits).  Sets
 * *@out to the changes to publish, in a buffer of @kl's valid until the
 * next call, and returns how many: at most one a key.  A block's end is
 * at most SDS_KEY_BLOCK_MAX_NS ahead: a longer one is renewed by a later
 * tick's change.
 */
size_t keylimit__tick(struct keylimit *kl, uint64_t now_ns,
		      const struct keylimit_obs *obs, size_t n,
		      const struct keylimit_change **out);

/* Keys tracked now, and those of them blocked (as the changes said). */
uint32_t keylimit__tracked(const struct keylimit *kl);
uint32_t keylimit__blocked(const struct keylimit *kl);

struct sds_strategies;
struct sds_strategy;

/*
 * The key limits of strategy @st of document @s (common/strategy.h) for
 * a point whose keys are of kind @kind (enum sds_key_kind: SDS_KEY_INT
 * for :key=argN, whose override keys are decimal integers, 8 bytes
 * little-endian; SDS_KEY_STR for :key=strN; SDS_KEY_BUF for :key=bufN
 * and guards), ready for keylimit__set_limits: *@def, and in @ov (room
 * for SDS_KEY_OVERRIDES_MAX) each override with its key's sds_key_hash()
 * as the probes and the guards hash it.  Returns how many, or -1 with a
 * line in @err for an override no key of the point can be ("abc" of an
 * integer key).
 */
int keylimit__from_strategy(const struct sds_strategies *s,
			    const struct sds_strategy *st, unsigned int kind,
			    struct keylimit_limits *def,
			    struct keylimit_override *ov, char *err, size_t errlen);

/* The key of kind @kind a key_overrides entry's text @text names: 0, or -1. */
int keylimit__key_of_text(unsigned int kind, const char *text,
			  struct sds_key *out);

/*
 * The limits @kl applies to the key of @hash (an override's, or the
 * point's): for `stats --keys` and the tests.
 */
const struct keylimit_limits *keylimit__limits_of(const struct keylimit *kl,
						  uint64_t hash);

#endif /* SDS_KEYLIMIT_H */
