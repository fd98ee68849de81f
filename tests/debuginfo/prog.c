// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * prog.c - the target of tests/debuginfo: a static (non-exported)
 * function that only a .symtab names, called N times on "call N".  The
 * suite builds it with -g, splits its debug info off and strips it.
 * Says "ready" at start and "done" after each command.  -DSALT=N gives
 * another build-id (the mismatching debug file).
 */
#include <stdio.h>
#include <stdlib.h>

#ifndef SALT
#define SALT 1
#endif

static volatile unsigned long sink;	/* keeps secret_work's body */

static __attribute__((noinline)) void secret_work(unsigned long i)
{
	/*
	 * Saves %rbx: the function starts with a push, an emulated probe
	 * site (loader/target/site.c), so attach skips the stepped first second.
	 */
	__asm__ volatile("" ::: "rbx");
	sink += i * SALT;
}

int main(void)
{
	char line[64];
	long i, n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	puts("ready");
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "call %ld", &n) != 1 || n < 0) {
			puts("error: bad command");
			continue;
		}
		for (i = 0; i < n; i++)
			secret_work((unsigned long)i);
		puts("done");
	}
	return 0;
}
