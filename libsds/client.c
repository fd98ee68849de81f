// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * client.c - the slow path of libsds: sds_client_open(), sds_point(),
 * sds_client_close(), the registration with the loader (docs/PROTOCOL.md,
 * "Guard session"), the thread that finds and watches the loader, and
 * fork().
 *
 * Detaching never unmaps a region: a thread may have loaded a binding
 * just before and still read its entry, or hold a permit it gives back
 * minutes later.  The dead loader's maps (flags, mapped read-only, and
 * cells, read-write) are each replaced in place by anonymous memory
 * instead (one mmap each), which drops the map, reads as an inactive
 * entry and swallows late writes; they are unmapped when the client
 * closes.
 */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include "conn.h"
#include "guard.h"
#include "libsds.h"
#include "names.h"

#define SDS_DEFAULT_RUN_DIR	"/run/sds"
#define REGISTER_TIMEOUT_MS	5000	/* the loader attaches probes first */
#define POINT_TIMEOUT_MS	2000	/* a loader that stalls is dropped */
#define WATCH_MS		250	/* attached: check the loader this often */
#define LOOK_MS			1000	/* detached: look for a loader this often */
/*
 * A stale tick with the connection still open is a loader that is alive
 * but not ticking (stopped, overloaded): its probes still count, and the
 * decision passes by itself (sds_guard_stale), so we stay registered.
 * Only if it stays stale this long do we drop it and look for another.
 */
#define HUNG_NS			(5 * SDS_STALE_NS)
#define THREAD_STACK		(256 * 1024)

static pthread_mutex_t clients_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sds_client *clients;	/* open clients, for fork() */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
/* A forked child could not repair a site: no client may attach here. */
static bool sites_broken;

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- sessions --------------------------------------------------------- */

/* Publish @b as @p's binding (c->lock held). */
static void point_publish(struct sds_point *p, struct sds_bind *b)
{
	/* ever before bind: a thread that sees the binding sees ever. */
	__atomic_store_n(&p->ever, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&p->bind, b, __ATOMIC_RELEASE);
}

/*
 * Detach from session @s (c->lock held): unpublish its bindings, swap its
 * region for anonymous memory, close its connection (the loader then
 * gives back our permits), keep it for close.
 */
