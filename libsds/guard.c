// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * guard.c - the guard's decision (docs/PROTOCOL.md, "The guard's
 * decision").  The flag entry is the loader's, mapped read-only, and is
 * only read, as a snapshot under its sequence counter; the cell is the
 * guards', changed only with atomics since every guarded process of the
 * app (and every thread) shares it -- and any of them may have written
 * garbage there, so every value read from it is bounded and every CAS
 * loop ends (docs/TRUST.md).  Nothing here allocates, locks or enters the
 * kernel.
 */
#include "guard.h"
#include "guard_budget.h"

/* sites.S writes this layout into its notes by hand. */
_Static_assert(SDS_FLAGS_LAYOUT == 5, "libsds/sites.S records layout 5");

/*
 * A time cell further than its bound + this past our now is forged: no
 * guard could have put it there (a thread preempted this long between its
 * clock read and its CAS may be wrong about it, and then lets a call too
 * many through: fail-open).  The loader's FLAGS_TIME_SLACK_NS.
 */
#define TIME_SLACK_NS	1000000000ULL

/* A consistent copy of the loader's line of an entry. */
struct line1 {
	__u32 active;		/* SDS_ACT_* */
	__u32 rate;		/* downgrade share, 0..100 */
	__u64 expires_ns;	/* the downgrade lapses then */
	__s64 concurrent_limit;	/* permits of the semaphore */
	__u64 token_interval_ns;	/* ns per token */
	__u64 token_burst_ns;	/* bucket size in ns */
	__u64 probe_interval_ns;	/* one probe call this often */
	/* read only when SDS_ACT_DRILL is set */
	__u32 drill_kind;	/* enum sds_drill_kind */
	__u32 drill_ratio;	/* share of passed calls hit, 0..100 */
	__u64 drill_delay_ns;	/* sleep of a delayed call */
	__u64 drill_expires_ns;	/* ignored from then on */
};

#define LD(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/*
 * Copy line 1 of @e.  The loader makes seq odd, writes, makes it even:
 * a copy taken between two equal even reads is whole.  False if no whole
 * copy came within SDS_SEQ_TRIES tries.
 */
