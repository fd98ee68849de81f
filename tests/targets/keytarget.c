// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * keytarget - calls of keyed functions for tests/keys (docs/KEYS.md), one
 * mode a run, every count exact:
 *
 *   keytarget users S KIND  for S seconds: each second every user 1..1000
 *                           but 7 called 50 times, user 7 5,000 times,
 *                           spread over 50 rounds of 20 ms; KIND int:
 *                           handle(user), str: handle_str("user-N"),
 *                           buf: handle_buf(&user, 4) (4 bytes, shown as
 *                           hex).  Users whose id is a multiple of 10
 *                           fail (handle* return -1).
 *   keytarget bad N         handle_str() and handle_buf() N times each
 *                           with a pointer nobody can read (0x10)
 *   keytarget many N        handle_many(k) once for each k in 1..N
 *   keytarget file PATH     handle_zipf(k) for each 8-byte k in PATH
 *   keytarget block         handle_ff(1) and handle_ff(2), each connecting
 *                           10 UDP sockets: prints the connects that failed
 *
 * The functions read nothing through their pointers: an unreadable key
 * is the probe's business only.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")

__attribute__((noinline)) int handle(long user)
{
	KEEP(user);
	return user % 10 == 0 ? -1 : 0;
}

__attribute__((noinline)) int handle_str(const char *name, long user)
{
	KEEP(name);
	return user % 10 == 0 ? -1 : 0;
}

__attribute__((noinline)) int handle_buf(const void *buf, size_t len, long user)
{
	KEEP(buf);
	KEEP(len);
	return user % 10 == 0 ? -1 : 0;
}

__attribute__((noinline)) int handle_many(long k)
{
	KEEP(k);
	return 0;
}

__attribute__((noinline)) int handle_zipf(long k)
{
	KEEP(k);
	return 0;
}

/*
 * A :failfast=connect point: its connects (a UDP socket's to the
 * loopback's discard port, which sends nothing) fail while its key is
 * blocked.
 */
__attribute__((noinline)) int handle_ff(long k)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int i, failed = 0;

	for (i = 0; i < 10; i++) {
		int fd = socket(AF_INET, SOCK_DGRAM, 0);

		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
			failed++;
		if (fd >= 0)
			close(fd);
	}
	KEEP(k);
	return failed;
}

static void call(const char *kind, long u)
{
	char name[32];
	uint32_t b = (uint32_t)u;

	if (!strcmp(kind, "int")) {
		handle(u);
	} else if (!strcmp(kind, "str")) {
		snprintf(name, sizeof(name), "user-%ld", u);
		handle_str(name, u);
	} else {
		handle_buf(&b, sizeof(b), u);
	}
}

static void sleep_until(const struct timespec *t)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL) == EINTR)
		;
}

static void users(long secs, const char *kind)
{
	struct timespec t;
	long s, r, u, i;

	clock_gettime(CLOCK_MONOTONIC, &t);
	for (s = 0; s < secs; s++) {
		for (r = 0; r < 50; r++) {
			for (u = 1; u <= 1000; u++)
				if (u != 7)
					call(kind, u);
			for (i = 0; i < 100; i++)
				call(kind, 7);
			t.tv_nsec += 20000000;
			if (t.tv_nsec >= 1000000000) {
				t.tv_nsec -= 1000000000;
				t.tv_sec++;
			}
			sleep_until(&t);
		}
	}
}

int main(int argc, char **argv)
{
	long n, i;

	if (argc < 2)
		goto usage;
	if (!strcmp(argv[1], "users") && argc == 4) {
		users(atol(argv[2]), argv[3]);
	} else if (!strcmp(argv[1], "bad") && argc == 3) {
		n = atol(argv[2]);
		for (i = 0; i < n; i++) {
			handle_str((const char *)0x10, 1);
			handle_buf((const void *)0x10, 8, 1);
		}
	} else if (!strcmp(argv[1], "many") && argc == 3) {
		n = atol(argv[2]);
		for (i = 1; i <= n; i++)
			handle_many(i);
	} else if (!strcmp(argv[1], "file") && argc == 3) {
		FILE *f = fopen(argv[2], "rb");
		int64_t k;

		if (!f)
			return perror(argv[2]), 1;
		while (fread(&k, sizeof(k), 1, f) == 1)
			handle_zipf((long)k);
		fclose(f);
	} else if (!strcmp(argv[1], "block") && argc == 2) {
		printf("key1 failed %d\n", handle_ff(1));
		printf("key2 failed %d\n", handle_ff(2));
	} else {
		goto usage;
	}
	printf("done\n");
	return 0;
usage:
	fprintf(stderr, "usage: keytarget users S int|str|buf | bad N | many N | file PATH | block\n");
	return 2;
}
