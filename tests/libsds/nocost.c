// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * What a guarded call (sds_should_downgrade + sds_downgrade_finally)
 * costs in the built library (-O2, real probe sites, no probes attached):
 * with no loader, attached to a stand-in loader with the point passing,
 * and downgraded.  Prints ns per call; checks nothing but the decisions.
 *
 *	nocost [CALLS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sds.h>

#include "fakeloader.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Best of 5 runs of @n calls: ns per call; -1 if a decision was wrong. */
static double measure(struct sds_point *p, long n, bool want)
{
	double best = 1e9, t;
	long i, bad;
	int r;

	for (r = 0; r < 5; r++) {
		bad = 0;
		t = now_s();
		for (i = 0; i < n; i++) {
			bad += sds_should_downgrade(p) != want;
			sds_downgrade_finally(p);
		}
		t = (now_s() - t) * 1e9 / n;
		if (bad)
			return -1;
		if (t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	char dir[] = "/tmp/sds-nocost-XXXXXX";
	struct fake_loader fl;
	struct sds_client *c;
	struct sds_point *p;
	double none, pass, down;

	if (!mkdtemp(dir))
		return 1;
	setenv("SDS_RUN_DIR", dir, 1);
	{
		char uid[16];

		/* The stand-in loader runs as we do: trust it if not root. */
		snprintf(uid, sizeof(uid), "%u", (unsigned)getuid());
		setenv("SDS_LOADER_UID", uid, 1);
	}
	c = sds_client_open("bench", "nocost");
	p = sds_point(c, "x");
	none = measure(p, n, false);
	sds_client_close(c);

	if (fake_start(&fl, dir, "bench", "attached", 1))
		return 1;
	c = sds_client_open("bench", "attached");
	p = sds_point(c, "x");
	pass = measure(p, n / 4, false);
	fake_set(fake_entry(&fl, "x"), 1 /* SDS_ACT_DOWNGRADE */, 100,
		 fake_now() + 3600ULL * 1000000000ULL, 0, 0);
	down = measure(p, n / 4, true);
	sds_client_close(c);
	fake_stop(&fl);
	rmdir(dir);

	printf("guarded call, no loader:            %6.2f ns\n", none);
	printf("guarded call, attached, passing:    %6.2f ns (no probes attached)\n", pass);
	printf("guarded call, attached, downgraded: %6.2f ns (no probes attached)\n", down);
	return none < 0 || pass < 0 || down < 0;
}
