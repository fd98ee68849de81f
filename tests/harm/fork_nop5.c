// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * fork_nop5 - a prefork server in miniature, for tests/harm/t_fork.py.
 * Built with -pg -mfentry -mnop-mcount, non-PIE (harm.mk): work() starts
 * with a 5-byte NOP, the cheapest probe site and the one Linux 6.18 turns
 * into a call that fork() breaks.
 *
 * Prints "ready PID", then for each line on stdin:
 *   run N M   call work() N times, fork (no exec), the child calls work()
 *             M times and exits 0; prints "parent N child exit C" or
 *             "parent N child signal S", then "done"
 * EOF: exit 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

/*
 * With a frame pointer the instruction after the NOP is `push %rbp`, an
 * emulated site (~1 us), which is where the probe goes fork-safe.
 */
__attribute__((noipa, optimize("no-omit-frame-pointer"))) long work(long i)
{
	__asm__ volatile("" ::: "memory");
	sink += i;
	return 0;
}

static void calls(long n)
{
	long i;

	for (i = 0; i < n; i++)
		work(i);
}

static void run(long n, long m)
{
	pid_t c;
	int st;

	calls(n);
	fflush(stdout);
	c = fork();
	if (c < 0) {
		printf("error fork\n");
		return;
	}
	if (c == 0) {
		calls(m);
		_exit(0);
	}
	if (waitpid(c, &st, 0) != c) {
		printf("error waitpid\n");
		return;
	}
	if (WIFSIGNALED(st))
		printf("parent %ld child signal %d\n", n, WTERMSIG(st));
	else
		printf("parent %ld child exit %d\n", n, WEXITSTATUS(st));
}

int main(void)
{
	struct rlimit no_core = { 0, 0 };
	char line[128];
	long n, m;

	/* A child killed on purpose leaves no core file behind. */
	setrlimit(RLIMIT_CORE, &no_core);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "run %ld %ld", &n, &m) == 2)
			run(n, m);
		else
			printf("error bad command\n");
		printf("done\n");
	}
	return 0;
}
