// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* client_fixture.c - see client_fixture.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "client_fixture.h"

char cfx_run_dir[] = "/tmp/sds-client-XXXXXX";

int cfx_setup(void **state)
{
	char uid[16];

	if (!mkdtemp(cfx_run_dir))
		return -1;
	/* The stand-in loader runs as we do: trust it even if not root. */
	snprintf(uid, sizeof(uid), "%u", (unsigned)getuid());
	if (setenv("SDS_LOADER_UID", uid, 1))
		return -1;
	return setenv("SDS_RUN_DIR", cfx_run_dir, 1);
}

int cfx_teardown(void **state)
{
	rmdir(cfx_run_dir);
	return 0;
}

void cfx_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

struct cfx_counts cfx_counts_now(void)
{
	struct cfx_counts c;
	int k;

	for (k = 0; k < SITE_KINDS; k++)
		c.n[k] = site_total(k);
	return c;
}

void cfx_assert_delta(const struct cfx_counts *before, __u64 enter, __u64 exit,
		      __u64 exc, __u64 down)
{
	struct cfx_counts now = cfx_counts_now();

	assert_int_equal(now.n[SITE_ENTER] - before->n[SITE_ENTER], enter);
	assert_int_equal(now.n[SITE_EXIT] - before->n[SITE_EXIT], exit);
	assert_int_equal(now.n[SITE_EXCEPTION] - before->n[SITE_EXCEPTION], exc);
	assert_int_equal(now.n[SITE_DOWNGRADE] - before->n[SITE_DOWNGRADE], down);
}

bool cfx_bound(struct sds_point *p)
{
	return __atomic_load_n(&p->bind, __ATOMIC_ACQUIRE) != NULL;
}

bool cfx_wait_bound(struct sds_point *p, bool want, int ms)
{
	for (; ms > 0; ms -= 10) {
		if (cfx_bound(p) == want)
			return true;
		cfx_sleep_ms(10);
	}
	return cfx_bound(p) == want;
}
