/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The fork self-test (issue 9, docs/DESIGN.md §3): does this kernel kill a
 * child forked (without exec) after a uprobe on a 5-byte NOP fired?
 * Linux 6.18 does (the optimized probe is a call into a trampoline page
 * that fork() does not copy).  Found out by trying, once per boot, and
 * cached in the run directory.
 */
#ifndef SDS_FORKCHECK_H
#define SDS_FORKCHECK_H

#include <stdbool.h>
#include <stddef.h>

#define FORKCHECK_FILE	".forkcheck"	/* the cache, in the run directory */
#define FORKCHECK_CMD	"__forkcheck"	/* the helper's hidden subcommand */

enum forkcheck_result {
	FORKCHECK_FINE,		/* the child survived: nop5 probes are safe */
	FORKCHECK_PROBLEM,	/* the child died: the kernel has the bug */
	FORKCHECK_UNKNOWN,	/* the test could not tell: treated as PROBLEM */
};

struct forkcheck {
	enum forkcheck_result result;	/* what the test found */
	bool cached;			/* read from this boot's cache, not run now */
	char detail[160];		/* what happened, e.g. "child killed by SIGSEGV" */
};

/*
 * This boot's answer: from @run_dir's cache when it holds one for this
 * boot_id, else by running the test (and caching a definite answer).
 * Never fails: a test that cannot tell says FORKCHECK_UNKNOWN.
 */
void forkcheck__get(const char *run_dir, struct forkcheck *fc);

/* Does the kernel (as far as we know) kill such children? */
static inline bool forkcheck__kills(const struct forkcheck *fc)
{
	return fc->result != FORKCHECK_FINE;
}

/* One line for `attach`'s output, without newline. */
void forkcheck__describe(const struct forkcheck *fc, const char *run_dir,
			 char *out, size_t outlen);

struct probe_point;

/*
 * Place the probes of the function points @pts[0..n) that start with a
 * 5-byte NOP: past it where the kernel kills forked children (asking
 * forkcheck__get() with @run_dir, into @fc) or with @fork_safe, on it
 * where the kernel keeps them; a point with :site=nop5 stays on it, with
 * a one-line warning on stderr where the kernel kills.  Returns whether
 * the self-test was asked (only when some point needs the answer).
 */
bool forkcheck__place(struct probe_point *pts, int n, bool fork_safe,
		      const char *run_dir, struct forkcheck *fc);

/* `sds-bpf __forkcheck`: the helper process (stdin: go, stdout: report). */
int forkcheck__helper_main(void);

#endif /* SDS_FORKCHECK_H */
