/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * capture.h - traffic copy in the loader (issue 12, docs/COPY.md
 * "Capture"): the copy BPF object (bpf/copy.bpf.c) on the function points
 * that say :copy= and on libsds's copy site, each point's rate, the ring
 * drained in the loop, each capture turned into a copy record for the
 * sinks (copyout.h: the sds-copy servers; recorders).
 *
 * Who wants a point captured, at what rate (capture__apply, every tick):
 * an admin plan naming it (its sample_pct wins); else the spec's
 * :copy_rate= (100 for a guard point) when `--copy-to` is given or a
 * recorder records it; else 0, and the program returns at once.
 */
#ifndef SDS_CAPTURE_H
#define SDS_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>
#include "capture/copyout.h"
#include "heartbeat/heartbeat.h"
#include "sds_types.h"

struct bpf_link;
struct loader;
struct pending;
struct ring_buffer;
struct sds_copy_bpf;

#define CAPTURE_RING_DEFAULT	(4u << 20)	/* --copy-ring default, bytes */
#define CAPTURE_DRAIN_BURST	512		/* captures per loop wakeup */
#define CAPTURE_RECORDERS	8		/* `record` clients at once */
#define RECORDER_BUF		(1u << 20)	/* bytes queued per recorder */
#define RECORDER_END_NS		2000000000ULL	/* the end's bytes go within this */

/* One `sds-bpf record` client (recorder.c). */
struct recorder {
	int fd;				/* its control connection; -1: slot free */
	uint8_t *want;			/* SDS_MAX_POINTS flags: the points it records */
	uint8_t *buf;			/* RECORDER_BUF bytes to send */
	size_t head;			/* first unsent byte */
	size_t len;			/* bytes queued from @head */
	uint64_t records;		/* records queued for it */
	uint64_t bytes;			/* ... their bytes */
	uint64_t dropped;		/* records that did not fit @buf */
	bool ending;			/* the client asked to stop: the end is queued */
	uint64_t end_due_ns;		/* ... and must be sent by then */
};

/* Per point, the loader's side of capture. */
struct capture_point {
	bool able;			/* a :copy= function point, or a guard point */
	uint32_t rate;			/* in force in the BPF config */
	bool to_servers;		/* its records go to the copy servers */
	bool write;			/* its strategy says "copy": "write" */
	uint64_t sent;			/* records written whole to a copy server */
	uint64_t lost;			/* records dropped after capture: a full sink, a cut stream */
	uint64_t hb_seen[3];		/* captured, dropped, truncated at the last heartbeat period */
};

struct capture {
	struct sds_copy_bpf *skel;	/* the copy programs and maps */
	struct ring_buffer *rb;		/* the ring's consumer */
	int cap;			/* point ids the maps hold */
	int ncpu;			/* possible CPUs (per-CPU counts) */
	int64_t real_offset_ns;		/* CLOCK_REALTIME - CLOCK_MONOTONIC at load */
	struct bpf_link **fn_links;	/* SDS_MAX_POINTS: function points' copy probes */
	bool copy_to;			/* --copy-to given: its servers, every able point */
	struct copyout_addr copy_to_addrs[COPYOUT_SERVERS];	/* --copy-to */
	int ncopy_to;			/* servers in @copy_to_addrs */
	struct copyout out;		/* the stream to the servers */
	struct sds_hb_copy plans;	/* the admin's last word (plans, servers) */
	bool has_plans;			/* @plans came from an admin */
	struct recorder rec[CAPTURE_RECORDERS];	/* `record` clients */
	struct capture_point pt[SDS_MAX_POINTS];	/* per point id */
	uint8_t *enc;			/* COPYREC_MAX_LEN: one record being encoded */
	uint64_t drained;		/* captures taken from the ring */
};

/* attach's options for capture. */
struct capture_opts {
	const char *copy_to;		/* --copy-to HOST:PORT[,...]; NULL: none */
	uint32_t ring_bytes;		/* --copy-ring, a power of 2 >= 4096 */
	const char *token_file;		/* --copy-token-file; NULL: none */
};

/* Parse --copy-to early (nothing loaded yet): 0, or -1 (said). */
int capture__check_opts(const struct capture_opts *o);

/*
 * Load the copy object sized to the loader's points, attach it to every
 * :copy= function point of TARGET (@path, @pid; points 0..@nfunc-1, not
 * attached yet: their sites are resolved), and offer the copy site
 * to the guard files (probes->copy_site_prog).  0, or -1 (said).
 */
int capture__open(struct loader *l, const struct capture_opts *o,
		  const char *path, int pid, int nfunc);
void capture__close(struct loader *l);

/* Can point @id be captured: a :copy= function point, or a guard point? */
bool capture__able(const struct loader *l, int id);
/* The ring's fd for poll(); -1 when capture is off. */
int capture__fd(const struct loader *l);
/* Take up to CAPTURE_DRAIN_BURST captures from the ring to the sinks. */
void capture__drain(struct loader *l);
/* The servers' connection: fd and events for poll (fd -1: none). */
short capture__out_events(const struct loader *l, int *fd);
void capture__out_event(struct loader *l, short revents);
/* Every tick: rates from plans, recorders, --copy-to; reconnects. */
void capture__tick(struct loader *l);
/* The admin's plans and servers of the last reply (uplink). */
void capture__set_plans(struct loader *l, const struct sds_hb_copy *c);

/* Point @id's counts summed over CPUs (zeros when capture is off). */
void capture__counts(const struct loader *l, int id, struct sds_copy_count *n);
/* `stats`: the point's "copy" object, or NULL when it cannot copy. */
struct json_t *capture__point_json(const struct loader *l, int id);
/* The stream to the servers: {servers, server, connects, failures, refused}. */
struct json_t *capture__out_json(const struct loader *l);
/* Heartbeat: the point's copy_* of the period (deltas since the last). */
void capture__hb_point(struct loader *l, int id, struct sds_hb_point *hp);

/* recorder.c: `record POINT...` from @c (root only): the connection is
 * taken over (c->fd -1) or an error is queued. */
char *recorder__request(struct loader *l, struct pending *c, const char *args);
/* A record for every recorder that wants point @id. */
void recorder__push(struct loader *l, uint32_t id, const void *rec, size_t len);
/* poll: recorder @i's fd and events. */
short recorder__events(const struct loader *l, int i, int *fd);
void recorder__event(struct loader *l, int i, short revents);
/* Recorders of point @id (rates: a recorded point captures). */
bool recorder__wants(const struct loader *l, int id);
void recorder__close_all(struct loader *l);

#endif /* SDS_CAPTURE_H */
