/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * exactapp - calls of one guard point at a fixed rate from several
 * threads, numbered across processes, for the exact-trips tests
 * (tests/exact/run.py) and the overshoot benchmark (tools/bench).
 *
 *   exactapp APP FILE THREADS RATE SECONDS START_NS MODE
 *
 * Opens the client of APP (group "default") and its point "exact"; maps
 * FILE (the test sized it: a 64-byte header, then 16 bytes per call);
 * each of THREADS threads makes RATE calls/s on an absolute schedule
 * from CLOCK_MONOTONIC START_NS for SECONDS.  A call takes the file's
 * lock, takes the next call index, makes the guarded call (MODE exc: a
 * call that passes signs an exception; slow: it sleeps 2 ms) and records
 * (CLOCK_REALTIME ns, 1 passed / 2 downgraded) at its index, so the
 * indices are the order of the guard's decisions across every process
 * that shares FILE.  Exits 0 after printing "passed P downgraded D".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sds.h>

/* The file's header, shared by every process of a run. */
struct shared {
	uint32_t lock;		/* 0 free, 1 held */
	uint32_t pad;
	uint64_t next;		/* the next call index */
	uint8_t rest[48];
};

/* One call's record. */
struct rec {
	uint64_t ns;		/* CLOCK_REALTIME at the decision */
	uint64_t verdict;	/* 1 passed, 2 downgraded */
};

static struct shared *sh;
static struct rec *recs;
static uint64_t nrecs, start_ns, step_ns, end_ns;
static struct sds_point *pt;
static int mode;		/* 0 visit, 1 exc, 2 slow */
static uint64_t passed, downgraded;

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void lock(void)
{
	while (__atomic_exchange_n(&sh->lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void unlock(void)
{
	__atomic_store_n(&sh->lock, 0, __ATOMIC_RELEASE);
}

static void *run(void *arg)
{
	uint64_t t, idx, k;
	struct timespec ts;
	bool down;

	for (k = 0;; k++) {
		t = start_ns + k * step_ns + (uintptr_t)arg * (step_ns / 4);
		if (t >= end_ns)
			break;
		ts.tv_sec = t / 1000000000ULL;
		ts.tv_nsec = t % 1000000000ULL;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		lock();
		idx = sh->next++;
		if (idx >= nrecs) {
			unlock();
			break;
		}
		down = sds_should_downgrade(pt);
		recs[idx].ns = now_ns(CLOCK_REALTIME);
		if (!down && mode == 1)
			sds_exception_sign(pt);
		if (!down && mode == 2)
			usleep(2000);
		sds_downgrade_finally(pt);
		recs[idx].verdict = down ? 2 : 1;
		unlock();
		__atomic_fetch_add(down ? &downgraded : &passed, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sds_client *c;
	pthread_t t[64];
	struct stat st;
	int fd, i, n;
	void *m;

	if (argc != 8) {
		fprintf(stderr, "usage: exactapp APP FILE THREADS RATE SECONDS START_NS visit|exc|slow\n");
		return 2;
	}
	n = atoi(argv[3]);
	if (n < 1 || n > 64 || atoi(argv[4]) < 1)
		return 2;
	step_ns = 1000000000ULL / strtoull(argv[4], NULL, 10);
	start_ns = strtoull(argv[6], NULL, 10);
	end_ns = start_ns + strtoull(argv[5], NULL, 10) * 1000000000ULL;
	mode = !strcmp(argv[7], "exc") ? 1 : !strcmp(argv[7], "slow") ? 2 : 0;
	fd = open(argv[2], O_RDWR);
	if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)sizeof(*sh)) {
		perror(argv[2]);
		return 1;
	}
	m = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	sh = m;
	recs = (struct rec *)(sh + 1);
	nrecs = (st.st_size - sizeof(*sh)) / sizeof(*recs);
	c = sds_client_open("default", argv[1]);
	pt = sds_point(c, "exact");
	if (!c || !pt) {
		fprintf(stderr, "exactapp: no client or point\n");
		return 1;
	}
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, run, (void *)(uintptr_t)i);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("passed %llu downgraded %llu\n", (unsigned long long)passed,
	       (unsigned long long)downgraded);
	sds_client_close(c);
	return 0;
}
