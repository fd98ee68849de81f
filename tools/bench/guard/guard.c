// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-guard: what a libsds guarded call costs, how fast a window
 * strategy reacts and whether the exact limits are exact under contention
 * (make bench; tools/bench/probe/run.sh starts the loaders and checks the counts
 * against `sds-bpf stats`).  Group "bench"; APP defaults to "bench-guard".
 *
 *   bench-guard cost [-a APP] [-T THREADS] [-c CPU,...] [-r ROUNDS] [-t MS]
 *
 *	ns per guarded call (sds_should_downgrade + sds_downgrade_finally),
 *	in columns measured in alternation, each round every column once
 *	(the order rotating), THREADS threads at once (default 1), thread i
 *	pinned to the i-th CPU of -c:
 *	  none   point of a client whose app has no loader (detached)
 *	  pass   point "pass" of APP, which has no strategy: passes
 *	  down   point "down" of APP, kill switch (visit_threshold 0)
 *	  bare2  bench_site_a + bench_site_b: the sites of the two bare
 *		 uprobes (bench-bare-up)
 *	  nop2   bench_site_c + bench_site_d: the same two calls, no probe
 *	  copyoff  sds_copy() of point "pass" of APP with 256 bytes, copying
 *		 off (nothing copies it): the copy word's load and a return
 *	One line per column: "col=C threads=T ns_per_call=MEDIAN min=MIN
 *	max=MAX calls=N rounds=v1,v2,..." (a round's value: the mean over
 *	threads of ns per call).  Exits 1 if a decision was not the one
 *	expected (pass passed, down downgraded, none passed).
 *
 *   bench-guard react [-a APP] -s FILE [-n TRIALS] [-k T] [-p PACE_US] [-V V]
 *                     [-j JITTER_US]
 *
 *	Reaction time of visit_threshold T (default 50): trial i writes
 *	strategies version V+i (default V 1000) to FILE (a temporary file
 *	renamed over it) with one point, r<i>, limited to T; waits until the
 *	loader has it in force (the control socket's "info") and then a
 *	random time in [0, JITTER_US) (default 100000, one default tick: so
 *	the calls start at any phase of the loader's tick, not at the one
 *	the reload happened to give), then calls the guard of r<i> every
 *	PACE_US (default 250) and takes the time between the (T+1)-th passed
 *	call (the one that crosses the threshold) and the first downgraded
 *	one.  A new point each trial: its window is empty.  One line per
 *	trial, then "react n=N p50_us= p90_us= p99_us= max_us=".
 *
 *   bench-guard conc [-a APP] [-P POINT] [-k K] [-n ROUNDS] [-t MS]
 *
 *	POINT (default "conc") has concurrent_threshold K (default 1); two
 *	threads on two CPUs.  (1) ROUNDS lock-step rounds (default 20000):
 *	both threads enter the guard at once and hold it until both have
 *	their answer, so exactly min(K, 2) pass each round.  (2) MS ms
 *	(default 500) of both threads hammering: the guarded calls seen
 *	inside at once never exceed K.
 *
 *   bench-guard token [-a APP] [-P POINT] -R RATE -B BUCKET [-t MS]
 *
 *	POINT (default "tok") has token_rate RATE, token_bucket BUCKET and
 *	a full bucket; two threads hammer it for MS ms (default 1000), then
 *	one drains what is left: the calls passed must be BUCKET + RATE x
 *	(the time from the first call to the last), within one token (each
 *	call's time is bracketed by two clock reads, so a thread preempted
 *	next to a call widens the bounds instead of failing the check; the
 *	bounds are printed).
 *
 * conc and token print "calls=N passed=P refused=R" per point so that
 * run.sh can check sds-bpf's counts, and exit 1 if the limit was not
 * exact (3 if they could not run).  cost exits 1 if a decision was wrong,
 * react if a trial never downgraded.
 *
 * Here: the options and main; the modes: guard_cost.c, guard_react.c,
 * guard_exact.c (conc and token).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench_guard.h"

const char *bg_app = "bench-guard";
unsigned int bg_threads = 1;
static int opt_cpus[MAX_THREADS];
static int opt_ncpus;

void bg_pin(unsigned int i)
{
	cpu_set_t set;

	if (!opt_ncpus)
		return;
	CPU_ZERO(&set);
	CPU_SET(opt_cpus[i % opt_ncpus], &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static int parse_cpus(const char *s)
{
	char *end;

	opt_ncpus = 0;
	while (*s && opt_ncpus < MAX_THREADS) {
		long v = strtol(s, &end, 10);

		if (end == s || v < 0 || v >= CPU_SETSIZE)
			return -1;
		opt_cpus[opt_ncpus++] = (int)v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return 0;
}

int bg_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* ---- main ------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
		"usage: bench-guard cost [-a APP] [-T THREADS] [-c CPU,...] [-r ROUNDS] [-t MS]\n"
		"       bench-guard react [-a APP] -s FILE [-n TRIALS] [-k T] [-p PACE_US] [-V V] [-j JITTER_US]\n"
		"       bench-guard conc [-a APP] [-c CPU,CPU] [-P POINT] [-k K] [-n ROUNDS] [-t MS]\n"
		"       bench-guard token [-a APP] [-c CPU,CPU] [-P POINT] -R RATE -B BUCKET [-t MS]\n");
}

int main(int argc, char **argv)
{
	const char *mode, *file = NULL, *point = NULL;
	long rounds = -1, n = -1, k = -1, pace = 250, version0 = 1000;
	long rate = -1, bucket = -1, jitter = 100000;
	double ms = -1;
	int opt;

	if (argc < 2) {
		usage();
		return 2;
	}
	mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "a:T:c:r:t:s:n:k:p:V:P:R:B:j:")) != -1) {
		switch (opt) {
		case 'a': bg_app = optarg; break;
		case 'T': bg_threads = (unsigned int)atoi(optarg); break;
		case 'c':
			if (parse_cpus(optarg)) {
				usage();
				return 2;
			}
			break;
		case 'r': rounds = atol(optarg); break;
		case 't': ms = atof(optarg); break;
		case 's': file = optarg; break;
		case 'n': n = atol(optarg); break;
		case 'k': k = atol(optarg); break;
		case 'p': pace = atol(optarg); break;
		case 'V': version0 = atol(optarg); break;
		case 'P': point = optarg; break;
		case 'R': rate = atol(optarg); break;
		case 'B': bucket = atol(optarg); break;
		case 'j': jitter = atol(optarg); break;
		default:
			usage();
			return 2;
		}
	}
	if (optind < argc || bg_threads < 1 || bg_threads > MAX_THREADS) {
		usage();
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "cost")) {
		if (rounds < 0)
			rounds = 15;
		if (rounds < 1 || rounds > MAX_ROUNDS) {
			usage();
			return 2;
		}
		return bg_cost((int)rounds, ms > 0 ? ms : 100);
	}
	if (!strcmp(mode, "react") && file)
		return bg_react(file, n > 0 ? (int)n : 100, k >= 0 ? k : 50,
				pace > 0 ? pace : 250, version0, jitter);
	if (!strcmp(mode, "conc"))
		return bg_conc(point ? point : "conc", k >= 0 ? k : 1,
			       n > 0 ? n : 20000, ms > 0 ? ms : 500);
	if (!strcmp(mode, "token") && rate > 0 && bucket > 0)
		return bg_token(point ? point : "tok", rate, bucket,
				ms > 0 ? ms : 1000);
	usage();
	return 2;
}
