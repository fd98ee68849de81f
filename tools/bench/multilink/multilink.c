// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-multilink: one uprobe session link per function point (what the
 * loader does: loader/kernel/probes_session.c) against one link for all the
 * points of a binary (issue 14).  The program is the session floor of
 * tools/bench/baseline/floor.bpf.c; the points are N of the 64 nop5
 * functions of multilink_fns.c, in this very binary, so a running process
 * maps the file while links come and go, as the loader's targets do.  The two
 * ways, both in every round, the first of them alternating:
 *
 *   links  N links, each with one offset and one cookie
 *   one    one link with the N offsets and N cookies (one u64 per offset)
 *
 * and, for detach only, with N >= 2:
 *
 *   parT   the N links of "links", closed by T threads at once (each
 *          closing every T-th fd), so that their grace periods can overlap
 *
 *   bench-multilink [-a ROUNDS] [-r ROUNDS] [-c CALLS] [-n N,...] [-t T,...]
 *
 * Attach: for N = 1, 8, 64 (-n), -a rounds (default 21): the wall time of
 * the BPF_LINK_CREATE calls, the fds they hold, and the wall time of
 * closing them (the kernel detaches in close(): the link's release waits
 * for a grace period before it returns).  The parT ways (-t, default 4,16;
 * T is at most N) attach as "links" does; their threads are made after the
 * attach and wait at a barrier, and the time is from their release until
 * the last close returned.  The ways of a round come in the order of a
 * Williams square: over the rounds, each way comes in each place and after
 * each other way equally often (exactly so for an even number of ways
 * and a multiple of that many rounds).
 *
 * Per call: for N = 1, 64, -r rounds (default 11; 0: none): attach, warm up
 * (the first hit turns the NOP into a call), -c calls (default 2,000,000)
 * of the first function timed, the program's enter and leave counts
 * checked against the calls made, detach.
 *
 * One line per measurement, for tools/bench/multilink/multilink.py:
 *
 *   attach WAY N ROUND CREATE_NS CLOSE_NS FDS FIRST_NS
 *   call WAY N ROUND NS_PER_CALL
 *
 * (FIRST_NS: the part of CREATE_NS until the first link was made.)
 *
 * Exits 1 when a link cannot be made or a count is off.  Root.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "bench_probe.h"
#include "floor.skel.h"
#include "multilink.h"
#include "preempt.h"
#include "upsession.h"

/* A way: ML_LINKS, ML_ONE, or T >= 2 for "links" closed by T threads. */
enum ml_way { ML_LINKS, ML_ONE };

#define ML_MAX_WAYS	8

static const char *ml_way_name(int way)
{
	static char name[16];

	if (way == ML_LINKS)
		return "links";
	if (way == ML_ONE)
		return "one";
	snprintf(name, sizeof(name), "par%d", way);
	return name;
}

struct ml_bench {
	struct floor_bpf *skel;
	int prog_fd;
	char path[4096];		/* this binary, as the kernel opens it */
	unsigned long offs[ML_FNS];	/* file offsets of ml_fns[] */
	uint64_t cookies[ML_FNS];	/* point ids, as the loader's cookies */
	int fds[ML_FNS];
};

static volatile int ml_sink;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The file offset of @addr in the main executable, 0 if not found. */
struct ml_find {
	uintptr_t addr;
	unsigned long off;
};

static int ml_find_segment(struct dl_phdr_info *info, size_t size, void *data)
{
	struct ml_find *f = data;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || f->addr < lo ||
		    f->addr >= lo + ph->p_memsz)
			continue;
		f->off = f->addr - lo + ph->p_offset;
		return 1;
	}
	/* Only the first object is the executable: stop there. */
	return 1;
}

static unsigned long ml_file_offset(const void *fn)
{
	struct ml_find f = { .addr = (uintptr_t)fn };

	dl_iterate_phdr(ml_find_segment, &f);
	return f.off;
}

