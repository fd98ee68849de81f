// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* A stand-in loader for the client tests (see fakeloader.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "fakeloader.h"
#include "publish/flags.h"		/* the loader's writer: flags__publish() */

#define TICK_MS	20

uint64_t fake_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * With the loader's own writer, flags__publish(): a flags_region whose
 * point 0 is @e (it writes only that point's entry, through f->mem).
 */
void fake_set(struct sds_flag *e, __u32 active, __u32 rate, __u64 expires_ns,
	      __s64 limit, __u64 probe_ns)
{
	static struct flags_region fr;	/* static: it carries per-point arrays */
	struct flag_state fs = {
		.active = active,
		.rate = rate,
		.expires_ns = expires_ns,
		.concurrent_limit = limit,
		.probe_interval_ns = probe_ns,
	};

	fr.mem = (char *)e - SDS_FLAG_SIZE;
	flags__publish(&fr, 0, &fs);
}

/* With the loader's own writer, flags__key_block()/flags__key_clear(). */
int fake_key_block(struct fake_loader *f, const char *name, __u64 hash,
		   __u64 until_ns)
{
	static struct flags_region fr;	/* static: it carries per-point arrays */
	int id = fake_id(f, name);

	fr.mem = f->region;
	return id < 0 ? -1 : flags__key_block(&fr, id, hash, until_ns);
}

int fake_key_clear(struct fake_loader *f, const char *name, __u64 hash)
{
	static struct flags_region fr;
	int id = fake_id(f, name);

	fr.mem = f->region;
	return id < 0 ? -1 : flags__key_clear(&fr, id, hash);
}

/* Id of @name, created if new (f->lock held); -1 beyond the limit. */
static int point_id(struct fake_loader *f, const char *name, bool create)
{
	int i, max = f->max_points ? f->max_points : SDS_MAX_POINTS;

	for (i = 0; i < f->npoints; i++)
		if (!strcmp(f->names[i], name))
			return i;
	if (!create || f->npoints >= max)
		return -1;
	snprintf(f->names[f->npoints], sizeof(f->names[0]), "%s", name);
	return f->npoints++;
}

int fake_add_point(struct fake_loader *f, const char *name)
{
	int id;

	pthread_mutex_lock(&f->lock);
	id = point_id(f, name, true);
	pthread_mutex_unlock(&f->lock);
	return id;
}

int fake_id(struct fake_loader *f, const char *name)
{
	int id;

	pthread_mutex_lock(&f->lock);
	id = point_id(f, name, false);
	pthread_mutex_unlock(&f->lock);
	return id;
}

struct sds_flag *fake_entry(struct fake_loader *f, const char *name)
{
	int id = fake_id(f, name);

	if (id < 0)
		return NULL;
	return (struct sds_flag *)((char *)f->region + (1 + id) * SDS_FLAG_SIZE);
}

struct sds_cell *fake_cell(struct fake_loader *f, const char *name)
{
	int id = fake_id(f, name);

	if (id < 0)
		return NULL;
	return (struct sds_cell *)((char *)f->cells + id * SDS_CELL_SIZE);
}

__u32 *fake_permit(struct fake_loader *f, int slot, const char *name)
{
	int id = fake_id(f, name);

	if (id < 0)
		return NULL;
	return (__u32 *)((char *)f->cells + SDS_PERMITS_OFF) +
	       SDS_PERMIT_IDX(slot, id);
}

int fake_conns(struct fake_loader *f)
{
	int i, n = 0;

	pthread_mutex_lock(&f->lock);
	for (i = 0; i < FAKE_CONNS; i++)
		n += f->conns[i].fd >= 0;
	pthread_mutex_unlock(&f->lock);
	return n;
}

int fake_registers(struct fake_loader *f)
{
	int n;

	pthread_mutex_lock(&f->lock);
	n = f->registers;
	pthread_mutex_unlock(&f->lock);
	return n;
}

static void conn_drop(struct fake_conn *c)
{
	close(c->fd);
	c->fd = -1;
	c->len = 0;
}

static void reply(struct fake_conn *c, const char *s)
{
	if (send(c->fd, s, strlen(s), MSG_NOSIGNAL) < 0)
		conn_drop(c);
}

/* The register reply, with the maps' fds on its first byte. */
static void reply_register(struct fake_loader *f, struct fake_conn *c, int slot)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	struct msghdr msg = { 0 };
	int fds[2] = { f->ro_fd, f->cells_fd };
	struct cmsghdr *cm;
	struct iovec iov;
	char line[256];

	if (f->big_key)
		snprintf(line, sizeof(line),
			 "{\"slot\": %d, \"key\": %" PRId64 ", \"epoch\": %" PRIu64
			 ", \"layout\": %d, \"size\": %zu, \"cells_size\": %zu}\n",
			 slot, (int64_t)f->key, f->epoch, SDS_FLAGS_LAYOUT, f->size,
			 f->cells_size);
	else
		snprintf(line, sizeof(line),
			 "{\"slot\": %d, \"key\": %" PRIu64 ", \"epoch\": %" PRIu64
			 ", \"layout\": %d, \"size\": %zu, \"cells_size\": %zu}\n",
			 slot, f->key, f->epoch, SDS_FLAGS_LAYOUT, f->size,
			 f->cells_size);
	iov.iov_base = line;
	iov.iov_len = strlen(line);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	if (sendmsg(c->fd, &msg, MSG_NOSIGNAL) < 0)
		conn_drop(c);
}

