/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A target program for tests/delaydrill (docs/DELAY.md): an ordinary
 * program, no libsds, whose fetch() connects to a server, sends one
 * request and reads the answer.  Driven line by line on stdin; prints
 * "ready" once, then one line per command:
 *
 *   fetch ADDR PORT N   N calls of fetch() to ADDR:PORT (IPv4), one
 *                       connection each
 *   plain ADDR PORT N   the same exchange N times outside fetch()
 *   other ADDR PORT N   N calls of fetch_other(): the same exchange inside
 *                       another function (a point without failfast=)
 *   hold ADDR PORT 1    fetch_hold(): connect inside it and keep the socket
 *                       (the one held before is closed)
 *   use ADDR PORT N     N request-and-answer exchanges on the held socket,
 *                       outside any function point
 *   pooled ADDR PORT N  N calls of fetch_pooled(): one exchange each on the
 *                       held socket, inside that function (a connection
 *                       pool's call: no connect; tests/deps)
 *   quit                exit 0
 *
 * Each prints "res NAME=COUNT ... ns T1,T2,...": the calls' outcomes (OK
 * or the errno's name; a reply waits at most 5 s: EAGAIN) and each
 * call's time in ns, in order.  fetch() returns 0 or -errno.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TARGET_FN __attribute__((noipa, used))
#define MAX_CALLS 10000

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Connect to @addr:@port, send a request, read the answer. */
static int exchange(const char *addr, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 5 };
	char buf[64];
	int fd, r = 0;

	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1)
		return -EINVAL;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		r = -errno;
	else if (send(fd, "GET\n", 4, MSG_NOSIGNAL) != 4)
		r = -errno;
	else if (recv(fd, buf, sizeof(buf), 0) <= 0)
		r = errno ? -errno : -ECONNRESET;
	close(fd);
	return r;
}

/* One request to the server: the drilled function. */
TARGET_FN int fetch(const char *addr, int port)
{
	asm volatile("");
	return exchange(addr, port);
}

static int held = -1;

/* One request and its answer on connected socket @fd. */
static int ask(int fd)
{
	char buf[64];

	if (send(fd, "GET\n", 4, MSG_NOSIGNAL) != 4)
		return -errno;
	if (recv(fd, buf, sizeof(buf), 0) <= 0)
		return errno ? -errno : -ECONNRESET;
	return 0;
}

/* Connect to @addr:@port and keep the socket for `use`. */
TARGET_FN int fetch_hold(const char *addr, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 5 };
	int fd;

	asm volatile("");
	if (held >= 0)
		close(held);
	held = -1;
	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1)
		return -EINVAL;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = -errno;

		close(fd);
		return e;
	}
	held = fd;
	return 0;
}

/* One exchange on the held socket, connected before: a pooled call. */
TARGET_FN int fetch_pooled(void)
{
	asm volatile("");
	return held < 0 ? -EINVAL : ask(held);
}

/* The same exchange in another function. */
TARGET_FN int fetch_other(const char *addr, int port)
{
	asm volatile("");
	return exchange(addr, port);
}

static const char *outcome(int r)
{
	switch (-r) {
	case 0: return "OK";
	case EAGAIN: return "EAGAIN";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ECONNRESET: return "ECONNRESET";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EINVAL: return "EINVAL";
	default: return "OTHER";
	}
}

int main(void)
{
	static unsigned long long t[MAX_CALLS];
	char line[256], cmd[16], addr[64];
	int port, n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		const char *names[8];
		int counts[8], nk = 0, i, k;

		if (sscanf(line, "%15s", cmd) == 1 && !strcmp(cmd, "quit"))
			return 0;
		if (sscanf(line, "%15s %63s %d %d", cmd, addr, &port, &n) != 4 ||
		    n < 1 || n > MAX_CALLS ||
		    (strcmp(cmd, "fetch") && strcmp(cmd, "plain") &&
		     strcmp(cmd, "other") && strcmp(cmd, "hold") &&
		     strcmp(cmd, "use") && strcmp(cmd, "pooled"))) {
			printf("err bad command\n");
			continue;
		}
		for (i = 0; i < n; i++) {
			unsigned long long t0 = now_ns();
			int r = !strcmp(cmd, "fetch") ? fetch(addr, port) :
				!strcmp(cmd, "other") ? fetch_other(addr, port) :
				!strcmp(cmd, "hold") ? fetch_hold(addr, port) :
				!strcmp(cmd, "use") ? (held < 0 ? -EINVAL : ask(held)) :
				!strcmp(cmd, "pooled") ? fetch_pooled() :
				exchange(addr, port);
			const char *o = outcome(r);

			t[i] = now_ns() - t0;
			for (k = 0; k < nk && strcmp(names[k], o); k++)
				;
			if (k == nk && nk < 8) {
				names[nk] = o;
				counts[nk++] = 0;
			}
			if (k < nk)
				counts[k]++;
		}
		printf("res");
		for (k = 0; k < nk; k++)
			printf(" %s=%d", names[k], counts[k]);
		printf(" ns ");
		for (i = 0; i < n; i++)
			printf("%s%llu", i ? "," : "", t[i]);
		printf("\n");
	}
	return 0;
}
