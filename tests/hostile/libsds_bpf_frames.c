// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libsds_bpf_frames GROUP APP POINT N M: a process whose BPF guard frames
 * leaked where libsds's did not (an older libsds, or a caller of the
 * sites): N direct sds__site_enter() of POINT, 50 ms, then M ordinary
 * guarded calls through libsds.  Prints "passed P downgraded D", then
 * waits for a line on stdin before it exits (a thread's frames are given
 * back when it exits: the test reads the gauge before).
 *
 * Each of the M calls finds the BPF stack full: it must evict the oldest
 * guard frame and push its own, so that its exit ends it (a latency of
 * microseconds), not a leaked call entered 50 ms before (a timeout).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sds.h>
#include "libsds.h"

int main(int argc, char **argv)
{
	struct timespec ms50 = { 0, 50 * 1000000L };
	struct sds_client *c;
	struct sds_point *p;
	struct sds_bind *b;
	long n, m, i, passed = 0, down = 0;
	char line[16];

	if (argc != 6)
		return 2;
	n = atol(argv[4]);
	m = atol(argv[5]);
	c = sds_client_open(argv[1], argv[2]);
	p = sds_point(c, argv[3]);
	b = p ? __atomic_load_n(&p->bind, __ATOMIC_ACQUIRE) : NULL;
	if (!b) {
		printf("error: not attached\n");
		return 1;
	}
	for (i = 0; i < n; i++)
		sds__site_enter(b->id, b->key);
	nanosleep(&ms50, NULL);
	for (i = 0; i < m; i++) {
		if (sds_should_downgrade(p))
			down++;
		else
			passed++;
		sds_downgrade_finally(p);
	}
	printf("passed %ld downgraded %ld\n", passed, down);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	sds_client_close(c);
	return 0;
}
