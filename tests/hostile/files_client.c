/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * files_client - a hostile client of a loader's `register` (tests/hostile/
 * t_files.py): it maps a file of its choosing, then changes what the
 * file's maps line names (a FIFO, a symlink, a swap between two symlinks)
 * and asks the loader to register an address inside it.  Linked with
 * libsds.a, so a copy of it carries libsds's probe sites and may be the
 * loader's TARGET.
 *
 *   files_client self SOCK N          register the address of its own
 *                                     text N times; print each reply
 *   files_client map SOCK FILE [OFF...]
 *                                     map FILE, register an address in it,
 *                                     print the reply, then the byte at
 *                                     each file offset OFF ("byte OFF XX");
 *                                     hold the session until stdin ends
 *   files_client fifo SOCK DIR SRC N  copy SRC to DIR/lib, map it, unlink
 *                                     it, make a FIFO named "DIR/lib
 *                                     (deleted)"; register N times
 *   files_client link SOCK DIR SRC TO register with "DIR/lib (deleted)" a
 *                                     symlink to TO
 *   files_client swap SOCK DIR SRC TO N
 *                                     register N times while a thread
 *                                     flips "DIR/lib (deleted)" between a
 *                                     symlink to DIR/own (a copy of SRC)
 *                                     and one to TO
 *   files_client sleep                wait until killed (a victim)
 *
 * Replies are printed one per line as "reply <line>".
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "sds.h"

static void die(const char *what)
{
	fprintf(stderr, "files_client: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Connect, send `register ADDR`, print the reply; the fd (session) or -1. */
static int do_register(const char *sock, const void *addr)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[1024], cbuf[CMSG_SPACE(8 * sizeof(int))], req[64];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		printf("reply connect: %s\n", strerror(errno));
		fflush(stdout);
		close(fd);
		return -1;
	}
	snprintf(req, sizeof(req), "register %p\n", addr);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		die("write");
	n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		die("recvmsg");
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int *fds = (int *)CMSG_DATA(cm);
			size_t i, k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (i = 0; i < k; i++)
				close(fds[i]);
		}
	}
	printf("reply %s\n", buf);
	fflush(stdout);
	if (strstr(buf, "\"error\"")) {
		close(fd);
		return -1;
	}
	return fd;
}

static void copy_file(const char *src, const char *dst)
{
	char buf[65536];
	int in, out;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		die(src);
	unlink(dst);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (out < 0)
		die(dst);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			die("write");
	close(in);
	close(out);
}

/* Map @path whole, read-only (exec allowed on the mount: uprobes land). */
static void *map_file(const char *path, size_t *len)
{
	struct stat st;
	void *p;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		die(path);
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	close(fd);
	*len = st.st_size;
	return p;
}

/* DIR/lib: a copy of @src, mapped, then unlinked; its base address. */
static char *map_deleted(const char *dir, const char *src, char *name,
			 size_t len)
{
	char lib[4096];
	size_t n;
	char *p;

	snprintf(lib, sizeof(lib), "%s/lib", dir);
	copy_file(src, lib);
	p = map_file(lib, &n);
	if (unlink(lib))
		die("unlink");
	snprintf(name, len, "%s/lib (deleted)", dir);
	return p;
}

struct swapper {
	const char *name;	/* the name the maps line shows */
	const char *a, *b;	/* what it points at, in turn */
	atomic_int stop;
};

static void *swap_loop(void *arg)
{
	struct swapper *s = arg;
	char tmp[4200];
	unsigned long i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", s->name);
	for (i = 0; !atomic_load(&s->stop); i++) {
		unlink(tmp);
		if (symlink(i & 1 ? s->b : s->a, tmp) || rename(tmp, s->name))
			die("symlink");
	}
	return NULL;
}

static int swap(const char *sock, const char *dir, const char *src,
		const char *to, int n)
{
	struct swapper s = { .b = to };
	char name[4200], own[4200];
	pthread_t t;
	char *p;
	int i, fd;

	snprintf(own, sizeof(own), "%s/own", dir);
	copy_file(src, own);
	p = map_deleted(dir, src, name, sizeof(name));
	s.name = name;
	s.a = own;
	if (pthread_create(&t, NULL, swap_loop, &s))
		die("pthread_create");
	for (i = 0; i < n; i++) {
		fd = do_register(sock, p + 64);
		if (fd >= 0)
			close(fd);
	}
	atomic_store(&s.stop, 1);
	pthread_join(t, NULL);
	return 0;
}

/* Hold a registration on @path's mapping; print bytes at @offs. */
static int map_hold(const char *sock, const char *path, int noffs,
		    char **offs)
{
	char buf[64];
	size_t len;
	char *p;
	int i, fd;

	p = map_file(path, &len);
	fd = do_register(sock, p + 64);
	for (i = 0; i < noffs; i++) {
		size_t off = strtoul(offs[i], NULL, 0);

		if (off < len)
			printf("byte %s %02x\n", offs[i], (unsigned char)p[off]);
	}
	printf("held\n");
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	if (fd >= 0)
		close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	char name[4200];
	char *p;
	int i, n, fd;

	/* Pull libsds's sites into this program (never called). */
	if (argc > 99)
		sds_should_downgrade(NULL);
	if (argc >= 2 && !strcmp(argv[1], "sleep")) {
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (argc >= 4 && !strcmp(argv[1], "self")) {
		n = atoi(argv[3]);
		for (i = 0; i < n; i++) {
			fd = do_register(argv[2], (void *)main);
			if (fd >= 0)
				close(fd);
		}
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "map"))
		return map_hold(argv[2], argv[3], argc - 4, argv + 4);
	if (argc == 6 && !strcmp(argv[1], "fifo")) {
		p = map_deleted(argv[3], argv[4], name, sizeof(name));
		if (mkfifo(name, 0666))
			die("mkfifo");
		n = atoi(argv[5]);
		for (i = 0; i < n; i++) {
			fd = do_register(argv[2], p + 64);
			if (fd >= 0)
				close(fd);
		}
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "link")) {
		p = map_deleted(argv[3], argv[4], name, sizeof(name));
		if (symlink(argv[5], name))
			die("symlink");
		fd = do_register(argv[2], p + 64);
		return fd >= 0 ? 0 : 1;
	}
	if (argc == 7 && !strcmp(argv[1], "swap"))
		return swap(argv[2], argv[3], argv[4], argv[5], atoi(argv[6]));
	fprintf(stderr, "usage: files_client self|map|fifo|link|swap|sleep ...\n");
	return 2;
}
