// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * names_clones N M: shop::charge(int, long) as g++ -O2 leaves it: two
 * clones, "[clone .constprop.0]" and "[clone .constprop.1]", one per
 * constant rate its two callers pass, and no symbol of its own
 * (tests/harm/t_names.py).  The first clone runs N times, the second M
 * times; a call fails (-1) when its amount is a multiple of 4.  An
 * overload shop::charge(double), called once, has a symbol of its own.
 * Prints "calls N M errors E total T".
 */
#include <cstdio>
#include <cstdlib>

namespace shop {

long total;	/* what the calls charged */

/*
 * noinline: one call, one probe hit; static, with a constant @rate from
 * each caller: g++'s IPA-CP makes a clone per constant.
 */
static __attribute__((noinline)) int charge(int rate, long amount)
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
		if (charge(3, i) < 0)
			errs++;
	return errs;
}

__attribute__((noinline)) long by_cash(long n)
{
	long errs = 0;

	for (long i = 0; i < n; i++)
		if (charge(7, i) < 0)
			errs++;
	return errs;
}

/* An overload of its own symbol: "shop::charge" alone names three functions. */
__attribute__((noinline)) long charge(double amount)
{
	return (long)(amount * 2);
}

} // namespace shop

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long m = argc > 2 ? atol(argv[2]) : 1000;
	long errs = shop::by_card(n) + shop::by_cash(m);

	printf("calls %ld %ld errors %ld total %ld\n", n, m, errs,
	       shop::total + shop::charge((double)argc));
	return 0;
}
