// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * httpsvc - the response-diff tests' service (tests/copy/t_diff.py): a
 * small HTTP/1.1 server, keep-alive, a thread per connection (a copy
 * server's pool holds several open at once), linked with libsds.a.  "GET /item/ID" answers
 *
 *	{"id":ID,"name":"item-ID","price":P,"tags":["a","b"]}
 *
 * with P = 3 * ID -- in build "b", P + 1 when ID is a multiple of 10 (the
 * field that changed between two builds).  Every request goes through
 * handle(req, len, out, &outlen), a function point with
 * copy=1,2:copy_ret=3,4, and through the guard point "api": sds_copy()
 * of the request, sds_copy_response() of the whole response.
 *
 *	httpsvc GROUP APP BUILD		(BUILD: a or b)
 *
 * Listens on 127.0.0.1, an ephemeral port, printed as "port N" on stdout.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdint.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sds.h>

static char build = 'a';

/* The response to @req into @out; its length into *@outlen. */
__attribute__((noinline)) int handle(const char *req, size_t len, char *out,
				     size_t *outlen)
{
	char body[256];
	long id = -1, price;
	int bl, n;

	/* Saves %rbx: a push first, an emulated probe site (as copytarget). */
	__asm__ volatile("" ::: "rbx");
	if (len > 14 && !memcmp(req, "GET /item/", 10))
		id = strtol(req + 10, NULL, 10);
	if (id < 0) {
		n = snprintf(out, 1024, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
		*outlen = n;
		return 404;
	}
	price = 3 * id + (build == 'b' && id % 10 == 0);
	bl = snprintf(body, sizeof(body),
		      "{\"id\":%ld,\"name\":\"item-%ld\",\"price\":%ld,\"tags\":[\"a\",\"b\"]}",
		      id, id, price);
	n = snprintf(out, 1024, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		     "Content-Length: %d\r\n\r\n%s", bl, body);
	*outlen = n;
	__asm__ volatile("" ::: "memory");
	return 200;
}

static int write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/* Requests of one connection until it closes. */
static void serve(int fd, struct sds_point *api)
{
	char buf[16384], out[1024], *end;
	size_t len = 0, rl, outlen;
	ssize_t n;

	for (;;) {
		while (!(end = memmem(buf, len, "\r\n\r\n", 4))) {
			if (len == sizeof(buf))
				return;
			n = read(fd, buf + len, sizeof(buf) - len);
			if (n <= 0)
				return;
			len += n;
		}
		rl = end + 4 - buf;	/* GETs only: no body */
		sds_copy(api, buf, rl);
		handle(buf, rl, out, &outlen);
		sds_copy_response(api, out, outlen);
		if (write_all(fd, out, outlen))
			return;
		memmove(buf, buf + rl, len - rl);
		len -= rl;
	}
}

static struct sds_point *api_point;

static void *conn_thread(void *arg)
{
	int fd = (int)(intptr_t)arg;

	serve(fd, api_point);
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t t;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	struct sds_client *cl;
	struct sds_point *api;
	int ls, fd, one = 1;

	if (argc != 4 || (strcmp(argv[3], "a") && strcmp(argv[3], "b"))) {
		fprintf(stderr, "usage: httpsvc GROUP APP a|b\n");
		return 2;
	}
	build = argv[3][0];
	cl = sds_client_open(argv[1], argv[2]);
	api = sds_point(cl, "api");
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 16) ||
	    getsockname(ls, (struct sockaddr *)&a, &al)) {
		perror("httpsvc: listen");
		return 1;
	}
	printf("port %d\n", ntohs(a.sin_port));
	fflush(stdout);
	api_point = api;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		fd = accept(ls, NULL, NULL);
		if (fd < 0)
			continue;
		if (pthread_create(&t, &attr, conn_thread, (void *)(intptr_t)fd))
			close(fd);
	}
}
