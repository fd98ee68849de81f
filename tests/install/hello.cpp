// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
// The installed C++ header, built by tests/install with the installed
// pkg-config file: with no loader every call passes; prints "pass 2".
#include <cstdio>
#include <sds.hpp>

int main()
{
	static sds::client cl("installtest", "hellocpp");
	static sds::point p = cl.point("hello");
	int passed = 0;

	for (int i = 0; i < 2; i++) {
		sds::guard g(p);
		if (!g.downgraded())
			passed++;
	}
	std::printf("pass %d\n", passed);
	return 0;
}
