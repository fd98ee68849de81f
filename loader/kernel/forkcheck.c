// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * forkcheck.c - does this kernel kill a child forked after a nop5 uprobe
 * fired?  Tried, not looked up by version (docs/DESIGN.md §3, issue 9):
 *
 *   the loader                         sds-bpf __forkcheck (exec'd)
 *   fork + exec /proc/self/exe  --->   "r": ready, waits on stdin
 *   uprobe on forkcheck_nop5 (for
 *   the helper's pid only), "g" --->   calls it 4 times (the kernel
 *                                      optimizes after the first hit),
 *                                      reads its first byte, forks; the
 *                                      child calls it 3 times, exits 0
 *                              <---    "<byte> <child's wait status>"
 *
 * A child that exits 0 says the kernel is fine; one killed by a signal
 * says it is not; anything else (no answer in time, the probe not in
 * place) is "unknown", treated as the bug and not cached.  A definite
 * answer is cached for the boot in the run directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "kernel/forkcheck.h"
#include "kernel/probes.h"
#include "kernel/selftest.h"

#define FORKCHECK_TIMEOUT_MS	3000	/* the whole test; a hung helper is "unknown" */
#define PARENT_CALLS		4
#define CHILD_CALLS		3

/*
 * The probed function: a 5-byte NOP then ret, 16-aligned so the NOP never
 * crosses a page (one that does is not optimized).  In asm so that no
 * compiler option (endbr64, -pg) changes its first instruction.
 */
__asm__(".text\n"
	".p2align 4\n"
	".type forkcheck_nop5, @function\n"
	"forkcheck_nop5:\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
	"	ret\n"
	".size forkcheck_nop5, .-forkcheck_nop5\n");
void forkcheck_nop5(void);

/* ---- the helper ---------------------------------------------------------- */

int forkcheck__helper_main(void)
{
	struct rlimit no_core = { 0, 0 };
	unsigned char first;
	char c;
	pid_t pid;
	int i, st;

	/* The child is meant to die: no core dump of it. */
	setrlimit(RLIMIT_CORE, &no_core);
	if (write(1, "r", 1) != 1 || read(0, &c, 1) != 1 || c != 'g')
		return 2;
	for (i = 0; i < PARENT_CALLS; i++)
		forkcheck_nop5();
	/* 0f: no probe; cc: int3; e8: the optimized call. */
	first = *(volatile unsigned char *)(uintptr_t)forkcheck_nop5;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		for (i = 0; i < CHILD_CALLS; i++)
			forkcheck_nop5();
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return 2;
	dprintf(1, "%02x %d\n", first, st);
	return 0;
}

/* ---- the loader's side ----------------------------------------------------- */

/* "r0 = 0; exit": the probe only has to be there, not do anything. */
static int tiny_prog_load(void)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_KPROBE, "sds_forkcheck", "GPL",
			     insns, 2, NULL);
}

