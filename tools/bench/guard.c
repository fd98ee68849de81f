// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-guard: what a libsds guarded call costs, how fast a window
 * strategy reacts and whether the exact limits are exact under contention
 * (make bench; tools/bench/run.sh starts the loaders and checks the counts
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
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
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

#define GROUP		"bench"
#define MAX_THREADS	8
#define MAX_ROUNDS	101

void bench_site_a(uint32_t id, uint64_t key);
void bench_site_b(uint32_t id, uint64_t key);
void bench_site_c(uint32_t id, uint64_t key);
void bench_site_d(uint32_t id, uint64_t key);

static const char *opt_app = "bench-guard";
static unsigned int opt_threads = 1;
static int opt_cpus[MAX_THREADS];
static int opt_ncpus;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void pin(unsigned int i)
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
	double s[MAX_ROUNDS * 4];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* ---- a spinning barrier (lock-step rounds need less than a futex) ------ */

struct spin_barrier {
	unsigned int n;
	unsigned int count;	/* arrived in this phase */
	unsigned int phase;
};

static void spin_wait(struct spin_barrier *b)
{
	unsigned int phase = __atomic_load_n(&b->phase, __ATOMIC_ACQUIRE);
	unsigned long spins = 0;

	if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == b->n) {
		__atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&b->phase, phase + 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&b->phase, __ATOMIC_ACQUIRE) == phase) {
		/* the other thread may be preempted: do not burn its CPU */
		if (++spins > 10000)
			sched_yield();
		else
			__builtin_ia32_pause();
	}
}

/* ---- cost ---------------------------------------------------------------- */

enum { C_NONE, C_PASS, C_DOWN, C_BARE2, C_NOP2, C_COPYOFF, C_MAX };
static const char *const col_name[C_MAX] = { "none", "pass", "down", "bare2", "nop2",
					     "copyoff" };

static struct sds_point *col_point[C_MAX];

/* The job all threads run, set by the main thread between barriers. */
static struct {
	pthread_barrier_t start, done;
	int col;
	long iters;
	bool quit;
	double ns[MAX_THREADS];	/* per thread: ns per call */
	long bad[MAX_THREADS];	/* per thread: wrong decisions */
} job;

static long run_col(int col, long n)
{
	struct sds_point *p = col_point[col];
	bool want = col == C_DOWN;
	char req[256] = "GET / HTTP/1.1\r\n\r\n";
	long i, bad = 0;

	switch (col) {
	case C_COPYOFF:
		for (i = 0; i < n; i++) {
			/* The request escapes, as a real one would. */
			__asm__ volatile("" : : "r"(req) : "memory");
			bad += sds_copy(p, req, sizeof(req)) != 0;
		}
		break;
	case C_BARE2:
		for (i = 0; i < n; i++) {
			bench_site_a(1, 2);
			bench_site_b(1, 2);
		}
		break;
	case C_NOP2:
		for (i = 0; i < n; i++) {
			bench_site_c(1, 2);
			bench_site_d(1, 2);
		}
		break;
	default:
		for (i = 0; i < n; i++) {
			bad += sds_should_downgrade(p) != want;
			sds_downgrade_finally(p);
		}
	}
	return bad;
}

static void *cost_worker(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	uint64_t t0;

	pin(me);
	for (;;) {
		pthread_barrier_wait(&job.start);
		if (job.quit)
			return NULL;
		t0 = now_ns();
		job.bad[me] = run_col(job.col, job.iters);
		job.ns[me] = (double)(now_ns() - t0) / job.iters;
		pthread_barrier_wait(&job.done);
	}
}

/* All threads run @n calls of @col: mean ns per call over threads. */
static double cost_job(int col, long n, long *bad)
{
	double sum = 0;
	unsigned int i;

	job.col = col;
	job.iters = n;
	pthread_barrier_wait(&job.start);
	pthread_barrier_wait(&job.done);
	for (i = 0; i < opt_threads; i++) {
		sum += job.ns[i];
		*bad += job.bad[i];
	}
	return sum / opt_threads;
}

