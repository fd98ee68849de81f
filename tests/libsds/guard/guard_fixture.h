/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * guard_fixture.h - what the units of libsds/guard.c share: a flags
 * region and its cells laid out per bpf/sds_flags.h in anonymous shared
 * memory (as the loader's maps would be), a clock the test controls, and
 * the loader's own writer (flags__publish) to publish a point's limits.
 * One test program includes it once: its statics are that program's.
 */
#ifndef SDS_GUARD_FIXTURE_H
#define SDS_GUARD_FIXTURE_H

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "publish/flags.h"		/* the loader's writer: flags__publish() */
#include "guard.h"

#define NS		1000000000ULL
#define MS		1000000ULL
#define T0		(1000 * NS)	/* the fake clock's start */
#define REGION_SIZE	((size_t)SDS_FLAGS_BYTES)	/* entries and key tables */
#define CELLS_SIZE	((size_t)SDS_CELLS_ELEMS * SDS_CELL_SIZE)
/* The cell of the point whose entry is @e. */
#define C(e)	((struct sds_cell *)((char *)cells + \
		 (((char *)(e) - (char *)region) / SDS_FLAG_SIZE - 1) * SDS_CELL_SIZE))

static void *region;			/* the flags map of a test */
static void *cells;			/* the cells map of a test */
static struct sds_flags_header *hdr;	/* its header */
static struct flags_region fr;		/* the loader's view of it, for flags__publish() */

static inline struct sds_flag *entry(int id)
{
	return (struct sds_flag *)((char *)region + (1 + id) * SDS_FLAG_SIZE);
}

/* The point id of entry @e. */
static inline int point_of(const struct sds_flag *e)
{
	return ((const char *)e - (const char *)region) / SDS_FLAG_SIZE - 1;
}

static inline __u32 *permit_cell(int slot, int id)
{
	return (__u32 *)((char *)cells + SDS_PERMITS_OFF) + SDS_PERMIT_IDX(slot, id);
}

static inline int setup(void **state)
{
	region = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		return -1;
	cells = mmap(NULL, CELLS_SIZE, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cells == MAP_FAILED)
		return -1;
	hdr = region;
	fr.mem = region;
	fr.cells = cells;
	fr.hdr = hdr;
	hdr->magic = SDS_FLAGS_MAGIC;
	hdr->layout = SDS_FLAGS_LAYOUT;
	hdr->epoch = 42;
	hdr->tick_ns = T0;
	hdr->tick_interval_ns = 100 * MS;
	return 0;
}

static inline int teardown(void **state)
{
	munmap(region, REGION_SIZE);
	munmap(cells, CELLS_SIZE);
	return 0;
}

/* What the loader's settings of one entry are, written as the loader does. */
struct cfg {
	__u32 active, rate;
	__u64 expires_ns;
	__s64 limit;
	__u64 interval_ns, burst_ns, probe_ns;
};

/* A decision at @now with a loader that ticked at @now. */
static inline unsigned int decide_at(struct sds_flag *e, uint64_t now, uint64_t *rng)
{
	hdr->tick_ns = now;
	return sds_guard_decide(e, C(e), hdr, NULL, now, rng);
}

/* Publish @c on @e's point with the loader's own writer. */
static inline void publish(struct sds_flag *e, const struct cfg *c)
{
	struct flag_state fs = {
		.active = c->active,
		.rate = c->rate,
		.expires_ns = c->expires_ns,
		.concurrent_limit = c->limit,
		.token_interval_ns = c->interval_ns,
		.token_burst_ns = c->burst_ns,
		.probe_interval_ns = c->probe_ns,
	};

	hdr->tick_ns = T0;	/* a loader that ticked at the fake clock's start */
	flags__publish(&fr, point_of(e), &fs);
}

#endif /* SDS_GUARD_FIXTURE_H */
