/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * libsds: guard the call sites of an application with sds-bpf (docs/DESIGN.md
 * §6).  The counting is done by eBPF uprobes on the library's probe sites;
 * the guard only reads the flags a running `sds-bpf attach` writes, so a
 * guarded call costs a few ns, and without a loader it never downgrades.
 *
 *	static struct sds_client *cl;
 *	static struct sds_point *order;
 *
 *	cl = sds_client_open("shop", "frontend");
 *	order = sds_point(cl, "order");
 *	...
 *	if (sds_should_downgrade(order)) {
 *		r = cached_answer();		// the fallback
 *	} else {
 *		r = order_service_call();
 *		if (r < 0)
 *			sds_exception_sign(order);
 *	}
 *	sds_downgrade_finally(order);		// always, like SDS
 *
 * or, for an expression:  r = SDS_INVOKE(order, cached_answer(), call());
 *
 * Every call is thread-safe, accepts NULL pointers (a no-op, or false),
 * never aborts and never prints; any failure inside the library means "do
 * not downgrade".  The three calls of a guarded call (should_downgrade,
 * exception_sign, downgrade_finally) never allocate, lock or enter the
 * kernel.  Link with `pkg-config --cflags --libs sds`.
 */
#ifndef SDS_H
#define SDS_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One app's connection to its loader, with the app's points. */
struct sds_client;
/* A named thing to count and protect: a guarded call site. */
struct sds_point;

/*
 * The same two types under names of their own, for C and C++ alike:
 *
 *	sds_point_t *order = sds_point(cl, "order");
 *
 * In C++ the function sds_point() hides the class of the same name, so
 * `sds_point *p` does not compile there, and a typedef cannot take the
 * function's name in either language: hence the _t.  They are the same
 * types (no ABI change); `struct sds_point *` keeps working.  C++ code can
 * also use sds.hpp (sds::point, a scoped guard, sds::invoke).
 */
typedef struct sds_client sds_client_t;
typedef struct sds_point sds_point_t;

/*
 * Open the guard client of app @app in group @group (names of
 * [A-Za-z0-9_-], 1 to 64 characters).  If a loader serves the app
 * ($SDS_RUN_DIR/<group>.<app>.sock, default /run/sds), the process
 * registers with it before this returns, so its calls are counted from
 * the first one; otherwise the client is detached and a background thread
 * looks for a loader once a second.  A client whose loader dies or stops
 * ticking fails open and looks for the next one.
 *
 * Returns NULL only when memory runs out.  Invalid names give a client
 * that stays detached for its whole life.  Call once per app at start-up,
 * before fork()ing workers if the process does (a child re-registers by
 * itself, within a few ms, with its own pid).
 */
struct sds_client *sds_client_open(const char *group, const char *app);

/*
 * The point @name of client @c, registered with the loader before this
 * returns when one is attached.  Asking twice for the same name gives the
 * same point.  The point lives as long as its client.  An invalid name
 * gives a point that never downgrades; NULL @c gives NULL.  Not for the
 * hot path: look points up once and keep them.
 */
struct sds_point *sds_point(struct sds_client *c, const char *name);

/*
 * Entry of a guarded call: counts a visit and returns true if the call
 * must be downgraded (run its fallback instead).  Always pair it with
 * sds_downgrade_finally() on the same thread, whatever it returned.
 */
bool sds_should_downgrade(struct sds_point *p);

/* What sds_enter() tells a guarded call. */
enum sds_verdict {
	SDS_PASS = 0,		/* make the call */
	SDS_DOWNGRADE = 1,	/* run the fallback instead */
	SDS_FAULT = 2,		/* a fault drill: act as if the call failed */
};

/*
 * Entry of a guarded call, like sds_should_downgrade(), for callers that
 * take part in fault drills (sds-bpf drill).  SDS_FAULT means an error
 * drill hit this call: it counts as a visit (not a downgrade); handle it
 * exactly as a real failure of the call -- sds_exception_sign(), then
 * your failure path -- so the exception strategies trip as in an outage.
 * A delay drill makes this sleep before it returns SDS_PASS.  Always pair
 * it with sds_downgrade_finally(), whatever it returned.
 * sds_should_downgrade() turns a fault into a downgrade (reason "drill").
 */
enum sds_verdict sds_enter(struct sds_point *p);

