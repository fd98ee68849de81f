// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * unwind_plain - plain C, nothing in it can unwind (issue 9): its function
 * points keep the uprobe + uretprobe pair.
 *
 *   unwind_plain N
 *
 * main calls work(i) N times; work returns -1 for odd i (err=neg counts
 * those as exceptions).  Prints "sum S".
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int work(int i)
{
	volatile int x = i;

	return x & 1 ? -1 : x;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	long sum = 0;

	for (int i = 0; i < n; i++)
		sum += work(i);
	printf("sum %ld\n", sum);
	return 0;
}
