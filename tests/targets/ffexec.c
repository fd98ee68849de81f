/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * ffexec PORT N - what fftarget's fetch_exec() execs from inside that
 * point (tests/failfast/t_ffexec.py): another program, inside no point.
 * It connects N times to 127.0.0.1:PORT and prints one line as fftarget
 * does, "res OUTCOME=COUNT ... med MED max MAX", then exits 0.
 *
 * The connects run on a stack mapped at a fixed low address, below any
 * stack the exec'ing program had: fail-fast takes a frame below the stack
 * pointer for a call that is over (bpf/failfast.bpf.c), so a frame that
 * outlived the exec would count here whatever addresses ASLR chose.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define LOW_STACK	((void *)0x10000000UL)
#define LOW_STACK_SIZE	(1 << 20)
#define MAX_CALLS	100000

static int port, n;
static int outcome[4096];
static unsigned long long longest, total;
static ucontext_t main_uc, low_uc;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int connect_once(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return -errno;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		r = -errno;
	close(fd);
	return r;
}

/* Runs on the low stack. */
static void connects(void)
{
	int i, r;

	for (i = 0; i < n; i++) {
		unsigned long long t0 = now_ns(), t;

		r = connect_once();
		t = now_ns() - t0;
		total += t;
		if (t > longest)
			longest = t;
		outcome[r < 0 && -r < 4096 ? -r : 0]++;
	}
}

int main(int argc, char **argv)
{
	void *stack;
	int e;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3 || (port = atoi(argv[1])) <= 0 ||
	    (n = atoi(argv[2])) < 1 || n > MAX_CALLS) {
		printf("error: usage: ffexec PORT N\n");
		return 2;
	}
	stack = mmap(LOW_STACK, LOW_STACK_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (stack != LOW_STACK) {
		printf("error: mmap of the low stack: %s\n", strerror(errno));
		return 1;
	}
	getcontext(&low_uc);
	low_uc.uc_stack.ss_sp = stack;
	low_uc.uc_stack.ss_size = LOW_STACK_SIZE;
	low_uc.uc_link = &main_uc;
	makecontext(&low_uc, connects, 0);
	if (swapcontext(&main_uc, &low_uc)) {
		printf("error: swapcontext: %s\n", strerror(errno));
		return 1;
	}
	/* The median is not kept here: the mean stands in for it. */
	printf("res");
	for (e = 0; e < 4096; e++)
		if (outcome[e])
			printf(" %s=%d", e ? strerrorname_np(e) : "OK", outcome[e]);
	printf(" med %llu max %llu\n", total / n, longest);
	return 0;
}
