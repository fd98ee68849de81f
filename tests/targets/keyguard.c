// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * keyguard - keyed guard calls for tests/keys (docs/KEYS.md), linked with
 * libsds.a: app APP's point "kg" called through sds_enter_key() with
 * string keys.  One keyed call of "warm" first (the loader makes a guard
 * point's key table at its tick after the kernel saw a key), 1 s, then
 * "user-N" N times for N in 1..100 (user 7 500 more), each ended with
 * sds_downgrade_finally(), users whose number is a multiple of 10 signing
 * an exception; prints "done".
 *
 *   keyguard APP
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sds.h"

static void call(struct sds_point *p, const char *key, int fail)
{
	if (sds_enter_key(p, key, strlen(key)) == SDS_PASS && fail)
		sds_exception_sign(p);
	sds_downgrade_finally(p);
}

int main(int argc, char **argv)
{
	struct sds_client *c;
	struct sds_point *p;
	char key[32];
	int u, i;

	if (argc != 2) {
		fprintf(stderr, "usage: keyguard APP\n");
		return 2;
	}
	c = sds_client_open("default", argv[1]);
	p = sds_point(c, "kg");
	if (!p)
		return 1;
	call(p, "warm", 0);
	sleep(1);
	for (u = 1; u <= 100; u++) {
		snprintf(key, sizeof(key), "user-%d", u);
		for (i = 0; i < u + (u == 7 ? 500 : 0); i++)
			call(p, key, u % 10 == 0);
	}
	sds_client_close(c);
	printf("done\n");
	return 0;
}
