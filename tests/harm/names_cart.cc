// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * names_cart N: a C++ program whose function points are named as C++
 * developers know them (tests/harm/t_names.py).  shop::Cart::add is
 * overloaded: add(int) runs N times, add(std::string const&) N / 2 times.
 * Prints "calls N items M" and exits 0.
 */
#include <cstdio>
#include <cstdlib>
#include <string>

namespace shop {

class Cart {
public:
	void add(int qty);
	void add(const std::string &sku);
	long items() const { return n; }

private:
	long n = 0;	/* items in the cart */
};

/* noipa: neither inlined nor cloned, so each call is one probe hit. */
__attribute__((noipa)) void Cart::add(int qty)
{
	n += qty;
}

__attribute__((noipa)) void Cart::add(const std::string &sku)
{
	n += (long)sku.size();
}

} // namespace shop

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 1000;
	shop::Cart cart;
	std::string sku("x");

	for (long i = 0; i < calls; i++) {
		cart.add(1);
		if (i % 2)
			cart.add(sku);
	}
	printf("calls %ld items %ld\n", calls, cart.items());
	return 0;
}
