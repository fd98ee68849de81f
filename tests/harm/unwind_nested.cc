// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * unwind_nested - an exception thrown through three nested probed
 * functions (issue 9).
 *
 *   unwind_nested N K
 *
 * main calls a(i) N times; a calls b, b calls c, and c throws every K-th
 * call (i % K == K - 1), through b and a, caught in main.  Each frame
 * has a destructor to run on the way (a cleanup landing pad).  Prints
 * "caught C" (C = N / K), "sum S" of a's normal returns and "cleanups D"
 * (3 per call).
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

static long cleanups;

struct Guard {
	~Guard() { cleanups++; }
};

extern "C" __attribute__((noinline)) int c(int i, int k)
{
	Guard g;

	if (i % k == k - 1)
		throw std::runtime_error("c");
	return i & 1;
}

extern "C" __attribute__((noinline)) int b(int i, int k)
{
	Guard g;

	return c(i, k) + 1;
}

extern "C" __attribute__((noinline)) int a(int i, int k)
{
	Guard g;

	return b(i, k) + 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	int k = argc > 2 ? atoi(argv[2]) : 3;
	long sum = 0;
	int caught = 0;

	for (int i = 0; i < n; i++) {
		try {
			sum += a(i, k);
		} catch (const std::runtime_error &e) {
			caught++;
		}
	}
	printf("caught %d\nsum %ld\ncleanups %ld\n", caught, sum, cleanups);
	return 0;
}
