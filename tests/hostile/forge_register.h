// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * forge_register.h - what the hostile clients of the flags region
 * (region_forge.c, cells_squat.c) share: registering at a loader's socket
 * as libsds does, and a number out of its JSON reply.  Included once by
 * each program, after the system headers it names.
 */
#ifndef SDS_TEST_FORGE_REGISTER_H
#define SDS_TEST_FORGE_REGISTER_H

void sds__site_enter(__u32 id, __u64 key);

/* Connect, register, take the reply and its two fds. */
static int forge_register(const char *path, char *reply, size_t len, int fds[2])
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = reply, .iov_len = len - 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = ctl.buf,
			      .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *cm;
	char req[64];
	ssize_t n;
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	snprintf(req, sizeof(req), "register 0x%lx\n",
		 (unsigned long)(uintptr_t)&sds__site_enter);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		return -1;
	n = recvmsg(fd, &msg, 0);
	if (n <= 0)
		return -1;
	reply[n] = '\0';
	fds[0] = fds[1] = -1;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len >= CMSG_LEN(2 * sizeof(int)))
			memcpy(fds, CMSG_DATA(cm), 2 * sizeof(int));
	return fd;
}

static unsigned long long json_num(const char *s, const char *key)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(s, k);
	return p ? strtoull(p + strlen(k), NULL, 10) : 0;
}

#endif
