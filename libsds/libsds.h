/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * libsds.h - libsds's own types: what the hot path (sds.c) reads and the
 * client (client.c) writes.  Not installed.
 *
 * A point reaches its flag entry through a binding, one per point per
 * loader session.  A binding never changes once published and is freed
 * only with its client: a thread that loaded it keeps a valid view even if
 * the client detaches or re-registers meanwhile, and the end of a call
 * always talks to the session its start talked to.
 */
#ifndef SDS_LIBSDS_H
#define SDS_LIBSDS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "sds.h"
#include "sds_flags.h"
#include "sds_keys.h"

/* Exported from libsds.so; everything else is hidden (-fvisibility). */
#define SDS_API		__attribute__((visibility("default")))

/* The probe sites (sites.S). */
void sds__site_enter(__u32 id, __u64 key);
void sds__site_exit(__u32 id, __u64 key);
void sds__site_exception(__u32 id, __u64 key);
void sds__site_downgrade(__u32 id, __u64 key);
void sds__site_copy(__u32 id, const void *buf, size_t len);
void sds__site_copy_ret(__u32 id, const void *buf, size_t len);
/*
 * The same sites called by a keyed guard call (id | SDS_SITE_KEYED, with
 * the key and its hash: bpf/sds_types.h): other names of the same
 * symbols, so that an unkeyed call still passes two arguments only.
 */
void sds__site_enter_keyed(__u32 id, __u64 key, const struct sds_key *k,
			   __u64 hash) __asm__("sds__site_enter");
void sds__site_exit_keyed(__u32 id, __u64 key, const struct sds_key *k,
			  __u64 hash) __asm__("sds__site_exit");
void sds__site_exception_keyed(__u32 id, __u64 key, const struct sds_key *k,
			       __u64 hash) __asm__("sds__site_exception");
void sds__site_downgrade_keyed(__u32 id, __u64 key, const struct sds_key *k,
			       __u64 hash) __asm__("sds__site_downgrade");

/*
 * In a forked child (sds.c): the calling thread's frames are the
 * parent's calls; unbind them, so that their ends touch nothing.
 */
void sds__frames_forget(void);

/*
 * In a forked child (repair.c): turn each site that calls the parent's
 * uprobe trampoline back into an int3 + NOP; 0, or -1 if one may still
 * call it (the child must then never call a site).
 */
int sds__sites_repair(void);

struct sds_session;

/* One point in one session: immutable once published. */
struct sds_bind {
	const struct sds_flag *entry;		/* the point's flag entry (read-only map) */
	struct sds_cell *cell;			/* the point's cell (the guards') */
	const struct sds_flags_header *hdr;	/* the region's header (tick) */
	const struct sds_key_table *keys;	/* the point's blocked keys (read-only map) */
	__u32 *permit;				/* this process's permit cell */
	__u64 key;				/* this loader's key for the sites */
	__u32 id;				/* the point's id in this loader run */
	struct sds_session *sess;		/* the session it belongs to */
	struct sds_bind *next;			/* the session's bindings */
};

struct sds_point {
	/* Read by every guarded call: first, in one cache line. */
	struct sds_bind *bind;		/* live binding; NULL while detached */
	int ever;			/* was ever bound: frames may name it */
	bool valid;			/* a valid name: registered when possible */
	struct sds_client *client;	/* owner */
	struct sds_point *next;		/* the client's points (append-only) */
	char name[SDS_NAME_MAX + 1];	/* the point's name */
};

/* One registration with one loader: one connection, one mapped region. */
struct sds_session {
	int fd;			/* the connection; -1 once closed */
	void *region;		/* the flags map, mmapped PROT_READ */
	size_t size;		/* its length */
	void *cells;		/* the cells map, mmapped read-write */
	size_t cells_size;	/* its length */
	__u64 key;		/* the loader's key for this process */
	__u64 epoch;		/* the loader's run */
	__u32 slot;		/* this process's row of the permit table */
	uint64_t stale_since;	/* CLOCK_MONOTONIC the tick went stale; 0: fresh */
	struct sds_bind *binds;	/* bindings made in this session */
	struct sds_session *next;	/* the client's retired sessions */
};

struct sds_client {
	/*
	 * @lock guards the points list, the session pointers and the
	 * bindings; it is held only briefly (never across I/O) and is
	 * taken by fork()'s prepare handler.  @io serialises conversations
	 * with the loader and is held across a request and its reply.
	 * Order: io, then lock.
	 */
	pthread_mutex_t lock;
	pthread_mutex_t io;
	struct sds_point *points;	/* all points, newest first */
	struct sds_point nopoint;	/* given for invalid names: never bound */
	struct sds_session *sess;	/* the attached session, or NULL */
	struct sds_session *retired;	/* detached sessions, unmapped at close */
	int pending_fd;			/* a connection still registering, or -1 */
	int wakefd;			/* eventfd: wakes the thread */
	pthread_t thread;		/* looks for a loader, watches it */
	bool thread_on;			/* @thread runs and must be joined */
	int stop;			/* atomic: the thread must exit */
	bool valid;			/* names and path valid: may attach */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];	/* the socket */
	struct sds_client *next;	/* all open clients (fork handlers) */
};

#endif /* SDS_LIBSDS_H */
