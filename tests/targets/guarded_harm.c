// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * guarded_harm.c - the commands of the guarded target program
 * (guarded.c) that the hostile tests use on libsds itself: the bytes of
 * its probe sites, seccomp filters that take away its ways of writing
 * text, and a child forked before its parent's probes go
 * (tests/hostile/t_libsds.py).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "guarded.h"

/* "sites B B B B" into @buf: each site's first 5 bytes in hex. */
void guarded_sites_line(char *buf, size_t len)
{
	void (*const sites[])(unsigned int, unsigned long long) = {
		sds__site_enter, sds__site_exit, sds__site_exception,
		sds__site_downgrade,
	};
	size_t i, j, n;

	n = snprintf(buf, len, "sites");
	for (i = 0; i < 4 && n < len; i++) {
		const volatile unsigned char *b =
			(const volatile unsigned char *)sites[i];

		n += snprintf(buf + n, len - n, " ");
		for (j = 0; j < 5 && n < len; j++)
			n += snprintf(buf + n, len - n, "%02x",
				      b ? b[j] : 0);
	}
}

int guarded_seccomp(char **what, int n)
{
	struct sock_filter f[16];
	struct sock_fprog prog;
	int k = 0, i;

#define STMT(c, kk)		((struct sock_filter)BPF_STMT((c), (kk)))
#define JUMP(c, kk, t, e)	((struct sock_filter)BPF_JUMP((c), (kk), (t), (e)))
	f[k++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (i = 0; i < n; i++) {
		if (!strcmp(what[i], "pwrite")) {
			f[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pwrite64, 0, 1);
			f[k++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
		} else if (!strcmp(what[i], "mprotect_wx")) {
			/* nr == mprotect && (prot & (W|X)) == W|X: EPERM */
			f[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 0, 5);
			f[k++] = STMT(BPF_LD | BPF_W | BPF_ABS,
				      offsetof(struct seccomp_data, args[2]));
			f[k++] = STMT(BPF_ALU | BPF_AND | BPF_K,
				      PROT_WRITE | PROT_EXEC);
			f[k++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K,
				      PROT_WRITE | PROT_EXEC, 0, 1);
			f[k++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
			/* reload nr for the rules after this one */
			f[k++] = STMT(BPF_LD | BPF_W | BPF_ABS,
				      offsetof(struct seccomp_data, nr));
		} else {
			return -1;
		}
	}
	f[k++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
#undef STMT
#undef JUMP
	prog.len = (unsigned short)k;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return -1;
	return 0;
}

static pid_t paused_pid = -1;
static int paused_go = -1, paused_out = -1;

/* The paused child, once told to go (fork_pause, fork_resume). */
static void paused_child(int go, int out)
{
	void (*const sites[])(unsigned int, unsigned long long) = {
		sds__site_enter, sds__site_exit, sds__site_exception,
		sds__site_downgrade,
	};
	struct { char sites[64]; long r[3]; } rep;
	struct sds_point *p;
	long n, i, args[2];

	memset(&rep, 0, sizeof(rep));
	if (read(go, args, sizeof(args)) != sizeof(args))
		_exit(1);
	p = (struct sds_point *)(uintptr_t)args[0];
	n = args[1];
	guarded_sites_line(rep.sites, sizeof(rep.sites));
	/*
	 * The instructions themselves: each site returns.  Not one that
	 * still calls the parent's trampoline: libsds never calls those
	 * (its guards are off in this child), and neither do we.
	 */
	for (i = 0; i < 4; i++)
		if (sites[i] && *(const volatile unsigned char *)sites[i] != 0xe8)
			sites[i](0, 0);
	for (i = 0; i < n; i++) {
		if (guarded_call(p, 0, 0))
			rep.r[0]++;
		else
			rep.r[1]++;
	}
	if (write(out, &rep, sizeof(rep)) != sizeof(rep))
		_exit(1);
	_exit(0);
}

int guarded_fork_pause(void)
{
	int go[2], out[2];

	if (paused_pid > 0 || pipe(go))
		return -1;
	if (pipe(out)) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	fflush(stdout);
	paused_pid = fork();
	if (paused_pid < 0)
		return -1;
	if (paused_pid == 0) {
		close(go[1]);
		close(out[0]);
		paused_child(go[0], out[1]);
	}
	close(go[0]);
	close(out[1]);
	paused_go = go[1];
	paused_out = out[0];
	printf("child %ld\n", (long)paused_pid);
	return 0;
}

int guarded_fork_resume(struct sds_point *p, long n)
{
	struct { char sites[64]; long r[3]; } rep;
	long args[2] = { (long)(uintptr_t)p, n };
	pid_t pid = paused_pid;
	int st, ok;

	if (pid <= 0 || n < 0)
		return -1;
	ok = write(paused_go, args, sizeof(args)) == sizeof(args) &&
	     read(paused_out, &rep, sizeof(rep)) == sizeof(rep);
	close(paused_go);
	close(paused_out);
	paused_pid = -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) || !ok) {
		printf("error: child %ld %s %d\n", (long)pid,
		       WIFSIGNALED(st) ? "killed by signal" : "exit status",
		       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		return 1;
	}
	rep.sites[sizeof(rep.sites) - 1] = '\0';
	printf("%s\n", rep.sites);
	printf("passed %ld downgraded %ld failed %ld\n", rep.r[0], rep.r[1],
	       rep.r[2]);
	return 0;
}

