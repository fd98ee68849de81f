// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * hb_open.c - admin-bench's open-loop mode (--rate R [--interval S]).
 *
 * A closed loop sends the next heartbeat when the last is answered: a slow
 * admin slows the senders down and its stalls never show in the
 * latencies (coordinated omission).  Loaders do not wait for each other:
 * here connection i sends on its own schedule, one heartbeat every
 * conns / R seconds, the connections' schedules staggered; a send late
 * for its time goes at once, and its latency counts from the time it was
 * scheduled, so a stall costs every heartbeat that should have gone
 * during it.
 *
 * The hosts are a fleet's: 10 s x R of them, each sending once per 10-s
 * period, (host, period) always new (host "bench-00-H", H its number;
 * the period the one before the send's).  So R = 2,000 is 20,000 hosts,
 * and the database grows as theirs would: R x points statistics rows/s.
 *
 * Every --interval seconds one line: heartbeats answered (200) per
 * second, p50/p99/max latency of those answered in the interval, errors,
 * and the lag: how far the most-behind connection is behind its schedule
 * at the interval's end (0 when every sender is on time).  Then the
 * summary line of the whole run, as the closed loop's.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "hb_bench.h"

struct sender {
	pthread_t th;			/* its thread */
	int id;				/* connection number, 0..conns-1 */
	int conns;			/* how many connections there are */
	double gap_ms;			/* time between two of its sends: conns * 1000 / rate */
	int64_t next_us;		/* scheduled time of its next send (monotonic, us); atomic */
	unsigned long hosts;		/* hosts it stands for: 10 s worth of its sends */
	int64_t period0;		/* the first round's period_start */
};

/* What the senders record, under @lock. */
static struct {
	pthread_mutex_t lock;		/* serializes the senders' records */
	double *cur;			/* latencies (ms) answered in the current interval */
	size_t ncur, capcur;		/* their count, room */
	double *all;			/* every latency of the run */
	size_t nall, capall;		/* their count, room */
	unsigned long errors;		/* sends not answered 200, in the interval */
	unsigned long errors_all;	/* and in the run */
} rec = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void push(double **a, size_t *n, size_t *cap, double v)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 65536;
		*a = realloc(*a, *cap * sizeof(double));
		if (!*a) {
			fprintf(stderr, "admin-bench: out of memory\n");
			exit(1);
		}
	}
	(*a)[(*n)++] = v;
}

static void record(double lat_ms, bool ok)
{
	pthread_mutex_lock(&rec.lock);
	if (ok) {
		push(&rec.cur, &rec.ncur, &rec.capcur, lat_ms);
		push(&rec.all, &rec.nall, &rec.capall, lat_ms);
	} else {
		rec.errors++;
		rec.errors_all++;
	}
	pthread_mutex_unlock(&rec.lock);
}