/* Open file descriptors of this process (the /proc walk's own is not one). */
static int ml_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;
}

/*
 * Attach @n points @way; the number of fds made, or -1 with errno.  The
 * time the first BPF_LINK_CREATE returned goes to @first: the first
 * registration of a burst can wait for the kernel where the next ones do
 * not, and the table says how much.
 */
static int ml_attach(struct ml_bench *b, int way, int n, long long *first)
{
	int i, e;

	if (way == ML_ONE) {
		b->fds[0] = sds_upsession_link(b->prog_fd, b->path, b->offs,
					       b->cookies, n, -1);
		*first = now_ns();
		return b->fds[0] < 0 ? -1 : 1;
	}
	for (i = 0; i < n; i++) {
		b->fds[i] = sds_upsession_link(b->prog_fd, b->path, &b->offs[i],
					       &b->cookies[i], 1, -1);
		if (!i)
			*first = now_ns();
		if (b->fds[i] < 0) {
			e = errno;
			while (i--)
				close(b->fds[i]);
			errno = e;
			return -1;
		}
	}
	return n;
}

static void ml_detach(struct ml_bench *b, int nfds)
{
	int i;

	for (i = 0; i < nfds; i++)
		close(b->fds[i]);
}

/* One of the threads of a parallel detach. */
struct ml_closer {
	pthread_t th;
	struct ml_bench *b;
	pthread_barrier_t *ready, *go, *done;
	int tid, nt, nfds;
};

static void *ml_closer_run(void *arg)
{
	struct ml_closer *c = arg;
	int i;

	pthread_barrier_wait(c->ready);
	pthread_barrier_wait(c->go);
	for (i = c->tid; i < c->nfds; i += c->nt)
		close(c->b->fds[i]);
	pthread_barrier_wait(c->done);
	return NULL;
}

/*
 * Close @nfds fds by @nt threads at once; the ns from their release until
 * the last close returned, or -1 with errno (nothing closed then).  The
 * threads are made, and wait, before the clock starts.
 */
static long long ml_detach_threads(struct ml_bench *b, int nfds, int nt)
{
	struct ml_closer c[ML_FNS];
	pthread_barrier_t ready, go, done;
	long long t0, t1;
	int i, e;

	pthread_barrier_init(&ready, NULL, nt + 1);
	pthread_barrier_init(&go, NULL, nt + 1);
	pthread_barrier_init(&done, NULL, nt + 1);
	for (i = 0; i < nt; i++) {
		c[i] = (struct ml_closer){ .b = b, .ready = &ready, .go = &go,
					   .done = &done, .tid = i, .nt = nt,
					   .nfds = nfds };
		e = pthread_create(&c[i].th, NULL, ml_closer_run, &c[i]);
		if (e) {
			/* The barriers wait for nt + 1: none can go on. */
			fprintf(stderr, "bench-multilink: thread %d: %s\n", i,
				strerror(e));
			exit(1);
		}
	}
	pthread_barrier_wait(&ready);
	t0 = now_ns();
	pthread_barrier_wait(&go);
	pthread_barrier_wait(&done);
	t1 = now_ns();
	for (i = 0; i < nt; i++)
		pthread_join(c[i].th, NULL);
	pthread_barrier_destroy(&ready);
	pthread_barrier_destroy(&go);
	pthread_barrier_destroy(&done);
	return t1 - t0;
}

static int ml_attach_round(struct ml_bench *b, int way, int n, int r)
{
	long long t0, t1, t2, first, closed;
	int nfds, fds0, fds;

	fds0 = ml_count_fds();
	t0 = now_ns();
	nfds = ml_attach(b, way, n, &first);
	t1 = now_ns();
	if (nfds < 0) {
		fprintf(stderr, "bench-multilink: %d point(s), %s: %s\n", n,
			ml_way_name(way), strerror(errno));
		return -1;
	}
	fds = ml_count_fds() - fds0;
	if (way > ML_ONE) {
		closed = ml_detach_threads(b, nfds, way);
	} else {
		t2 = now_ns();
		ml_detach(b, nfds);
		closed = now_ns() - t2;
	}
	printf("attach %s %d %d %lld %lld %d %lld\n", ml_way_name(way), n, r,
	       t1 - t0, closed, fds, first - t0);
	return 0;
}

