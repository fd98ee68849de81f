// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-exact-decide: the guard's decision alone (userspace/guard.c on a
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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "flags.h"
#include "guard.h"

#define MAX_ROUNDS	64
#define MAX_THREADS	8

static void *region, *cells;
static struct flags_region fr;
static uint64_t calls;
static uint64_t clock_now;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static struct sds_flag *entry(int id)
{
	return (struct sds_flag *)((char *)region + (size_t)(1 + id) * SDS_FLAG_SIZE);
}

static struct sds_cell *cell(int id)
{
	return (struct sds_cell *)((char *)cells + (size_t)id * SDS_CELL_SIZE);
}

struct worker {
	int id;			/* the point */
	pthread_barrier_t *go;	/* start together */
	double ns;		/* per decision */
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct sds_flag *e = entry(w->id);
	struct sds_cell *c = cell(w->id);
	uint64_t rng = 0, t0, i;
	unsigned int how;

	pthread_barrier_wait(w->go);
	t0 = now_ns();
	for (i = 0; i < calls; i++) {
		how = sds_guard_decide(e, c, fr.hdr, NULL, clock_now, &rng);
		sds_guard_release(c, NULL, how);
	}
	w->ns = (double)(now_ns() - t0) / calls;
	return NULL;
}

static double round_of(int id, int nt)
{
	struct worker w[MAX_THREADS];
	pthread_t t[MAX_THREADS];
	pthread_barrier_t go;
	double sum = 0;
	int i;

	pthread_barrier_init(&go, NULL, nt);
	for (i = 0; i < nt; i++) {
		w[i] = (struct worker){ .id = id, .go = &go };
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (i = 0; i < nt; i++) {
		pthread_join(t[i], NULL);
		sum += w[i].ns;
	}
	pthread_barrier_destroy(&go);
	return sum / nt;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const char *const names[2] = { "pass", "budget" };
	static double v[2][MAX_ROUNDS];
	struct flag_state fs = { .active = SDS_ACT_CONCURRENT,
				 .concurrent_limit = 1LL << 40 };
	int nt, rounds, r, i, k;

	if (argc != 4)
		return 2;
	nt = atoi(argv[1]);
	rounds = atoi(argv[2]);
	calls = strtoull(argv[3], NULL, 10);
	if (nt < 1 || nt > MAX_THREADS || rounds < 1 || rounds > MAX_ROUNDS || !calls)
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
	clock_now = now_ns();
	fr.hdr->tick_ns = clock_now;
	flags__publish(&fr, 0, &fs);
	entry(1)->visit_upto = UINT64_MAX - 1;
	entry(1)->exc_upto = entry(1)->slow_upto = UINT64_MAX;
	fs.active |= SDS_ACT_BUDGET;
	flags__publish(&fr, 1, &fs);
	round_of(0, nt);
	round_of(1, nt);
	for (r = 0; r < rounds; r++)
		for (i = 0; i < 2; i++) {
			k = (r + i) % 2;
			v[k][r] = round_of(k, nt);
		}
	for (k = 0; k < 2; k++) {
		qsort(v[k], rounds, sizeof(double), cmp);
		printf("col=%s threads=%d median=%.1f min=%.1f max=%.1f\n",
		       names[k], nt, v[k][rounds / 2], v[k][0], v[k][rounds - 1]);
	}
	return 0;
}
