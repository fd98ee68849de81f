// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * balance.c - Dubbo's balancing policies over the providers of one
 * dependency (docs/BALANCE.md has the rules; this is how they are kept).
 *
 * Everything that can be checked or prepared is done once, in
 * sds_lb_new(): the weights are validated, the consistent hash's ring is
 * built and sorted (balance_hash.c), round robin's states are allocated.
 * A pick then only reads: the weights, the caller's load of each provider
 * (relaxed loads; the caller's tick may rewrite it under us and a pick
 * may see two ticks mixed, which picks a provider of one tick or the
 * other, never an index out of range), the clock the caller passed, and
 * this thread's random state.  It never allocates (its scratch arrays are
 * on the stack, SDS_LB_MAX entries at most: 4.3 KB for least active),
 * never locks and never enters the kernel.
 *
 * Effective weight.  A downgraded provider weighs 0 and is skipped by
 * every policy; a warming one weighs w * uptime / warmup (at least 1);
 * the rest weigh w.  Every policy decides on these, so warm-up shapes
 * least active's and shortest response's tie breaks as it does Dubbo's.
 * When every weight is 0 the pick is -ENOENT: the caller's fallback runs.
 *
 * Randomness.  A splitmix64 state per thread (TLS, 8 bytes), seeded on
 * the thread's first pick from its own address, the TSC and a thread
 * counter -- no getrandom() on the pick path -- and settable with
 * sds_lb_seed() so the tests are exact.  A number in [0, t) is the high
 * half of a 64x64 product (Lemire), biased by at most t / 2^64.
 *
 * Smooth weighted round robin under threads.  The rule (nginx's, Dubbo's)
 * is sequential: every pick adds each weight to its provider's current
 * weight, takes the largest and takes the total off it.  One shared set of
 * current weights would need a lock, or n atomic adds per pick (Dubbo's
 * AtomicLong per provider: lock-free but n cache lines bouncing between
 * cores at every pick).  Instead the balancer holds SDS_LB_RR_SLOTS
 * independent states, each on its own pair of cache lines, and a thread
 * picks on its home state (its thread number modulo the count): it claims
 * the state with one exchange of the state's busy word, which it then
 * owns, and gives it back with a store.  A thread never waits: a state
 * found busy (more threads than states, or a signal handler picking inside
 * a pick) is passed over for the next, and if all are busy the pick is a
 * weighted random one.  So each state runs the exact sequence (one thread
 * alone gets a a b a c a a for 5, 1, 1), and what all threads get
 * together is a sum of exact sequences: after k picks on a state, a
 * provider's current weight is k * w - W * picked, and it stays within
 * +-W, so each state is less than one pick per provider off its share,
 * and the whole less than one per state in use.  A state's words stay on
 * its home thread's core: two cores picking share no line.  Weights that change
 * (warm-up, downgrades) simply feed the next additions, as in Dubbo; a
 * downgraded provider's current weight is left as it is until it returns.
 *
 * Least active and shortest response.  One pass finds the smallest score
 * among the providers that pass (in flight; or latency x (in flight + 1),
 * saturated, for shortest response) and collects the tied; one of the
 * tied is then drawn by weight (uniformly when their weights are equal),
 * exactly Dubbo's LeastActiveLoadBalance and ShortestResponseLoadBalance
 * except that the counts are the kernel's, host-wide.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance.h"

#define LD(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)

/* Tie lists hold indices in a byte; running sums of weights fit 32 bits. */
_Static_assert(SDS_LB_MAX <= 256, "indices of providers fit a uint8_t");
_Static_assert((uint64_t)SDS_LB_MAX * SDS_LB_WEIGHT_MAX < UINT32_MAX,
	       "sums of weights fit a uint32_t");

/* A round robin state: its busy word, then n current weights. */
struct rr_slot {
	uint32_t busy;
	uint32_t pad;
	int64_t cur[];
};

struct sds_lb {
	enum sds_lb_policy policy;
	int n;
	uint64_t warmup_ns;		/* 0: none */
	uint64_t total;			/* sum of the weights */
	struct sds_lb_ring ring;	/* consistent_hash only */
	unsigned char *rr;		/* round_robin only: the states */
	size_t rr_stride;		/* bytes of one state, whole lines */
	uint32_t *cum;			/* their running sums */
	uint32_t weight[];		/* as set up, 1..SDS_LB_WEIGHT_MAX */
};

static const char *const policy_names[SDS_LB_NPOLICIES] = {
	[SDS_LB_RANDOM] = "random",
	[SDS_LB_ROUND_ROBIN] = "round_robin",
	[SDS_LB_LEAST_ACTIVE] = "least_active",
	[SDS_LB_SHORTEST_RESPONSE] = "shortest_response",
	[SDS_LB_CONSISTENT_HASH] = "consistent_hash",
};

