// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * unwind_ex - a C++ exception thrown through a probed function (issue 9).
 *
 *   unwind_ex N K [SPIN]
 *
 * main calls f(i) N times; f calls the leaf h (0), then g, which throws
 * every K-th call (i % K == K - 1); main catches.  Prints "caught C" (C = N / K) and
 * "sum S" of f's normal returns.  Under a uretprobe on f without care for
 * unwinding the program ends in std::terminate (exit 134).  With SPIN, f
 * and g do that many loop rounds of work.
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

static int spin;

extern "C" __attribute__((noinline)) int g(int i, int k)
{
	volatile int x = 0;

	for (int j = 0; j < spin; j++)
		x += j;
	if (i % k == k - 1)
		throw std::runtime_error("g");
	return i & 1;
}

/* noipa: a real call whose value the compiler does not know. */
extern "C" __attribute__((noipa)) int h(int i)
{
	return i < 0;
}

__attribute__((noinline)) int f(int i, int k)
{
	return h(i) + g(i, k) + 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	int k = argc > 2 ? atoi(argv[2]) : 2;
	long sum = 0;
	int caught = 0;

	spin = argc > 3 ? atoi(argv[3]) : 0;
	for (int i = 0; i < n; i++) {
		try {
			sum += f(i, k);
		} catch (const std::runtime_error &e) {
			caught++;
		}
	}
	printf("caught %d\nsum %ld\n", caught, sum);
	return 0;
}
