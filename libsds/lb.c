// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * lb.c - libsds's balancing API (sds.h, docs/BALANCE.md): a balancer over
 * the providers of one dependency, each its own guard point
 * "<dep>@<provider>", picking with balance.c's policies on the load the
 * loader publishes in those points' flag entries every tick
 * (loader/publish/lbpub.c): in flight, recent mean latency, downgraded.
 *
 * A pick reads each provider's entry with plain loads (the downgrade
 * state under the entry's seq, as the guard reads it), builds the
 * policy's load on the stack and asks balance.c: no syscall (the clock is
 * the vDSO's), no lock, no allocation.
 *
 * The policy is named through the extension registry (ext_balancer.c):
 * one of the five built-ins, unwrapped, is balance.c's own, called
 * straight as above; anything else -- a plugin's policy, or any policy
 * that a manifest's wrap.balancer wraps -- is asked through lb_ext.c,
 * on every provider's full load, and its answer checked there.
 *
 * The retry budget of sds_lb_call() counts calls and retries in
 * LB_BUCKETS buckets of the window, each one 64-bit word (its epoch, its
 * calls, its retries) changed only by CAS, so a count is never lost to a
 * bucket's reset and a retry is taken only if the budget holds with it:
 * exact, also with threads racing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "balance.h"
#include "ext_balancer.h"
#include "guard.h"
#include "lb_ext.h"
#include "libsds.h"
#include "names.h"

_Static_assert(SDS_LB_MAX_MEMBERS == SDS_LB_MAX, "sds.h and balance.h agree");
_Static_assert(SDS_LB_MAX_WEIGHT == SDS_LB_WEIGHT_MAX, "sds.h and balance.h agree");
_Static_assert(SDS_LB_NO_WARMUP == SDS_LB_WARMUP_OFF, "sds.h and balance.h agree");

#define LB_NS			1000000000ULL
#define LB_BUDGET_PCT		20		/* Envoy's and resilience4j's usual share */
#define LB_WINDOW_NS		(10 * LB_NS)	/* SDS's window */
#define LB_WINDOW_MIN_NS	LB_NS
#define LB_WINDOW_MAX_NS	(3600 * LB_NS)
#define LB_BUCKETS		10		/* of the window: it slides by a tenth */

/* A bucket's word: epoch (bucket number, low bits), calls, retries. */
#define LB_EPOCH_BITS		16
#define LB_COUNT_BITS		24		/* each count saturates at 2^24 - 1 */
#define LB_EPOCH_MASK		((1ULL << LB_EPOCH_BITS) - 1)
#define LB_COUNT_MAX		((1ULL << LB_COUNT_BITS) - 1)
#define LB_CALLS_SHIFT		LB_EPOCH_BITS
#define LB_RETRIES_SHIFT	(LB_EPOCH_BITS + LB_COUNT_BITS)

#define LD(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)

struct sds_balancer {
	/*
	 * balance.c: the policy and its state; with @ext, its "random" over
	 * the same providers, the fallback for an answer lb_ext.c refuses.
	 */
	struct sds_lb *core;
	struct sds_lb_ext *ext;		/* NULL: the core's built-in decides */
	int n;				/* providers */
	/*
	 * The core's policy: what load_read() reads.  With @ext,
	 * shortest_response: everything, as an extension may read any of it.
	 */
	enum sds_lb_policy policy;
	bool warm;			/* a provider has a start time: warm-up applies */
	unsigned int budget_pct;	/* retries <= this % of the window's calls */
	uint64_t bucket_ns;		/* window / LB_BUCKETS */
	uint64_t attempt_timeout_ns;	/* 0: attempts are never too slow */
	struct sds_point **pts;		/* [n]: point "<dep>@<name>" (the client's) */
	uint64_t *start_ns;		/* [n]: when each started (warm-up) */
	/*
	 * [n]: this process's sds_lb_call() attempts in flight on each
	 * provider now (atomics; their own lines, away from the read-only
	 * fields above): a pick counts at least these, see load_read().
	 */
	uint32_t *local;
	/* Written by every sds_lb_call(): a line of its own. */
	uint64_t budget[LB_BUCKETS] __attribute__((aligned(64)));	/* packed, see above */
};

/* The calling thread's last sds_lb_open() failure: one line. */
static __thread char lb_err[256];