int sds_lb_policy_from_name(const char *name)
{
	int i;

	for (i = 0; i < SDS_LB_NPOLICIES; i++)
		if (!strcmp(name, policy_names[i]))
			return i;
	return -1;
}

const char *sds_lb_policy_name(enum sds_lb_policy p)
{
	return (unsigned int)p < SDS_LB_NPOLICIES ? policy_names[p] : NULL;
}

/* ---- randomness ------------------------------------------------------- */

static __thread uint64_t rng_state;
static __thread bool rng_seeded;
/* Thread numbers: round robin's home states, and distinct seeds. */
static __thread unsigned int thread_no;	/* 0: not yet numbered */
static unsigned int threads_seen;

static unsigned int thread_number(void)
{
	if (!thread_no)
		thread_no = __atomic_add_fetch(&threads_seen, 1, __ATOMIC_RELAXED);
	return thread_no;
}

void sds_lb_seed(uint64_t seed)
{
	rng_state = seed;
	rng_seeded = true;
}

static inline uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void rng_first(void)
{
	uint64_t s = (uint64_t)(uintptr_t)&rng_state;

#if defined(__x86_64__) || defined(__i386__)
	s ^= __builtin_ia32_rdtsc();
#endif
	s ^= (uint64_t)thread_number() << 40;
	rng_state = splitmix64(&s);
	rng_seeded = true;
}

uint64_t sds_lb_random(void)
{
	if (__builtin_expect(!rng_seeded, 0))
		rng_first();
	return splitmix64(&rng_state);
}

/* Uniform in [0, t), t > 0. */
static inline uint64_t below(uint64_t t)
{
	return (uint64_t)(((unsigned __int128)sds_lb_random() * t) >> 64);
}

/* ---- weights ---------------------------------------------------------- */

uint32_t sds_lb_warm_weight(uint32_t w, uint64_t start_ns, uint64_t now_ns,
			    uint64_t warmup_ns)
{
	uint64_t up, ww;

	if (!warmup_ns || warmup_ns == SDS_LB_WARMUP_OFF || !start_ns)
		return w;
	if (start_ns > now_ns)
		return 1;
	up = now_ns - start_ns;
	if (up >= warmup_ns)
		return w;
	/* w <= 10^4 and up < a day (8.64 * 10^13 ns): no overflow. */
	ww = (uint64_t)w * up / warmup_ns;
	return ww < 1 ? 1 : (uint32_t)ww;
}

/*
 * Provider @i's effective weight: 0 when downgraded.  Warming is the rare
 * case (a start within the warm-up, or in the future), tested with one
 * compare; the rest is branch-free.
 */
static inline uint32_t eff_weight(const struct sds_lb *lb,
				  const struct sds_lb_load *load, int i,
				  uint64_t now)
{
	uint64_t start = LD(load[i].start_ns);
	uint32_t w = lb->weight[i];

	if (__builtin_expect(start && start + lb->warmup_ns > now, 0))
		w = sds_lb_warm_weight(w, start, now, lb->warmup_ns);
	return LD(load[i].downgraded) ? 0 : w;
}

/*
 * Draw by weight over the running sums @cum[0..n-1] (cum[n-1] > 0): the
 * index whose interval [cum[i-1], cum[i]) holds the draw is the number of
 * sums at or below it.  Counted without a branch: a walk that stops at the
 * drawn provider mispredicts its exit, which costs more than the whole
 * count at 16 providers.  A provider of weight 0 has an empty interval and
 * is never the answer.  Sums fit: 256 x 10000 < 2^32.
 */
static inline int draw_cum(const uint32_t *cum, int n)
{
	uint32_t r = (uint32_t)below(cum[n - 1]);
	int i, k = 0;

	for (i = 0; i < n; i++)
		k += cum[i] <= r;
	return k;
}

/* ---- the policies ----------------------------------------------------- */

static int pick_random(const struct sds_lb *lb, const struct sds_lb_load *load,
		       uint64_t now)
{
	uint32_t cum[SDS_LB_MAX], total = 0;
	int i;

	if (!load)
		return draw_cum(lb->cum, lb->n);
	for (i = 0; i < lb->n; i++) {
		total += eff_weight(lb, load, i, now);
		cum[i] = total;
	}
	if (!total)
		return -ENOENT;
	return draw_cum(cum, lb->n);
}

static inline uint64_t sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/*
 * least_active (@by_latency false) and shortest_response (true): one pass
 * scores every provider and keeps the least (a provider that does not
 * pass scores UINT64_MAX and weighs 0), a second gathers the tied with
 * the running sums of their weights, and one of them is drawn by weight.
 */
