/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A guarded service in front of a dependency of fixed capacity, offered
 * an open-loop load: the adaptive concurrency tests (tests/adaptive/) and
 * the overload benchmark (tools/bench/overload/).
 *
 * The dependency serves CAPACITY calls at once, SERVICE_MS each; more wait
 * in a FIFO queue.  The load is THREADS threads, each starting a request
 * on a fixed schedule (RATE/THREADS a second, absolute: a thread that
 * falls behind starts its next request at once, and the time it was late
 * counts in the request's latency).  A request is one guarded call:
 *
 *	if (sds_should_downgrade(p)) refused++;   (the fallback: answered at once)
 *	else the dependency call;
 *	sds_downgrade_finally(p);
 *
 * and is good when it was not refused and answered within DEADLINE_MS of
 * its scheduled start (goodput).
 *
 * Usage: overload GROUP APP POINT; then commands on stdin, each answered
 * by its lines and "done" ("error: ..." for a bad line):
 *
 *   capacity N        the dependency serves N at once from now on
 *   service_ms S      each dependency call takes S ms from now on
 *   load RATE THREADS start THREADS threads offering RATE requests a second
 *                     in all (stopping the load running before)
 *   stop              stop the load, join the threads
 *   report            since the last report (or load): "requests N good G
 *                     refused R late L p50_us A p99_us B inside M elapsed_ms E",
 *                     L the passed calls answered past the deadline, A and B
 *                     the percentiles of passed calls' latency (from the
 *                     scheduled start), M the most calls inside the
 *                     dependency (served or queued) at once
 *   deadline_ms D     the goodput deadline (100)
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sds.h>

#define MAX_THREADS	256
#define LAT_SLOTS	4096		/* latency histogram: 100-us buckets to 409.6 ms */

static struct sds_point *point;

/* The dependency: a FIFO semaphore of @capacity. */
static pthread_mutex_t dep_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dep_cond = PTHREAD_COND_INITIALIZER;
static uint64_t dep_next_ticket, dep_serving_ticket;	/* FIFO: tickets served in order */
static int dep_busy, dep_capacity = 8;
static int dep_inside, dep_inside_max;
static atomic_long service_us = 5000;

/* The load. */
static pthread_t threads[MAX_THREADS];
static int nthreads;
static atomic_int running;
static double period_ns;		/* per thread */
static uint64_t load_start_ns;
static atomic_long deadline_ns = 100000000L;

/* What the reports count (since the last one). */
static pthread_mutex_t rep_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rep_requests, rep_good, rep_refused, rep_late;
static uint64_t rep_lat[LAT_SLOTS + 1];
static uint64_t rep_since_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = t / 1000000000ULL, .tv_nsec = t % 1000000000ULL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* One call of the dependency: wait for a slot in FIFO order, serve, leave. */
static void dependency_call(void)
{
	uint64_t ticket;

	pthread_mutex_lock(&dep_lock);
	ticket = dep_next_ticket++;
	if (++dep_inside > dep_inside_max)
		dep_inside_max = dep_inside;
	while (ticket != dep_serving_ticket || dep_busy >= dep_capacity)
		pthread_cond_wait(&dep_cond, &dep_lock);
	dep_serving_ticket++;
	dep_busy++;
	pthread_cond_broadcast(&dep_cond);
	pthread_mutex_unlock(&dep_lock);

	sleep_until(now_ns() + (uint64_t)atomic_load(&service_us) * 1000ULL);

	pthread_mutex_lock(&dep_lock);
	dep_busy--;
	dep_inside--;
	pthread_cond_broadcast(&dep_cond);
	pthread_mutex_unlock(&dep_lock);
}

static void count(bool refused, uint64_t lat)
{
	uint64_t slot = lat / 100000;

	pthread_mutex_lock(&rep_lock);
	rep_requests++;
	if (refused) {
		rep_refused++;
	} else {
		if (lat <= (uint64_t)atomic_load(&deadline_ns))
			rep_good++;
		else
			rep_late++;
		rep_lat[slot < LAT_SLOTS ? slot : LAT_SLOTS]++;
	}
	pthread_mutex_unlock(&rep_lock);
}