static int uprobe_pmu_type(void)
{
	char buf[32];
	int fd, n;

	fd = open("/sys/bus/event_source/devices/uprobe/type", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return atoi(buf);
}

/* A uprobe at @off of our executable for process @pid only, running @prog. */
static int uprobe_open(pid_t pid, uint64_t off, int prog)
{
	static const char exe[] = "/proc/self/exe";
	struct perf_event_attr attr;
	int type = uprobe_pmu_type(), fd;

	if (type < 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (uint32_t)type;
	attr.config1 = (uint64_t)(uintptr_t)exe;	/* resolved to our inode */
	attr.config2 = off;
	fd = (int)syscall(SYS_perf_event_open, &attr, pid, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read from @fd until @want bytes or a newline came, or the deadline. */
static int read_until(int fd, char *buf, size_t len, size_t want,
		      const struct timespec *deadline)
{
	size_t got = 0;

	while (got < len - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, selftest__ms_left(deadline)) <= 0)
			break;
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		buf[got] = '\0';
		if (got >= want || memchr(buf, '\n', got))
			break;
	}
	buf[got] = '\0';
	return (int)got;
}

/*
 * The helper: `sds-bpf __forkcheck` exec'ed, its stdin and stdout the
 * pipes, in its own process group, so its child is killed with it.
 */
static void helper_exec(int in, int out, void *arg)
{
	int null = open("/dev/null", O_WRONLY);

	(void)arg;
	setpgid(0, 0);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
	    (null >= 0 && dup2(null, 2) < 0))
		_exit(127);
	execl("/proc/self/exe", "sds-bpf", FORKCHECK_CMD, (char *)NULL);
	_exit(127);
}

/* The helper started; its pid or -1. */
static pid_t helper_start(int *go, int *rep)
{
	pid_t pid = selftest__spawn(go, rep, helper_exec, NULL);

	/* Also here: the group must exist before we signal it. */
	if (pid > 0)
		setpgid(pid, pid);
	return pid;
}

/* Turn the helper's report "<byte> <status>" into a verdict. */
static void verdict(const char *rep, struct forkcheck *fc)
{
	unsigned int first;
	int st;

	fc->result = FORKCHECK_UNKNOWN;
	if (sscanf(rep, "%x %d", &first, &st) != 2) {
		snprintf(fc->detail, sizeof(fc->detail),
			 "the helper gave no answer within %d ms",
			 FORKCHECK_TIMEOUT_MS);
		return;
	}
	if (first == 0x0f) {
		snprintf(fc->detail, sizeof(fc->detail),
			 "the probe was not in place in the helper");
		return;
	}
	if (WIFSIGNALED(st)) {
		const char *sig = sigabbrev_np(WTERMSIG(st));

		fc->result = FORKCHECK_PROBLEM;
		/* sigabbrev_np() leaves out the "SIG". */
		snprintf(fc->detail, sizeof(fc->detail),
			 "the child was killed by SIG%s", sig ? sig : "?");
		return;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		fc->result = FORKCHECK_FINE;
		snprintf(fc->detail, sizeof(fc->detail),
			 "the child exited 0 (probe %s)",
			 first == 0xe8 ? "optimized into a call" : "left an int3");
		return;
	}
	snprintf(fc->detail, sizeof(fc->detail),
		 "the child ended with wait status 0x%x", (unsigned int)st);
}

/* Run the test now; fc->result is UNKNOWN when it could not tell. */
static void forkcheck_run(struct forkcheck *fc)
{
	struct timespec deadline;
	int prog = -1, ev = -1, go = -1, rep = -1, st;
	char buf[64] = "";
	uint64_t off;
	pid_t pid;

	fc->result = FORKCHECK_UNKNOWN;
	fc->cached = false;
	if (selftest__file_offset((const void *)forkcheck_nop5, &off)) {
		snprintf(fc->detail, sizeof(fc->detail),
			 "cannot find the test function in /proc/self/maps");
		return;
	}
	prog = tiny_prog_load();
	if (prog < 0) {
		snprintf(fc->detail, sizeof(fc->detail),
			 "loading the test's BPF program: %s", strerror(errno));
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += FORKCHECK_TIMEOUT_MS / 1000;
	pid = helper_start(&go, &rep);
	if (pid < 0) {
		snprintf(fc->detail, sizeof(fc->detail),
			 "starting the helper: %s", strerror(errno));
		close(prog);
		return;
	}
	if (read_until(rep, buf, sizeof(buf), 1, &deadline) != 1 || buf[0] != 'r') {
		snprintf(fc->detail, sizeof(fc->detail), "the helper did not start");
		goto out;
	}
	ev = uprobe_open(pid, off, prog);
	if (ev < 0) {
		snprintf(fc->detail, sizeof(fc->detail),
			 "attaching the test's uprobe: %s", strerror(errno));
		goto out;
	}
	if (write(go, "g", 1) != 1) {
		snprintf(fc->detail, sizeof(fc->detail), "the helper went away");
		goto out;
	}
	read_until(rep, buf, sizeof(buf), sizeof(buf), &deadline);
	verdict(buf, fc);
out:
	/* Whatever it did: the helper and its child end here. */
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (ev >= 0)
		close(ev);
	close(prog);
	close(go);
	close(rep);
}

/* ---- the per-boot cache -------------------------------------------------- */

#define CACHE_MAGIC	"sds-bpf forkcheck 1"

static const char *const result_names[] = {
	[FORKCHECK_FINE] = "fine",
	[FORKCHECK_PROBLEM] = "problem",
	[FORKCHECK_UNKNOWN] = "unknown",
};

/*
 * "sds-bpf forkcheck 1\nboot_id B\nresult R\ndetail D\n": true when it is
 * whole, of boot @boot, and a definite answer.
 */
static bool cache_read(const char *path, const char *boot,
		       struct forkcheck *fc)
{
	char buf[SELFTEST_CACHE_MAX + 1], *line, *save = NULL;
	bool magic = false, same_boot = false, have_result = false;

	if (selftest__cache_slurp(path, buf))
		return false;
	fc->detail[0] = '\0';
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(line, CACHE_MAGIC)) {
			magic = true;
		} else if (!strncmp(line, "boot_id ", 8)) {
			same_boot = !strcmp(line + 8, boot);
		} else if (!strcmp(line, "result fine")) {
			fc->result = FORKCHECK_FINE;
			have_result = true;
		} else if (!strcmp(line, "result problem")) {
			fc->result = FORKCHECK_PROBLEM;
			have_result = true;
		} else if (!strncmp(line, "detail ", 7)) {
			snprintf(fc->detail, sizeof(fc->detail), "%s", line + 7);
		}
	}
	fc->cached = true;
	return magic && same_boot && have_result;
}

/* Write the cache under a temp name (O_EXCL) and rename it into place. */
static void cache_write(const char *path, const char *boot,
			const struct forkcheck *fc)
{
	char text[SELFTEST_CACHE_MAX];
	int n;

	n = snprintf(text, sizeof(text), CACHE_MAGIC "\nboot_id %s\nresult %s\ndetail %s\n",
		     boot, result_names[fc->result], fc->detail);
	if (n <= 0 || n >= (int)sizeof(text))
		return;
	selftest__cache_write(path, text, (size_t)n);
}

