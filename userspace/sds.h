/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * libsds: guard the call sites of an application with sds-bpf (DESIGN.md
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
 * Close @c: stops its thread, unregisters the process and frees the
 * client and its points.  No thread may use its points any more, nor be
 * inside one of their guarded calls.
 */
void sds_client_close(struct sds_client *c);

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
