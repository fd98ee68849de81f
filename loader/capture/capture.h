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
#include "capture/recorder.h"
#include "heartbeat/heartbeat.h"
#include "sds_types.h"

struct bpf_link;
struct flags_region;
struct pending;
struct probes;
struct ring_buffer;
struct sds_copy_bpf;
struct sds_strategies;
struct uplink;

/*
 * What capture reads and asks of the rest of the loader (attach fills
 * it): the points (the copy site is offered through probes__set_copy_site),
 * the guard points' copy flags (flags__set_copy), the strategies in
 * force (a reload replaces them: a pointer to the loader's), the admin's
 * plans (uplink__take_copy).
 */
struct capture_env {
	struct probes *probes;		/* the loader's points */
	struct flags_region *flags;	/* the region the guards map */
	const char *app;		/* the app's name, in every record */
	struct sds_strategies *const *strategies;	/* in force; *NULL: none */
	struct uplink *uplink;		/* the admin's link; NULL: no admin */
};

#define CAPTURE_RING_DEFAULT	(4u << 20)	/* --copy-ring default, bytes */
#define CAPTURE_DRAIN_BURST	512		/* captures per loop wakeup */

/* Per point, the loader's side of capture. */
struct capture_point {
	bool able;			/* a :copy= function point, or a guard point */
	uint32_t rate;			/* in force in the BPF config */
	bool to_servers;		/* its records go to the copy servers */
	bool diff;			/* a live diff plan: pairs and responses go to the servers too */
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
	struct bpf_link **ret_links;	/* SDS_MAX_POINTS: their :copy_ret= return probes */
	bool copy_to;			/* --copy-to given: its servers, every able point */
	struct copyout_addr copy_to_addrs[COPYOUT_SERVERS];	/* --copy-to */
	int ncopy_to;			/* servers in @copy_to_addrs */
	struct copyout out;		/* the streams to the servers */
	struct sds_hb_copy plans;	/* the admin's last word (plans, servers) */
	bool has_plans;			/* @plans came from an admin */
	struct recorder rec[CAPTURE_RECORDERS];	/* `record` clients */
	struct capture_point pt[SDS_MAX_POINTS];	/* per point id */
	uint8_t *enc;			/* COPYREC_MAX_LEN: one record being encoded */
	uint64_t drained;		/* captures taken from the ring */
	struct capture_env env;		/* what it reads outside (capture__open) */
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
 * to the guard files (probes__set_copy_site).  *@cp is set at once (so
 * that capture__close frees what a failure left); 0, or -1 (said).
 */
int capture__open(struct capture **cp, const struct capture_env *env,
		  const struct capture_opts *o, const char *path, int pid,
		  int nfunc);
void capture__close(struct capture *c);

/*
 * Every function below takes the loader's capture, NULL when it is off
 * (then they do nothing, or say so: zeros, null, -1).
 */
/* Can point @id be captured: a :copy= function point, or a guard point? */
bool capture__able(const struct capture *c, int id);
/* The ring's fd for poll(); -1 when capture is off. */
int capture__fd(const struct capture *c);
/* Take up to CAPTURE_DRAIN_BURST captures from the ring to the sinks. */
void capture__drain(struct capture *c);
/* Server stream @i (of COPYOUT_SERVERS): fd and events for poll (fd -1: none). */
short capture__out_events(const struct capture *c, int i, int *fd);
/* Streams ready (@revents[i] for stream i; NULL: none, time passed). */
void capture__out_event(struct capture *c, const short *revents);
/* Every tick: the admin's plans of the last reply (uplink__take_copy),
 * rates from plans, recorders, --copy-to; reconnects. */
void capture__tick(struct capture *c);

/* Point @id's counts summed over CPUs (zeros when capture is off). */
void capture__counts(const struct capture *c, int id, struct sds_copy_count *n);
/* `stats`: the point's "copy" object, or NULL when it cannot copy. */
struct json_t *capture__point_json(const struct capture *c, int id);
/* The stream to the servers: {servers, server, connects, failures, refused}. */
struct json_t *capture__out_json(const struct capture *c);
/* Heartbeat: the point's copy_* of the period (deltas since the last). */
void capture__heartbeat(struct capture *c, int id, struct sds_hb_point *hp);

/*
 * `record POINT...` from @p (root only): the points checked here (which
 * can be captured is capture's to say), the connection handed to a
 * recorder (p->fd -1) and the rates applied at once; or an error reply.
 */
char *capture__record(struct capture *c, struct pending *p, const char *args);
/* poll: recorder @i's fd and events (fd -1: none). */
short capture__recorder_events(const struct capture *c, int i, int *fd);
/* Recorder @i's fd is ready; a recorder that ends changes the rates. */
void capture__recorder_event(struct capture *c, int i, short revents);

#endif /* SDS_CAPTURE_H */
