// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * names_clone N: shop::Cart::add(int) as g++ -O2 -fwhole-program leaves
 * it: only its clone "shop::Cart::add(int) [clone .constprop.0] [clone
 * .isra.0]" (the cart's `this` replaced by the one field it reads), no
 * symbol of its own (tests/harm/t_names.py).  add() runs N times and
 * fails (-1) on every fourth call.  Prints "calls N errors E items I".
 */
#include <cstdio>
#include <cstdlib>

namespace shop {

long items;	/* what the calls added */

class Cart {
public:
	int add(int qty);

	long pad[4];	/* @limit away from `this`: the clone reads it alone */
	long limit = 3;
};

/* noinline: one call, one probe hit; cloning is left to the compiler. */
__attribute__((noinline)) int Cart::add(int qty)
{
	if (qty >= limit)
		return -1;
	items += qty;
	return 0;
}

} // namespace shop

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 1000, errs = 0;
	shop::Cart cart;

	for (long i = 0; i < calls; i++)
		if (cart.add((int)(i % 4)) < 0)
			errs++;
	printf("calls %ld errors %ld items %ld\n", calls, errs, shop::items);
	return 0;
}
