// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * depsguard - a guarded program's dependency calls for tests/deps
 * (docs/DEPS.md):
 *
 *   depsguard APP PORT_OK PORT_REFUSED N M K
 *
 * registers with the loader of APP, then through guard point "inv"
 * (sds_should_downgrade ... sds_downgrade_finally) makes N calls that
 * connect to 127.0.0.1:PORT_OK, send a request and read the answer, and
 * M calls that connect to 127.0.0.1:PORT_REFUSED (refused); then K of
 * the same exchanges with PORT_OK outside any guard.  Prints "ok A
 * refused B plain C" (each call's outcome counted), then "done".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include "sds.h"

/* Connect to 127.0.0.1:@port, send a request, read the answer: 0 or -errno. */
static int exchange(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 5 };
	char buf[64];
	int fd, r = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		r = -errno;
	else if (send(fd, "GET\n", 4, MSG_NOSIGNAL) != 4)
		r = -errno;
	else if (recv(fd, buf, sizeof(buf), 0) <= 0)
		r = -ECONNRESET;
	close(fd);
	return r;
}

/* One guarded call: 0, -errno, or 1 when the guard downgraded it. */
static int guarded(struct sds_point *pt, int port)
{
	int r = 1;

	if (!sds_should_downgrade(pt))
		r = exchange(port);
	sds_downgrade_finally(pt);
	return r;
}

int main(int argc, char **argv)
{
	long ok = 0, refused = 0, plain = 0, n, m, k, i;
	struct sds_client *c;
	struct sds_point *pt;
	int pok, pref;

	if (argc != 7) {
		fprintf(stderr, "usage: depsguard APP PORT_OK PORT_REFUSED N M K\n");
		return 2;
	}
	pok = atoi(argv[2]);
	pref = atoi(argv[3]);
	n = atol(argv[4]);
	m = atol(argv[5]);
	k = atol(argv[6]);
	c = sds_client_open("default", argv[1]);
	pt = c ? sds_point(c, "inv") : NULL;
	if (!c || !pt) {
		fprintf(stderr, "depsguard: no client or point\n");
		return 1;
	}
	for (i = 0; i < n; i++)
		ok += guarded(pt, pok) == 0;
	for (i = 0; i < m; i++)
		refused += guarded(pt, pref) == -ECONNREFUSED;
	for (i = 0; i < k; i++)
		plain += exchange(pok) == 0;
	printf("ok %ld refused %ld plain %ld\ndone\n", ok, refused, plain);
	sds_client_close(c);
	return 0;
}