static void session_retire_locked(struct sds_client *c, struct sds_session *s)
{
	struct sds_point *p;

	for (p = c->points; p; p = p->next)
		if (p->bind && p->bind->sess == s)
			__atomic_store_n(&p->bind, NULL, __ATOMIC_RELEASE);
	if (c->sess == s)
		c->sess = NULL;
	/* On failure a dead map stays mapped: harmless, just not freed. */
	mmap(s->region, s->size, PROT_READ,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	mmap(s->cells, s->cells_size, PROT_READ | PROT_WRITE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->next = c->retired;
	c->retired = s;
}

static void session_retire(struct sds_client *c, struct sds_session *s)
{
	pthread_mutex_lock(&c->lock);
	session_retire_locked(c, s);
	pthread_mutex_unlock(&c->lock);
}

/*
 * Register point @p in session @s (c->io held).  Returns -1 only if the
 * connection broke (the caller retires the session); a point the loader
 * refuses stays unbound and fails open.
 */
static int session_bind(struct sds_client *c, struct sds_session *s,
			struct sds_point *p)
{
	char req[16 + SDS_NAME_MAX], reply[CONN_REPLY_MAX];
	struct sds_bind *b;
	uint64_t id;

	if (!p->valid || (p->bind && p->bind->sess == s))
		return 0;
	snprintf(req, sizeof(req), "point %s\n", p->name);
	if (sds_conn_request(s->fd, req, reply, sizeof(reply), NULL,
			     POINT_TIMEOUT_MS, c->wakefd))
		return -1;
	if (sds_conn_json_error(reply) || sds_conn_json_u64(reply, "id", &id) ||
	    id >= SDS_MAX_POINTS)
		return 0;
	b = calloc(1, sizeof(*b));
	if (!b)
		return 0;
	b->entry = (const struct sds_flag *)((char *)s->region +
					     (1 + id) * SDS_FLAG_SIZE);
	b->cell = (struct sds_cell *)((char *)s->cells + id * SDS_CELL_SIZE);
	b->hdr = s->region;
	b->keys = (const struct sds_key_table *)((char *)s->region +
						 SDS_KEY_TABLE_OFF(id));
	b->permit = (__u32 *)((char *)s->cells + SDS_PERMITS_OFF) +
		    SDS_PERMIT_IDX(s->slot, id);
	b->key = s->key;
	b->id = (__u32)id;
	b->sess = s;

	pthread_mutex_lock(&c->lock);
	b->next = s->binds;
	s->binds = b;
	/* A session retired meanwhile (fork) publishes nothing more. */
	if (c->sess == s)
		point_publish(p, b);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/*
 * The flags map in @fd, read-only (the loader's decisions: a guard never
 * writes there, and the loader hands out an fd that cannot), if it is of
 * our layout; else NULL.
 */
static void *region_map(int fd, uint64_t size)
{
	const struct sds_flags_header *h;
	void *r;

	/* The entries and every point's blocked-key table (bpf/sds_flags.h). */
	if (size < (uint64_t)SDS_FLAGS_BYTES || size > SIZE_MAX)
		return NULL;
	r = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED)
		return NULL;
	h = r;
	if (__atomic_load_n(&h->magic, __ATOMIC_RELAXED) != SDS_FLAGS_MAGIC ||
	    __atomic_load_n(&h->layout, __ATOMIC_RELAXED) != SDS_FLAGS_LAYOUT) {
		munmap(r, size);
		return NULL;
	}
	return r;
}

/* The cells map in @fd, read-write (the guards' atomics), else NULL. */
static void *cells_map(int fd, uint64_t size)
{
	void *r;

	if (size < (uint64_t)SDS_CELLS_ELEMS * SDS_CELL_SIZE || size > SIZE_MAX)
		return NULL;
	r = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return r == MAP_FAILED ? NULL : r;
}

/*
 * Register with the loader if one serves the app, and bind every point
 * (c->io held).  Returns 0 when attached.
 */
static int session_open(struct sds_client *c)
{
	uint64_t slot, key, epoch, layout, size, cells_size;
	char req[64], reply[CONN_REPLY_MAX];
	void *region = NULL, *cells = NULL;
	int fd, i, mapfd[CONN_FDS];
	struct sds_session *s;
	struct sds_point *p;

	if (!c->valid || c->sess)
		return c->sess ? 0 : -1;
	/* A child whose sites still call the parent's trampoline. */
	if (__atomic_load_n(&sites_broken, __ATOMIC_RELAXED))
		return -1;
	fd = sds_conn_open(c->path);
	if (fd < 0)
		return -1;
	/* A child forked from here on must not keep our connection. */
	pthread_mutex_lock(&c->lock);
	c->pending_fd = fd;
	pthread_mutex_unlock(&c->lock);
	/* The loader finds the file holding the sites from this address. */
	snprintf(req, sizeof(req), "register 0x%" PRIxPTR "\n",
		 (uintptr_t)&sds__site_enter);
	/* The fds come in this order: flags (read-only), cells. */
	if (sds_conn_request(fd, req, reply, sizeof(reply), mapfd,
			     REGISTER_TIMEOUT_MS, c->wakefd))
		mapfd[0] = mapfd[1] = -1;
	if (mapfd[0] < 0 || mapfd[1] < 0 ||
	    sds_conn_json_error(reply) ||
	    sds_conn_json_u64(reply, "slot", &slot) ||
	    sds_conn_json_u64(reply, "key", &key) ||
	    sds_conn_json_u64(reply, "epoch", &epoch) ||
	    sds_conn_json_u64(reply, "layout", &layout) ||
	    sds_conn_json_u64(reply, "size", &size) ||
	    sds_conn_json_u64(reply, "cells_size", &cells_size) ||
	    layout != SDS_FLAGS_LAYOUT || slot >= SDS_MAX_PROCS)
		goto fail;
	/* The mappings keep the maps: the fds are not needed any more. */
	region = region_map(mapfd[0], size);
	cells = region ? cells_map(mapfd[1], cells_size) : NULL;
	if (!cells)
		goto fail;
	s = calloc(1, sizeof(*s));
	if (!s)
		goto fail;
	for (i = 0; i < CONN_FDS; i++)
		close(mapfd[i]);
	s->fd = fd;
	s->region = region;
	s->size = size;
	s->cells = cells;
	s->cells_size = cells_size;
	s->key = key;
	s->epoch = epoch;
	s->slot = (__u32)slot;

	pthread_mutex_lock(&c->lock);
	c->sess = s;
	c->pending_fd = -1;
	pthread_mutex_unlock(&c->lock);
	/* Points are only ever prepended: walk from a snapshot of the head. */
	for (p = __atomic_load_n(&c->points, __ATOMIC_ACQUIRE); p; p = p->next) {
		if (session_bind(c, s, p)) {
			session_retire(c, s);
			return -1;
		}
	}
	return 0;
fail:
	if (region)
		munmap(region, size);
	if (cells)
		munmap(cells, cells_size);
	for (i = 0; i < CONN_FDS; i++)
		if (mapfd[i] >= 0)
			close(mapfd[i]);
	pthread_mutex_lock(&c->lock);
	c->pending_fd = -1;
	pthread_mutex_unlock(&c->lock);
	close(fd);
	return -1;
}

/* Attached: is the loader still there (c->io held)? */
static void session_check(struct sds_client *c)
{
	struct sds_session *s = c->sess;
	uint64_t now;

	if (!s)
		return;
	if (!sds_conn_alive(s->fd)) {
		session_retire(c, s);
		return;
	}
	now = clock_ns();
	if (!sds_guard_stale(s->region, now))
		s->stale_since = 0;
	else if (!s->stale_since)
		s->stale_since = now;
	else if (now - s->stale_since > HUNG_NS)
		session_retire(c, s);
}

/* ---- the thread ------------------------------------------------------- */

/* Sleep up to @ms, waking early for close, fork or the loader's EOF. */
static void thread_wait(struct sds_client *c, int sock, int ms)
{
	struct pollfd pfd[2] = {
		{ .fd = c->wakefd, .events = POLLIN },
		{ .fd = sock, .events = POLLIN },
	};
	uint64_t v;

	if (poll(pfd, sock >= 0 ? 2 : 1, ms) > 0 && (pfd[0].revents & POLLIN))
		(void)!read(c->wakefd, &v, sizeof(v));
}

static void *client_thread(void *arg)
{
	struct sds_client *c = arg;
	int sock;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&c->io);
		if (c->sess)
			session_check(c);
		/* Right after a loader died, its successor may be up. */
		if (!c->sess)
			session_open(c);
		sock = c->sess ? c->sess->fd : -1;
		pthread_mutex_unlock(&c->io);
		thread_wait(c, sock, sock >= 0 ? WATCH_MS : LOOK_MS);
	}
	return NULL;
}

