// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-multilink: one uprobe session link per function point (what the
 * loader does: loader/probes_session.c) against one link for all the
 * points of a binary (issue 14).  The program is the session floor of
 * floor.bpf.c; the points are N of the 64 nop5 functions of
 * multilink_fns.c, in this very binary, so a running process maps the
 * file while links come and go, as the loader's targets do.  The two
 * ways, both in every round, the first of them alternating:
 *
 *   links  N links, each with one offset and one cookie
 *   one    one link with the N offsets and N cookies (one u64 per offset)
 *
 *   bench-multilink [-a ROUNDS] [-r ROUNDS] [-c CALLS]
 *
 * Attach: for N = 1, 8, 64, -a rounds (default 21): the wall time of
 * the BPF_LINK_CREATE calls, the fds they hold, and the wall time of
 * closing them (the kernel detaches in close(): the link's release waits
 * for a grace period before it returns).
 *
 * Per call: for N = 1, 64, -r rounds (default 11): attach, warm up
 * (the first hit turns the NOP into a call), -c calls (default 2,000,000)
 * of the first function timed, the program's enter and leave counts
 * checked against the calls made, detach.
 *
 * One line per measurement, for tools/bench/multilink.py:
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

enum ml_way { ML_LINKS, ML_ONE };

static const char *const ml_way_name[] = { "links", "one" };

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
static int ml_attach(struct ml_bench *b, enum ml_way way, int n,
		     long long *first)
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

static int ml_attach_round(struct ml_bench *b, enum ml_way way, int n, int r)
{
	long long t0, t1, t2, first;
	int nfds, fds0, fds;

	fds0 = ml_count_fds();
	t0 = now_ns();
	nfds = ml_attach(b, way, n, &first);
	t1 = now_ns();
	if (nfds < 0) {
		fprintf(stderr, "bench-multilink: %d point(s), %s: %s\n", n,
			ml_way_name[way], strerror(errno));
		return -1;
	}
	fds = ml_count_fds() - fds0;
	t2 = now_ns();
	ml_detach(b, nfds);
	printf("attach %s %d %d %lld %lld %d %lld\n", ml_way_name[way], n, r,
	       t1 - t0, now_ns() - t2, fds, first - t0);
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

static int ml_call_round(struct ml_bench *b, enum ml_way way, int n, int r,
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
			ml_way_name[way], strerror(errno));
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
			"%llu leaves for %ld calls\n", n, ml_way_name[way],
			in, out, warm + calls);
		return -1;
	}
	printf("call %s %d %d %.2f\n", ml_way_name[way], n, r, ns);
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
	b->skel->rodata->atomics = sds_kernel_preemptible();
	bpf_program__set_expected_attach_type(b->skel->progs.floor_session,
		(enum bpf_attach_type)SDS_BPF_TRACE_UPROBE_SESSION);
	if (floor_bpf__load(b->skel)) {
		fprintf(stderr, "bench-multilink: load: %s\n", strerror(errno));
		return -1;
	}
	b->prog_fd = bpf_program__fd(b->skel->progs.floor_session);
	return 0;
}

int main(int argc, char **argv)
{
	static const int attach_n[] = { 1, 8, 64 }, call_n[] = { 1, 64 };
	struct ml_bench b = { 0 };
	int attach_rounds = 21, call_rounds = 11, opt, i, r, err = 1;
	long calls = 2000000;

	while ((opt = getopt(argc, argv, "a:r:c:")) != -1) {
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
		default:
			fprintf(stderr, "usage: %s [-a ROUNDS] [-r ROUNDS] "
				"[-c CALLS]\n", argv[0]);
			return 2;
		}
	}
	if (attach_rounds < 0 || call_rounds < 0 || calls < 1) {
		fprintf(stderr, "bench-multilink: bad -a, -r or -c\n");
		return 2;
	}
	libbpf_set_print(bench_print_warnings);
	if (ml_setup(&b))
		goto out;

	/*
	 * Both ways in every round, so drift hits them alike; which goes
	 * first alternates (A B, B A), so each comes as often after the
	 * other's detach: a link's release leaves the kernel waiting on
	 * grace periods that the next attach can meet.
	 */
	for (i = 0; i < (int)(sizeof(attach_n) / sizeof(attach_n[0])); i++)
		for (r = 0; r < attach_rounds; r++)
			if (ml_attach_round(&b, r & 1, attach_n[i], r) ||
			    ml_attach_round(&b, !(r & 1), attach_n[i], r))
				goto out;
	fflush(stdout);
	for (i = 0; i < (int)(sizeof(call_n) / sizeof(call_n[0])); i++)
		for (r = 0; r < call_rounds; r++)
			if (ml_call_round(&b, r & 1, call_n[i], r, calls) ||
			    ml_call_round(&b, !(r & 1), call_n[i], r, calls))
				goto out;
	err = 0;
out:
	floor_bpf__destroy(b.skel);
	return err;
}
