/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * balance_fixture.h - what the units of the balancing policies
 * (test_balance.c, test_balance_hash.c) share: the seed and the clock,
 * a balancer of n weighted providers, Pearson's chi-square.
 */
#ifndef SDS_BALANCE_FIXTURE_H
#define SDS_BALANCE_FIXTURE_H

#include <stdio.h>

#include "balance.h"

#define SEED	0x5d5b9f0c0ffeeULL
#define SEC	1000000000ULL
#define NOW	(1000000ULL * SEC)	/* a clock well past any warm-up */

/*
 * Pearson's chi-square with 2 degrees of freedom exceeds x with
 * probability exp(-x / 2): 27.63 is a one-in-a-million false failure.
 */
#define CHI2_2DOF_1E6	27.631

static inline struct sds_lb *lb_new(const char *policy, const int *w, int n)
{
	struct sds_lb_provider p[SDS_LB_MAX];
	static char names[SDS_LB_MAX][16];
	struct sds_lb *lb;
	char err[256];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "p%d", i);
		p[i] = (struct sds_lb_provider){ .name = names[i], .weight = w[i] };
	}
	assert_int_equal(sds_lb_new(&lb, policy, p, n, 0, err, sizeof(err)), 0);
	return lb;
}

static inline double chi2(const long *obs, const double *p, int n, long total)
{
	double x = 0, e;
	int i;

	for (i = 0; i < n; i++) {
		e = p[i] * total;
		x += (obs[i] - e) * (obs[i] - e) / e;
	}
	return x;
}

#endif