static int lb_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int lb_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(lb_err, sizeof(lb_err), fmt, ap);
	va_end(ap);
	errno = err;
	return -1;
}

SDS_API const char *sds_lb_error(void)
{
	return lb_err;
}

static inline uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * LB_NS + ts.tv_nsec;
}

/*
 * The pick's clock: CLOCK_MONOTONIC to a jiffy (1-4 ms behind), which is
 * all that a warm-up of minutes, a downgrade that lapses ticks ahead and a
 * 2-s staleness need -- and costs 8 ns where the precise clock costs 94
 * on the development VM (kvm-clock), more than the rest of a pick.
 */
static inline uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * LB_NS + ts.tv_nsec;
}

/* ---- set-up ------------------------------------------------------------ */

/* The options, checked, with their defaults filled in; -1 after lb_fail(). */
static int opts_check(const struct sds_lb_opts *o, struct sds_lb_opts *out)
{
	memset(out, 0, sizeof(*out));
	if (o)
		*out = *o;
	if (!out->retry_budget_pct)
		out->retry_budget_pct = LB_BUDGET_PCT;
	if (out->retry_budget_pct > 100)
		return lb_fail(EINVAL, "a retry budget of %u%%: 1..100",
			       out->retry_budget_pct);
	if (!out->retry_window_ns)
		out->retry_window_ns = LB_WINDOW_NS;
	if (out->retry_window_ns < LB_WINDOW_MIN_NS ||
	    out->retry_window_ns > LB_WINDOW_MAX_NS)
		return lb_fail(EINVAL, "a retry window of %llu ns: 1 s .. 1 h",
			       out->retry_window_ns);
	return 0;
}

/* Each member's point name, checked; -1 after lb_fail(). */
static int member_name(const char *dep, const struct sds_lb_member *m, size_t i,
		       char *out, size_t len)
{
	if (!m->name || !*m->name)
		return lb_fail(EINVAL, "provider %zu: no name", i);
	if (!sds_name_valid(m->name) && strlen(m->name) <= SDS_NAME_MAX)
		return lb_fail(EINVAL, "provider %zu (%s): bad name (1-64 of [A-Za-z0-9_-])",
			       i, m->name);
	if ((size_t)snprintf(out, len, "%s@%s", dep, m->name) >= len ||
	    !sds_point_name_valid(out))
		return lb_fail(EINVAL, "provider %zu (%.64s): the point \"%s@%.64s\" is "
			       "longer than %d characters", i, m->name, dep,
			       m->name, SDS_NAME_MAX);
	return 0;
}

SDS_API struct sds_balancer *sds_lb_open(struct sds_client *c, const char *dep,
					 const char *policy,
					 const struct sds_lb_member *m, size_t n,
					 const struct sds_lb_opts *opts)
{
	struct sds_lb_provider prov[SDS_LB_MAX];
	char names[SDS_LB_MAX][SDS_NAME_MAX + 1];
	const struct sds_ext_balancer *ext;
	enum sds_lb_policy builtin;
	struct sds_balancer *b = NULL;
	struct sds_lb_opts o;
	char err[sizeof(lb_err)];
	size_t i;
	int r;

	lb_err[0] = '\0';
	if (!c)
		return lb_fail(EINVAL, "no client"), NULL;
	if (!dep)
		return lb_fail(EINVAL, "no dependency name"), NULL;
	if (!sds_name_valid(dep))
		return lb_fail(EINVAL, "dependency \"%.64s\": bad name (1-64 of [A-Za-z0-9_-])",
			       dep), NULL;
	if (!m || !n)
		return lb_fail(EINVAL, "no provider to balance over"), NULL;
	if (n > SDS_LB_MAX)
		return lb_fail(E2BIG, "%zu providers: at most %d (SDS_LB_MAX_MEMBERS)",
			       n, SDS_LB_MAX), NULL;
	if (opts_check(opts, &o))
		return NULL;
	for (i = 0; i < n; i++) {
		if (member_name(dep, &m[i], i, names[i], sizeof(names[i])))
			return NULL;
		prov[i].name = m[i].name;
		prov[i].weight = m[i].weight;
	}
	/* Unknown (the line lists the known names), or a plugin refused. */
	ext = sds_ext_balancer(policy, err, sizeof(err));
	if (!ext)
		return lb_fail(EINVAL, "%s", err), NULL;
	if (!sds_ext_balancer_builtin(ext, &builtin))
		builtin = SDS_LB_RANDOM;	/* the fallback */
	else
		ext = NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		goto nomem;
	/* Weights, repeated names, warm-up: balance.c's checks, for any policy. */
	r = sds_lb_new(&b->core, sds_lb_policy_name(builtin), prov, (int)n,
		       o.warmup_ns, err, sizeof(err));
	if (!r && ext)
		r = sds_lb_ext_new(&b->ext, ext, prov, (int)n, o.warmup_ns, err,
				   sizeof(err));
	if (r) {
		sds_lb_free(b->core);
		free(b);
		return lb_fail(-r, "%s", err), NULL;
	}
	b->n = (int)n;
	b->budget_pct = o.retry_budget_pct;
	b->bucket_ns = o.retry_window_ns / LB_BUCKETS;
	b->attempt_timeout_ns = o.attempt_timeout_ns;
	b->pts = calloc(n, sizeof(*b->pts));
	b->start_ns = calloc(n, sizeof(*b->start_ns));
	b->local = aligned_alloc(64, (n * sizeof(*b->local) + 63) & ~(size_t)63);
	if (!b->pts || !b->start_ns || !b->local)
		goto nomem;
	memset(b->local, 0, n * sizeof(*b->local));
	b->policy = b->ext ? SDS_LB_SHORTEST_RESPONSE : sds_lb_policy(b->core);
	for (i = 0; i < n; i++) {
		b->start_ns[i] = m[i].start_ns;
		b->warm |= m[i].start_ns != 0;
		b->pts[i] = sds_point(c, names[i]);
		if (!b->pts[i])
			goto nomem;
	}
	return b;
nomem:
	sds_lb_close(b);
	return lb_fail(ENOMEM, "out of memory"), NULL;
}