/* Start @c's thread with every signal blocked: signals are the app's. */
static void thread_start(struct sds_client *c)
{
	pthread_attr_t attr;
	sigset_t all, old;

	if (c->wakefd < 0 || pthread_attr_init(&attr))
		return;
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	c->thread_on = !pthread_create(&c->thread, &attr, client_thread, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (c->thread_on)
		pthread_setname_np(c->thread, "sds-guard");
}

/* ---- fork ------------------------------------------------------------- */

static void fork_prepare(void)
{
	struct sds_client *c;

	pthread_mutex_lock(&clients_lock);
	for (c = clients; c; c = c->next)
		pthread_mutex_lock(&c->lock);
}

static void fork_parent(void)
{
	struct sds_client *c;

	for (c = clients; c; c = c->next)
		pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&clients_lock);
}

/*
 * The child has the parent's connection, region and key, but is not
 * registered: drop them (closing our copy of the connection leaves the
 * parent's open) and let a new thread register the child on its own.
 * Until then its points are detached.  The guarded calls the forking
 * thread was inside are the parent's: they end in the child with nothing
 * (their permits are the parent's).  If a site could not be repaired,
 * the child's guards are off for good: every point stays detached, so no
 * call of the child reaches a site.
 */
static void fork_child(void)
{
	struct sds_client *c;
	bool sites_ok;

	sites_ok = !sds__sites_repair();
	if (!sites_ok)
		sites_broken = true;
	sds__frames_forget();

	for (c = clients; c; c = c->next) {
		/* Its holder, if any, was a thread that is not in the child. */
		pthread_mutex_init(&c->io, NULL);
		if (c->pending_fd >= 0)
			close(c->pending_fd);
		c->pending_fd = -1;
		if (c->sess)
			session_retire_locked(c, c->sess);
		if (!sites_ok)
			c->valid = false;	/* never registers again */
		c->thread_on = false;
		if (c->wakefd >= 0)
			close(c->wakefd);
		c->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		pthread_mutex_unlock(&c->lock);
		if (c->valid)
			thread_start(c);
	}
	pthread_mutex_unlock(&clients_lock);
}