static double ml_loop(long calls)
{
	long long t0;
	long i;

	t0 = now_ns();
	for (i = 0; i < calls; i++)
		ml_sink = ml_fn_00((int)i);
	return (double)(now_ns() - t0) / calls;
}

static int ml_call_round(struct ml_bench *b, int way, int n, int r,
			 long calls)
{
	const long warm = 10000;
	unsigned long long in0, out0, in, out;
	long long first;
	double ns;
	int nfds;

	in0 = bench_percpu_sum(b->skel->maps.counts, 0);
	out0 = bench_percpu_sum(b->skel->maps.counts, 1);
	nfds = ml_attach(b, way, n, &first);
	if (nfds < 0) {
		fprintf(stderr, "bench-multilink: %d point(s), %s: %s\n", n,
			ml_way_name(way), strerror(errno));
		return -1;
	}
	ml_loop(warm);
	ns = ml_loop(calls);
	in = bench_percpu_sum(b->skel->maps.counts, 0) - in0;
	out = bench_percpu_sum(b->skel->maps.counts, 1) - out0;
	ml_detach(b, nfds);
	/* Every call is one hit of ml_fn_00's point, never of another's. */
	if (in != (unsigned long long)(warm + calls) || out != in) {
		fprintf(stderr, "bench-multilink: %d point(s), %s: %llu enters, "
			"%llu leaves for %ld calls\n", n, ml_way_name(way),
			in, out, warm + calls);
		return -1;
	}
	printf("call %s %d %d %.2f\n", ml_way_name(way), n, r, ns);
	fflush(stdout);
	return 0;
}

static int ml_setup(struct ml_bench *b)
{
	static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	ssize_t len;
	int i;

	len = readlink("/proc/self/exe", b->path, sizeof(b->path) - 1);
	if (len < 0) {
		fprintf(stderr, "bench-multilink: /proc/self/exe: %s\n",
			strerror(errno));
		return -1;
	}
	b->path[len] = '\0';
	for (i = 0; i < ML_FNS; i++) {
		/* Before any probe: the bytes are the file's. */
		if (memcmp((const void *)ml_fns[i], nop5, sizeof(nop5))) {
			fprintf(stderr, "bench-multilink: function %d does not "
				"start with a 5-byte NOP\n", i);
			return -1;
		}
		b->offs[i] = ml_file_offset((const void *)ml_fns[i]);
		if (!b->offs[i]) {
			fprintf(stderr, "bench-multilink: function %d: no file "
				"offset\n", i);
			return -1;
		}
		b->cookies[i] = i;
	}

	b->skel = floor_bpf__open();
	if (!b->skel) {
		fprintf(stderr, "bench-multilink: open: %s\n", strerror(errno));
		return -1;
	}
	b->skel->rodata->atomics = preempt_kernel_preemptible();
	bpf_program__set_expected_attach_type(b->skel->progs.floor_session,
		(enum bpf_attach_type)SDS_BPF_TRACE_UPROBE_SESSION);
	if (floor_bpf__load(b->skel)) {
		fprintf(stderr, "bench-multilink: load: %s\n", strerror(errno));
		return -1;
	}
	b->prog_fd = bpf_program__fd(b->skel->progs.floor_session);
	return 0;
}

/* "1,8,64" into @v (at most @max values in 1..ML_FNS); the count, -1 if bad. */
static int ml_list(const char *arg, int *v, int max)
{
	char *end;
	long x;
	int n = 0;

	do {
		x = strtol(arg, &end, 10);
		if (end == arg || x < 1 || x > ML_FNS || n == max ||
		    (*end && *end != ','))
			return -1;
		v[n++] = (int)x;
		arg = end + 1;
	} while (*end);
	return n;
}

