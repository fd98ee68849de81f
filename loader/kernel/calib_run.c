// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * calib_run.c - measure what probes cost on this machine, once per boot
 * (calib.h).  Like the fork check (forkcheck.c), by trying:
 *
 *   the loader                           a forked child (no exec)
 *   a private copy of sds-bpf's BPF
 *   programs; fork                ...>   waits on its pipe
 *   uprobes (the child's pid only)
 *   with sds_enter / sds_leave on
 *   four functions, "g"           --->   per test, CALIB_ROUNDS rounds:
 *                                        N calls of the probed function
 *                                        and N of its unprobed twin, in
 *                                        turn first; writes the timings
 *                                 <---   (struct calib_round, binary)
 *
 * The BPF programs are the loader's own (the same object, loaded apart):
 * their maps are this measurement's, so the point ids it uses (its
 * cookies, 0..3) disturb no real point's counts, and the loader's table
 * of points keeps all its ids.  The child is forked without exec: it
 * runs functions of this very executable, and in it only read, write
 * and clock_gettime (its CPU time), which are safe after a fork whatever the loader's
 * threads.  Bounded: a tight loop per test, ~0.2 s of CPU in all on a
 * 2-core VM where a nop5 pair costs ~3 us, and a 2-s deadline;
 * anything that goes wrong leaves §3's figures.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "kernel/calib.h"
#include "kernel/probes.h"
#include "kernel/selftest.h"
#include "sds.skel.h"

#define CALIB_TIMEOUT_MS	2000	/* the helper's whole run */

/*
 * The functions timed, each 64-aligned (a nop5 never crosses a page;
 * no two share a cache line) and in asm, so that no compiler option
 * changes its first instruction.  Each probed one has an unprobed twin
 * of the same code: the twin's time is the call and the loop.
 */
#define CALIB_FN(name, body)						\
	".p2align 6\n" ".type " #name ", @function\n" #name ":\n"	\
	body "\tret\n" ".size " #name ", .-" #name "\n"
#define NOP5	"\t.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
#define PUSH	"\tpush %rbp\n\tpop %rbp\n"
#define MOV	"\tmov %edi, %eax\n"

__asm__(".text\n"
	CALIB_FN(calib_nop5_entry, NOP5)
	CALIB_FN(calib_nop5_pair, NOP5)
	CALIB_FN(calib_nop5_bare, NOP5)
	CALIB_FN(calib_push_pair, PUSH)
	CALIB_FN(calib_push_bare, PUSH)
	CALIB_FN(calib_mov_pair, MOV)
	CALIB_FN(calib_mov_bare, MOV));

int calib_nop5_entry(int), calib_nop5_pair(int), calib_nop5_bare(int);
int calib_push_pair(int), calib_push_bare(int);
int calib_mov_pair(int), calib_mov_bare(int);

/* Per test: the probed function, its twin, its site, calls per round. */
static const struct calib_fn {
	int (*probed)(int);		/* with the probe(s) */
	int (*bare)(int);		/* the same code, unprobed */
	enum site_kind kind;		/* what site_classify() must say of it */
	bool ret;			/* a uretprobe too */
	unsigned int calls;		/* per round: a few ms with the probe */
} calib_fns[CALIB_NTESTS] = {
	[CALIB_NOP5_ENTRY] = { calib_nop5_entry, calib_nop5_bare, SITE_NOP5, false, 3000 },
	[CALIB_NOP5_PAIR] = { calib_nop5_pair, calib_nop5_bare, SITE_NOP5, true, 2000 },
	[CALIB_EMU_PAIR] = { calib_push_pair, calib_push_bare, SITE_EMULATED, true, 1000 },
	/* ~20 us a call: few, or this test alone would take a second. */
	[CALIB_STEP_PAIR] = { calib_mov_pair, calib_mov_bare, SITE_STEPPED, true, 100 },
};

/*
 * The helper's own CPU time, not the wall clock: what the budget
 * estimates is CPU taken from the target (the trap, the step and the
 * BPF programs run in its context, as its system time), and a round in
 * which the shared cores ran something else is not made longer by it.
 */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static volatile int calib_sink;

