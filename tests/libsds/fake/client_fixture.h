/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * client_fixture.h - what the tests of libsds against the stand-in loader
 * (test_client.c, test_client_life.c, test_copy.c) share: a private run
 * directory the stand-in and the library agree on, the site counters'
 * deltas, and waiting for a point to be bound.
 */
#ifndef SDS_TEST_CLIENT_FIXTURE_H
#define SDS_TEST_CLIENT_FIXTURE_H

#include <stdbool.h>
#include <linux/types.h>
#include "fake_sites.h"
#include "libsds.h"

#define NS	1000000000ULL
#define MS	1000000ULL

/* The run directory: made by cfx_setup(), removed by cfx_teardown(). */
extern char cfx_run_dir[];

/* cmocka group setup: the run dir, SDS_RUN_DIR, our uid trusted. */
int cfx_setup(void **state);
int cfx_teardown(void **state);

void cfx_sleep_ms(int ms);

/* Snapshot of the site counters, to compare deltas. */
struct cfx_counts {
	__u64 n[SITE_KINDS];	/* calls per site, all points */
};

struct cfx_counts cfx_counts_now(void);
/* The calls of each site since @before are exactly these. */
void cfx_assert_delta(const struct cfx_counts *before, __u64 enter, __u64 exit,
		      __u64 exc, __u64 down);

bool cfx_bound(struct sds_point *p);
/* Wait up to @ms for @p to be bound (@want) or not. */
bool cfx_wait_bound(struct sds_point *p, bool want, int ms);

#endif /* SDS_TEST_CLIENT_FIXTURE_H */
