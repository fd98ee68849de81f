// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * A program linked with libsds (statically as PIE and non-PIE, and
 * against libsds.so through pkg-config) for test_sites: its sites and
 * notes are checked, and it must run: exit 0 when no call was downgraded
 * (no loader serves "libsds-test.linked").
 */
#include <stdio.h>
#include <sds.h>

static int work(int i)
{
	return i & 1;
}

int main(void)
{
	struct sds_client *c = sds_client_open("libsds-test", "linked");
	struct sds_point *p = sds_point(c, "work");
	int i, sum = 0, down = 0;

	if (!c || !p)
		return 2;
	for (i = 0; i < 1000; i++) {
		if (sds_should_downgrade(p)) {
			down++;
		} else if (work(i)) {
			sds_exception_sign(p);
			sum++;
		}
		sds_downgrade_finally(p);
		/* Nothing copies without a loader: 0, no site call. */
		if (sds_copy(p, &i, sizeof(i)))
			return 3;
	}
	sum += SDS_INVOKE(p, 0, work(1));
	sds_client_close(c);
	return down || sum != 501;
}