static void serve_line(struct fake_loader *f, struct fake_conn *c, int slot,
		       const char *line)
{
	char out[128];
	int id;

	pthread_mutex_lock(&f->lock);
	if (!strncmp(line, "register ", 9)) {
		f->registers++;
		f->last_addr = strtoull(line + 9, NULL, 16);
		f->last_pid = c->pid;
		pthread_mutex_unlock(&f->lock);
		if (!f->hang_register)
			reply_register(f, c, slot);
		return;
	}
	if (!strncmp(line, "point ", 6)) {
		id = point_id(f, line + 6, true);
		pthread_mutex_unlock(&f->lock);
		if (id < 0)
			reply(c, "{\"error\": \"too many points\"}\n");
		else {
			snprintf(out, sizeof(out), "{\"id\": %d}\n", id);
			reply(c, out);
		}
		return;
	}
	pthread_mutex_unlock(&f->lock);
	reply(c, "{\"error\": \"unknown request\"}\n");
}

static void serve_conn(struct fake_loader *f, int slot)
{
	struct fake_conn *c = &f->conns[slot];
	char *nl;
	ssize_t n;

	n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
	if (n <= 0) {
		pthread_mutex_lock(&f->lock);
		conn_drop(c);
		pthread_mutex_unlock(&f->lock);
		return;
	}
	c->len += n;
	c->buf[c->len] = '\0';
	while (c->fd >= 0 && (nl = strchr(c->buf, '\n'))) {
		*nl = '\0';
		serve_line(f, c, slot, c->buf);
		if (c->fd < 0)
			break;	/* the reply failed: dropped, buffer emptied */
		memmove(c->buf, nl + 1, c->len - (nl + 1 - c->buf) + 1);
		c->len -= nl + 1 - c->buf;
	}
}

static void accept_conn(struct fake_loader *f)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd, i;

	fd = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	pthread_mutex_lock(&f->lock);
	for (i = 0; i < FAKE_CONNS && f->conns[i].fd >= 0; i++)
		;
	if (i == FAKE_CONNS) {
		pthread_mutex_unlock(&f->lock);
		close(fd);
		return;
	}
	f->conns[i].fd = fd;
	f->conns[i].len = 0;
	f->conns[i].pid = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ?
			  0 : cred.pid;
	pthread_mutex_unlock(&f->lock);
}

