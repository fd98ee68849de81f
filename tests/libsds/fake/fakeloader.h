/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A stand-in for `sds-bpf attach` on the guard's side of
 * docs/PROTOCOL.md: it serves $SDS_RUN_DIR/<group>.<app>.sock, answers
 * `register` with a flags region (two memfds laid out per
 * bpf/sds_flags.h, sent with SCM_RIGHTS: the flags reopened read-only,
 * as the loader's BPF_F_RDONLY map fd, then the cells) and `point NAME`
 * with ids, and ticks the header.  The test reads and writes both.
 */
#ifndef SDS_FAKELOADER_H
#define SDS_FAKELOADER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "sds_flags.h"

#define FAKE_CONNS	16	/* connections served at once */

struct fake_conn {
	int fd;			/* -1: free */
	pid_t pid;		/* SO_PEERCRED */
	size_t len;		/* bytes in @buf */
	char buf[512];		/* the request being read */
};

struct fake_loader {
	char path[108];		/* the socket */
	int lfd;		/* listening socket */
	int memfd;		/* the flags map, read-write (ours) */
	int ro_fd;		/* the same, opened read-only: sent to clients */
	void *region;		/* the flags map, mapped here too */
	size_t size;		/* its size */
	int cells_fd;		/* the cells map: sent to clients */
	void *cells;		/* mapped here too */
	size_t cells_size;	/* its size */
	uint64_t epoch;		/* this run */
	uint64_t key;		/* given to every process */
	int stop[2];		/* pipe: stops the thread */
	pthread_t thread;	/* serves and ticks */
	pthread_mutex_t lock;	/* what the test reads below */
	struct fake_conn conns[FAKE_CONNS];
	/* Seen and settings; under @lock. */
	int registers;		/* register requests answered */
	uint64_t last_addr;	/* ADDR of the last one */
	pid_t last_pid;		/* its pid */
	int npoints;		/* point names known */
	char names[SDS_MAX_POINTS][SDS_NAME_MAX + 1];	/* by id */
	int max_points;		/* refuse points beyond (0: SDS_MAX_POINTS) */
	bool ticking;		/* renew the header's tick */
	bool big_key;		/* send the key as a negative int64 */
	bool hang_register;	/* take register requests, never answer */
};

/* Start serving @group.@app in @dir with run @epoch; 0 or -1. */
int fake_start(struct fake_loader *f, const char *dir, const char *group,
	       const char *app, uint64_t epoch);
/* Stop: unlink the socket and close every connection. */
void fake_stop(struct fake_loader *f);
/* Give @name an id before anyone asks (a strategy naming it). */
int fake_add_point(struct fake_loader *f, const char *name);
/* The id of @name, or -1. */
int fake_id(struct fake_loader *f, const char *name);
/* The entry of point @name, or NULL. */
struct sds_flag *fake_entry(struct fake_loader *f, const char *name);
/* The cell of point @name, or NULL. */
struct sds_cell *fake_cell(struct fake_loader *f, const char *name);
/* Permit cell of process slot @slot for point @name. */
__u32 *fake_permit(struct fake_loader *f, int slot, const char *name);
/* Open connections. */
int fake_conns(struct fake_loader *f);
/* Read a field under the lock. */
int fake_registers(struct fake_loader *f);

/* The loader's write of line 1 of @e. */
void fake_set(struct sds_flag *e, __u32 active, __u32 rate, __u64 expires_ns,
	      __s64 limit, __u64 probe_ns);

uint64_t fake_now(void);
/*
 * Block the key of hash @hash of point @name until @until_ns, or lift
 * its block, with the loader's own writer: 0 or -1 (errno).
 */
int fake_key_block(struct fake_loader *f, const char *name, __u64 hash,
		   __u64 until_ns);
int fake_key_clear(struct fake_loader *f, const char *name, __u64 hash);

#endif /* SDS_FAKELOADER_H */
