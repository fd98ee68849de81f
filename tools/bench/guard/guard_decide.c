// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * guard_decide - ns per guard decision + release on one thread, no probe
 * site, no kernel: the part of a guarded call that the flags region's
 * layout changes.  Built against either layout (2: one map, 3: flags +
 * cells), so that tools/bench/guard/guard_ab.sh's A/B can be repeated on the
 * decision alone:
 *
 *   cc -O2 -Ibpf -Icommon -Ilibsds tools/bench/guard/guard_decide.c \
 *      libsds/guard.c -o guard_decide && ./guard_decide [ROUNDS]
 *
 * Columns: "pass" (a point with no strategy: active 0), "limits" (a
 * concurrency limit and a token bucket that both let the call through:
 * a CAS on each, the permit given back), "down" (a kill switch).  Prints
 * the median over ROUNDS (default 21) rounds of 2^22 calls each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "guard.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define CALLS	(1u << 22)

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 21, r, c;
	size_t fsz = (size_t)SDS_FLAGS_ELEMS * SDS_FLAG_SIZE;
	char *flags = mmap(NULL, fsz, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
#if SDS_FLAGS_LAYOUT >= 3
	size_t csz = (size_t)SDS_CELLS_ELEMS * SDS_CELL_SIZE;
	char *cells = mmap(NULL, csz, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	__u32 *permit = (__u32 *)(cells + SDS_PERMITS_OFF);
#define CELL(i)	((struct sds_cell *)(cells + (i) * SDS_CELL_SIZE)),
#define RCELL(i)	CELL(i)
#else
	__u32 *permit = (__u32 *)(flags + SDS_PERMITS_OFF);
#define CELL(i)
#define RCELL(i)	ENTRY(i),
#endif
#define ENTRY(i)	((struct sds_flag *)(flags + (1 + (i)) * SDS_FLAG_SIZE))
	struct sds_flags_header *h = (void *)flags;
	static const char *name[] = { "pass", "limits", "down" };
	double v[3][101];
	uint64_t rng = 1, t0, sink = 0;
	unsigned int i, how;

	if (rounds < 1 || rounds > 101)
		rounds = 21;
	h->tick_ns = now_ns();
	ENTRY(1)->active = SDS_ACT_CONCURRENT | SDS_ACT_TOKEN;
	ENTRY(1)->concurrent_limit = 1LL << 40;
	ENTRY(1)->token_interval_ns = 1;
	ENTRY(1)->token_burst_ns = 1ULL << 62;
	ENTRY(2)->active = SDS_ACT_DOWNGRADE;
	ENTRY(2)->rate = 100;
	ENTRY(2)->expires_ns = ~0ULL;
	for (r = 0; r < rounds; r++) {
		for (c = 0; c < 3; c++) {
			h->tick_ns = now_ns();
			t0 = now_ns();
			for (i = 0; i < CALLS; i++) {
				how = sds_guard_decide(ENTRY(c), CELL(c) h,
						       permit + c, h->tick_ns, &rng);
				if (how & SDS_G_PERMIT)
					sds_guard_release(RCELL(c) permit + c, how);
				sink += how;
			}
			v[c][r] = (double)(now_ns() - t0) / CALLS;
		}
	}
	for (c = 0; c < 3; c++) {
		qsort(v[c], rounds, sizeof(double), cmp);
		printf("layout=%d col=%s ns_per_call=%.2f min=%.2f max=%.2f\n",
		       SDS_FLAGS_LAYOUT, name[c], v[c][rounds / 2], v[c][0],
		       v[c][rounds - 1]);
	}
	return sink == 1;	/* keep the calls */
}