static void atfork_register(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ---- API -------------------------------------------------------------- */

SDS_API struct sds_client *sds_client_open(const char *group, const char *app)
{
	struct sds_client *c;
	const char *dir;

	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->io, NULL);
	c->nopoint.client = c;
	c->wakefd = -1;
	c->pending_fd = -1;
	c->valid = sds_name_valid(group) && sds_name_valid(app);
	if (!c->valid)
		return c;	/* stays detached: no thread, no socket */

	/* Not getenv: a setuid program must not be steered to a fake loader. */
	dir = secure_getenv("SDS_RUN_DIR");
	if (!dir || !*dir)
		dir = SDS_DEFAULT_RUN_DIR;
	/* The loader's rule (common/names.h): a hashed name if need be. */
	if (sds_sock_path(dir, group, app, c->path, sizeof(c->path))) {
		c->valid = false;
		return c;
	}
	c->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_once(&atfork_once, atfork_register);
	/* Listed first: a fork from another thread meanwhile must see it. */
	pthread_mutex_lock(&clients_lock);
	c->next = clients;
	clients = c;
	pthread_mutex_unlock(&clients_lock);

	pthread_mutex_lock(&c->io);
	session_open(c);
	pthread_mutex_unlock(&c->io);

	pthread_mutex_lock(&clients_lock);
	thread_start(c);
	pthread_mutex_unlock(&clients_lock);
	return c;
}

SDS_API struct sds_point *sds_point(struct sds_client *c, const char *name)
{
	struct sds_point *p;

	if (!c)
		return NULL;
	if (!sds_point_name_valid(name))
		return &c->nopoint;

	pthread_mutex_lock(&c->lock);
	for (p = c->points; p; p = p->next)
		if (!strcmp(p->name, name))
			break;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (p) {
			strcpy(p->name, name);
			p->valid = true;
			p->client = c;
			p->next = c->points;
			__atomic_store_n(&c->points, p, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (!p)
		return NULL;

	/* Synchronous, so the point's calls count from the first one. */
	if (c->valid) {
		pthread_mutex_lock(&c->io);
		if (c->sess && session_bind(c, c->sess, p))
			session_retire(c, c->sess);
		pthread_mutex_unlock(&c->io);
	}
	return p;
}

static void session_free(struct sds_session *s)
{
	struct sds_bind *b, *nb;

	for (b = s->binds; b; b = nb) {
		nb = b->next;
		free(b);
	}
	munmap(s->region, s->size);
	munmap(s->cells, s->cells_size);
	free(s);
}

SDS_API void sds_client_close(struct sds_client *c)
{
	struct sds_client **pp;
	struct sds_session *s, *ns;
	struct sds_point *p, *np;
	uint64_t one = 1;

	if (!c)
		return;
	pthread_mutex_lock(&clients_lock);
	for (pp = &clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	pthread_mutex_unlock(&clients_lock);

	if (c->thread_on) {
		__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
		(void)!write(c->wakefd, &one, sizeof(one));
		pthread_join(c->thread, NULL);
	}
	pthread_mutex_lock(&c->io);
	if (c->sess)
		session_retire(c, c->sess);
	pthread_mutex_unlock(&c->io);
	for (s = c->retired; s; s = ns) {
		ns = s->next;
		session_free(s);
	}
	for (p = c->points; p; p = np) {
		np = p->next;
		free(p);
	}
	if (c->wakefd >= 0)
		close(c->wakefd);
	pthread_mutex_destroy(&c->io);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
