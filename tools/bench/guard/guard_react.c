// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-guard react: the reaction time of a visit_threshold, from the
 * call that crosses it to the first downgraded one (usage: guard.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <sds.h>
#include "bench_guard.h"

/* The loader's answer to @req on its control socket, in @buf. */
static int ctl_ask(const char *req, char *buf, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *dir = getenv("SDS_RUN_DIR");
	size_t have = 0;
	ssize_t n;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s.%s.sock",
		 dir && *dir ? dir : "/run/sds", GROUP, bg_app);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(fd);
		return -1;
	}
	while (have + 1 < size && (n = read(fd, buf + have, size - 1 - have)) > 0) {
		have += (size_t)n;
		if (buf[have - 1] == '\n')
			break;
	}
	buf[have] = 0;
	close(fd);
	return have ? 0 : -1;
}

/* The strategies version in force, or -2 if the loader did not say. */
static long strategies_version(void)
{
	char buf[65536], *p;

	if (ctl_ask("info\n", buf, sizeof(buf)))
		return -2;
	p = strstr(buf, "\"strategies_version\"");
	if (!p || !(p = strchr(p, ':')))
		return -2;
	return strtol(p + 1, NULL, 10);
}

static int write_strategies(const char *path, long version, const char *points)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "{\"version\": %ld, \"points\": {%s}}\n", version, points);
	if (fclose(f) || rename(tmp, path))
		return -1;
	return 0;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { t / 1000000000, t % 1000000000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* The @pct-th percentile of sorted @v by nearest rank: ceil(pct/100 n)-th. */
static double rank(const double *v, int n, int pct)
{
	int i = (pct * n + 99) / 100;

	return v[i < 1 ? 0 : i - 1];
}

int bg_react(const char *path, int trials, long threshold, long pace_us,
	     long version0, long jitter_us)
{
	uint64_t rng = now_ns() | 1;
	double react[1000];
	struct sds_client *cl;
	int i, ok = 0, failed = 0;

	if (trials > 1000)
		trials = 1000;
	cl = sds_client_open(GROUP, bg_app);
	if (!cl)
		return 1;
	bg_pin(0);
	for (i = 0; i < trials; i++) {
		char pts[256], name[32];
		struct sds_point *p;
		uint64_t t, t_cross = 0, t_down = 0, deadline, next;
		long v = version0 + i, passed = 0, calls = 0;

		snprintf(name, sizeof(name), "r%d", i);
		snprintf(pts, sizeof(pts), "\"%s\": {\"visit_threshold\": %ld}",
			 name, threshold);
		if (write_strategies(path, v, pts)) {
			fprintf(stderr, "bench-guard: %s: %s\n", path, strerror(errno));
			return 1;
		}
		deadline = now_ns() + 3000000000ULL;
		while (strategies_version() != v) {
			if (now_ns() > deadline) {
				fprintf(stderr, "bench-guard: strategies version %ld "
					"not in force after 3 s\n", v);
				return 1;
			}
			usleep(1000);
		}
		p = sds_point(cl, name);
		rng ^= rng >> 12;
		rng ^= rng << 25;
		rng ^= rng >> 27;
		if (jitter_us > 0)
			usleep((useconds_t)((rng * 2685821657736338717ULL >> 11) %
					    (uint64_t)jitter_us));
		/*
		 * Call T+1 crosses the threshold: the reaction is from it to the
		 * first downgraded call, 0 when it is downgraded itself (exact
		 * trips); up to 2 s after it for the downgrade.
		 */
		next = now_ns();
		deadline = next + 2000000000ULL + (uint64_t)(threshold + 1) * pace_us * 1000;
		for (;;) {
			bool down;

			sleep_until(next);
			t = now_ns();
			down = sds_should_downgrade(p);
			sds_downgrade_finally(p);
			if (++calls == threshold + 1)
				t_cross = t;
			if (down) {
				t_down = t;
				break;
			}
			passed++;
			if (t > deadline)
				break;
			next += (uint64_t)pace_us * 1000;
		}
		if (!t_down || !t_cross) {
			printf("trial=%d point=%s calls=%ld passed=%ld: %s\n", i, name,
			       calls, passed, t_down ? "downgraded before the "
			       "threshold was crossed" : "never downgraded");
			failed++;
			continue;
		}
		react[ok] = (t_down - t_cross) / 1e3;
		printf("trial=%d point=%s calls=%ld passed=%ld react_us=%.1f\n", i,
		       name, calls, passed, react[ok]);
		ok++;
	}
	sds_client_close(cl);
	if (ok) {
		qsort(react, ok, sizeof(react[0]), bg_cmp_double);
		printf("react n=%d failed=%d threshold=%ld pace_us=%ld p50_us=%.1f "
		       "p90_us=%.1f p99_us=%.1f max_us=%.1f min_us=%.1f\n", ok, failed,
		       threshold, pace_us, rank(react, ok, 50), rank(react, ok, 90),
		       rank(react, ok, 99), react[ok - 1], react[0]);
	}
	return failed ? 1 : 0;
}