/* Sleep until @ms (monotonic), at most 100 ms at a time so a stop is seen. */
static void sleep_until(double ms)
{
	double t = now_ms();
	struct timespec ts;

	if (ms - t > 100)
		ms = t + 100;
	ts.tv_sec = (time_t)(ms / 1e3);
	ts.tv_nsec = (long)((ms - ts.tv_sec * 1e3) * 1e6);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Rewrite @req for send @seq: its host and its round's period. */
static void aim(const struct sender *s, char *req, size_t host_at, size_t period_at,
		unsigned long seq)
{
	unsigned long host = s->id + (unsigned long)s->conns * (seq % s->hosts);
	char num[24];

	snprintf(num, sizeof(num), "%09lu", host % 1000000000UL);
	memcpy(req + host_at + 6, "00-", 3);
	memcpy(req + host_at + 9, num, 9);
	snprintf(num, sizeof(num), "%010" PRId64,
		 s->period0 + 10 * (int64_t)(seq / s->hosts));
	memcpy(req + period_at, num, 10);
}

static void *send_loop(void *arg)
{
	struct sender *s = arg;
	char resp[65536];
	size_t len, host_at, period_at, sent;
	unsigned long seq = 0;
	char *req, *p;
	int fd;

	req = build_request(s->id, &len, &host_at);
	p = strstr(req, "\"period_start\":");
	if (!p) {
		fprintf(stderr, "admin-bench: no period_start in the request\n");
		exit(1);
	}
	period_at = p + 15 - req;
	fd = connect_admin(s->id);
	while (!bench_stop) {
		int64_t next = __atomic_load_n(&s->next_us, __ATOMIC_RELAXED);
		double sched = next / 1e3;
		bool ok;

		if (now_ms() < sched) {
			sleep_until(sched);
			continue;
		}
		__atomic_store_n(&s->next_us, next + (int64_t)(s->gap_ms * 1e3),
				 __ATOMIC_RELAXED);
		aim(s, req, host_at, period_at, seq++);
		if (fd < 0)
			fd = connect_admin(s->id);
		for (sent = 0; fd >= 0 && sent < len;) {
			ssize_t n = write(fd, req + sent, len - sent);

			if (n <= 0)
				break;
			sent += n;
		}
		ok = fd >= 0 && sent == len && read_response(fd, resp, sizeof(resp)) == 200;
		record(now_ms() - sched, ok);
		if (!ok && fd >= 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0)
		close(fd);
	free(req);
	return NULL;
}

/* How far the most-behind sender is behind its schedule now, ms. */
static double lag_ms(const struct sender *s, int n)
{
	double t = now_ms(), lag = 0;
	int i;

	for (i = 0; i < n; i++) {
		double behind = t - __atomic_load_n(&s[i].next_us, __ATOMIC_RELAXED) / 1e3;

		if (behind > lag)
			lag = behind;
	}
	return lag;
}

static double pct(const double *a, size_t n, double p)
{
	return n ? a[(size_t)(n * p) < n ? (size_t)(n * p) : n - 1] : 0;
}

/* The interval's line, its records taken. */
static void interval_line(int k, double t_s, double len_s, double lag)
{
	double *a;
	size_t n;
	unsigned long err;

	pthread_mutex_lock(&rec.lock);
	a = rec.cur;
	n = rec.ncur;
	err = rec.errors;
	rec.cur = NULL;
	rec.ncur = rec.capcur = 0;
	rec.errors = 0;
	pthread_mutex_unlock(&rec.lock);
	qsort(a, n, sizeof(double), cmp_double);
	printf("interval %d t %.0f sent %zu sent_per_s %.0f p50_ms %.2f p99_ms %.2f"
	       " max_ms %.2f lag_ms %.1f errors %lu\n", k, t_s, n, n / len_s,
	       pct(a, n, 0.5), pct(a, n, 0.99), n ? a[n - 1] : 0, lag, err);
	fflush(stdout);
	free(a);
}

int open_loop(int conns, int seconds, double rate, int interval)
{
	struct sender *s = calloc(conns, sizeof(*s));
	double t0 = now_ms(), el, last = t0, next_line, end;
	int64_t period0 = ((int64_t)time(NULL) / 10 - 1) * 10;
	unsigned long hosts = (unsigned long)(10.0 * rate / conns + 0.5);
	int i, k = 0;

	if (!s)
		return 1;
	for (i = 0; i < conns; i++) {
		s[i].id = i;
		s[i].conns = conns;
		s[i].gap_ms = conns * 1e3 / rate;
		/* Staggered: the fleet's sends spread evenly over each gap. */
		s[i].next_us = (int64_t)((t0 + s[i].gap_ms * i / conns) * 1e3);
		s[i].hosts = hosts ? hosts : 1;
		s[i].period0 = period0;
		pthread_create(&s[i].th, NULL, send_loop, &s[i]);
	}
	end = t0 + seconds * 1e3;
	next_line = interval ? t0 + interval * 1e3 : end;
	for (;;) {
		double t;

		sleep_until(next_line < end ? next_line : end);
		t = now_ms();
		if (interval && t >= next_line) {
			interval_line(++k, (t - t0) / 1e3, (t - last) / 1e3, lag_ms(s, conns));
			last = t;
			next_line += interval * 1e3;
		}
		if (t >= end)
			break;
	}
	bench_stop = 1;
	for (i = 0; i < conns; i++)
		pthread_join(s[i].th, NULL);
	el = (now_ms() - t0) / 1e3;
	qsort(rec.all, rec.nall, sizeof(double), cmp_double);
	printf("heartbeats %zu seconds %.1f conns %d rate %.0f hosts %lu heartbeats_per_s %.0f"
	       " p50_ms %.2f p99_ms %.2f max_ms %.2f errors %lu\n",
	       rec.nall, el, conns, rate, s[0].hosts * conns, rec.nall / el,
	       pct(rec.all, rec.nall, 0.5), pct(rec.all, rec.nall, 0.99),
	       rec.nall ? rec.all[rec.nall - 1] : 0, rec.errors_all);
	free(rec.all);
	free(rec.cur);
	free(s);
	return rec.errors_all || !rec.nall ? 1 : 0;
}
