/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * balance.h - the policies that pick one provider of a dependency: Dubbo's
 * five (weighted random, smooth weighted round robin, least active,
 * shortest response, consistent hash) and its warm-up (docs/BALANCE.md).
 * Internal to libsds: no symbol of it is exported yet.
 *
 * A balancer is set up once from the providers' names and weights
 * (validated there, with a message that says what is wrong); every pick
 * then reads the providers' load as the caller gives it -- later the
 * flags region's gauges, published every tick -- and neither allocates,
 * locks nor enters the kernel.
 */
#ifndef SDS_BALANCE_H
#define SDS_BALANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SDS_LB_MAX		256	/* providers of one balancer */
#define SDS_LB_WEIGHT_MAX	10000	/* weights are 1..SDS_LB_WEIGHT_MAX */
#define SDS_LB_NAME_MAX		128	/* bytes of a provider's name */
#define SDS_LB_VNODES		160	/* ring points per provider (Dubbo's) */
#define SDS_LB_RR_SLOTS		16	/* round robin states (see balance.c) */

/* Warm-up: 0 asks for the default, SDS_LB_WARMUP_OFF for none. */
#define SDS_LB_WARMUP_DEFAULT_NS	(600ULL * 1000000000ULL)	/* 10 min */
#define SDS_LB_WARMUP_MAX_NS		(86400ULL * 1000000000ULL)	/* 1 day */
#define SDS_LB_WARMUP_OFF		UINT64_MAX

enum sds_lb_policy {
	SDS_LB_RANDOM,			/* "random": the default */
	SDS_LB_ROUND_ROBIN,		/* "round_robin" */
	SDS_LB_LEAST_ACTIVE,		/* "least_active" */
	SDS_LB_SHORTEST_RESPONSE,	/* "shortest_response" */
	SDS_LB_CONSISTENT_HASH,		/* "consistent_hash" */
	SDS_LB_NPOLICIES,
};

/* A provider as set up: configuration, fixed for the balancer's life. */
struct sds_lb_provider {
	const char *name;	/* unique, 1..SDS_LB_NAME_MAX-1 bytes; copied */
	int32_t weight;		/* 1..SDS_LB_WEIGHT_MAX */
};

/*
 * A provider's load as the caller sees it now (one per provider, in the
 * set-up order).  Read once per pick, field by field, with relaxed loads:
 * a writer (the caller's tick) may change it under a pick, which then
 * decides on a mix of two ticks -- harmless, never out of bounds.
 */
struct sds_lb_load {
	uint64_t start_ns;	/* when the provider started (warm-up); 0: long ago */
	uint64_t in_flight;	/* calls in flight, host-wide */
	uint64_t latency_ns;	/* recent mean latency; 0: not measured yet */
	uint32_t downgraded;	/* non-zero: never picked while another passes */
	uint32_t pad;
};

struct sds_lb;

/*
 * Set up a balancer over @n providers with the policy named @policy (NULL:
 * "random") and a warm-up of @warmup_ns (0: the default, 10 minutes;
 * SDS_LB_WARMUP_OFF: none).  0 and *@out, or a negative errno and, in
 * @err (if not NULL), one line saying why:
 *   -EINVAL  an unknown policy (the line lists the known ones), a weight
 *            out of 1..SDS_LB_WEIGHT_MAX, a missing, long or repeated
 *            name, no provider, a warm-up over a day
 *   -E2BIG   more providers than SDS_LB_MAX
 *   -ENOMEM
 */
int sds_lb_new(struct sds_lb **out, const char *policy,
	       const struct sds_lb_provider *p, int n, uint64_t warmup_ns,
	       char *err, size_t errlen);
void sds_lb_free(struct sds_lb *lb);

int sds_lb_count(const struct sds_lb *lb);
enum sds_lb_policy sds_lb_policy(const struct sds_lb *lb);

/* The policy named @name, or -1. */
int sds_lb_policy_from_name(const char *name);
const char *sds_lb_policy_name(enum sds_lb_policy p);

/*
 * Pick a provider: its index (0..n-1), or -ENOENT when every provider is
 * downgraded (the caller runs its fallback).  @load holds n entries (NULL:
 * all idle, none downgraded, all warm); @now_ns is on the clock of their
 * start_ns (CLOCK_MONOTONIC, say); @key/@key_len is the request's key,
 * read only by consistent_hash (NULL: the empty key).
 */
int sds_lb_pick(struct sds_lb *lb, const struct sds_lb_load *load,
		uint64_t now_ns, const void *key, size_t key_len);

/*
 * The weight a provider of weight @w has @now_ns when it started at
 * @start_ns, under a warm-up of @warmup_ns: w * uptime / warmup, at least 1
 * and at most w; 1 if it starts in the future; w once warm.
 */
uint32_t sds_lb_warm_weight(uint32_t w, uint64_t start_ns, uint64_t now_ns,
			    uint64_t warmup_ns);

/*
 * The calling thread's random state: seeded on first use from its TLS
 * address and the TSC; sds_lb_seed() sets it (tests).
 */
void sds_lb_seed(uint64_t seed);
uint64_t sds_lb_random(void);

/*
 * Round robin's current weights of the calling thread's state, after its
 * last pick (tests): fills @cur[0..n-1]; -EINVAL for another policy.
 */
int sds_lb_rr_current(struct sds_lb *lb, int64_t *cur);

/* ---- balance_hash.c: the consistent hash's ring -------------------------- */

/* XXH64 of @len bytes at @p with @seed (the ring's hash). */
uint64_t sds_lb_xxh64(const void *p, size_t len, uint64_t seed);

/* SDS_LB_VNODES points per provider, sorted by their hash. */
#define SDS_LB_RING_BITS	10	/* the index: top bits of a hash */

struct sds_lb_ring {
	uint64_t *h;		/* the points, ascending */
	uint16_t *p;		/* the provider of each */
	uint32_t *index;	/* [k]: the first point whose top bits are >= k */
	uint32_t n;		/* points */
};

/* 0, or -ENOMEM. */
int sds_lb_ring_build(struct sds_lb_ring *r, const char *const *names, int n);
void sds_lb_ring_free(struct sds_lb_ring *r);

/*
 * The provider of the first point at or after @h (wrapping), passing over
 * the points of providers downgraded in @load (NULL: none is); at least
 * one provider must pass.
 */
int sds_lb_ring_pick(const struct sds_lb_ring *r, const struct sds_lb_load *load,
		     uint64_t h);

#endif /* SDS_BALANCE_H */