static int do_cost(int rounds, double target_ms)
{
	pthread_t tid[MAX_THREADS];
	struct sds_client *none, *cl;
	double res[C_MAX][MAX_ROUNDS], per_call;
	long iters[C_MAX], calls[C_MAX] = { 0 }, bad[C_MAX] = { 0 };
	int order[C_MAX], r, k, c;
	unsigned int i;

	/* No loader serves this app: the client stays detached. */
	none = sds_client_open(GROUP, "bench-guard-no-loader");
	cl = sds_client_open(GROUP, opt_app);
	col_point[C_NONE] = sds_point(none, "pass");
	col_point[C_PASS] = sds_point(cl, "pass");
	col_point[C_DOWN] = sds_point(cl, "down");
	col_point[C_COPYOFF] = col_point[C_PASS];
	if (!col_point[C_NONE] || !col_point[C_PASS] || !col_point[C_DOWN]) {
		fprintf(stderr, "bench-guard: out of memory\n");
		return 1;
	}
	pthread_barrier_init(&job.start, NULL, opt_threads + 1);
	pthread_barrier_init(&job.done, NULL, opt_threads + 1);
	for (i = 0; i < opt_threads; i++)
		if (pthread_create(&tid[i], NULL, cost_worker, (void *)(uintptr_t)i)) {
			fprintf(stderr, "bench-guard: pthread_create failed\n");
			return 1;
		}

	/*
	 * Warm up (the first hit of a uprobe on a 5-byte NOP is what makes
	 * the kernel rewrite it into a call) and calibrate each column so
	 * that a round of it takes about target_ms.
	 */
	for (c = 0; c < C_MAX; c++) {
		cost_job(c, 200, &bad[c]);
		per_call = cost_job(c, 2000, &bad[c]);
		calls[c] += 2200 * opt_threads;
		iters[c] = (long)(target_ms * 1e6 / per_call);
		if (iters[c] < 1000)
			iters[c] = 1000;
		if (iters[c] > 200000000)
			iters[c] = 200000000;
		order[c] = c;
	}
	for (r = 0; r < rounds; r++) {
		for (k = 0; k < C_MAX; k++) {
			c = order[(k + r) % C_MAX];
			res[c][r] = cost_job(c, iters[c], &bad[c]);
			calls[c] += iters[c] * opt_threads;
		}
	}
	job.quit = true;
	pthread_barrier_wait(&job.start);
	for (i = 0; i < opt_threads; i++)
		pthread_join(tid[i], NULL);

	for (c = 0; c < C_MAX; c++) {
		double lo = res[c][0], hi = res[c][0];

		for (r = 1; r < rounds; r++) {
			if (res[c][r] < lo)
				lo = res[c][r];
			if (res[c][r] > hi)
				hi = res[c][r];
		}
		printf("col=%s threads=%u ns_per_call=%.2f min=%.2f max=%.2f calls=%ld "
		       "rounds=", col_name[c], opt_threads, median(res[c], rounds),
		       lo, hi, calls[c]);
		for (r = 0; r < rounds; r++)
			printf("%s%.2f", r ? "," : "", res[c][r]);
		printf("\n");
	}
	for (c = 0; c < C_MAX; c++)
		if (bad[c]) {
			fprintf(stderr, "bench-guard: %s: %ld calls decided wrong\n",
				col_name[c], bad[c]);
			return 1;
		}
	/* Closed only now: the points' counts are what run.sh checks. */
	sds_client_close(cl);
	sds_client_close(none);
	return 0;
}

/* ---- react --------------------------------------------------------------- */

/* The loader's answer to @req on its control socket, in @buf. */
static int ctl_ask(const char *req, char *buf, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *dir = getenv("SDS_RUN_DIR");
	size_t have = 0;
	ssize_t n;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s.%s.sock",
		 dir && *dir ? dir : "/run/sds", GROUP, opt_app);
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

static int do_react(const char *path, int trials, long threshold, long pace_us,
		    long version0, long jitter_us)
{
	uint64_t rng = now_ns() | 1;
	double react[1000];
	struct sds_client *cl;
	int i, ok = 0, failed = 0;

	if (trials > 1000)
		trials = 1000;
	cl = sds_client_open(GROUP, opt_app);
	if (!cl)
		return 1;
	pin(0);
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
		/* (T+1) passed calls, then up to 2 s for the downgrade */
		next = now_ns();
		deadline = next + 2000000000ULL + (uint64_t)(threshold + 1) * pace_us * 1000;
		for (;;) {
			bool down;

			sleep_until(next);
			t = now_ns();
			down = sds_should_downgrade(p);
			sds_downgrade_finally(p);
			calls++;
			if (down) {
				t_down = t;
				break;
			}
			if (++passed == threshold + 1)
				t_cross = t;
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
		qsort(react, ok, sizeof(react[0]), cmp_double);
		printf("react n=%d failed=%d threshold=%ld pace_us=%ld p50_us=%.1f "
		       "p90_us=%.1f p99_us=%.1f max_us=%.1f min_us=%.1f\n", ok, failed,
		       threshold, pace_us, rank(react, ok, 50), rank(react, ok, 90),
		       rank(react, ok, 99), react[ok - 1], react[0]);
	}
	return failed ? 1 : 0;
}