/*
 * The ways of N points: "links" and "one", then "links" closed by each
 * thread count of @threads (at most N; a count already there, or 1, is
 * not added again).  Their number.
 */
static int ml_ways(int n, const int *threads, int nthreads,
		   int way[ML_MAX_WAYS])
{
	int k = 0, i, j, t;

	way[k++] = ML_LINKS;
	way[k++] = ML_ONE;
	for (i = 0; i < nthreads && k < ML_MAX_WAYS; i++) {
		t = threads[i] < n ? threads[i] : n;
		for (j = 2; j < k && way[j] != t; j++)
			;
		if (t >= 2 && j == k)
			way[k++] = t;
	}
	return k;
}

/*
 * The way in place @j of round @r of @k ways: a Williams square (0, 1,
 * k-1, 2, k-2, ... shifted by r), for k = 2 the alternation A B, B A.
 */
static int ml_order(int k, int r, int j)
{
	int first = j & 1 ? (j + 1) / 2 : (k - j / 2) % k;

	return (first + r) % k;
}

int main(int argc, char **argv)
{
	static const int call_n[] = { 1, 64 };
	int attach_n[ML_MAX_WAYS] = { 1, 8, 64 }, n_attach = 3;
	int threads[ML_MAX_WAYS] = { 4, 16 }, n_threads = 2;
	int way[ML_MAX_WAYS], k, j;
	struct ml_bench b = { 0 };
	int attach_rounds = 21, call_rounds = 11, opt, i, r, err = 1;
	long calls = 2000000;

	while ((opt = getopt(argc, argv, "a:r:c:n:t:")) != -1) {
		switch (opt) {
		case 'a':
			attach_rounds = atoi(optarg);
			break;
		case 'r':
			call_rounds = atoi(optarg);
			break;
		case 'c':
			calls = atol(optarg);
			break;
		case 'n':
			n_attach = ml_list(optarg, attach_n, ML_MAX_WAYS);
			break;
		case 't':
			n_threads = ml_list(optarg, threads, ML_MAX_WAYS);
			break;
		default:
			fprintf(stderr, "usage: %s [-a ROUNDS] [-r ROUNDS] "
				"[-c CALLS] [-n N,...] [-t THREADS,...]\n",
				argv[0]);
			return 2;
		}
	}
	if (attach_rounds < 0 || call_rounds < 0 || calls < 1 ||
	    n_attach < 0 || n_threads < 0) {
		fprintf(stderr, "bench-multilink: bad -a, -r, -c, -n or -t\n");
		return 2;
	}
	libbpf_set_print(bench_print_warnings);
	if (ml_setup(&b))
		goto out;

	/*
	 * All the ways in every round, so drift hits them alike; their order
	 * changes from round to round (A B, B A for two), so each comes as
	 * often after each other's detach: a link's release leaves the
	 * kernel waiting on grace periods that the next attach can meet.
	 */
	for (i = 0; i < n_attach; i++) {
		k = ml_ways(attach_n[i], threads, n_threads, way);
		for (r = 0; r < attach_rounds; r++)
			for (j = 0; j < k; j++)
				if (ml_attach_round(&b, way[ml_order(k, r, j)],
						    attach_n[i], r))
					goto out;
	}
	fflush(stdout);
	for (i = 0; call_rounds && i < (int)(sizeof(call_n) / sizeof(call_n[0])); i++)
		for (r = 0; r < call_rounds; r++)
			if (ml_call_round(&b, r & 1, call_n[i], r, calls) ||
			    ml_call_round(&b, !(r & 1), call_n[i], r, calls))
				goto out;
	err = 0;
out:
	floor_bpf__destroy(b.skel);
	return err;
}