static void *load_thread(void *arg)
{
	long i = (long)arg;
	/* The threads' schedules are spread over one period. */
	double next = (double)load_start_ns + period_ns * i / nthreads;

	while (atomic_load(&running)) {
		uint64_t sched = (uint64_t)next, end;
		bool refused;

		if (now_ns() < sched)
			sleep_until(sched);
		if (!atomic_load(&running))
			break;
		refused = sds_should_downgrade(point);
		if (!refused)
			dependency_call();
		sds_downgrade_finally(point);
		end = now_ns();
		count(refused, end - sched);
		next += period_ns;
	}
	return NULL;
}

static void load_stop(void)
{
	int i;

	atomic_store(&running, 0);
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	nthreads = 0;
}

/* The @pct-th percentile of the passed calls' latency, us. */
static uint64_t pct_us(const uint64_t *h, uint64_t n, double pct)
{
	uint64_t want = (uint64_t)(n * pct / 100.0 + 0.999999), seen = 0;
	int i;

	if (!n)
		return 0;
	for (i = 0; i <= LAT_SLOTS; i++) {
		seen += h[i];
		if (seen >= want)
			return (uint64_t)i * 100 + 100;
	}
	return (uint64_t)LAT_SLOTS * 100;
}

static void report(void)
{
	uint64_t h[LAT_SLOTS + 1], n, now = now_ns();
	uint64_t req, good, refused, late;
	int inside;

	pthread_mutex_lock(&rep_lock);
	memcpy(h, rep_lat, sizeof(h));
	req = rep_requests;
	good = rep_good;
	refused = rep_refused;
	late = rep_late;
	memset(rep_lat, 0, sizeof(rep_lat));
	rep_requests = rep_good = rep_refused = rep_late = 0;
	n = good + late;
	pthread_mutex_unlock(&rep_lock);
	pthread_mutex_lock(&dep_lock);
	inside = dep_inside_max;
	dep_inside_max = dep_inside;
	pthread_mutex_unlock(&dep_lock);
	printf("requests %llu good %llu refused %llu late %llu p50_us %llu p99_us %llu inside %d elapsed_ms %llu\n",
	       (unsigned long long)req, (unsigned long long)good,
	       (unsigned long long)refused, (unsigned long long)late,
	       (unsigned long long)pct_us(h, n, 50), (unsigned long long)pct_us(h, n, 99),
	       inside, (unsigned long long)((now - rep_since_ns) / 1000000));
	rep_since_ns = now;
}

int main(int argc, char **argv)
{
	struct sds_client *cl;
	char line[256];

	if (argc != 4) {
		fprintf(stderr, "usage: overload GROUP APP POINT\n");
		return 2;
	}
	cl = sds_client_open(argv[1], argv[2]);
	point = sds_point(cl, argv[3]);
	if (!point) {
		fprintf(stderr, "overload: no point %s\n", argv[3]);
		return 1;
	}
	rep_since_ns = now_ns();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		double rate;
		long a, b;

		if (sscanf(line, "capacity %ld", &a) == 1 && a >= 1) {
			pthread_mutex_lock(&dep_lock);
			dep_capacity = (int)a;
			pthread_cond_broadcast(&dep_cond);
			pthread_mutex_unlock(&dep_lock);
		} else if (sscanf(line, "service_ms %ld", &a) == 1 && a >= 0) {
			atomic_store(&service_us, a * 1000);
		} else if (sscanf(line, "deadline_ms %ld", &a) == 1 && a >= 1) {
			atomic_store(&deadline_ns, a * 1000000L);
		} else if (sscanf(line, "load %lf %ld", &rate, &b) == 2 && rate > 0 &&
			   b >= 1 && b <= MAX_THREADS) {
			load_stop();
			nthreads = (int)b;
			period_ns = 1e9 * nthreads / rate;
			load_start_ns = now_ns();
			atomic_store(&running, 1);
			for (a = 0; a < nthreads; a++)
				if (pthread_create(&threads[a], NULL, load_thread, (void *)a)) {
					printf("error: pthread_create\n");
					nthreads = (int)a;
					break;
				}
			pthread_mutex_lock(&rep_lock);
			memset(rep_lat, 0, sizeof(rep_lat));
			rep_requests = rep_good = rep_refused = rep_late = 0;
			pthread_mutex_unlock(&rep_lock);
			rep_since_ns = now_ns();
		} else if (!strncmp(line, "stop", 4)) {
			load_stop();
		} else if (!strncmp(line, "report", 6)) {
			report();
		} else {
			printf("error: bad command: %s", line);
			continue;
		}
		printf("done\n");
	}
	load_stop();
	sds_client_close(cl);
	return 0;
}
