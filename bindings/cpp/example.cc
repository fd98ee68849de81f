// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * sds.hpp in use: a C++ service's call to a dependency, guarded by a
 * scoped sds::guard or by sds::invoke, with a cached fallback.
 *
 *	example GROUP APP
 *
 * Looks up the point "dep" of app APP, prints "ready", then runs the
 * commands of stdin (the driver of tests/bindings), one per line:
 *
 *   ok N            N calls through sds::invoke that succeed
 *   throw N         N calls through sds::invoke whose dependency throws
 *   guard-ok N      N calls in a scope holding an sds::guard
 *   guard-throw N   the same, the dependency throws out of the scope
 *   guard-fail N    the same, the dependency fails without throwing
 *                   (an error code: the scope signs it with g.fail())
 *   key-ok N        N calls through sds::invoke_key, of keys user0..user9
 *                   in turn, that succeed (docs/KEYS.md)
 *
 * Each prints "passed P downgraded D failed F" (P: the dependency ran, D:
 * the fallback ran, F: the dependency failed) then "done".  EOF or
 * "quit" ends it (exit 0).
 */
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>

#include "sds.hpp"

namespace {

struct tally {
	long passed = 0;		// the dependency ran
	long downgraded = 0;		// the fallback ran
	long failed = 0;		// the dependency failed
};

// The dependency: fails (throws, or returns -1) when asked to.
int dependency(tally &t, bool fail, bool throws)
{
	t.passed++;
	if (fail) {
		t.failed++;
		if (throws)
			throw std::runtime_error("dependency down");
		return -1;
	}
	return 42;
}

int cached(tally &t)
{
	t.downgraded++;
	return 7;
}

// Idiomatic use 1: sds::invoke, an exception from the call passes on.
int call_invoke(sds::point dep, tally &t, bool fail)
{
	return sds::invoke(dep, [&] { return cached(t); },
			   [&] { return dependency(t, fail, true); });
}

// Idiomatic use 2: a scope with a guard.
int call_scoped(sds::point dep, tally &t, bool fail, bool throws)
{
	sds::guard g(dep);

	if (g.downgraded())
		return cached(t);
	int r = dependency(t, fail, throws);
	if (r < 0)
		g.fail();
	return r;
}

void run(sds::point dep, const std::string &kind, long n, tally &t)
{
	for (long i = 0; i < n; i++) {
		try {
			if (kind == "key-ok")
				sds::invoke_key(dep, "user" + std::to_string(i % 10),
						[&] { return cached(t); },
						[&] { return dependency(t, false, true); });
			else if (kind == "ok" || kind == "throw")
				call_invoke(dep, t, kind == "throw");
			else
				call_scoped(dep, t, kind != "guard-ok",
					    kind == "guard-throw");
		} catch (const std::runtime_error &) {
			// the service's own error path
		}
	}
}

bool known(const std::string &kind)
{
	for (const char *k : {"ok", "throw", "guard-ok", "guard-throw",
			      "guard-fail", "key-ok"})
		if (kind == k)
			return true;
	return false;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 3) {
		std::fprintf(stderr, "usage: %s GROUP APP\n", argv[0]);
		return 2;
	}
	sds::client cl(argv[1], argv[2]);
	sds::point dep = cl.point("dep");
	// The C API's own type names compile in C++ too (sds.h).
	sds_point_t *raw = sds_point(cl.get(), "dep");
	if (raw != dep.get()) {
		std::fprintf(stderr, "example: sds_point gave another point\n");
		return 1;
	}

	std::cout << "ready" << std::endl;
	std::string kind;
	long n;
	while (std::cin >> kind) {
		if (kind == "quit")
			break;
		if (!(std::cin >> n) || n < 0 || !known(kind)) {
			std::cout << "error: want KIND N" << std::endl;
			return 1;
		}
		tally t;
		run(dep, kind, n, t);
		std::cout << "passed " << t.passed << " downgraded "
			  << t.downgraded << " failed " << t.failed
			  << "\ndone" << std::endl;
	}
	return 0;
}
