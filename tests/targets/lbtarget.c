/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A program that balances (tests/balance/run.py): an application linked
 * with libsds.a that spreads the calls of dependency "pay" over providers
 * p0..p(N-1) with sds_lb_open(), driven line by line on stdin like
 * guarded.c: prints "ready" once, then for each command its result lines
 * and "done", or "error: ..." for a line it does not understand.
 *
 *   open GROUP APP POLICY N   the client and a balancer over pay@p0..p(N-1)
 *                             (weight 100 each)
 *   pick N [keyed]            N sds_lb_choose() (keyed: pick i with the
 *                             8-byte key i, else no key); prints "p0 C0
 *                             p1 C1 ..." and "none C" (picks that
 *                             returned -1)
 *   hold IDX K                K threads enter a guarded call of provider
 *                             IDX's point and stay inside until `release`;
 *                             prints "passed P" once all K have entered
 *   release                   end the held calls, join the threads
 *   lat US0 US1 ...           the latency of each provider's calls, us
 *   start T                   T threads call sds_lb_call() back to back
 *                             (no retry), each call sleeping its
 *                             provider's latency
 *   counts                    prints "p0 C0 p1 C1 ... none C" of those
 *                             calls since the last `counts`, and resets
 *   stop                      stop and join the threads of `start`
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sds.h>

#define MAXP	16		/* providers here */
#define MAXT	64		/* threads of hold and start */

static struct sds_client *cl;
static struct sds_balancer *lb;
static int np;
static unsigned int lat_us[MAXP];	/* atomics: read by the callers */
static unsigned long counts[MAXP + 1];	/* atomics: [np] = none */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int held, releasing;		/* under mu */
static pthread_t hold_th[MAXT];
static int nhold, hold_idx;

static pthread_t run_th[MAXT];
static int nrun, stopping;

static void sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void *hold_run(void *arg)
{
	struct sds_point *p = sds_lb_point(lb, hold_idx);

	(void)arg;
	sds_should_downgrade(p);
	pthread_mutex_lock(&mu);
	held++;
	pthread_cond_broadcast(&cv);
	while (!releasing)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	sds_downgrade_finally(p);
	return NULL;
}

static int call_fn(int idx, void *arg)
{
	(void)arg;
	sleep_us(__atomic_load_n(&lat_us[idx], __ATOMIC_RELAXED));
	return idx;
}

static void *run_loop(void *arg)
{
	int r;

	(void)arg;
	while (!__atomic_load_n(&stopping, __ATOMIC_RELAXED)) {
		r = sds_lb_call(lb, NULL, 0, call_fn, NULL, 0);
		__atomic_fetch_add(&counts[r >= 0 && r < np ? r : np], 1,
				   __ATOMIC_RELAXED);
		if (r < 0)
			sleep_us(1000);	/* all downgraded: do not spin */
	}
	return NULL;
}

static void print_counts(const unsigned long *c)
{
	int i;

	for (i = 0; i < np; i++)
		printf("p%d %lu ", i, c[i]);
	printf("none %lu\n", c[np]);
}

static int cmd(char *line)
{
	char g[80], a[80], pol[80];
	unsigned long c[MAXP + 1];
	int n, k, i;

	if (sscanf(line, "open %79s %79s %79s %d", g, a, pol, &n) == 4) {
		struct sds_lb_member m[MAXP];
		static char names[MAXP][8];

		if (n < 1 || n > MAXP)
			return printf("error: 1..%d providers\n", MAXP), 0;
		cl = sds_client_open(g, a);
		for (i = 0; i < n; i++) {
			snprintf(names[i], sizeof(names[i]), "p%d", i);
			m[i] = (struct sds_lb_member){ names[i], 100, 0 };
		}
		lb = sds_lb_open(cl, "pay", pol, m, n, NULL);
		if (!lb)
			return printf("error: %s\n", sds_lb_error()), 0;
		np = n;
	} else if (sscanf(line, "pick %d", &n) == 1) {
		bool keyed = strstr(line, " keyed") != NULL;

		memset(c, 0, sizeof(c));
		for (i = 0; i < n; i++) {
			uint64_t key = (uint64_t)i;

			k = keyed ? sds_lb_choose(lb, &key, sizeof(key)) :
				    sds_lb_choose(lb, NULL, 0);
			c[k >= 0 ? k : np]++;
		}
		print_counts(c);
	} else if (sscanf(line, "hold %d %d", &hold_idx, &k) == 2) {
		if (nhold || k < 1 || k > MAXT || hold_idx < 0 || hold_idx >= np)
			return printf("error: bad hold\n"), 0;
		releasing = 0;
		held = 0;
		for (nhold = 0; nhold < k; nhold++)
			pthread_create(&hold_th[nhold], NULL, hold_run, NULL);
		pthread_mutex_lock(&mu);
		while (held < k)
			pthread_cond_wait(&cv, &mu);
		pthread_mutex_unlock(&mu);
		printf("passed %d\n", k);
	} else if (!strcmp(line, "release")) {
		pthread_mutex_lock(&mu);
		releasing = 1;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
		for (i = 0; i < nhold; i++)
			pthread_join(hold_th[i], NULL);
		nhold = 0;
	} else if (!strncmp(line, "lat ", 4)) {
		char *s = line + 4, *end;

		for (i = 0; i < np; i++) {
			unsigned long v = strtoul(s, &end, 10);

			if (end == s)
				return printf("error: lat wants %d values\n", np), 0;
			__atomic_store_n(&lat_us[i], (unsigned int)v, __ATOMIC_RELAXED);
			s = end;
		}
	} else if (sscanf(line, "start %d", &k) == 1) {
		if (nrun || k < 1 || k > MAXT)
			return printf("error: bad start\n"), 0;
		stopping = 0;
		for (nrun = 0; nrun < k; nrun++)
			pthread_create(&run_th[nrun], NULL, run_loop, NULL);
	} else if (!strcmp(line, "counts")) {
		for (i = 0; i <= np; i++)
			c[i] = __atomic_exchange_n(&counts[i], 0, __ATOMIC_RELAXED);
		print_counts(c);
	} else if (!strcmp(line, "stop")) {
		__atomic_store_n(&stopping, 1, __ATOMIC_RELAXED);
		for (i = 0; i < nrun; i++)
			pthread_join(run_th[i], NULL);
		nrun = 0;
	} else {
		return printf("error: unknown command '%s'\n", line), 0;
	}
	return 1;
}

int main(void)
{
	char line[512];
	size_t len;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		len = strlen(line);
		if (len && line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (cmd(line))
			printf("done\n");
	}
	return 0;
}
