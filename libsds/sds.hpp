/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sds.hpp - libsds for C++17, header only, over the C API of sds.h.
 *
 *	static sds::client cl("shop", "frontend");
 *	static sds::point order = cl.point("order");
 *
 *	{
 *		sds::guard g(order);		// sds_should_downgrade()
 *		if (g.downgraded())
 *			return cached_answer();	// the fallback
 *		return order_service_call();	// may throw
 *	}					// ~guard: sds_downgrade_finally()
 *
 * or, for a call:
 *
 *	int r = sds::invoke(order, [] { return cached_answer(); },
 *			    [] { return order_service_call(); });
 *
 * and for one call of a key (a user, a tenant: docs/KEYS.md), which the
 * loader can limit alone: sds::guard g(order, user_id), sds::invoke_key.
 *
 * An exception that leaves the guarded scope is signed as the call's
 * exception (sds_exception_sign) by the guard's destructor, which
 * compares std::uncaught_exceptions() with its value when the guard was
 * made: an exception thrown and caught inside the scope, or one already
 * in flight around it (a guard in a destructor during unwinding), is not
 * the call's.  A call that fails without throwing signs with g.fail().
 *
 * A guard belongs to the thread that made it (libsds keeps a thread's
 * guarded calls in thread-local frames): never move it, and never keep
 * one across a coroutine's co_await if the coroutine may resume on
 * another thread.  Nothing here allocates or throws, except what the
 * callables given to sds::invoke throw.  Link with
 * `pkg-config --cflags --libs sds`; the header needs no other library.
 */
#ifndef SDS_HPP
#define SDS_HPP

#include <exception>
#include <functional>
#include <type_traits>
#include <cstddef>
#include <string_view>
#include <utility>

#include "sds.h"

namespace sds {

/* A guarded call site: a handle, valid as long as its client. */
class point {
public:
	/* The null point: never downgrades (like every NULL of libsds). */
	constexpr point() noexcept = default;
	/* Wrap a point of the C API. */
	constexpr explicit point(sds_point_t *p) noexcept : p_(p) {}

	/* The C API's point, for the calls this header does not wrap. */
	constexpr sds_point_t *get() const noexcept { return p_; }

	/* The three calls of sds.h, one to one. */
	bool should_downgrade() const noexcept
	{
		return sds_should_downgrade(p_);
	}
	sds_verdict enter() const noexcept { return sds_enter(p_); }
	/*
	 * The keyed entries (sds_should_downgrade_key, sds_enter_key): at
	 * most 64 bytes of @key count; an empty key is an unkeyed call.
	 */
	bool should_downgrade_key(const void *key, std::size_t len) const noexcept
	{
		return sds_should_downgrade_key(p_, key, len);
	}
	bool should_downgrade_key(std::string_view key) const noexcept
	{
		return sds_should_downgrade_key(p_, key.data(), key.size());
	}
	sds_verdict enter_key(std::string_view key) const noexcept
	{
		return sds_enter_key(p_, key.data(), key.size());
	}
	void exception_sign() const noexcept { sds_exception_sign(p_); }
	void downgrade_finally() const noexcept { sds_downgrade_finally(p_); }
	/* sds_copy(): offer @len bytes at @buf to traffic copy. */
	int copy(const void *buf, std::size_t len) const noexcept
	{
		return sds_copy(p_, buf, len);
	}

	/* sds_copy_response(): the response to the request copy() offered. */
	int copy_response(const void *buf, std::size_t len) const noexcept
	{
		return sds_copy_response(p_, buf, len);
	}

private:
	sds_point_t *p_ = nullptr;	/* the C point; NULL: never downgrades */
};

/*
 * One app's connection to its loader (sds_client_open), closed by the
 * destructor: no thread may still use its points then.  Move-only.
 */
class client {
public:
	client(const char *group, const char *app) noexcept
		: c_(sds_client_open(group, app)) {}
	~client() { sds_client_close(c_); }

	client(const client &) = delete;
	client &operator=(const client &) = delete;
	client(client &&o) noexcept : c_(std::exchange(o.c_, nullptr)) {}
	client &operator=(client &&o) noexcept
	{
		if (this != &o) {
			sds_client_close(c_);
			c_ = std::exchange(o.c_, nullptr);
		}
		return *this;
	}

	/* The point @name (sds_point): look it up once and keep it. */
	sds::point point(const char *name) const noexcept
	{
		return sds::point(sds_point(c_, name));
	}