SDS_API void sds_lb_close(struct sds_balancer *b)
{
	if (!b)
		return;
	sds_lb_ext_free(b->ext);
	sds_lb_free(b->core);
	free(b->pts);
	free(b->start_ns);
	free(b->local);
	free(b);
}

SDS_API struct sds_point *sds_lb_point(struct sds_balancer *b, int idx)
{
	if (!b || idx < 0 || idx >= b->n)
		return NULL;
	return b->pts[idx];
}

/* ---- the pick ------------------------------------------------------------ */

/*
 * Is the entry @e downgraded at @now, as the guard reads it: active with
 * SDS_ACT_DOWNGRADE and not expired, from a whole copy under seq (none
 * within SDS_SEQ_TRIES: it passes, as the guard fails open).
 */
static bool entry_downgraded(const struct sds_flag *e, uint64_t now)
{
	__u32 s, active;
	__u64 expires;
	int i;

	for (i = 0; i < SDS_SEQ_TRIES; i++) {
		s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			continue;
		active = LD(e->active);
		expires = LD(e->expires_ns);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (LD(e->seq) == s)
			return (active & SDS_ACT_DOWNGRADE) && now < expires;
	}
	return false;
}

/*
 * A measured latency to 4 significant bits (within 12.5% below): two
 * providers that differ by the noise of a measurement tie, and the tie is
 * drawn by weight, rather than one taking every pick of shortest_response
 * until the next tick.  A provider 10x slower stays 10x slower.
 */
static uint64_t latency_round(uint64_t ns)
{
	int shift;

	if (ns < 16)
		return ns;
	shift = 63 - __builtin_clzll(ns) - 3;
	return ns >> shift << shift;
}

/*
 * The pick's view of a region: a dead loader's (a stale tick) holds
 * nothing.  Providers of one client share one region, so the last
 * answer is kept for the pick (@st).
 */
struct region_view {
	const struct sds_flags_header *hdr;	/* the region asked last; NULL: none */
	bool stale;				/* its answer */
};

static bool region_stale(struct region_view *v, const struct sds_flags_header *h,
			 uint64_t now)
{
	if (v->hdr != h) {
		v->hdr = h;
		v->stale = sds_guard_stale(h, now);
	}
	return v->stale;
}

/* Provider @i's live entry at @now, or NULL (not bound, or a dead loader's). */
static const struct sds_flag *provider_entry(const struct sds_balancer *b, int i,
					     uint64_t now, struct region_view *v)
{
	const struct sds_bind *bd = __atomic_load_n(&b->pts[i]->bind, __ATOMIC_ACQUIRE);

	if (!bd || region_stale(v, bd->hdr, now))
		return NULL;
	return bd->entry;
}

