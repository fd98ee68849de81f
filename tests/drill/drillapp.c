// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * drillapp: a guarded program for tests/drill/run.py.  Opens client
 * GROUP/APP with point POINT, says "ready" once registered, then obeys
 * commands on stdin, one a line, answering each with one JSON line:
 *
 *   run N enter|should [every_us=U]
 *			N guarded calls through sds_enter() (a fault is
 *			signed as an exception, like a real failure) or
 *			sds_should_downgrade(); counts what each got; with
 *			every_us, call i starts U*i us after the first
 *   quit
 *
 * {"pass": P, "fault": F, "down": D, "max_ms": M}: M is the slowest call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sds.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	struct sds_client *c;
	struct sds_point *p;
	char line[256], mode[16];
	long n, i, every_us;

	if (argc != 4) {
		fprintf(stderr, "usage: drillapp GROUP APP POINT\n");
		return 2;
	}
	c = sds_client_open(argv[1], argv[2]);
	p = sds_point(c, argv[3]);
	if (!c || !p)
		return 1;
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		long pass = 0, fault = 0, down = 0;
		double max = 0, start = now_ms();

		if (!strncmp(line, "quit", 4))
			break;
		every_us = 0;
		if (sscanf(line, "run %ld %15s every_us=%ld", &n, mode, &every_us) < 2) {
			printf("{\"error\": \"bad command\"}\n");
			fflush(stdout);
			continue;
		}
		for (i = 0; i < n; i++) {
			double t0, dt;

			/* An absolute schedule: a slow call does not shift the next ones. */
			while (every_us > 0 && now_ms() < start + i * every_us / 1e3) {
				struct timespec ts = { 0, 100000 };

				nanosleep(&ts, NULL);
			}
			t0 = now_ms();

			if (!strcmp(mode, "should")) {
				if (sds_should_downgrade(p))
					down++;
				else
					pass++;
			} else {
				switch (sds_enter(p)) {
				case SDS_PASS:
					pass++;
					break;
				case SDS_FAULT:
					fault++;
					sds_exception_sign(p);
					break;
				case SDS_DOWNGRADE:
					down++;
					break;
				}
			}
			sds_downgrade_finally(p);
			dt = now_ms() - t0;
			if (dt > max)
				max = dt;
		}
		printf("{\"pass\": %ld, \"fault\": %ld, \"down\": %ld, \"max_ms\": %.3f}\n",
		       pass, fault, down, max);
		fflush(stdout);
	}
	sds_client_close(c);
	return 0;
}