/*
 * Hot keys (docs/KEYS.md): the entries above for one call of a key -- a
 * user, a tenant, an item -- given as the @len bytes at @key, so that
 * the loader counts the point's calls per key and can limit one key
 * without the others (key_token_rate, key_visit_threshold,
 * key_overrides in sds-strategies(5)).  A key the loader blocked is
 * downgraded (reason "key") whatever the point decides; any other key is
 * decided as the unkeyed call decides it.  The key is copied: @key need
 * only be valid during this call.  A key longer than SDS_KEY_MAX (64)
 * bytes is its first 64 (keys that share those collide: pass a digest of
 * longer ones); NULL @key or @len 0 is an unkeyed call.  End the call
 * with sds_exception_sign() and sds_downgrade_finally() as any other.
 * Costs the unkeyed call plus building and hashing 64 bytes.
 */
#define SDS_KEY_MAX	64
bool sds_should_downgrade_key(struct sds_point *p, const void *key, size_t len);
enum sds_verdict sds_enter_key(struct sds_point *p, const void *key, size_t len);

/*
 * The guarded call of @p in progress on this thread failed: counts one
 * exception (at most one per call; nothing for a downgraded call or
 * outside a guarded call).
 */
void sds_exception_sign(struct sds_point *p);

/*
 * Exit of the innermost guarded call of @p on this thread: records its
 * latency and gives back what it held (a concurrency permit).  Call it
 * for every sds_should_downgrade(), downgraded or not.  Calls may end in
 * any order; each ends the innermost call of its own point.
 */
void sds_downgrade_finally(struct sds_point *p);

/*
 * Offer the bytes @buf[0..@len) to traffic copy (docs/COPY.md): when the
 * loader copies point @p (a plan or a recorder asks for it), its copy
 * program reads them -- up to the point's copy_max, sampled at its rate --
 * during this call, so @buf need only be valid until it returns.  When
 * nothing copies the point this is one load and a return (a few ns).
 * Never blocks, never fails the caller: returns 0, also when the bytes
 * could not be copied; -1 with errno EINVAL for a NULL point or one of an
 * invalid name (it can never copy).  Call it anywhere, inside a guarded
 * call or not.
 */
int sds_copy(struct sds_point *p, const void *buf, size_t len);

/*
 * Offer the response to the request this thread last offered with
 * sds_copy() at @p (docs/COPY.md, "Responses"): when that request was
 * captured, these bytes are captured with it -- a recording then holds the
 * pair, which `sds-copy replay --diff` compares with a shadow's answer.
 * Call it on the thread that called sds_copy(), before its next
 * sds_copy(); @buf need only be valid until it returns.  Costs what
 * sds_copy() costs; returns 0, or -1 with errno EINVAL as sds_copy().
 */
int sds_copy_response(struct sds_point *p, const void *buf, size_t len);

/*
 * Close @c: stops its thread, unregisters the process and frees the
 * client and its points.  No thread may use its points any more, nor be
 * inside one of their guarded calls.
 */
void sds_client_close(struct sds_client *c);

/* ---- balancing over the providers of a dependency (docs/BALANCE.md) ---- */

/*
 * A balancer spreads the calls of one dependency @dep over its providers,
 * with one of Dubbo's policies, on the load the kernel counts for the
 * whole host.  Each provider is its own guard point "<dep>@<name>" (so it
 * is counted, limited and downgraded on its own); the loader publishes
 * each such point's calls in flight and recent mean latency in its flag
 * entry every tick, and a pick reads them there: no syscall, no lock, no
 * allocation.
 *
 *	struct sds_lb_member m[] = { { "p0", 100, 0 }, { "p1", 100, 0 } };
 *	struct sds_balancer *b = sds_lb_open(cl, "pay", "least_active", m, 2, NULL);
 *	...
 *	int i = sds_lb_choose(b, key, keylen);
 *	if (i < 0)
 *		return fallback();		// every provider is downgraded
 *	struct sds_point *p = sds_lb_point(b, i);
 *	... guard the call to provider i with p as any guarded call ...
 *
 * or let sds_lb_call() do the guarding, retries included.
 */
struct sds_balancer;
typedef struct sds_balancer sds_balancer_t;

#define SDS_LB_MAX_MEMBERS	256	/* providers of one balancer */
#define SDS_LB_MAX_WEIGHT	10000	/* weights are 1..SDS_LB_MAX_WEIGHT */
/* sds_lb_opts.warmup_ns: no warm-up at all (0 asks for the default). */
#define SDS_LB_NO_WARMUP	(~0ULL)

/* One provider of the dependency. */
struct sds_lb_member {
	const char *name;		/* the provider: point "<dep>@<name>"; copied */
	int weight;			/* 1..SDS_LB_MAX_WEIGHT */
	unsigned long long start_ns;	/* CLOCK_MONOTONIC it started, for warm-up; 0: long ago */
};