void forkcheck__get(const char *run_dir, struct forkcheck *fc)
{
	char path[PATH_MAX], boot[SELFTEST_BOOT_ID_LEN + 1];
	bool can_cache;

	memset(fc, 0, sizeof(*fc));
	can_cache = !selftest__boot_id(boot) &&
		    snprintf(path, sizeof(path), "%s/" FORKCHECK_FILE, run_dir) <
		    (int)sizeof(path);
	if (can_cache && cache_read(path, boot, fc))
		return;
	forkcheck_run(fc);
	/* "Unknown" may be passing trouble: try again next time. */
	if (can_cache && fc->result != FORKCHECK_UNKNOWN)
		cache_write(path, boot, fc);
}

void forkcheck__describe(const struct forkcheck *fc, const char *run_dir,
			 char *out, size_t outlen)
{
	const char *how = fc->cached ? "of this boot, cached in" : "run now, cached in";

	switch (fc->result) {
	case FORKCHECK_FINE:
		snprintf(out, outlen,
			 "fork check: this kernel keeps children forked after a nop5 probe fired (self-test %s %s/%s: %s)",
			 how, run_dir, FORKCHECK_FILE, fc->detail);
		break;
	case FORKCHECK_PROBLEM:
		snprintf(out, outlen,
			 "fork check: this kernel kills children forked (without exec) after a nop5 probe fired (self-test %s %s/%s: %s)",
			 how, run_dir, FORKCHECK_FILE, fc->detail);
		break;
	case FORKCHECK_UNKNOWN:
		snprintf(out, outlen,
			 "fork check: could not tell whether this kernel kills children forked after a nop5 probe fired (%s): assuming it does",
			 fc->detail);
		break;
	}
}

/* ---- where the probes of nop5 functions go ---------------------------------- */

/*
 * Fork safety: Linux 6.18 turns a uprobe on a 5-byte NOP into a call to a
 * trampoline page that fork() does not copy, so a child forked after the
 * probe fired dies at its first call of the function.  The NOP changes
 * nothing, so the probe can sit on the next instruction instead: slower
 * (emulated or stepped), but a forking service keeps its children.
 */
static void site_past_nop5(struct probe_point *p)
{
	unsigned int skip = p->site.skip + 5;

	if (p->fn.code_len <= skip)
		return;
	site_classify(p->fn.code + skip, p->fn.code_len - skip,
		      p->fn.vaddr + skip, &p->site);
	p->site.skip += skip;
}

/*
 * Where the function points starting with a nop5 get their probe: on
 * the NOP where the kernel keeps forked children (the fork self-test),
 * or with :site=nop5; past it where the kernel kills them, or with
 * --fork-safe.  The self-test runs only when such a point exists.
 */
/* Whether @p's site, or one of its clones' (point/clones.h), is a nop5. */
static bool point_on_nop5(const struct probe_point *p)
{
	int k;

	for (k = 0; k < p->nclones; k++)
		if (p->clones[k].site.kind == SITE_NOP5)
			return true;
	return p->site.kind == SITE_NOP5;
}

/* Every nop5 site of @p, its clones' too, moved past the NOP. */
static void point_past_nop5(struct probe_point *p)
{
	int k;

	for (k = 0; k < p->nclones; k++)
		if (p->clones[k].site.kind == SITE_NOP5)
			site_past_nop5(&p->clones[k]);
	if (p->site.kind == SITE_NOP5)
		site_past_nop5(p);
}

bool forkcheck__place(struct probe_point *pts, int n, bool fork_safe,
		      const char *run_dir, struct forkcheck *fc)
{
	bool kills;
	int i;

	for (i = 0; i < n; i++)
		if (point_on_nop5(&pts[i]) &&
		    (!fork_safe ||
		     pts[i].spec.site_policy == SITE_POLICY_NOP5))
			break;
	memset(fc, 0, sizeof(*fc));
	if (i == n) {
		/* No point needs the answer: none on a nop5, or --fork-safe. */
		for (i = 0; i < n; i++)
			point_past_nop5(&pts[i]);
		return false;
	}
	forkcheck__get(run_dir, fc);
	kills = forkcheck__kills(fc);
	for (i = 0; i < n; i++) {
		struct probe_point *p = &pts[i];

		if (!point_on_nop5(p))
			continue;
		if (p->spec.site_policy != SITE_POLICY_NOP5) {
			if (kills || fork_safe)
				point_past_nop5(p);
			continue;
		}
		if (kills)
			fprintf(stderr, "sds-bpf: warning: point '%s' has :site=nop5: this kernel kills a child forked (without exec) after the probe fired, at its next call of %s\n",
				p->spec.name, p->spec.symbol);
	}
	return true;
}