static __attribute__((always_inline)) inline int
pick_least(const struct sds_lb *lb, const struct sds_lb_load *load,
	   uint64_t now, bool by_latency)
{
	uint32_t w[SDS_LB_MAX], cum[SDS_LB_MAX], total = 0, any = 0;
	uint64_t score[SDS_LB_MAX], least = UINT64_MAX, act, sc;
	uint8_t idx[SDS_LB_MAX];
	int i, tied = 0;

	if (!load)
		return draw_cum(lb->cum, lb->n);
	for (i = 0; i < lb->n; i++) {
		w[i] = eff_weight(lb, load, i, now);
		act = LD(load[i].in_flight);
		if (by_latency)
			sc = sat_mul(LD(load[i].latency_ns), act + (act != UINT64_MAX));
		else
			sc = act;
		sc = w[i] ? sc : UINT64_MAX;
		score[i] = sc;
		least = sc < least ? sc : least;
		any |= w[i];
	}
	if (!any)
		return -ENOENT;
	for (i = 0; i < lb->n; i++)
		if (score[i] == least && w[i]) {
			idx[tied] = i;
			total += w[i];
			cum[tied++] = total;
		}
	if (tied == 1)
		return idx[0];
	return idx[draw_cum(cum, tied)];
}

static inline struct rr_slot *rr_slot_at(const struct sds_lb *lb, unsigned int s)
{
	return (struct rr_slot *)(lb->rr + (size_t)s * lb->rr_stride);
}

/* This thread's round robin state, claimed; NULL if every one is busy. */
static struct rr_slot *rr_take(const struct sds_lb *lb)
{
	unsigned int home = thread_number(), k;
	struct rr_slot *s;

	for (k = 0; k < SDS_LB_RR_SLOTS; k++) {
		s = rr_slot_at(lb, (home + k) % SDS_LB_RR_SLOTS);
		if (!LD(s->busy) &&
		    !__atomic_exchange_n(&s->busy, 1, __ATOMIC_ACQUIRE))
			return s;
	}
	return NULL;
}

static int pick_rr(const struct sds_lb *lb, const struct sds_lb_load *load,
		   uint64_t now)
{
	struct rr_slot *s = rr_take(lb);
	int64_t total = 0, top = INT64_MIN, c;
	int i, best = -1;
	uint32_t wi;

	if (!s)
		return pick_random(lb, load, now);
	for (i = 0; i < lb->n; i++) {
		wi = load ? eff_weight(lb, load, i, now) : lb->weight[i];
		if (!wi)
			continue;
		c = s->cur[i] + wi;
		s->cur[i] = c;
		total += wi;
		/* The first largest, without a branch to mispredict. */
		best = c > top ? i : best;
		top = c > top ? c : top;
	}
	if (best >= 0)
		s->cur[best] -= total;
	__atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
	return best < 0 ? -ENOENT : best;
}

static int pick_hash(const struct sds_lb *lb, const struct sds_lb_load *load,
		     const void *key, size_t key_len)
{
	uint64_t h = sds_lb_xxh64(key ? key : "", key ? key_len : 0, 0);
	int i, p = sds_lb_ring_pick(&lb->ring, NULL, h);

	if (!load || !LD(load[p].downgraded))
		return p;
	for (i = 0; i < lb->n; i++)
		if (!LD(load[i].downgraded))
			break;
	if (i == lb->n)
		return -ENOENT;
	return sds_lb_ring_pick(&lb->ring, load, h);
}

int sds_lb_pick(struct sds_lb *lb, const struct sds_lb_load *load,
		uint64_t now_ns, const void *key, size_t key_len)
{
	switch (lb->policy) {
	case SDS_LB_ROUND_ROBIN:
		return pick_rr(lb, load, now_ns);
	case SDS_LB_LEAST_ACTIVE:
		return pick_least(lb, load, now_ns, false);
	case SDS_LB_SHORTEST_RESPONSE:
		return pick_least(lb, load, now_ns, true);
	case SDS_LB_CONSISTENT_HASH:
		return pick_hash(lb, load, key, key_len);
	case SDS_LB_RANDOM:
	default:
		return pick_random(lb, load, now_ns);
	}
}

int sds_lb_rr_current(struct sds_lb *lb, int64_t *cur)
{
	struct rr_slot *s;

	if (lb->policy != SDS_LB_ROUND_ROBIN)
		return -EINVAL;
	s = rr_slot_at(lb, thread_number() % SDS_LB_RR_SLOTS);
	memcpy(cur, s->cur, lb->n * sizeof(*cur));
	return 0;
}