/* Options of a balancer; NULL or all zero: the defaults. */
struct sds_lb_opts {
	unsigned long long warmup_ns;	/* 0: 10 min; SDS_LB_NO_WARMUP: none; at most a day */
	unsigned int retry_budget_pct;	/* sds_lb_call: retries <= this % of calls; 0: 20; 1..100 */
	unsigned long long retry_window_ns;	/* ... counted over this window; 0: 10 s; 1 s .. 1 h */
	unsigned long long attempt_timeout_ns;	/* sds_lb_call: an attempt slower than this failed; 0: none */
};

/*
 * A balancer over the @n providers @m of dependency @dep (a name of
 * [A-Za-z0-9_-]) for client @c, with the policy named @policy (NULL:
 * "random"; else "round_robin", "least_active", "shortest_response",
 * "consistent_hash", or a plugin's policy named in a manifest of
 * $SDS_EXT_DIR, see <sds_ext.h>; a plugin's answers are checked, and one
 * out of range or downgraded is replaced by a random pick that passes).
 * Looks up each provider's point "<dep>@<name>" with
 * sds_point() (not for the hot path: open balancers at start-up).  Returns
 * NULL with errno set (EINVAL for bad input, E2BIG for more than
 * SDS_LB_MAX_MEMBERS providers, ENOMEM) and sds_lb_error() saying why in
 * one line.  The balancer lives until sds_lb_close(), and at most as long
 * as @c.
 */
struct sds_balancer *sds_lb_open(struct sds_client *c, const char *dep,
				 const char *policy,
				 const struct sds_lb_member *m, size_t n,
				 const struct sds_lb_opts *opts);

/* Why the calling thread's last sds_lb_open() failed ("" if none did). */
const char *sds_lb_error(void);

/*
 * Pick a provider for a call with key @key/@keylen (read by
 * consistent_hash only; NULL: the empty key): its index, 0..n-1.  Never
 * one whose point is downgraded while another passes; -1 with errno
 * EAGAIN when every provider is downgraded (run the fallback).  A
 * provider whose point is not bound (no loader yet) counts as idle and
 * unmeasured.  No syscall, no lock, no allocation; thread-safe.  NULL
 * @b: -1 with errno EINVAL.
 */
int sds_lb_choose(struct sds_balancer *b, const void *key, size_t keylen);

/* The guard point of provider @idx (NULL if out of range): guard the call with it. */
struct sds_point *sds_lb_point(struct sds_balancer *b, int idx);

/*
 * A guarded call with retries: picks a provider, guards fn(idx, arg) with
 * the provider's point (sds_enter .. sds_downgrade_finally; a negative
 * result or an attempt slower than attempt_timeout_ns is signed as an
 * exception), and on failure tries up to @max_retries other providers
 * while the retry budget allows (a retry is taken only if the retries of
 * the window, this one included, stay within retry_budget_pct % of its
 * calls).  An attempt the guard refuses fails without calling fn:
 * -EAGAIN when downgraded, -EIO for a fault drill.  Returns the first result >= 0 of fn; else the last
 * attempt's failure (fn's negative result, -ETIMEDOUT for a slow one, or
 * -EAGAIN when no provider could be tried) with errno saying why it
 * stopped: EAGAIN no other provider passes, EDQUOT the retry budget is
 * spent, ERANGE @max_retries retries were made.  NULL @b or @fn: -EINVAL
 * (errno EINVAL).  The retry budget counts per balancer, over all its
 * threads (docs/BALANCE.md, "Retries and the budget").
 */
int sds_lb_call(struct sds_balancer *b, const void *key, size_t keylen,
		int (*fn)(int idx, void *arg), void *arg, unsigned int max_retries);

/* Free @b (its points stay the client's).  No thread may use it any more. */
void sds_lb_close(struct sds_balancer *b);

/*
 * SDS_INVOKE(p, fallback, expr): a guarded expression.  Evaluates to
 * @fallback if the call is downgraded, else to @expr; evaluates only the
 * one it returns, and always ends the call with sds_downgrade_finally().
 * @expr must have a value (not void); sign its failures inside @expr with
 * sds_exception_sign(p).  A GNU statement expression (gcc, clang).
 */
#define SDS_INVOKE(p, fallback, expr) __extension__ ({			\
	struct sds_point *sds_inv_p_ = (p);				\
	__typeof__(0 ? (fallback) : (expr)) sds_inv_r_;			\
									\
	if (sds_should_downgrade(sds_inv_p_))				\
		sds_inv_r_ = (fallback);				\
	else								\
		sds_inv_r_ = (expr);					\
	sds_downgrade_finally(sds_inv_p_);				\
	sds_inv_r_;							\
})

#ifdef __cplusplus
}
#endif

#endif /* SDS_H */