static bool provider_downgraded(const struct sds_balancer *b, int i,
				uint64_t now, struct region_view *v)
{
	const struct sds_flag *e = provider_entry(b, i, now, v);

	return e && (LD(e->active) & SDS_ACT_DOWNGRADE) && entry_downgraded(e, now);
}

/*
 * Provider @i's load at @now.  Not bound (no loader, or not yet
 * registered) or a dead loader's region: idle, unmeasured, passing.  Only
 * what the policy reads is read (in flight: least_active and
 * shortest_response; latency: shortest_response): each is a second cache
 * line of the entry.
 *
 * In flight: the loader's count at its last tick, but at least this
 * process's own calls through sds_lb_call() in flight now -- the tick's
 * count is up to a tick old, and every pick in between would see the
 * same numbers and go to the same provider.
 */
static void load_read(const struct sds_balancer *b, int i, uint64_t now,
		      struct region_view *v, struct sds_lb_load *ld)
{
	const struct sds_flag *e = provider_entry(b, i, now, v);
	uint32_t inflight;

	ld->start_ns = b->start_ns[i];
	ld->in_flight = 0;
	ld->latency_ns = 0;
	ld->downgraded = 0;
	if (b->policy == SDS_LB_LEAST_ACTIVE || b->policy == SDS_LB_SHORTEST_RESPONSE) {
		ld->in_flight = LD(b->local[i]);
		if (e) {
			inflight = LD(e->lb_inflight);
			if (inflight > ld->in_flight)
				ld->in_flight = inflight;
		}
	}
	if (!e)
		return;
	if (b->policy == SDS_LB_SHORTEST_RESPONSE)
		ld->latency_ns = latency_round(LD(e->lb_latency_ns));
	if (LD(e->active) & SDS_ACT_DOWNGRADE)
		ld->downgraded = entry_downgraded(e, now);
}

/*
 * A pick with the providers of @skip (a bitmap; NULL: none) left out.
 *
 * random and consistent_hash without warm-up read no load but the
 * downgrades, so they pick first as if none were downgraded and read
 * only the one picked: if it passes, that is the pick (one entry read,
 * whatever n).  If not, the pick is made again on every provider's state:
 * random's draw is then over the passing providers' weights (a draw that
 * is redrawn when it lands on a downgraded provider is a draw over the
 * others), and consistent_hash goes on round the ring, as on one pass.
 */
static int choose(struct sds_balancer *b, const void *key, size_t keylen,
		  const uint64_t *skip)
{
	struct sds_lb_load ld[SDS_LB_MAX];
	struct region_view v = { NULL, false };
	uint64_t now = coarse_ns();
	int i, r;

	if (!skip && !b->warm && (b->policy == SDS_LB_RANDOM ||
				  b->policy == SDS_LB_CONSISTENT_HASH)) {
		r = sds_lb_pick(b->core, NULL, now, key, keylen);
		if (r >= 0 && !provider_downgraded(b, r, now, &v))
			return r;
	}
	for (i = 0; i < b->n; i++) {
		load_read(b, i, now, &v, &ld[i]);
		if (skip && (skip[i / 64] >> (i % 64) & 1))
			ld[i].downgraded = 1;
	}
	if (b->ext)
		r = sds_lb_ext_pick(b->ext, b->core, ld, b->n, now, key, keylen);
	else
		r = sds_lb_pick(b->core, ld, now, key, keylen);
	if (r < 0) {
		errno = EAGAIN;
		return -1;
	}
	return r;
}

uint64_t sds_lb_ext_refused(const struct sds_balancer *b)
{
	return b ? sds_lb_ext_refused_of(b->ext) : 0;
}

SDS_API int sds_lb_choose(struct sds_balancer *b, const void *key, size_t keylen)
{
	if (!b) {
		errno = EINVAL;
		return -1;
	}
	return choose(b, key, keylen, NULL);
}

/* ---- the retry budget ---------------------------------------------------- */

static inline uint64_t w_epoch(uint64_t w)
{
	return w & LB_EPOCH_MASK;
}

static inline uint64_t w_calls(uint64_t w)
{
	return (w >> LB_CALLS_SHIFT) & LB_COUNT_MAX;
}

