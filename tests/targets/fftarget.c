/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A target program for tests/failfast (issue 15): an ordinary program,
 * no libsds, whose functions depend on a server and on files.  Driven
 * line by line on stdin; prints "ready" once, then one line per command:
 *
 *   fetch PORT N      N calls of fetch(): connect to 127.0.0.1:PORT, send a
 *                     request, wait for a reply (2 s receive timeout)
 *   send PORT N       N times: connect outside any point, then call
 *                     fetch_send() on the connected socket (send only)
 *   connect PORT N    N connects to PORT outside fetch() (same thread)
 *   file PATH N       N calls of fetch_file(): open PATH, read, close
 *   open PATH N       N opens of PATH outside fetch_file()
 *   udp PORT N        N calls of fetch_udp(): one datagram by sendto() on
 *                     an unconnected UDP socket to 127.0.0.1:PORT
 *   escape PORT N     N times: call fetch_escape() from deep in the stack,
 *                     which longjmps out of itself (its return never
 *                     comes), then connect from the shallow caller
 *   exec PORT N       call fetch_exec(): N connects to PORT inside it, their
 *                     line, then execve() of ffexec (beside this program),
 *                     which connects N times more and prints its own line
 *                     (fetch_exec's return never comes; the process ends)
 *   reexec PORT N     the same, but the exec is of this program again, which
 *                     prints "ready" and reads the same stdin
 *   lowfetch PORT N   N calls of fetch(), on a stack mapped at a fixed low
 *                     address: below any frame an exec'd-over program left
 *   quit              exit 0
 *
 * Each prints "res NAME=COUNT ... med MED max MAX": the calls' outcomes
 * (OK or the errno's name; fetch's receive timeout is EAGAIN) and the
 * median and longest call in ns.  fetch(), fetch_send(), fetch_file() and
 * fetch_udp() return 0 or -errno (a point's err=neg counts the failures).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define TARGET_FN __attribute__((noipa, used))
#define MAX_CALLS 100000

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int sock_to(int port, int *fdp)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 2 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = -errno;

		close(fd);
		return e;
	}
	*fdp = fd;
	return 0;
}

/* Send one request on @fd. */
TARGET_FN int fetch_send(int fd)
{
	asm volatile("");
	if (send(fd, "GET\n", 4, MSG_NOSIGNAL) != 4)
		return -errno;
	return 0;
}

