// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * demo: a small service with functions of known behaviour, for sds-bpf to
 * attach to (make demo).
 *
 *   demo [--rate N] [--error-pct P] [--sleep-us US] [--threads T]
 *
 * T threads (default 2) share N requests per second (default 200).  Each
 * request calls parse_header() (fast, always succeeds) and then
 * handle_request(), which sleeps about US microseconds (default 2000) and
 * returns a negative value for P percent of the calls (default 10).  The
 * sleep has a spread so that the latency histogram has some shape:
 *
 *   20% of calls   0.05 .. 0.3  x US   (a cache hit)
 *   70%            0.6  .. 1.4  x US   (the usual case)
 *   10%            1.6  .. 3.0  x US   (the slow tail: 3.2 .. 6 ms by
 *                                      default, above a 3 ms timeout)
 *
 * Runs until SIGINT/SIGTERM, then prints how many calls it made and how
 * many failed, so that the counts sds-bpf shows can be checked.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned int opt_rate = 200;
static unsigned int opt_error_pct = 10;
static unsigned int opt_sleep_us = 2000;
static unsigned int opt_threads = 2;

static volatile sig_atomic_t stop;
static unsigned long calls_total, errors_total;	/* atomic adds */

/* xorshift64*: a per-thread generator, no locks, no libc state */
static uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/* uniform in [lo, hi) */
static double rnd_range(uint64_t *s, double lo, double hi)
{
	return lo + (hi - lo) * (double)(rnd_next(s) >> 11) / (double)(1ULL << 53);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR && !stop)
		;
}

/*
 * Parse "Name: value" and return the value's length, or -1 without a
 * colon.  Fast: a few hundred nanoseconds with a probe, nothing without.
 */
__attribute__((noinline)) int parse_header(const char *line)
{
	const char *p = strchr(line, ':');

	if (!p)
		return -1;
	p++;
	while (*p == ' ')
		p++;
	return (int)strlen(p);
}

/*
 * Serve one request: sleep about opt_sleep_us, fail opt_error_pct percent
 * of the time with a negative errno.  The return is an int: sds-bpf's
 * err=neg judges its low 32 bits.
 */
__attribute__((noinline)) int handle_request(int id, uint64_t *seed)
{
	double f, r = rnd_range(seed, 0, 1);

	if (r < 0.2)
		f = rnd_range(seed, 0.05, 0.3);
	else if (r < 0.9)
		f = rnd_range(seed, 0.6, 1.4);
	else
		f = rnd_range(seed, 1.6, 3.0);
	sleep_ns((uint64_t)(f * opt_sleep_us * 1000));
	if (rnd_range(seed, 0, 100) < opt_error_pct)
		return -EIO;
	return id & 0x7fffffff;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *worker(void *arg)
{
	static const char *const headers[] = {
		"Host: demo.example", "Content-Length: 1234",
		"Accept: */*", "X-Request-Id: 8c1f0e2a",
	};
	uint64_t seed = 0x9e3779b97f4a7c15ULL * ((uintptr_t)arg + 1);
	/* each thread takes its share of the rate */
	uint64_t period = 1000000000ULL * opt_threads / opt_rate;
	uint64_t next = now_ns();
	int id = 0;

	while (!stop) {
		struct timespec ts;

		parse_header(headers[id % 4]);
		if (handle_request(id, &seed) < 0)
			__atomic_add_fetch(&errors_total, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&calls_total, 1, __ATOMIC_RELAXED);
		id++;
		/* a steady rate, not "rate after the work": absolute ticks */
		next += period;
		if (next < now_ns())
			next = now_ns();	/* overloaded: do not burst */
		ts.tv_sec = next / 1000000000;
		ts.tv_nsec = next % 1000000000;
		while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
						&ts, NULL) == EINTR)
			;
	}
	return NULL;
}

static void on_signal(int sig)
{
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: demo [--rate N] [--error-pct P] [--sleep-us US] "
		"[--threads T]\n");
}

static int parse_uint(const char *s, unsigned int lo, unsigned int hi,
		      unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rate", required_argument, NULL, 'r' },
		{ "error-pct", required_argument, NULL, 'e' },
		{ "sleep-us", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct sigaction sa = { .sa_handler = on_signal };
	pthread_t tid[64];
	unsigned int i;
	int c, err;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			err = parse_uint(optarg, 1, 1000000, &opt_rate);
			break;
		case 'e':
			err = parse_uint(optarg, 0, 100, &opt_error_pct);
			break;
		case 's':
			err = parse_uint(optarg, 0, 10000000, &opt_sleep_us);
			break;
		case 't':
			err = parse_uint(optarg, 1, 64, &opt_threads);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (err) {
			fprintf(stderr, "demo: bad value for --%s: %s\n",
				opts[c == 'r' ? 0 : c == 'e' ? 1 : c == 's' ? 2 : 3].name,
				optarg);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}

	/* The workers see stop within one period of their loop. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (i = 0; i < opt_threads; i++) {
		err = pthread_create(&tid[i], NULL, worker, (void *)(uintptr_t)i);
		if (err) {
			fprintf(stderr, "demo: pthread_create: %s\n", strerror(err));
			stop = 1;
			break;
		}
	}
	while (i > 0)
		pthread_join(tid[--i], NULL);
	printf("demo: %lu requests, %lu failed\n", calls_total, errors_total);
	return 0;
}
