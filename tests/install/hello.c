/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The smallest user of libsds, built by tests/install against the
 * installed header, library and pkg-config file.  With no loader the
 * client is detached and every call passes: it prints "pass N" for N
 * guarded calls and exits 0.
 */
#include <stdio.h>
#include <sds.h>

int main(void)
{
	struct sds_client *cl = sds_client_open("installtest", "hello");
	struct sds_point *p = sds_point(cl, "hello");
	int i, passed = 0;

	for (i = 0; i < 3; i++) {
		if (!sds_should_downgrade(p))
			passed++;
		sds_downgrade_finally(p);
	}
	sds_client_close(cl);
	printf("pass %d\n", passed);
	return 0;
}