static uint64_t time_calls(int (*fn)(int), unsigned int n)
{
	uint64_t t0 = now_ns();
	unsigned int i;
	int s = 0;

	for (i = 0; i < n; i++)
		s += fn((int)i);
	calib_sink = s;
	return now_ns() - t0;
}

/* The child: wait for "g", time every test, write the rounds, exit. */
static void __attribute__((noreturn)) helper(int go, int rep)
{
	static struct calib_round rounds[CALIB_NTESTS][CALIB_ROUNDS];
	const char *p = (const char *)rounds;
	size_t left = sizeof(rounds);
	int t, r;
	char c;

	if (read(go, &c, 1) != 1 || c != 'g')
		_exit(2);
	for (t = 0; t < CALIB_NTESTS; t++) {
		const struct calib_fn *f = &calib_fns[t];

		/* A first hit optimizes a nop5 probe (Linux 6.18): not timed. */
		time_calls(f->probed, 16);
		for (r = 0; r < CALIB_ROUNDS; r++) {
			struct calib_round *cr = &rounds[t][r];

			/* Each side goes first in turn: no order effect wins. */
			if (r & 1) {
				cr->without_ns = time_calls(f->bare, f->calls);
				cr->with_ns = time_calls(f->probed, f->calls);
			} else {
				cr->with_ns = time_calls(f->probed, f->calls);
				cr->without_ns = time_calls(f->bare, f->calls);
			}
		}
	}
	while (left) {
		ssize_t n = write(rep, p, left);

		if (n <= 0)
			_exit(2);
		p += n;
		left -= (size_t)n;
	}
	_exit(0);
}

/* Read @len bytes from @fd by @deadline; 0 or -1. */
static int read_all(int fd, void *buf, size_t len,
		    const struct timespec *deadline)
{
	char *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, selftest__ms_left(deadline)) <= 0)
			return -1;
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Is each probed function's first instruction the kind it stands for? */
static int check_sites(char *why, size_t whylen)
{
	int t;

	for (t = 0; t < CALIB_NTESTS; t++) {
		const struct calib_fn *f = &calib_fns[t];
		struct site s;

		site_classify((const unsigned char *)f->probed, 16,
			      (uint64_t)(uintptr_t)f->probed, &s);
		if (s.kind != f->kind || s.skip) {
			snprintf(why, whylen, "test function %d is a %s site, not %s",
				 t, site_kind_name(s.kind), site_kind_name(f->kind));
			return -1;
		}
	}
	return 0;
}

/* The links of one measurement: entry and return per test. */
struct calib_links {
	struct bpf_link *l[CALIB_NTESTS][2];	/* [test][0: entry, 1: return] */
};

static int attach_all(struct probes *pr, pid_t pid, struct calib_links *ls,
		      char *why, size_t whylen)
{
	int t, ret;

	for (t = 0; t < CALIB_NTESTS; t++) {
		const struct calib_fn *f = &calib_fns[t];
		uint64_t off;

		if (selftest__file_offset((const void *)f->probed, &off)) {
			snprintf(why, whylen, "cannot find the test functions in /proc/self/maps");
			return -1;
		}
		for (ret = 0; ret <= (int)f->ret; ret++) {
			LIBBPF_OPTS(bpf_uprobe_opts, opts);

			/* Each test its own point id, as distinct points have. */
			opts.bpf_cookie = (uint64_t)t;
			opts.retprobe = ret;
			ls->l[t][ret] = bpf_program__attach_uprobe_opts(
				ret ? pr->skel->progs.sds_leave :
				      pr->skel->progs.sds_enter,
				pid, "/proc/self/exe", off, &opts);
			if (!ls->l[t][ret]) {
				snprintf(why, whylen, "attaching a test uprobe: %s",
					 strerror(errno));
				return -1;
			}
		}
	}
	return 0;
}

/* The helper, forked without exec: helper() never returns. */
static void helper_child(int in, int out, void *arg)
{
	(void)arg;
	helper(in, out);
}

