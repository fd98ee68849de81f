/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A target program for the integration tests: functions of known
 * behaviour, driven line by line on stdin so that a test can attach first
 * and then make exactly the calls it wants to count.
 *
 * Protocol: prints "ready" once, then for each command line prints "done"
 * (or "error: ..." for a line it does not understand).  Commands:
 *
 *   forkwork N        call work() once, fork, the child calls it N times
 *   stamp             call work() once; prints "at T0 T1", CLOCK_REALTIME
 *                     in ns just before and just after the call (which
 *                     period a heartbeat must put it in, by the program's
 *                     own clock rather than its driver's)
 *   work N E T MS     call work() N times: the first E calls return a
 *                     negative int, the last T calls sleep MS ms, the
 *                     others return 0 at once (E and T may overlap when
 *                     E + T > N); prints "took MIN MAX", the shortest and
 *                     longest call in ns as the caller timed it (around
 *                     the probes too: a probe's latency lies within)
 *   libwork N E T MS  the same through lib_work() in libsdstarget.so
 *                     (only in the build made with -DWITH_LIB)
 *   recurse D         call recurse() D deep (D calls of recurse in all)
 *   sleep MS          one call of nap() that sleeps MS ms
 *   threads K N E     K threads, each calling work() N times, the first E
 *                     of them failing; joined before "done"
 *   big N E           call big() N times: E calls return 0x100000000
 *                     (an int 0, a long non-zero), the others return 1
 *   neg32 N           call neg32() N times: it returns eax = -1 with the
 *                     upper half of rax clear (an int -1, a long 4294967295)
 *   longjmp N         N times: call jumper(), which longjmps back out of
 *                     itself (an entry whose return never comes)
 *   deepjmp D         call diver() D deep; the innermost longjmps out of
 *                     all D at once (D entries whose returns never come)
 *   threadexit N      N threads, each calling exiter(), which calls
 *                     pthread_exit() inside itself; joined before "done"
 *   tnap K MS         K threads, each calling nap(MS) at the same time;
 *                     joined before "done"
 *   pid               print the process id
 *   quit              exit 0
 *
 * Every counted function is noipa (no inlining, no cloning, no IPA-SRA:
 * the symbol is the code that runs) and used, and holds an empty asm
 * barrier so that the call is really made.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TARGET_FN __attribute__((noipa, used))

#ifdef WITH_LIB
int lib_work(int fail, int sleep_ms);	/* libsdstarget.so */
#endif

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

TARGET_FN int work(int fail, int ms)
{
	asm volatile("" ::: "memory");
	if (ms > 0)
		sleep_ms(ms);
	return fail ? -5 : 0;
}

TARGET_FN int recurse(int depth)
{
	int r = 0;

	asm volatile("" ::: "memory");
	if (depth > 1)
		r = recurse(depth - 1);
	/* Keep the call a real call: no tail call, no accumulator loop. */
	asm volatile("" : "+r"(r));
	return r + 1;
}

TARGET_FN int nap(int ms)
{
	asm volatile("" ::: "memory");
	sleep_ms(ms);
	return 0;
}

TARGET_FN long big(int fail)
{
	asm volatile("" ::: "memory");
	return fail ? 0x100000000L : 1L;
}

static jmp_buf jenv;

TARGET_FN int jumper(int v)
{
	asm volatile("" ::: "memory");
	longjmp(jenv, v ? v : 1);
}

/* Always 1: diver() could return, so the compiler keeps its frames. */
static volatile int dive_jumps = 1;

TARGET_FN int diver(int depth)
{
	int r = 0;

	asm volatile("" ::: "memory");
	if (depth <= 1) {
		if (dive_jumps)
			longjmp(jenv, 1);
	} else {
		r = diver(depth - 1);
	}
	/* As in recurse(): a real call, no accumulator loop. */
	asm volatile("" : "+r"(r));
	return r + 1;
}

TARGET_FN void exiter(void)
{
	asm volatile("" ::: "memory");
	pthread_exit(NULL);
}

/* int neg32(void): eax = -1, and the upper half of rax is 0 (movl zero-extends). */
asm(".text\n"
    ".globl neg32\n"
    ".type neg32, @function\n"
    "neg32:\n"
    "\tmovl $-1, %eax\n"
    "\tret\n"
    ".size neg32, .-neg32\n");
int neg32(void);

/*
 * forkwork N: call work() once, fork, and let the child call it N times
 * (no exec): prints "child exit C" or "child signal S".
 */
static int run_forkwork(long n)
{
	int st;
	pid_t c;

	work(1, 0);
	fflush(stdout);
	c = fork();
	if (c < 0)
		return -1;
	if (c == 0) {
		for (long i = 0; i < n; i++)
			work(1, 0);
		_exit(0);
	}
	if (waitpid(c, &st, 0) != c)
		return -1;
	if (WIFSIGNALED(st))
		printf("child signal %d\n", WTERMSIG(st));
	else
		printf("child exit %d\n", WEXITSTATUS(st));
	return 0;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void run_work(int (*fn)(int, int), long n, long e, long t, int ms)
{
	long long lo = -1, hi = 0;

	for (long i = 0; i < n; i++) {
		int fail = i < e;
		int slow = i >= n - t;
		long long t0 = now_ns(), d;

		fn(fail, slow ? ms : 0);
		d = now_ns() - t0;
		if (lo < 0 || d < lo)
			lo = d;
		if (d > hi)
			hi = d;
	}
	printf("took %lld %lld\n", lo < 0 ? 0 : lo, hi);
}

static long long wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* stamp: one call of work(), and when it was made by the wall clock. */
static void run_stamp(void)
{
	long long t0 = wall_ns(), t1;

	work(0, 0);
	t1 = wall_ns();
	printf("at %lld %lld\n", t0, t1);
}

struct thread_arg {
	long n, e;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;

	run_work(work, a->n, a->e, 0, 0);
	return NULL;
}

static void *exiter_main(void *p)
{
	(void)p;
	exiter();
	return NULL;
}

static void *nap_main(void *p)
{
	nap((int)(long)p);
	return NULL;
}

/*
 * jumper() is called with 512 bytes more stack below it than run_work()
 * has, so a later call of work() enters above jumper's abandoned frame:
 * the thread has visibly left it (bpf/sds.bpf.c, frames_unwind()).
 */
static __attribute__((noinline)) void run_longjmp(long n)
{
	volatile char pad[512];

	pad[0] = 0;
	for (volatile long i = 0; i < n; i++)
		if (!setjmp(jenv))
			jumper(pad[0] + 1);
}

/* deepjmp D: diver() D deep, left by one longjmp, as jumper() 512 bytes deeper. */
static __attribute__((noinline)) void run_deepjmp(long d)
{
	volatile char pad[512];

	pad[0] = 0;
	if (!setjmp(jenv))
		diver(pad[0] + (int)d);
}

/* K threads running @fn(@arg), joined.  -1 if one could not start. */
static int run_threads_fn(long k, void *(*fn)(void *), void *arg)
{
	pthread_t tid[64];
	long i;

	if (k < 1 || k > 64)
		return -1;
	for (i = 0; i < k; i++)
		if (pthread_create(&tid[i], NULL, fn, arg))
			break;
	for (long j = 0; j < i; j++)
		pthread_join(tid[j], NULL);
	return i == k ? 0 : -1;
}

static int run_threads(long k, long n, long e)
{
	pthread_t tid[64];
	struct thread_arg a = { .n = n, .e = e };
	long i;

	if (k < 1 || k > 64)
		return -1;
	for (i = 0; i < k; i++)
		if (pthread_create(&tid[i], NULL, thread_main, &a))
			break;
	for (long j = 0; j < i; j++)
		pthread_join(tid[j], NULL);
	return i == k ? 0 : -1;
}

int main(void)
{
	char line[256];
	long n, e, t, k;
	int ms, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		rc = 0;
		if (sscanf(line, "work %ld %ld %ld %d", &n, &e, &t, &ms) == 4) {
			run_work(work, n, e, t, ms);
#ifdef WITH_LIB
		} else if (sscanf(line, "libwork %ld %ld %ld %d", &n, &e, &t, &ms) == 4) {
			run_work(lib_work, n, e, t, ms);
#endif
		} else if (sscanf(line, "recurse %ld", &n) == 1) {
			recurse((int)n);
		} else if (sscanf(line, "sleep %d", &ms) == 1) {
			nap(ms);
		} else if (sscanf(line, "threads %ld %ld %ld", &k, &n, &e) == 3) {
			rc = run_threads(k, n, e);
		} else if (sscanf(line, "big %ld %ld", &n, &e) == 2) {
			for (long i = 0; i < n; i++)
				big(i < e);
		} else if (sscanf(line, "neg32 %ld", &n) == 1) {
			for (long i = 0; i < n; i++)
				neg32();
		} else if (sscanf(line, "longjmp %ld", &n) == 1) {
			run_longjmp(n);
		} else if (sscanf(line, "deepjmp %ld", &n) == 1) {
			run_deepjmp(n);
		} else if (sscanf(line, "threadexit %ld", &n) == 1) {
			rc = run_threads_fn(n, exiter_main, NULL);
		} else if (sscanf(line, "tnap %ld %d", &k, &ms) == 2) {
			rc = run_threads_fn(k, nap_main, (void *)(long)ms);
		} else if (sscanf(line, "forkwork %ld", &n) == 1) {
			rc = run_forkwork(n);
		} else if (strncmp(line, "stamp", 5) == 0) {
			run_stamp();
		} else if (strncmp(line, "pid", 3) == 0) {
			printf("%ld\n", (long)getpid());
		} else if (strncmp(line, "quit", 4) == 0) {
			return 0;
		} else {
			rc = -1;
		}
		if (rc)
			printf("error: %s", line);
		else
			printf("done\n");
		fflush(stdout);
	}
	return 0;
}
