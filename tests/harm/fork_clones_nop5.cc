// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * fork_clones_nop5 N: charge(int, long) as g++ -O2 with -pg -mfentry
 * -mnop-mcount leaves it: two clones, each starting with a 5-byte NOP,
 * one per constant rate (the optimize attribute asks for -O3's IPA-CP
 * cloning), and no symbol of its own (tests/harm/t_fork.py).  Each clone
 * runs N times.  Prints "calls N N errors E".
 */
#include <cstdio>
#include <cstdlib>

static long total;	/* what the calls charged */

static __attribute__((noinline, optimize("ipa-cp-clone")))
int charge(int rate, long amount)
{
	if (amount % 4 == 0)
		return -1;
	total += rate * amount;
	return 0;
}

__attribute__((noinline)) long by_card(long n)
{
	long errs = 0;

	for (long i = 0; i < n; i++)
		errs += charge(3, i) < 0;
	return errs;
}

__attribute__((noinline)) long by_cash(long n)
{
	long errs = 0;

	for (long i = 0; i < n; i++)
		errs += charge(7, i) < 0;
	return errs;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long errs = by_card(n) + by_cash(n);

	printf("calls %ld %ld errors %ld\n", n, n, errs + (total < 0));
	return 0;
}
