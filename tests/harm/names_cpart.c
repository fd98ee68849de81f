// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * names_cpart N M: C functions as gcc -O2 leaves them (tests/harm/t_names.py):
 * work() split into its head and work.part.0, called N times straight
 * (work(i % 9, "abc"), the head inlined) and M times through a pointer to
 * work itself; a call returns the sum of its two recursive calls' plus 1,
 * or -5 when n is a multiple of 4.  price() left only as price.isra.0,
 * called N times, failing (-1) when its cents are a multiple of 5.
 * Prints "errs E total T" (E: the calls that returned < 0 at the top).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long total;
volatile int sink;

/*
 * work(n, s): an early return and a long body: gcc -O2 splits it (partial
 * inlining), leaving work (the head, jumping to its rest) and work.part.0
 * (the rest), which its callers here call straight, their copy of the
 * head inlined, and which calls itself through the inlined head too.
 */
int work(int n, const char *s)
{
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++) {
		total += strlen(s) * i;
		if (total % 7 == 3)
			sink = i;
	}
	return work(n - 3, s) + work(n - 4, s) + (n % 4 == 0 ? -5 : 1);
}

struct item {
	long cents;
	char name[64];
};

/* Reads one field of its struct: gcc -O2 passes only it, price.isra.0. */
static __attribute__((noinline)) long price(const struct item *it)
{
	if (it->cents % 5 == 0)
		return -1;
	return it->cents * 3;
}

int (*volatile work_ptr)(int, const char *) = work;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	long m = argc > 2 ? atol(argv[2]) : 10;
	long errs = 0, i;
	struct item it = { 0, "x" };

	for (i = 0; i < n; i++)
		if (work((int)(i % 9), "abc") < 0)
			errs++;
	for (i = 0; i < m; i++)
		if (work_ptr((int)(i % 9), "de") < 0)
			errs++;
	for (i = 0; i < n; i++) {
		it.cents = i;
		if (price(&it) < 0)
			errs++;
	}
	printf("errs %ld total %ld\n", errs, total);
	return 0;
}