/* ---- conc, token ----------------------------------------------------------- */

static struct {
	struct sds_point *p;
	struct spin_barrier bar;
	long rounds;
	uint64_t until;		/* hammer: stop then */
	long inflight, max_inflight;
	long calls[2], passed[2];
	uint64_t first_b[2], first_a[2];
} ex;

static void *conc_steps(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	long r;

	pin(me);
	for (r = 0; r < ex.rounds; r++) {
		bool down;

		spin_wait(&ex.bar);
		down = sds_should_downgrade(ex.p);
		spin_wait(&ex.bar);	/* both have their answer: nobody left */
		sds_downgrade_finally(ex.p);
		ex.calls[me]++;
		ex.passed[me] += !down;
	}
	return NULL;
}

static void *conc_hammer(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	long i, cur, max;

	pin(me);
	spin_wait(&ex.bar);
	while (now_ns() < ex.until) {
		for (i = 0; i < 64; i++) {
			bool down = sds_should_downgrade(ex.p);

			if (!down) {
				cur = __atomic_add_fetch(&ex.inflight, 1, __ATOMIC_SEQ_CST);
				max = __atomic_load_n(&ex.max_inflight, __ATOMIC_RELAXED);
				while (cur > max &&
				       !__atomic_compare_exchange_n(&ex.max_inflight, &max, cur,
								    false, __ATOMIC_RELAXED,
								    __ATOMIC_RELAXED))
					;
				__atomic_sub_fetch(&ex.inflight, 1, __ATOMIC_SEQ_CST);
			}
			sds_downgrade_finally(ex.p);
			ex.calls[me]++;
			ex.passed[me] += !down;
		}
	}
	return NULL;
}

/*
 * Each call is bracketed by two clock reads: the guard decides at some
 * time between them, so the first decision is known to lie in [first_b,
 * first_a] even if the thread was preempted next to its call.
 */
static void *token_hammer(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	uint64_t tb, ta;
	bool down;

	pin(me);
	spin_wait(&ex.bar);
	for (;;) {
		tb = now_ns();
		down = sds_should_downgrade(ex.p);
		sds_downgrade_finally(ex.p);
		ta = now_ns();
		if (!ex.calls[me]) {
			ex.first_b[me] = tb;
			ex.first_a[me] = ta;
		}
		ex.calls[me]++;
		ex.passed[me] += !down;
		if (ta >= ex.until)
			break;
	}
	return NULL;
}