static inline uint64_t w_retries(uint64_t w)
{
	return (w >> LB_RETRIES_SHIFT) & LB_COUNT_MAX;
}

/* Calls and retries of the window that ends in bucket number @cur. */
static void budget_sum(const struct sds_balancer *b, uint64_t cur,
		       uint64_t *calls, uint64_t *retries)
{
	uint64_t w;
	int i;

	*calls = *retries = 0;
	for (i = 0; i < LB_BUCKETS; i++) {
		w = LD(b->budget[i]);
		/* A bucket of an older window: counts nothing. */
		if (((cur - w_epoch(w)) & LB_EPOCH_MASK) >= LB_BUCKETS)
			continue;
		*calls += w_calls(w);
		*retries += w_retries(w);
	}
}

/*
 * Add a call (@retry false) or take a retry (@retry true: only if the
 * window's retries, this one included, stay within budget_pct % of its
 * calls).  One CAS on the current bucket; a bucket of an older window is
 * started afresh by the same CAS.  False: the budget is spent.
 */
static bool budget_add(struct sds_balancer *b, uint64_t now, bool retry)
{
	uint64_t num = now / b->bucket_ns, cur = num & LB_EPOCH_MASK;
	uint64_t *slot = &b->budget[num % LB_BUCKETS];
	uint64_t w = LD(*slot), nw, c, r, calls, retries;

	for (;;) {
		c = r = 0;
		if (w_epoch(w) == cur) {
			c = w_calls(w);
			r = w_retries(w);
		}
		if (retry) {
			/* Our bucket's word counts only if of this window. */
			budget_sum(b, cur, &calls, &retries);
			if ((retries + 1) * 100 > (uint64_t)b->budget_pct * calls)
				return false;
			r += r < LB_COUNT_MAX;
		} else {
			c += c < LB_COUNT_MAX;
		}
		nw = cur | c << LB_CALLS_SHIFT | r << LB_RETRIES_SHIFT;
		if (__atomic_compare_exchange_n(slot, &w, nw, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return true;
	}
}

/* ---- the guarded call with retries ---------------------------------------- */

/* One attempt on provider @idx: fn's result, or a failure code. */
static int attempt(struct sds_balancer *b, int idx, int (*fn)(int, void *),
		   void *arg)
{
	struct sds_point *p = b->pts[idx];
	enum sds_verdict v = sds_enter(p);
	uint64_t t0 = 0;
	int r;

	if (v != SDS_PASS) {
		/* Refused by the guard, or failed by a drill: fn is not called. */
		if (v == SDS_FAULT)
			sds_exception_sign(p);
		sds_downgrade_finally(p);
		return v == SDS_FAULT ? -EIO : -EAGAIN;
	}
	if (b->attempt_timeout_ns)
		t0 = clock_ns();
	__atomic_fetch_add(&b->local[idx], 1, __ATOMIC_RELAXED);
	r = fn(idx, arg);
	__atomic_fetch_sub(&b->local[idx], 1, __ATOMIC_RELAXED);
	if (r >= 0 && b->attempt_timeout_ns &&
	    clock_ns() - t0 > b->attempt_timeout_ns)
		r = -ETIMEDOUT;
	if (r < 0)
		sds_exception_sign(p);
	sds_downgrade_finally(p);
	return r;
}

SDS_API int sds_lb_call(struct sds_balancer *b, const void *key, size_t keylen,
			int (*fn)(int idx, void *arg), void *arg,
			unsigned int max_retries)
{
	uint64_t tried[SDS_LB_MAX / 64] = { 0 };
	unsigned int retries = 0;
	int idx, r;

	if (!b || !fn) {
		errno = EINVAL;
		return -EINVAL;
	}
	budget_add(b, coarse_ns(), false);
	idx = choose(b, key, keylen, NULL);
	if (idx < 0)
		return -EAGAIN;		/* errno EAGAIN: the fallback's turn */
	for (;;) {
		r = attempt(b, idx, fn, arg);
		if (r >= 0)
			return r;
		tried[idx / 64] |= 1ULL << (idx % 64);
		if (retries >= max_retries) {
			errno = ERANGE;
			return r;
		}
		idx = choose(b, key, keylen, tried);
		if (idx < 0)
			return r;	/* errno EAGAIN */
		if (!budget_add(b, coarse_ns(), true)) {
			errno = EDQUOT;
			return r;
		}
		retries++;
	}
}
