/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * libsdstarget.so: a function in a shared library for the integration
 * tests (attach TARGET = this library).  Same behaviour as work() in
 * target.c.
 */
#include <errno.h>
#include <time.h>

__attribute__((noipa, used, visibility("default")))
int lib_work(int fail, int ms)
{
	asm volatile("" ::: "memory");
	if (ms > 0) {
		struct timespec ts = { .tv_sec = ms / 1000,
				       .tv_nsec = (long)(ms % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
	return fail ? -5 : 0;
}
