/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The TARGET of the loop tests (tests/hostile/t_loop.py): a program linked
 * with libsds whose staged copy the loader attaches to, so that it may
 * register however it runs.  Modes:
 *
 *   watch SOCK GROUP APP POINT SECONDS PERIOD_MS
 *	a guarded victim that also watches the loader's tick: registers
 *	with libsds (sds_client_open) and, on a connection of its own,
 *	by hand to map the region's header read-only; then every PERIOD_MS
 *	for SECONDS reads the header's tick age and makes one guarded call
 *	of POINT.  Prints "calls C passed P downgraded D samples S
 *	max_age_us A" (A: the oldest tick it saw, in us).
 *   idle SOCK
 *	registers by hand, prints "registered SLOT" or "error MESSAGE",
 *	then holds its session until stdin closes.
 *   points SOCK PREFIX N
 *	registers by hand, asks for points PREFIX0..PREFIX<N-1> one at a
 *	time; prints "ids I errors E" and exits.
 *   pipeline SOCK N
 *	registers by hand, sends N `point order` lines (as fast as the
 *	socket takes them, waiting 1 s at most) without reading a reply,
 *	then waits for the loader to drop it (EOF or a reset, at most 10 s);
 *	prints "dropped 1" or "dropped 0".
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include <sds.h>
#include "sds_flags.h"

void sds__site_enter(__u32 id, __u64 key);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("connect");
		exit(2);
	}
	return fd;
}

/* One reply line (blocking, 5 s at most); the first fd that came with it in *@mapfd. */
static int read_line(int fd, char *buf, size_t len, int *mapfd)
{
	char cbuf[CMSG_SPACE(4 * sizeof(int))];
	size_t got = 0;

	while (got + 1 < len) {
		struct iovec iov = { buf + got, len - 1 - got };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct pollfd pfd = { fd, POLLIN, 0 };
		struct cmsghdr *cm;
		ssize_t n;

		if (poll(&pfd, 1, 5000) != 1)
			return -1;
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
		if (n <= 0)
			return -1;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_type == SCM_RIGHTS && mapfd && *mapfd < 0)
				memcpy(mapfd, CMSG_DATA(cm), sizeof(int));
		got += n;
		buf[got] = '\0';
		if (memchr(buf, '\n', got)) {
			buf[strcspn(buf, "\n")] = '\0';
			return 0;
		}
	}
	return -1;
}

/* Register by hand: the connection, or -1 with the reply in @reply. */
static int hand_register(const char *sock, char *reply, size_t len, int *mapfd)
{
	char req[64];
	int fd = connect_to(sock);

	*mapfd = -1;
	snprintf(req, sizeof(req), "register 0x%" PRIxPTR "\n",
		 (uintptr_t)&sds__site_enter);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req) ||
	    read_line(fd, reply, len, mapfd)) {
		snprintf(reply, len, "error no reply");
		close(fd);
		return -1;
	}
	if (strstr(reply, "\"error\"") || *mapfd < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int do_watch(char **argv)
{
	const char *sock = argv[0];
	double secs = atof(argv[4]);
	long period_ms = atol(argv[5]);
	uint64_t calls = 0, passed = 0, down = 0, samples = 0, max_age = 0;
	const struct sds_flags_header *h;
	struct sds_client *c;
	struct sds_point *p;
	uint64_t t0, next;
	char reply[512];
	int fd, mapfd;

	c = sds_client_open(argv[1], argv[2]);
	p = sds_point(c, argv[3]);
	fd = hand_register(sock, reply, sizeof(reply), &mapfd);
	if (fd < 0) {
		printf("error %s\n", reply);
		return 1;
	}
	h = mmap(NULL, 4096, PROT_READ, MAP_SHARED, mapfd, 0);
	if (h == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	t0 = next = now_ns();
	while (now_ns() - t0 < (uint64_t)(secs * 1e9)) {
		uint64_t tick = __atomic_load_n(&h->tick_ns, __ATOMIC_ACQUIRE);
		uint64_t now = now_ns();
		struct timespec ts;

		if (now > tick && now - tick > max_age)
			max_age = now - tick;
		samples++;
		calls++;
		if (sds_should_downgrade(p))
			down++;
		else
			passed++;
		sds_downgrade_finally(p);
		next += period_ms * 1000000ULL;
		ts.tv_sec = next / 1000000000ULL;
		ts.tv_nsec = next % 1000000000ULL;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	printf("calls %" PRIu64 " passed %" PRIu64 " downgraded %" PRIu64
	       " samples %" PRIu64 " max_age_us %" PRIu64 "\n",
	       calls, passed, down, samples, max_age / 1000);
	sds_client_close(c);
	close(fd);
	return 0;
}

static int do_idle(char **argv)
{
	char reply[512], buf[64];
	int fd, mapfd;
	const char *slot;

	fd = hand_register(argv[0], reply, sizeof(reply), &mapfd);
	if (fd < 0) {
		printf("error %s\n", reply);
	} else {
		slot = strstr(reply, "\"slot\":");
		printf("registered %d\n", slot ? atoi(slot + 7) : -1);
	}
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}

static int do_points(char **argv)
{
	int n = atoi(argv[2]), i, ids = 0, errors = 0, fd, mapfd;
	char reply[512], req[128];

	fd = hand_register(argv[0], reply, sizeof(reply), &mapfd);
	if (fd < 0) {
		printf("error %s\n", reply);
		return 1;
	}
	for (i = 0; i < n; i++) {
		snprintf(req, sizeof(req), "point %s%d\n", argv[1], i);
		if (write(fd, req, strlen(req)) != (ssize_t)strlen(req) ||
		    read_line(fd, reply, sizeof(reply), NULL)) {
			printf("error no reply to point %d\n", i);
			return 1;
		}
		if (strstr(reply, "\"id\":"))
			ids++;
		else
			errors++;
	}
	printf("ids %d errors %d\n", ids, errors);
	return 0;
}

static int do_pipeline(char **argv)
{
	int n = atoi(argv[1]), i, fd, mapfd, dropped = 0;
	char reply[512];
	struct timeval tv = { .tv_sec = 1 };
	static char buf[12 * 4096];
	struct pollfd pfd;

	fd = hand_register(argv[0], reply, sizeof(reply), &mapfd);
	if (fd < 0) {
		printf("error %s\n", reply);
		return 1;
	}
	/* Big writes (few socket buffers), each waiting at most 1 s. */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (i = 0; i + 12 <= (int)sizeof(buf); i += 12)
		memcpy(buf + i, "point order\n", 12);
	for (i = 0; i < n; i += sizeof(buf) / 12)
		if (send(fd, buf, sizeof(buf) / 12 * 12, MSG_NOSIGNAL) < 0)
			break;
	/* Never read a reply: wait until the loader hangs up (POLLHUP). */
	pfd = (struct pollfd){ fd, POLLRDHUP, 0 };
	if (poll(&pfd, 1, 10000) == 1 && (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR)))
		dropped = 1;
	printf("dropped %d\n", dropped);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 8 && !strcmp(argv[1], "watch"))
		return do_watch(argv + 2);
	if (argc == 3 && !strcmp(argv[1], "idle"))
		return do_idle(argv + 2);
	if (argc == 5 && !strcmp(argv[1], "points"))
		return do_points(argv + 2);
	if (argc == 4 && !strcmp(argv[1], "pipeline"))
		return do_pipeline(argv + 2);
	fprintf(stderr, "usage: loop_victim watch SOCK GROUP APP POINT SECONDS PERIOD_MS |\n"
		"       idle SOCK | points SOCK PREFIX N | pipeline SOCK N\n");
	return 2;
}