static void *fake_thread(void *arg)
{
	struct fake_loader *f = arg;
	struct sds_flags_header *h = f->region;
	struct pollfd pfd[2 + FAKE_CONNS];
	int idx[2 + FAKE_CONNS];
	int i, n;

	for (;;) {
		pfd[0] = (struct pollfd){ .fd = f->stop[0], .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = f->lfd, .events = POLLIN };
		n = 2;
		for (i = 0; i < FAKE_CONNS; i++) {
			if (f->conns[i].fd < 0)
				continue;
			pfd[n] = (struct pollfd){ .fd = f->conns[i].fd, .events = POLLIN };
			idx[n++] = i;
		}
		if (__atomic_load_n(&f->ticking, __ATOMIC_RELAXED))
			__atomic_store_n(&h->tick_ns, fake_now(), __ATOMIC_RELEASE);
		if (poll(pfd, n, TICK_MS) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		if (pfd[1].revents & POLLIN)
			accept_conn(f);
		for (i = 2; i < n; i++)
			if (pfd[i].revents)
				serve_conn(f, idx[i]);
	}
	return NULL;
}

int fake_start(struct fake_loader *f, const char *dir, const char *group,
	       const char *app, uint64_t epoch)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct sds_flags_header *h;
	char path[64];
	int i;

	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	for (i = 0; i < FAKE_CONNS; i++)
		f->conns[i].fd = -1;
	f->epoch = epoch;
	f->key = epoch * 0x9e3779b97f4a7c15ULL;
	f->ticking = true;
	f->size = ((size_t)SDS_FLAGS_BYTES + 4095) / 4096 * 4096;
	f->memfd = memfd_create("sds-flags", MFD_CLOEXEC);
	if (f->memfd < 0 || ftruncate(f->memfd, f->size))
		return -1;
	f->region = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 f->memfd, 0);
	if (f->region == MAP_FAILED)
		return -1;
	/* What BPF_F_RDONLY gives: no writable shared mapping. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", f->memfd);
	f->ro_fd = open(path, O_RDONLY | O_CLOEXEC);
	f->cells_size = (size_t)SDS_CELLS_ELEMS * SDS_CELL_SIZE;
	f->cells_fd = memfd_create("sds-cells", MFD_CLOEXEC);
	if (f->ro_fd < 0 || f->cells_fd < 0 ||
	    ftruncate(f->cells_fd, f->cells_size))
		return -1;
	f->cells = mmap(NULL, f->cells_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			f->cells_fd, 0);
	if (f->cells == MAP_FAILED)
		return -1;
	h = f->region;
	h->magic = SDS_FLAGS_MAGIC;
	h->layout = SDS_FLAGS_LAYOUT;
	h->loader_pid = getpid();
	h->epoch = epoch;
	h->tick_interval_ns = TICK_MS * 1000000ULL;
	h->tick_ns = fake_now();

	snprintf(f->path, sizeof(f->path), "%s/%s.%s.sock", dir, group, app);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	unlink(f->path);
	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (f->lfd < 0 || bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(f->lfd, 16))
		return -1;
	if (pipe2(f->stop, O_CLOEXEC))
		return -1;
	return pthread_create(&f->thread, NULL, fake_thread, f) ? -1 : 0;
}

void fake_stop(struct fake_loader *f)
{
	int i;

	(void)!write(f->stop[1], "x", 1);
	pthread_join(f->thread, NULL);
	unlink(f->path);
	close(f->lfd);
	for (i = 0; i < FAKE_CONNS; i++)
		if (f->conns[i].fd >= 0)
			conn_drop(&f->conns[i]);
	close(f->stop[0]);
	close(f->stop[1]);
	munmap(f->region, f->size);
	munmap(f->cells, f->cells_size);
	close(f->memfd);
	close(f->ro_fd);
	close(f->cells_fd);
	pthread_mutex_destroy(&f->lock);
}
