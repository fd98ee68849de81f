// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * unwind_tail - a probed function that ends in a tail call (issue 9).
 *
 *   unwind_tail N K
 *
 * main calls tail(i) N times; tail jumps to thrower (a tail call: its
 * `ret` is thrower's), which throws every K-th call; main catches.
 * Prints "caught C" and "sum S".  The point cannot have every exit
 * probed: attach counts its entries only and says why.
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

extern "C" __attribute__((noinline)) int thrower(int i, int k)
{
	if (i % k == k - 1)
		throw std::runtime_error("thrower");
	return i & 1;
}

extern "C" __attribute__((noinline)) int tail(int i, int k)
{
	return thrower(i + 1, k);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	int k = argc > 2 ? atoi(argv[2]) : 2;
	long sum = 0;
	int caught = 0;

	for (int i = 0; i < n; i++) {
		try {
			sum += tail(i, k);
		} catch (const std::runtime_error &e) {
			caught++;
		}
	}
	printf("caught %d\nsum %ld\n", caught, sum);
	return 0;
}