static int run2(void *(*fn)(void *))
{
	pthread_t tid[2];
	int i;

	ex.bar.n = 2;
	ex.calls[0] = ex.calls[1] = ex.passed[0] = ex.passed[1] = 0;
	for (i = 0; i < 2; i++)
		if (pthread_create(&tid[i], NULL, fn, (void *)(uintptr_t)i))
			return -1;
	for (i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	return 0;
}

static int do_conc(const char *point, long limit, long rounds, double ms)
{
	struct sds_client *cl = sds_client_open(GROUP, opt_app);
	long calls, passed, want, total_calls, total_passed;
	int fail = 0;

	ex.p = sds_point(cl, point);
	if (!ex.p)
		return 3;
	ex.rounds = rounds;
	if (run2(conc_steps))
		return 3;
	calls = ex.calls[0] + ex.calls[1];
	passed = ex.passed[0] + ex.passed[1];
	want = rounds * (limit < 2 ? limit : 2);
	fail |= passed != want;
	printf("conc-steps point=%s limit=%ld threads=2 rounds=%ld calls=%ld passed=%ld "
	       "expected=%ld %s\n", point, limit, rounds, calls, passed, want,
	       passed == want ? "exact" : "MISMATCH");
	total_calls = calls;
	total_passed = passed;

	ex.until = now_ns() + (uint64_t)(ms * 1e6);
	ex.inflight = ex.max_inflight = 0;
	if (run2(conc_hammer))
		return 3;
	calls = ex.calls[0] + ex.calls[1];
	passed = ex.passed[0] + ex.passed[1];
	fail |= ex.max_inflight > limit;
	printf("conc-hammer point=%s limit=%ld threads=2 ms=%.0f calls=%ld passed=%ld "
	       "max_inside=%ld %s\n", point, limit, ms, calls, passed,
	       ex.max_inflight, ex.max_inflight <= limit ? "within" : "OVER");
	total_calls += calls;
	total_passed += passed;
	sds_client_close(cl);
	printf("point=%s calls=%ld passed=%ld refused=%ld\n", point, total_calls,
	       total_passed, total_calls - total_passed);
	return fail;
}

#define MIN2(a) ((a)[0] < (a)[1] ? (a)[0] : (a)[1])

/*
 * A bucket full at the first decision and empty at the last lets through
 * BUCKET + RATE x (last - first) calls, give or take the one whose token
 * was coming due at the end.  Full at the first: the strategy gave it a
 * full bucket and nobody called since.  Empty at the last: after the two
 * threads stop, this thread drains the bucket until a call is refused.
 * Each decision's time is bracketed by two clock reads (token_hammer), so
 * passed must lie in [BUCKET + RATE x shortest span - 1, BUCKET + RATE x
 * longest span + 1].
 */
static int do_token(const char *point, long rate, long bucket, double ms)
{
	struct sds_client *cl = sds_client_open(GROUP, opt_app);
	long calls, passed, drained = 0;
	uint64_t tb, ta;
	double lo, hi, mid, span;
	bool exact, down;

	ex.p = sds_point(cl, point);
	if (!ex.p)
		return 3;
	ex.until = now_ns() + 5000000 + (uint64_t)(ms * 1e6);
	if (run2(token_hammer))
		return 3;
	calls = ex.calls[0] + ex.calls[1];
	passed = ex.passed[0] + ex.passed[1];
	do {
		tb = now_ns();
		down = sds_should_downgrade(ex.p);
		sds_downgrade_finally(ex.p);
		ta = now_ns();
		calls++;
		drained += !down;
	} while (!down && drained < 10 * bucket + 10);
	passed += drained;
	/* the first decision: in [min first_b, min first_a]; the last in [tb, ta] */
	lo = bucket + rate * ((tb - MIN2(ex.first_a)) / 1e9);
	hi = bucket + rate * ((ta - MIN2(ex.first_b)) / 1e9);
	mid = (lo + hi) / 2;
	span = (ta + tb - MIN2(ex.first_a) - MIN2(ex.first_b)) / 2e9;
	exact = passed >= lo - 1 && passed <= hi + 1;
	sds_client_close(cl);
	printf("token point=%s rate=%ld bucket=%ld threads=2 seconds=%.6f calls=%ld "
	       "passed=%ld drained=%ld expected=%.1f low=%.2f high=%.2f %s\n", point,
	       rate, bucket, span, calls, passed, drained, mid, lo, hi,
	       exact ? "exact" : passed > hi + 1 ? "OVER" : "UNDER");
	printf("point=%s calls=%ld passed=%ld refused=%ld\n", point, calls, passed,
	       calls - passed);
	return !exact;
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
		case 'a': opt_app = optarg; break;
		case 'T': opt_threads = (unsigned int)atoi(optarg); break;
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
	if (optind < argc || opt_threads < 1 || opt_threads > MAX_THREADS) {
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
		return do_cost((int)rounds, ms > 0 ? ms : 100);
	}
	if (!strcmp(mode, "react") && file)
		return do_react(file, n > 0 ? (int)n : 100, k >= 0 ? k : 50,
				pace > 0 ? pace : 250, version0, jitter);
	if (!strcmp(mode, "conc"))
		return do_conc(point ? point : "conc", k >= 0 ? k : 1,
			       n > 0 ? n : 20000, ms > 0 ? ms : 500);
	if (!strcmp(mode, "token") && rate > 0 && bucket > 0)
		return do_token(point ? point : "tok", rate, bucket,
				ms > 0 ? ms : 1000);
	usage();
	return 2;
}