/* ---- set-up ----------------------------------------------------------- */

#define ERR(...)	do { if (err) snprintf(err, errlen, __VA_ARGS__); } while (0)

static int check_providers(const struct sds_lb_provider *p, int n,
			   char *err, size_t errlen)
{
	size_t len;
	int i, j;

	for (i = 0; i < n; i++) {
		if (!p[i].name || !p[i].name[0]) {
			ERR("provider %d: no name", i);
			return -EINVAL;
		}
		len = strlen(p[i].name);
		if (len >= SDS_LB_NAME_MAX) {
			ERR("provider %d: a name of %zu bytes: at most %d",
			    i, len, SDS_LB_NAME_MAX - 1);
			return -EINVAL;
		}
		if (p[i].weight < 1 || p[i].weight > SDS_LB_WEIGHT_MAX) {
			ERR("provider %d (%s): weight %d: weights are 1..%d",
			    i, p[i].name, p[i].weight, SDS_LB_WEIGHT_MAX);
			return -EINVAL;
		}
		for (j = 0; j < i; j++)
			if (!strcmp(p[i].name, p[j].name)) {
				ERR("providers %d and %d: both named %s",
				    j, i, p[i].name);
				return -EINVAL;
			}
	}
	return 0;
}

int sds_lb_new(struct sds_lb **out, const char *policy,
	       const struct sds_lb_provider *p, int n, uint64_t warmup_ns,
	       char *err, size_t errlen)
{
	const char *names[SDS_LB_MAX];
	struct sds_lb *lb;
	int pol, i, ret;

	*out = NULL;
	pol = policy ? sds_lb_policy_from_name(policy) : SDS_LB_RANDOM;
	if (pol < 0) {
		ERR("unknown balancing policy \"%s\" (known: random, "
		    "round_robin, least_active, shortest_response, "
		    "consistent_hash)", policy);
		return -EINVAL;
	}
	if (n < 1 || !p) {
		ERR("no provider to balance over");
		return -EINVAL;
	}
	if (n > SDS_LB_MAX) {
		ERR("%d providers: at most %d (SDS_LB_MAX)", n, SDS_LB_MAX);
		return -E2BIG;
	}
	if (warmup_ns == 0)
		warmup_ns = SDS_LB_WARMUP_DEFAULT_NS;
	else if (warmup_ns == SDS_LB_WARMUP_OFF)
		warmup_ns = 0;
	else if (warmup_ns > SDS_LB_WARMUP_MAX_NS) {
		ERR("a warm-up of %llu ns: at most a day (%llu ns)",
		    (unsigned long long)warmup_ns,
		    (unsigned long long)SDS_LB_WARMUP_MAX_NS);
		return -EINVAL;
	}
	ret = check_providers(p, n, err, errlen);
	if (ret)
		return ret;

	lb = calloc(1, sizeof(*lb) + 2 * n * sizeof(lb->weight[0]));
	if (!lb)
		goto nomem;
	lb->policy = pol;
	lb->n = n;
	lb->warmup_ns = warmup_ns;
	lb->cum = lb->weight + n;
	for (i = 0; i < n; i++) {
		lb->weight[i] = p[i].weight;
		lb->total += p[i].weight;
		lb->cum[i] = lb->total;
		names[i] = p[i].name;
	}
	if (pol == SDS_LB_ROUND_ROBIN) {
		/*
		 * Whole pairs of cache lines: no two states share a line, nor
		 * a pair (the adjacent-line prefetcher fetches pairs).
		 */
		lb->rr_stride = (sizeof(struct rr_slot) + n * sizeof(int64_t) + 127) & ~(size_t)127;
		lb->rr = aligned_alloc(128, SDS_LB_RR_SLOTS * lb->rr_stride);
		if (!lb->rr)
			goto nomem;
		memset(lb->rr, 0, SDS_LB_RR_SLOTS * lb->rr_stride);
	}
	if (pol == SDS_LB_CONSISTENT_HASH && sds_lb_ring_build(&lb->ring, names, n))
		goto nomem;
	*out = lb;
	return 0;

nomem:
	ERR("balancer over %d providers: out of memory", n);
	sds_lb_free(lb);
	return -ENOMEM;
}

void sds_lb_free(struct sds_lb *lb)
{
	if (!lb)
		return;
	sds_lb_ring_free(&lb->ring);
	free(lb->rr);
	free(lb);
}

int sds_lb_count(const struct sds_lb *lb)
{
	return lb->n;
}

enum sds_lb_policy sds_lb_policy(const struct sds_lb *lb)
{
	return lb->policy;
}