/* One request to the server at @port: connect, send, wait for the reply. */
TARGET_FN int fetch(int port)
{
	char buf[64];
	int fd, r;

	r = sock_to(port, &fd);
	if (r)
		return r;
	if (send(fd, "GET\n", 4, MSG_NOSIGNAL) != 4)
		r = -errno;
	else if (recv(fd, buf, sizeof(buf), 0) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* Read the file at @path. */
TARGET_FN int fetch_file(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (read(fd, buf, sizeof(buf)) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* One datagram to 127.0.0.1:@port from an unconnected UDP socket. */
TARGET_FN int fetch_udp(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return -errno;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (sendto(fd, "GET\n", 4, 0, (struct sockaddr *)&a, sizeof(a)) != 4)
		r = -errno;
	close(fd);
	return r;
}

static int plain_connect(int port)
{
	int fd, r = sock_to(port, &fd);

	if (!r)
		close(fd);
	return r;
}

static int plain_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int send_outside(int port)
{
	int fd, r = sock_to(port, &fd);

	if (r)
		return r;
	r = fetch_send(fd);
	close(fd);
	return r;
}

static jmp_buf escape_env;

/* Leaves by longjmp: a probe sees its entry and never its return. */
TARGET_FN int fetch_escape(void)
{
	asm volatile("");
	longjmp(escape_env, 1);
}

/* @depth calls deep, each with a page of stack, then fetch_escape(). */
TARGET_FN int escape_deep(int depth)
{
	volatile char pad[4096];

	pad[0] = (char)depth;
	if (depth > 0)
		return escape_deep(depth - 1) + pad[0];
	return fetch_escape();
}

static int escape_then_connect(int port)
{
	if (!setjmp(escape_env))
		escape_deep(4);
	return plain_connect(port);
}

static unsigned long long took[MAX_CALLS];
static int outcome[4096];
static void report(int n);

/*
 * @n connects to @port from inside this point, reported, then the thread
 * execs ffexec PORT N (or, if @self, this program): this call never
 * returns, so the thread's frame of it is still there in the program
 * exec'd.  Returns only if the exec fails.
 */
TARGET_FN int fetch_exec(int port, int n, int self)
{
	char helper[4096], ports[16], ns[16];
	char *argv[] = { helper, ports, ns, NULL };
	ssize_t len;
	char *slash;
	int i, r;

	for (i = 0; i < n; i++) {
		unsigned long long t0 = now_ns();

		r = plain_connect(port);
		took[i] = now_ns() - t0;
		outcome[r < 0 && -r < 4096 ? -r : 0]++;
	}
	report(n);
	len = readlink("/proc/self/exe", helper, sizeof(helper) - 8);
	if (len < 0)
		return -errno;
	helper[len] = 0;
	if (self) {
		argv[1] = NULL;
	} else {
		slash = strrchr(helper, '/');
		strcpy(slash ? slash + 1 : helper, "ffexec");
		snprintf(ports, sizeof(ports), "%d", port);
		snprintf(ns, sizeof(ns), "%d", n);
	}
	execve(helper, argv, environ);
	return -errno;
}

#define LOW_STACK	((void *)0x10000000UL)
#define LOW_STACK_SIZE	(1 << 20)

static ucontext_t main_uc, low_uc;
static int low_port, low_r;

static void low_fetch(void)
{
	low_r = fetch(low_port);
}

/*
 * fetch(@port) on a stack at a fixed low address: its entry is below every
 * frame the program exec'd over left, whatever addresses ASLR chose, so
 * the sp-based unwinding of sds.bpf.c never pops such a frame by itself.
 */
static int fetch_low(int port)
{
	static void *stack;

	if (!stack) {
		stack = mmap(LOW_STACK, LOW_STACK_SIZE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			     -1, 0);
		if (stack != LOW_STACK) {
			stack = NULL;
			return -ENOMEM;
		}
	}
	getcontext(&low_uc);
	low_uc.uc_stack.ss_sp = stack;
	low_uc.uc_stack.ss_size = LOW_STACK_SIZE;
	low_uc.uc_link = &main_uc;
	makecontext(&low_uc, low_fetch, 0);
	low_port = port;
	if (swapcontext(&main_uc, &low_uc))
		return -errno;
	return low_r;
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static void report(int n)
{
	int e;

	printf("res");
	for (e = 0; e < 4096; e++) {
		if (!outcome[e])
			continue;
		printf(" %s=%d", e ? strerrorname_np(e) : "OK", outcome[e]);
		outcome[e] = 0;
	}
	qsort(took, n, sizeof(took[0]), cmp_ull);
	printf(" med %llu max %llu\n", n ? took[n / 2] : 0, n ? took[n - 1] : 0);
}

int main(void)
{
	char line[4200], cmd[16], arg[4096];
	int n, i, r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "quit", 4))
			return 0;
		if (sscanf(line, "%15s %4095s %d", cmd, arg, &n) != 3 ||
		    n < 1 || n > MAX_CALLS) {
			printf("error: %s", line);
			continue;
		}
		if (!strcmp(cmd, "exec") || !strcmp(cmd, "reexec")) {
			r = fetch_exec(atoi(arg), n, cmd[0] == 'r');
			printf("error: exec: %s\n", strerror(-r));
			continue;
		}
		for (i = 0; i < n; i++) {
			unsigned long long t0 = now_ns();

			if (!strcmp(cmd, "fetch"))
				r = fetch(atoi(arg));
			else if (!strcmp(cmd, "send"))
				r = send_outside(atoi(arg));
			else if (!strcmp(cmd, "connect"))
				r = plain_connect(atoi(arg));
			else if (!strcmp(cmd, "file"))
				r = fetch_file(arg);
			else if (!strcmp(cmd, "open"))
				r = plain_open(arg);
			else if (!strcmp(cmd, "udp"))
				r = fetch_udp(atoi(arg));
			else if (!strcmp(cmd, "lowfetch"))
				r = fetch_low(atoi(arg));
			else if (!strcmp(cmd, "escape"))
				r = escape_then_connect(atoi(arg));
			else
				break;
			took[i] = now_ns() - t0;
			outcome[r < 0 && -r < 4096 ? -r : 0]++;
		}
		if (i < n) {
			printf("error: %s", line);
			continue;
		}
		report(n);
	}
	return 0;
}