	sds_client_t *get() const noexcept { return c_; }

private:
	sds_client_t *c_;		/* the C client; NULL only on ENOMEM */
};

/*
 * One guarded call of a point, for the scope that holds the guard: made
 * with sds_should_downgrade(), ended by the destructor with
 * sds_downgrade_finally(), whatever way the scope is left.  Neither
 * copied nor moved: it is tied to its scope and its thread.
 */
class guard {
public:
	explicit guard(point p) noexcept
		: p_(p), uncaught_(std::uncaught_exceptions()),
		  downgraded_(p.should_downgrade()) {}
	/* One call of key @key (sds_should_downgrade_key). */
	guard(point p, std::string_view key) noexcept
		: p_(p), uncaught_(std::uncaught_exceptions()),
		  downgraded_(p.should_downgrade_key(key)) {}

	~guard()
	{
		/* More exceptions in flight than at the start: one is
		 * leaving this scope, so this call failed. */
		if (std::uncaught_exceptions() > uncaught_)
			p_.exception_sign();
		p_.downgrade_finally();
	}

	guard(const guard &) = delete;
	guard &operator=(const guard &) = delete;

	/* Run the fallback instead of the call. */
	bool downgraded() const noexcept { return downgraded_; }

	/* The call failed without throwing (counted once per call). */
	void fail() const noexcept { p_.exception_sign(); }

private:
	point p_;			/* the point of the call */
	int uncaught_;			/* uncaught exceptions at the start */
	bool downgraded_;		/* what should_downgrade() said */
};

/*
 * A guarded call: @fallback() if the point downgrades it, else @fn(); the
 * result of the one that ran (both must give types with a common type,
 * or both void).  An exception from @fn is signed and passed on as it is.
 */
template <class Fallback, class Fn>
auto invoke(point p, Fallback &&fallback, Fn &&fn)
	-> std::common_type_t<std::invoke_result_t<Fallback>,
			      std::invoke_result_t<Fn>>
{
	guard g(p);

	if (g.downgraded())
		return std::invoke(std::forward<Fallback>(fallback));
	return std::invoke(std::forward<Fn>(fn));
}

/* sds::invoke for one call of key @key: a blocked key runs @fallback. */
template <class Fallback, class Fn>
auto invoke_key(point p, std::string_view key, Fallback &&fallback, Fn &&fn)
	-> std::common_type_t<std::invoke_result_t<Fallback>,
			      std::invoke_result_t<Fn>>
{
	guard g(p, key);

	if (g.downgraded())
		return std::invoke(std::forward<Fallback>(fallback));
	return std::invoke(std::forward<Fn>(fn));
}

/*
 * A balancer over the providers of a dependency (sds_lb_open; sds.h and
 * docs/BALANCE.md), closed by the destructor.  Move-only.  False when
 * sds_lb_open() refused its input: sds_lb_error() says why.
 *
 *	sds::balancer b(cl, "pay", "least_active", members, 3);
 *	int i = b.choose();		// -1: all downgraded
 *	sds::guard g(b.point(i));
 */
class balancer {
public:
	balancer(const client &c, const char *dep, const char *policy,
		 const sds_lb_member *m, std::size_t n,
		 const sds_lb_opts *opts = nullptr) noexcept
		: b_(sds_lb_open(c.get(), dep, policy, m, n, opts)) {}
	~balancer() { sds_lb_close(b_); }

	balancer(const balancer &) = delete;
	balancer &operator=(const balancer &) = delete;
	balancer(balancer &&o) noexcept : b_(std::exchange(o.b_, nullptr)) {}
	balancer &operator=(balancer &&o) noexcept
	{
		if (this != &o) {
			sds_lb_close(b_);
			b_ = std::exchange(o.b_, nullptr);
		}
		return *this;
	}

	explicit operator bool() const noexcept { return b_ != nullptr; }

	/* sds_lb_choose(): a provider's index, or -1 (errno EAGAIN). */
	int choose(const void *key = nullptr, std::size_t len = 0) const noexcept
	{
		return sds_lb_choose(b_, key, len);
	}

	/* Provider @i's point, to guard the call (the null point if out of range). */
	sds::point point(int i) const noexcept
	{
		return sds::point(sds_lb_point(b_, i));
	}

	sds_balancer_t *get() const noexcept { return b_; }

private:
	sds_balancer_t *b_;		/* the C balancer; NULL: refused */
};

} /* namespace sds */

#endif /* SDS_HPP */