/* Start the helper, probe it, let it run: its rounds into @rounds. */
static int run_helper(struct probes *pr,
		      struct calib_round rounds[CALIB_NTESTS][CALIB_ROUNDS],
		      char *why, size_t whylen)
{
	struct calib_links ls;
	struct timespec deadline;
	int go = -1, rep = -1, t, st, ret = -1;
	pid_t pid;

	memset(&ls, 0, sizeof(ls));
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += CALIB_TIMEOUT_MS / 1000;
	pid = selftest__spawn(&go, &rep, helper_child, NULL);
	if (pid < 0) {
		snprintf(why, whylen, "starting the helper: %s", strerror(errno));
		return -1;
	}
	if (attach_all(pr, pid, &ls, why, whylen))
		goto out;
	if (write(go, "g", 1) != 1) {
		snprintf(why, whylen, "the helper went away");
		goto out;
	}
	if (read_all(rep, rounds, sizeof(struct calib_round) * CALIB_NTESTS *
		     CALIB_ROUNDS, &deadline)) {
		snprintf(why, whylen, "the helper gave no answer within %d ms",
			 CALIB_TIMEOUT_MS);
		goto out;
	}
	ret = 0;
out:
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	for (t = 0; t < CALIB_NTESTS; t++) {
		bpf_link__destroy(ls.l[t][0]);
		bpf_link__destroy(ls.l[t][1]);
	}
	close(go);
	close(rep);
	return ret;
}

int calib__measure(struct site_costs *out, char *why, size_t whylen)
{
	static struct calib_round rounds[CALIB_NTESTS][CALIB_ROUNDS];
	unsigned int ns[CALIB_NTESTS];
	struct probes pr;
	char err[256];
	int t;

	if (check_sites(why, whylen))
		return -1;
	memset(&pr, 0, sizeof(pr));
	if (probes__load(&pr, 0, 0, err, sizeof(err))) {
		snprintf(why, whylen, "%s", err);
		probes__destroy(&pr);
		return -1;
	}
	t = run_helper(&pr, rounds, why, whylen);
	probes__destroy(&pr);
	if (t)
		return -1;
	for (t = 0; t < CALIB_NTESTS; t++)
		ns[t] = calib__per_call(rounds[t], CALIB_ROUNDS, calib_fns[t].calls);
	if (calib__costs(ns, out)) {
		snprintf(why, whylen, "implausible timings (ns a call: nop5 entry %u, pairs: nop5 %u, emulated %u, stepped %u)",
			 ns[CALIB_NOP5_ENTRY], ns[CALIB_NOP5_PAIR],
			 ns[CALIB_EMU_PAIR], ns[CALIB_STEP_PAIR]);
		return -1;
	}
	return 0;
}

bool calib__get(const char *run_dir, struct calib *c)
{
	char path[PATH_MAX], boot[SELFTEST_BOOT_ID_LEN + 1];
	char text[SELFTEST_CACHE_MAX + 1];
	const char *env = getenv(CALIB_ENV);
	bool can_cache;
	int n;

	memset(c, 0, sizeof(*c));
	site_costs_set(NULL);
	c->costs = *site_costs_get();
	if (env && !strcmp(env, "design")) {
		snprintf(c->detail, sizeof(c->detail), CALIB_ENV "=design");
		return false;
	}
	can_cache = !selftest__boot_id(boot) &&
		    snprintf(path, sizeof(path), "%s/" CALIB_FILE, run_dir) <
		    (int)sizeof(path);
	if (can_cache && !selftest__cache_slurp(path, text) &&
	    !calib__parse(text, boot, &c->costs)) {
		c->cached = true;
		site_costs_set(&c->costs);
		return true;
	}
	if (calib__measure(&c->costs, c->detail, sizeof(c->detail))) {
		fprintf(stderr, "sds-bpf: measuring the probe costs: %s: using docs/DESIGN.md §3's figures\n",
			c->detail);
		c->costs = *site_costs_get();
		return true;
	}
	c->detail[0] = '\0';
	site_costs_set(&c->costs);
	n = can_cache ? calib__format(&c->costs, boot, text, sizeof(text)) : -1;
	if (n > 0)
		selftest__cache_write(path, text, (size_t)n);
	return true;
}
