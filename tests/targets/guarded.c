/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A guarded target program for the guard tests (tests/guard/run.py): an
 * application linked with libsds (statically: guarded_static; against
 * libsds.so: guarded_shared and its second copy guarded_shared2), driven
 * line by line on stdin so that a test makes exactly the guarded calls it
 * wants and knows which of them passed.
 *
 * Protocol: prints "ready" once, then for each command line prints its
 * result lines (if any) and "done", or "error: ..." for a line it does not
 * understand.  Every guarded call is
 *
 *	if (sds_should_downgrade(p)) downgraded++;
 *	else { [sleep S ms]; [sds_exception_sign(p)]; passed++; }
 *	sds_downgrade_finally(p);
 *
 * Commands:
 *
 *   open GROUP APP    sds_client_open(GROUP, APP) (closing the client
 *                     opened before, if any)
 *   point NAME        sds_point(NAME) (done implicitly by the commands
 *                     below; points are looked up once and kept)
 *   call POINT N [err=E] [sleep_ms=S] [every_us=U] [all] [times] [since_mark]
 *                     N guarded calls; the first E calls that pass sign an
 *                     exception; each call that passes sleeps S ms inside
 *                     the guarded call; call i starts at i*U us after the
 *                     first (absolute schedule; 0: back to back).  With
 *                     `all`, downgraded calls too sleep S ms before their
 *                     sds_downgrade_finally() and, while fewer than E
 *                     calls have failed, call sds_exception_sign() (which
 *                     must count nothing for them).  Prints
 *                     "passed P downgraded D failed F" (F: exceptions
 *                     signed), and with `times` a line "times T..." with
 *                     the start of each passed call in ns since the first
 *                     (with `since_mark`: since the last `mark`, this
 *                     program's clock across commands; an error if none)
 *   hold POINT K      K threads enter a guarded call of POINT; those that
 *                     pass stay inside until `release`, the others end
 *                     their call at once.  Prints "refused R" once all K
 *                     have decided
 *   release           end the held calls, join the threads
 *   rate POINT SECONDS [threads=T]
 *                     T threads (1) call POINT back to back for SECONDS;
 *                     prints "passed P downgraded D elapsed_ns E gap_ns G
 *                     max_inside M", E from the earliest first call to the
 *                     latest last call, G the longest time no thread made a
 *                     call is at most (the smallest of the threads' longest
 *                     gaps between two calls): a token bucket of a longer
 *                     burst cannot have overflowed; M the most passed calls
 *                     inside at once (between the pass and the finally);
 *                     then "span_min_ns S1 span_max_ns S2", bounds of the
 *                     time from the first call to the last
 *   mark              remember now (for first_down's since_mark_ns and
 *                     call's since_mark)
 *   first_down POINT [every_us=U] [max_ms=M] [err=1]
 *                     call POINT every U us (100) until the first
 *                     downgraded call, at most M ms (10000); with err=1
 *                     every call that passes signs an exception.  Prints
 *                     "calls C passed P failed F elapsed_ns E since_mark_ns S":
 *                     C calls made in all (the downgraded one included), E
 *                     from the start of the first call to the start of the
 *                     downgraded one, S from the last mark to it (-1 if no
 *                     mark); E and S are -1 when no call was downgraded
 *   first_pass POINT [every_us=U] [max_ms=M]
 *                     the same until the first passed call: prints
 *                     "calls C downgraded D elapsed_ns E"
 *   fork_call POINT N [wait_ms=W] [err=E]
 *                     fork(); the child waits W ms (it re-registers with
 *                     the loader by itself meanwhile), makes N guarded
 *                     calls as `call` does and exits; the parent prints
 *                     the child's "passed P downgraded D failed F", or
 *                     "error: child PID killed by signal S" (or "exit
 *                     status S") if the child did not exit 0
 *   leak POINT N      N sds_should_downgrade() without the finally: the
 *                     thread leaks N frames (a missed finally, an
 *                     exception).  Prints "passed P downgraded D"
 *   sites             prints "sites B B B B": the first 5 bytes of the
 *                     probe sites enter, exit, exception, downgrade (hex)
 *   seccomp WHAT...   installs a seccomp filter (kept by children) that
 *                     fails with EPERM: `pwrite` pwrite64 (the fork repair
 *                     through /proc/self/mem), `mprotect_wx` an mprotect
 *                     asking for write and exec (its fallback)
 *   fork_pause        fork(); the child waits for fork_resume (it repairs
 *                     its sites and re-registers by itself meanwhile);
 *                     prints "child PID"
 *   fork_resume POINT N
 *                     the paused child prints its sites as `sites` does,
 *                     calls each site once directly (but one that holds a
 *                     call, e8, that libsds could not repair), makes N guarded calls
 *                     as `call` does and exits; the parent prints its
 *                     "sites ..." and "passed P downgraded D failed F"
 *                     lines, or "error: child ..." as fork_call does
 *   copy POINT N SIZE N sds_copy() of distinct bodies of SIZE bytes
 *                     (guarded_copy.c); prints "copied C failed F"
 *   close             sds_client_close()
 *   pid               print the process id
 *   quit              exit 0
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sds.h>
#include "guarded.h"

#define MAX_POINTS	32
#define MAX_HOLD	256
#define MAX_TIMES	100000
#define MAX_RATE_THREADS 16

static struct sds_client *client;
static struct {
	char name[80];
	struct sds_point *p;
} points[MAX_POINTS];
static int npoints;
static long long mark_ns = -1;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(long long t)
{
	struct timespec ts = { .tv_sec = t / 1000000000LL,
			       .tv_nsec = t % 1000000000LL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void sleep_ms(long ms)
{
	if (ms > 0)
		sleep_until(now_ns() + ms * 1000000LL);
}

static struct sds_point *point_get(const char *name)
{
	int i;

	for (i = 0; i < npoints; i++)
		if (!strcmp(points[i].name, name))
			return points[i].p;
	if (!client || npoints == MAX_POINTS || strlen(name) >= sizeof(points[0].name))
		return NULL;
	snprintf(points[npoints].name, sizeof(points[0].name), "%s", name);
	points[npoints].p = sds_point(client, name);
	return points[npoints++].p;
}

/*
 * One guarded call: 1 if it passed, 0 if downgraded.  With @all, a
 * downgraded call sleeps and signs too.
 */
static int guarded_call_all(struct sds_point *p, int fail, long ms, int all)
{
	int passed = 0;

	if (!sds_should_downgrade(p)) {
		passed = 1;
		sleep_ms(ms);
		if (fail)
			sds_exception_sign(p);
	} else if (all) {
		sleep_ms(ms);
		if (fail)
			sds_exception_sign(p);
	}
	sds_downgrade_finally(p);
	return passed;
}

int guarded_call(struct sds_point *p, int fail, long ms)
{
	return guarded_call_all(p, fail, ms, 0);
}

/* "key=value" options after the fixed arguments. */
static int opt_long(char **tok, int ntok, const char *key, long *v)
{
	size_t n = strlen(key);
	int i;

	for (i = 0; i < ntok; i++) {
		if (!strncmp(tok[i], key, n) && tok[i][n] == '=') {
			char *end;

			errno = 0;
			*v = strtol(tok[i] + n + 1, &end, 10);
			return errno || *end || end == tok[i] + n + 1 ? -1 : 1;
		}
	}
	return 0;
}

static int opt_flag(char **tok, int ntok, const char *key)
{
	int i;

	for (i = 0; i < ntok; i++)
		if (!strcmp(tok[i], key))
			return 1;
	return 0;
}

static long long times_buf[MAX_TIMES];

static int cmd_call(struct sds_point *p, long n, char **opt, int nopt)
{
	long e = 0, ms = 0, us = 0, i, passed = 0, down = 0, failed = 0;
	int times = opt_flag(opt, nopt, "times");
	int all = opt_flag(opt, nopt, "all");
	int since_mark = opt_flag(opt, nopt, "since_mark");
	long long t0, start, base;

	if (opt_long(opt, nopt, "err", &e) < 0 ||
	    opt_long(opt, nopt, "sleep_ms", &ms) < 0 ||
	    opt_long(opt, nopt, "every_us", &us) < 0 || n < 0 ||
	    (since_mark && mark_ns < 0))
		return -1;
	t0 = now_ns();
	base = since_mark ? mark_ns : t0;
	for (i = 0; i < n; i++) {
		if (us > 0)
			sleep_until(t0 + i * us * 1000LL);
		start = now_ns();
		if (guarded_call_all(p, failed < e, ms, all)) {
			if (times && passed < MAX_TIMES)
				times_buf[passed] = start - base;
			if (failed < e)
				failed++;
			passed++;
		} else {
			down++;
		}
	}
	printf("passed %ld downgraded %ld failed %ld\n", passed, down, failed);
	if (times) {
		printf("times");
		for (i = 0; i < passed && i < MAX_TIMES; i++)
			printf(" %lld", times_buf[i]);
		printf("\n");
	}
	return 0;
}

/* ---- hold / release ---------------------------------------------------- */

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static int hold_decided, hold_refused, hold_go;
static pthread_t hold_tid[MAX_HOLD];
static int hold_n;

static void *hold_main(void *arg)
{
	struct sds_point *p = arg;
	int down = sds_should_downgrade(p);

	pthread_mutex_lock(&hold_lock);
	hold_decided++;
	if (down)
		hold_refused++;
	pthread_cond_broadcast(&hold_cond);
	while (!down && !hold_go)
		pthread_cond_wait(&hold_cond, &hold_lock);
	pthread_mutex_unlock(&hold_lock);
	sds_downgrade_finally(p);
	return NULL;
}

static int cmd_hold(struct sds_point *p, long k)
{
	int i, n, refused;

	if (hold_n || k < 1 || k > MAX_HOLD)
		return -1;
	hold_decided = hold_refused = hold_go = 0;
	for (i = 0; i < k; i++)
		if (pthread_create(&hold_tid[i], NULL, hold_main, p))
			break;
	hold_n = i;
	pthread_mutex_lock(&hold_lock);
	while (hold_decided < hold_n)
		pthread_cond_wait(&hold_cond, &hold_lock);
	refused = hold_refused;
	n = hold_n;
	pthread_mutex_unlock(&hold_lock);
	if (n != k)
		return -1;
	printf("refused %d\n", refused);
	return 0;
}

static int cmd_release(void)
{
	int i;

	pthread_mutex_lock(&hold_lock);
	hold_go = 1;
	pthread_cond_broadcast(&hold_cond);
	pthread_mutex_unlock(&hold_lock);
	for (i = 0; i < hold_n; i++)
		pthread_join(hold_tid[i], NULL);
	hold_n = 0;
	return 0;
}

/* ---- rate -------------------------------------------------------------- */

struct rate_arg {
	struct sds_point *p;
	long long until;
	long long first, last, gap;
	long long second;	/* the clock read after the first call */
	long long end;		/* the clock read after the last call */
	long passed, down;
	pthread_barrier_t *bar;
};

/* Passed calls of `rate` inside now, and the most at once. */
static long rate_inside, rate_max_inside;

static void *rate_main(void *arg)
{
	struct rate_arg *a = arg;
	long long t;

	pthread_barrier_wait(a->bar);
	a->first = -1;
	a->second = -1;
	a->gap = 0;
	for (;;) {
		t = now_ns();
		if (a->first >= 0 && a->second < 0)
			a->second = t;
		if (t >= a->until && a->first >= 0)
			break;
		if (a->first < 0)
			a->first = t;
		else if (t - a->last > a->gap)
			a->gap = t - a->last;
		a->last = t;
		if (!sds_should_downgrade(a->p)) {
			long n = __atomic_add_fetch(&rate_inside, 1, __ATOMIC_SEQ_CST);
			long m = __atomic_load_n(&rate_max_inside, __ATOMIC_RELAXED);

			while (n > m && !__atomic_compare_exchange_n(
					&rate_max_inside, &m, n, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED))
				;
			__atomic_sub_fetch(&rate_inside, 1, __ATOMIC_SEQ_CST);
			a->passed++;
		} else {
			a->down++;
		}
		sds_downgrade_finally(a->p);
	}
	a->end = t;
	return NULL;
}

static int cmd_rate(struct sds_point *p, double secs, char **opt, int nopt)
{
	struct rate_arg a[MAX_RATE_THREADS];
	pthread_t tid[MAX_RATE_THREADS];
	pthread_barrier_t bar;
	long nt = 1, i, passed = 0, down = 0;
	long long first = -1, last = -1, gap = -1, second = -1, end = -1;

	if (opt_long(opt, nopt, "threads", &nt) < 0 || nt < 1 ||
	    nt > MAX_RATE_THREADS || secs <= 0)
		return -1;
	pthread_barrier_init(&bar, NULL, (unsigned int)nt);
	memset(a, 0, sizeof(a));
	rate_max_inside = 0;
	/* The deadline is set once every thread exists: set before the barrier. */
	for (i = 0; i < nt; i++) {
		a[i].p = p;
		a[i].bar = &bar;
	}
	{
		long long until = now_ns() + (long long)(secs * 1e9) +
				  5000000LL; /* thread start-up */

		for (i = 0; i < nt; i++)
			a[i].until = until;
	}
	for (i = 1; i < nt; i++)
		if (pthread_create(&tid[i], NULL, rate_main, &a[i]))
			return -1;	/* the barrier would hang: give up */
	rate_main(&a[0]);
	for (i = 1; i < nt; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&bar);
	for (i = 0; i < nt; i++) {
		passed += a[i].passed;
		down += a[i].down;
		if (first < 0 || a[i].first < first)
			first = a[i].first;
		if (a[i].last > last)
			last = a[i].last;
		if (second < 0 || a[i].second < second)
			second = a[i].second;
		if (a[i].end > end)
			end = a[i].end;
		if (gap < 0 || a[i].gap < gap)
			gap = a[i].gap;
	}
	/*
	 * Every call's own clock read lies between the read before it and the
	 * one after: the first call's in [first, second], the last one's in
	 * [last, end].  span_min_ns and span_max_ns bound the time between
	 * the first call and the last, however long a thread was preempted
	 * between a read and its call.
	 */
	printf("passed %ld downgraded %ld elapsed_ns %lld gap_ns %lld max_inside %ld "
	       "span_min_ns %lld span_max_ns %lld\n",
	       passed, down, last - first, gap, rate_max_inside,
	       last - second, end - first);
	return 0;
}

/* ---- first_down / first_pass -------------------------------------------- */

static int cmd_first(struct sds_point *p, int want_down, char **opt, int nopt)
{
	long us = 100, max_ms = 10000, calls = 0, other = 0, err = 0;
	long long t0, deadline, start, hit = -1;

	if (opt_long(opt, nopt, "every_us", &us) < 0 ||
	    opt_long(opt, nopt, "max_ms", &max_ms) < 0 ||
	    opt_long(opt, nopt, "err", &err) < 0 || us < 0)
		return -1;
	t0 = now_ns();
	deadline = t0 + max_ms * 1000000LL;
	for (;;) {
		if (us > 0)
			sleep_until(t0 + calls * us * 1000LL);
		start = now_ns();
		if (start > deadline)
			break;
		calls++;
		if (guarded_call(p, want_down && err, 0) != want_down) {
			hit = start;
			break;
		}
		other++;
	}
	if (want_down)
		printf("calls %ld passed %ld failed %ld elapsed_ns %lld since_mark_ns %lld\n",
		       calls, other, err ? other : 0, hit < 0 ? -1 : hit - t0,
		       hit < 0 || mark_ns < 0 ? -1 : hit - mark_ns);
	else
		printf("calls %ld downgraded %ld elapsed_ns %lld\n", calls, other,
		       hit < 0 ? -1 : hit - t0);
	return 0;
}

static int cmd_fork_call(struct sds_point *p, long n, char **opt, int nopt)
{
	long w = 0, e = 0, r[3] = { 0, 0, 0 };
	int fds[2], st;
	pid_t pid;

	if (opt_long(opt, nopt, "wait_ms", &w) < 0 ||
	    opt_long(opt, nopt, "err", &e) < 0 || n < 0 || pipe(fds))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		long i;

		close(fds[0]);
		sleep_ms(w);
		for (i = 0; i < n; i++) {
			if (guarded_call(p, r[2] < e, 0)) {
				if (r[2] < e)
					r[2]++;
				r[0]++;
			} else {
				r[1]++;
			}
		}
		if (write(fds[1], r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], r, sizeof(r)) != sizeof(r))
		r[0] = -1;
	close(fds[0]);
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) || r[0] < 0) {
		printf("error: child %ld %s %d\n", (long)pid,
		       WIFSIGNALED(st) ? "killed by signal" : "exit status",
		       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		return 1;	/* the error is printed */
	}
	printf("passed %ld downgraded %ld failed %ld\n", r[0], r[1], r[2]);
	return 0;
}

/* ---- leaked frames, sites, fork after probe removal ---------------------- */

static int cmd_leak(struct sds_point *p, long n)
{
	long i, passed = 0, down = 0;

	if (n < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (sds_should_downgrade(p))
			down++;
		else
			passed++;
	}
	printf("passed %ld downgraded %ld\n", passed, down);
	return 0;
}

int main(void)
{
	char line[512], *tok[16], *save, *t;
	int ntok, rc;
	long n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Sleeps of 100 us must not become 150 (the default timer slack). */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		struct sds_point *p = NULL;

		ntok = 0;
		for (t = strtok_r(line, " \t\r\n", &save); t && ntok < 16;
		     t = strtok_r(NULL, " \t\r\n", &save))
			tok[ntok++] = t;
		rc = -1;
		if (ntok == 0) {
			rc = -1;
		} else if (!strcmp(tok[0], "open") && ntok == 3) {
			if (client)
				sds_client_close(client);
			npoints = 0;
			client = sds_client_open(tok[1], tok[2]);
			rc = client ? 0 : -1;
		} else if (!strcmp(tok[0], "close") && ntok == 1) {
			sds_client_close(client);
			client = NULL;
			npoints = 0;
			rc = 0;
		} else if (!strcmp(tok[0], "point") && ntok == 2) {
			rc = point_get(tok[1]) ? 0 : -1;
		} else if (!strcmp(tok[0], "call") && ntok >= 3 &&
			   (p = point_get(tok[1]))) {
			n = strtol(tok[2], NULL, 10);
			rc = cmd_call(p, n, tok + 3, ntok - 3);
		} else if (!strcmp(tok[0], "hold") && ntok == 3 &&
			   (p = point_get(tok[1]))) {
			rc = cmd_hold(p, strtol(tok[2], NULL, 10));
		} else if (!strcmp(tok[0], "release") && ntok == 1) {
			rc = cmd_release();
		} else if (!strcmp(tok[0], "rate") && ntok >= 3 &&
			   (p = point_get(tok[1]))) {
			rc = cmd_rate(p, strtod(tok[2], NULL), tok + 3, ntok - 3);
		} else if (!strcmp(tok[0], "mark") && ntok == 1) {
			mark_ns = now_ns();
			rc = 0;
		} else if (!strcmp(tok[0], "first_down") && ntok >= 2 &&
			   (p = point_get(tok[1]))) {
			rc = cmd_first(p, 1, tok + 2, ntok - 2);
		} else if (!strcmp(tok[0], "first_pass") && ntok >= 2 &&
			   (p = point_get(tok[1]))) {
			rc = cmd_first(p, 0, tok + 2, ntok - 2);
		} else if (!strcmp(tok[0], "fork_call") && ntok >= 3 &&
			   (p = point_get(tok[1]))) {
			rc = cmd_fork_call(p, strtol(tok[2], NULL, 10), tok + 3,
					   ntok - 3);
		} else if (!strcmp(tok[0], "leak") && ntok == 3 &&
			   (p = point_get(tok[1]))) {
			rc = cmd_leak(p, strtol(tok[2], NULL, 10));
		} else if (!strcmp(tok[0], "sites") && ntok == 1) {
			guarded_sites_line(line, sizeof(line));
			printf("%s\n", line);
			rc = 0;
		} else if (!strcmp(tok[0], "seccomp") && ntok >= 2) {
			rc = guarded_seccomp(tok + 1, ntok - 1);
		} else if (!strcmp(tok[0], "fork_pause") && ntok == 1) {
			rc = guarded_fork_pause();
		} else if (!strcmp(tok[0], "fork_resume") && ntok == 3 &&
			   (p = point_get(tok[1]))) {
			rc = guarded_fork_resume(p, strtol(tok[2], NULL, 10));
		} else if (!strcmp(tok[0], "copy") && ntok == 4 &&
			   (p = point_get(tok[1]))) {
			rc = guarded_copy(p, strtol(tok[2], NULL, 10),
					  strtol(tok[3], NULL, 10));
		} else if (!strcmp(tok[0], "pid") && ntok == 1) {
			printf("%ld\n", (long)getpid());
			rc = 0;
		} else if (!strcmp(tok[0], "quit")) {
			return 0;
		}
		if (rc < 0)
			printf("error: bad command (%s)\n", ntok ? tok[0] : "");
		else if (!rc)
			printf("done\n");
		fflush(stdout);
	}
	return 0;
}
