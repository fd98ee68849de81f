// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-exact-decide: the guard's decision alone (libsds/guard.c on a
 * region laid out here, as tests/libsds does; no loader, no probe sites),
 * so that what the exact trips' budget adds is measured without the
 * uprobes' cost and noise around it.
 *
 *   bench-exact-decide THREADS ROUNDS CALLS
 *
 * Columns, in alternating rounds, THREADS threads at once, CALLS
 * decisions (and releases) each: "pass" an active entry that passes
 * (SDS_ACT_CONCURRENT with a limit no run reaches: line 1, a permit CAS)
 * and "budget" the same plus SDS_ACT_BUDGET with a visit mark no run
 * reaches (line 2's marks, one more CAS on the shared cell).  Prints per
 * column "col=C threads=T median=M min=N max=X" in ns per decision.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "bench_threads.h"
#include "publish/flags.h"
#include "guard.h"

static void *region, *cells;
static struct flags_region fr;
static uint64_t calls;
static uint64_t clock_now;
static int ids[2] = { 0, 1 };	/* the columns' points */

static struct sds_flag *entry(int id)
{
	return (struct sds_flag *)((char *)region + (size_t)(1 + id) * SDS_FLAG_SIZE);
}

static struct sds_cell *cell(int id)
{
	return (struct sds_cell *)((char *)cells + (size_t)id * SDS_CELL_SIZE);
}

/* One thread deciding on the column's point @calls times: ns per decision. */
static double run_decide(void *col)
{
	int id = *(int *)col;
	struct sds_flag *e = entry(id);
	struct sds_cell *c = cell(id);
	uint64_t rng = 0, t0, i;
	unsigned int how;

	t0 = bench_now_ns();
	for (i = 0; i < calls; i++) {
		how = sds_guard_decide(e, c, fr.hdr, NULL, clock_now, &rng);
		sds_guard_release(c, NULL, how);
	}
	return (double)(bench_now_ns() - t0) / calls;
}

int main(int argc, char **argv)
{
	static const char *const names[2] = { "pass", "budget" };
	static double v[2][BENCH_MAX_ROUNDS];
	void *const cols[2] = { &ids[0], &ids[1] };
	struct flag_state fs = { .active = SDS_ACT_CONCURRENT,
				 .concurrent_limit = 1LL << 40 };
	int nt, rounds, k;

	if (argc != 4)
		return 2;
	nt = atoi(argv[1]);
	rounds = atoi(argv[2]);
	calls = strtoull(argv[3], NULL, 10);
	if (nt < 1 || nt > BENCH_MAX_THREADS || rounds < 1 ||
	    rounds > BENCH_MAX_ROUNDS || !calls)
		return 2;
	region = mmap(NULL, (size_t)SDS_FLAGS_ELEMS * SDS_FLAG_SIZE,
		      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cells = mmap(NULL, (size_t)SDS_CELLS_ELEMS * SDS_CELL_SIZE,
		     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED || cells == MAP_FAILED)
		return 1;
	fr.mem = region;
	fr.cells = cells;
	fr.hdr = region;
	fr.hdr->magic = SDS_FLAGS_MAGIC;
	fr.hdr->layout = SDS_FLAGS_LAYOUT;
	clock_now = bench_now_ns();
	fr.hdr->tick_ns = clock_now;
	flags__publish(&fr, 0, &fs);
	entry(1)->visit_upto = UINT64_MAX - 1;
	entry(1)->exc_upto = entry(1)->slow_upto = UINT64_MAX;
	fs.active |= SDS_ACT_BUDGET;
	flags__publish(&fr, 1, &fs);
	bench_alternate(run_decide, cols, nt, rounds, v);
	for (k = 0; k < 2; k++)
		bench_print_col(names[k], nt, v[k], rounds, 0);
	return 0;
}