static bool line1_read(const struct sds_flag *e, struct line1 *l)
{
	__u32 s;
	int i;

	for (i = 0; i < SDS_SEQ_TRIES; i++) {
		s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
		if (s & 1) {
			cpu_relax();
			continue;
		}
		l->active = LD(e->active);
		l->rate = LD(e->rate);
		l->expires_ns = LD(e->expires_ns);
		l->concurrent_limit = LD(e->concurrent_limit);
		l->token_interval_ns = LD(e->token_interval_ns);
		l->token_burst_ns = LD(e->token_burst_ns);
		l->probe_interval_ns = LD(e->probe_interval_ns);
		if (l->active & SDS_ACT_DRILL) {
			l->drill_kind = LD(e->drill_kind);
			l->drill_ratio = LD(e->drill_ratio);
			l->drill_delay_ns = LD(e->drill_delay_ns);
			l->drill_expires_ns = LD(e->drill_expires_ns);
		} else {
			l->drill_kind = SDS_DRILL_NONE;
			l->drill_ratio = 0;
			l->drill_delay_ns = 0;
			l->drill_expires_ns = 0;
		}
		/* The field loads must not pass the second read of seq. */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (LD(e->seq) == s)
			return true;
	}
	return false;
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint64_t sds_guard_rand(uint64_t *state)
{
	static uint64_t seeds;	/* makes two states seeded alike differ */
	uint64_t x = *state;

	if (!x) {
		x = splitmix64((uintptr_t)state ^
			       __atomic_add_fetch(&seeds, 0x9e3779b97f4a7c15ULL,
						  __ATOMIC_RELAXED));
		if (!x)
			x = 1;	/* xorshift's one fixed point */
	}
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Downgrade with probability @rate / 100. */
static bool rate_hit(__u32 rate, uint64_t *rng)
{
	if (rate >= 100)
		return true;
	if (!rate)
		return false;
	return sds_guard_rand(rng) % 100 < rate;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/*
 * The hold's probe: one call per probe interval, claimed with a CAS so
 * that of the threads and processes arriving together exactly one wins.
 */
static bool probe_take(struct sds_cell *c, const struct line1 *l, uint64_t now)
{
	__u64 next = LD(c->next_probe_ns);
	int i;

	for (i = 0; i < SDS_CAS_TRIES; i++) {
		/*
		 * No clamping of a next probe a little ahead: a thread with
		 * an older clock read would pull it in and probe too often.
		 * But one beyond any claim's reach is forged: start afresh.
		 */
		if (next > sat_add(sat_add(now, l->probe_interval_ns), TIME_SLACK_NS)) {
			if (__atomic_compare_exchange_n(&c->next_probe_ns, &next,
							now, false, __ATOMIC_RELAXED,
							__ATOMIC_RELAXED))
				next = now;
			continue;
		}
		if (now < next)
			return false;
		if (__atomic_compare_exchange_n(&c->next_probe_ns, &next,
						now + l->probe_interval_ns, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return true;
	}
	return false;	/* a cell rewritten under us: no probe this time */
}

/*
 * A half-open phase of N probes (SDS_ACT_HALFOPEN): from the phase's
 * start (next_probe_ns, the loader's) the first N calls claim a probe,
 * with a CAS on the low half of probe_claimed, so that of the threads and
 * processes arriving together exactly N win; the loader opens the next
 * phase.  The claim count is read first (acquire) and the start after:
 * the loader writes the start, then the count of a new phase (release),
 * so a guard that sees the new count sees the new start, and the tag in
 * the high half fails a CAS on a count read in an old phase.
 */
static bool halfopen_take(struct sds_cell *c, const struct sds_flag *e,
			  const struct line1 *l, uint64_t now)
{
	__u64 claimed = __atomic_load_n(&c->probe_claimed, __ATOMIC_ACQUIRE);
	__u64 next = LD(c->next_probe_ns);
	__u32 n = LD(e->probe_calls), tag;
	int i;

	if (n < 1)
		n = 1;
	/*
	 * A start beyond any phase's reach is forged: no probe (the loader
	 * repairs it at its tick).  A guard never moves the start.
	 */
	if (now < next || next > sat_add(sat_add(now, l->probe_interval_ns),
					 TIME_SLACK_NS))
		return false;
	tag = claimed >> 32;
	for (i = 0; i < SDS_CAS_TRIES; i++) {
		/* A new phase meanwhile: its start was not checked, no probe. */
		if ((__u32)claimed >= n || claimed >> 32 != tag)
			return false;
		if (__atomic_compare_exchange_n(&c->probe_claimed, &claimed,
						claimed + 1, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return true;
	}
	return false;	/* a cell rewritten under us: no probe this time */
}

/*
 * GCRA: the bucket is the theoretical arrival time @tat_ns.  A call is
 * allowed if, after adding its interval, tat is at most one bucket ahead
 * of now; so a full bucket lets token_bucket calls through at once and
 * then one per interval: exactly bucket + rate * t over t.
 */
static bool token_take(struct sds_cell *c, const struct line1 *l, uint64_t now)
{
	__u64 tat = LD(c->tat_ns), base, ahead;
	__u64 iv = l->token_interval_ns, burst = l->token_burst_ns;
	int i;

	if (iv > burst)
		return false;	/* a bucket smaller than one token */
	for (i = 0; i < SDS_CAS_TRIES; i++) {
		base = tat > now ? tat : now;
		ahead = base - now;
		/*
		 * No clamping of a tat a little ahead: a thread whose clock
		 * read is older than another's would take that for old debt
		 * and hand out tokens.  But no guard puts it more than a
		 * bucket past its now: beyond that (+ slack) it is forged,
		 * and the bucket starts full.
		 */
		if (ahead > sat_add(burst, TIME_SLACK_NS)) {
			if (__atomic_compare_exchange_n(&c->tat_ns, &tat, 0, false,
							__ATOMIC_RELAXED,
							__ATOMIC_RELAXED))
				tat = 0;
			continue;
		}
		if (ahead > burst - iv)
			return false;
		if (__atomic_compare_exchange_n(&c->tat_ns, &tat, base + iv, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return true;
	}
	return true;	/* a cell rewritten under us: fail open */
}

/*
 * The semaphore.  A CAS rather than add-then-undo: a refused caller's
 * transient +1 would otherwise refuse a concurrent caller that fits, and
 * the limit must be exact.  The process's cell is raised first and
 * lowered last, so a process killed in between has at worst one permit
 * given back by the loader too many (fail-open), never one held forever.
 * Returns 1 with a permit, 0 refused, -1 passed without one (the cell
 * kept changing under us: fail open).
 */
static int permit_take(struct sds_cell *c, __u32 *permit, __s64 limit)
{
	__s64 cur;
	int i;

	if (permit)
		__atomic_fetch_add(permit, 1, __ATOMIC_RELAXED);
	cur = LD(c->permits);
	for (i = 0; i < SDS_CAS_TRIES; i++) {
		if (cur >= limit)
			break;
		if (__atomic_compare_exchange_n(&c->permits, &cur, cur + 1, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return 1;
	}
	if (permit)
		__atomic_fetch_sub(permit, 1, __ATOMIC_RELAXED);
	return i < SDS_CAS_TRIES ? 0 : -1;
}

/*
 * The drill, for a call that passed everything else: a downgraded call
 * never reaches the dependency, so there is nothing to fail or slow down.
 */
static unsigned int drill_hit(struct sds_cell *c, const struct line1 *l,
			      uint64_t now, uint64_t *rng, uint64_t *delay_ns)
{
	if (!(l->active & SDS_ACT_DRILL) || now >= l->drill_expires_ns ||
	    !rate_hit(l->drill_ratio, rng))
		return 0;
	switch (l->drill_kind) {
	case SDS_DRILL_ERROR:
		__atomic_fetch_add(&c->drill_faults, 1, __ATOMIC_RELAXED);
		return SDS_G_FAULT;
	case SDS_DRILL_DELAY:
		__atomic_fetch_add(&c->drill_delays, 1, __ATOMIC_RELAXED);
		/* Never longer than the loader would ever ask for. */
		*delay_ns = l->drill_delay_ns < SDS_DRILL_DELAY_MAX_NS ?
			    l->drill_delay_ns : SDS_DRILL_DELAY_MAX_NS;
		return SDS_G_DELAY;
	}
	return 0;
}

/*
 * No whole copy of line 1 came (the loader preempted in the middle of its
 * write, on a busy host): the call passes, as it always did, but not past
 * an exact budget of a loader that is still ticking, or a threshold of N
 * would let N + 1 through.  The marks are words of their own outside
 * @seq, stored before any line 1 that sets SDS_ACT_BUDGET; @active is one
 * word too, so read alone it is the old line's or the new one's, and
 * either way says whether marks are there to obey.  Without line 1 the
 * loader's own downgrade is unknown: the budget alone may refuse a call
 * its dial or probe would have let through, never pass one it would have
 * refused.  Tokens and permits are line 1's: not applied (fail-open).
 */
static unsigned int decide_unread(const struct sds_flag *e, struct sds_cell *c,
				  const struct sds_flags_header *h, uint64_t now)
{
	struct budget_marks m;

	if (!(LD(e->active) & SDS_ACT_BUDGET) || sds_guard_stale(h, now))
		return 0;
	budget_read(e, &m);
	if (budget_refuses(c, &m) || !budget_claim(c, &m))
		return SDS_G_DOWNGRADE;
	return 0;
}

unsigned int sds_guard_decide(const struct sds_flag *e, struct sds_cell *c,
			      const struct sds_flags_header *h, __u32 *permit,
			      uint64_t now, uint64_t *rng)
{
	uint64_t delay_ns;

	return sds_guard_decide_drill(e, c, h, permit, now, rng, &delay_ns);
}

unsigned int sds_guard_decide_drill(const struct sds_flag *e, struct sds_cell *c,
				    const struct sds_flags_header *h,
				    __u32 *permit, uint64_t now, uint64_t *rng,
				    uint64_t *delay_ns)
{
	struct budget_marks m = { UINT64_MAX, UINT64_MAX, UINT64_MAX };
	unsigned int how = 0;
	bool loader_down;
	struct line1 l;
	int r;

	*delay_ns = 0;

	/* 1, 2: a whole copy of the loader's line, or only its budgets. */
	if (!line1_read(e, &l))
		return decide_unread(e, c, h, now);
	if (!l.active)
		return 0;
	/* 3: a dead loader's flags are not obeyed. */
	if (sds_guard_stale(h, now))
		return 0;
	/* 4: downgraded (or held) until the expiry the loader renews. */
	loader_down = (l.active & SDS_ACT_DOWNGRADE) && now < l.expires_ns;
	if (loader_down) {
		if ((l.active & SDS_ACT_PROBE) &&
		    ((l.active & SDS_ACT_HALFOPEN) ? halfopen_take(c, e, &l, now) :
		     probe_take(c, &l, now)))
			how |= SDS_G_PROBE;
		else if (rate_hit(l.rate, rng))
			return SDS_G_DOWNGRADE;
	}
	/*
	 * 4b: exact trips.  Refused at once once the exceptions or slow calls
	 * reached their mark, or no pass is left; checked before the limits
	 * that spend, so such a call takes no token or permit.  Not while the
	 * loader's downgrade is in force: it has seen the trip, and its hold,
	 * probes and downgrade_rate decide, as for any window strategy.
	 */
	if (l.active & SDS_ACT_BUDGET) {
		budget_read(e, &m);
		if (!loader_down &&
		    (budget_refuses(c, &m) || budget_visit_spent(c, &m)))
			return SDS_G_DOWNGRADE;
	}
	/*
	 * 5, 6: the exact limits hold for a probe too (a probe that finds
	 * the bucket empty or the semaphore full is simply downgraded and
	 * reports nothing; the next interval brings the next probe).
	 */
	if ((l.active & SDS_ACT_TOKEN) && !token_take(c, &l, now)) {
		__atomic_fetch_add(&c->refused_token, 1, __ATOMIC_RELAXED);
		return SDS_G_DOWNGRADE;
	}
	if (l.active & SDS_ACT_CONCURRENT) {
		r = permit_take(c, permit, l.concurrent_limit);
		if (!r) {
			__atomic_fetch_add(&c->refused_concurrent, 1, __ATOMIC_RELAXED);
			return SDS_G_DOWNGRADE;
		}
		if (r > 0)
			how |= SDS_G_PERMIT;
	}
	/*
	 * 6b: the pass itself, claimed last so that a call refused for any
	 * other reason spends none.  Lost to a racing claim: give the permit
	 * back (the token stays spent, as for a probe the semaphore refuses).
	 * A call the loader's dial or probe let through claims too, so the
	 * count keeps up with the passes, but is not refused.
	 */
	if (!budget_claim(c, &m) && !loader_down) {
		if (how & SDS_G_PERMIT)
			sds_guard_release(c, permit, SDS_G_PERMIT);
		return SDS_G_DOWNGRADE;
	}
	/* 7: pass, unless a drill fails or slows the call. */
	return how | drill_hit(c, &l, now, rng, delay_ns);
}

void sds_guard_release(struct sds_cell *c, __u32 *permit, unsigned int how)
{
	if (how & SDS_G_PERMIT) {
		__atomic_fetch_sub(&c->permits, 1, __ATOMIC_RELEASE);
		if (permit)
			__atomic_fetch_sub(permit, 1, __ATOMIC_RELAXED);
	}
	if (how & SDS_G_PROBE)
		__atomic_fetch_add((how & SDS_G_EXCEPTION) ? &c->probes_failed :
				   &c->probes_ok, 1, __ATOMIC_RELAXED);
}
