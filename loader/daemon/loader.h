/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * loader.h - the state of one running `sds-bpf attach`, shared by its
 * modules: attach.c (lifecycle), engine.c (strategies, ticks),
 * session.c (guard processes), serve.c (queries).
 */
#ifndef SDS_LOADER_H
#define SDS_LOADER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
/* What struct loader holds by value; the rest by pointer, declared here. */
#include "decide/budget.h"
#include "decide/engine_eval.h"
#include "decide/exact.h"
#include "decide/halfopen.h"
#include "daemon/events.h"
#include "kernel/counters.h"
#include "kernel/probes.h"
#include "kernel/snapshot.h"
#include "publish/flags.h"
#include "serve/ctl.h"
#include "serve/register.h"
#include "deploy/watch.h"

struct capture;
struct failfast;
struct keep;
struct lbpub;
struct metrics;
struct sds_strategies;
struct uplink;

/*
 * What one client may hold, and how long it may take (docs/PROTOCOL.md,
 * "Limits").  One place, so that the numbers and the reasons stay together.
 */
/* Connections not yet registered, all uids: each costs a slot, buffers
 * and a poll entry; 64 is more than a host's operators query at once. */
#define CONN_PENDING_MAX	64
/* ... of which uids other than root may hold at most this many in all:
 * root's `stats` and its processes' `register` always find a slot. */
#define CONN_PENDING_USERS	56
/* ... and one non-root uid at most this many: one user cannot take
 * every slot the others have (libsds opens one connection at a time). */
#define CONN_PENDING_PER_UID	8
/* Registered processes per non-root uid (of SDS_MAX_PROCS in all): 100
 * idle registrations by one user leave 48 slots for the others. */
#define SESSIONS_PER_UID	16
/* Point ids one non-root uid may create with `point NAME` (of
 * SDS_MAX_POINTS): a real app names tens; points that exist already or
 * that the strategies name cost nothing. */
#define POINTS_PER_UID		64
/* Every deadline: the request line complete within this of its first
 * byte (of the accept, for a new connection), a reply written whole
 * within this of being queued.  libsds sends a line in one write. */
#define CONN_DEADLINE_NS	2000000000ULL
/* Work per poll wakeup, so that the tick and the signals wait for at
 * most this much client work: new connections accepted, and one-shot
 * requests (a `register`, or a slice of a `stats`) answered; fewer
 * requests once the tick is due. */
#define CONN_ACCEPT_BURST	8
/* Kernel memory a client's unread replies may pin (SO_SNDBUF; the kernel
 * doubles it): a `stats` of 256 points goes out in a few writes, and a
 * client that does not read is found out within its deadline. */
#define CONN_SNDBUF		32768
#define CONN_QUERY_BURST	4

/* One client connection's buffers and deadlines (conn.c). */
struct conn_io {
	char in[CTL_LINE_MAX + 1];	/* request bytes not handled yet, NUL-terminated */
	size_t in_len;			/* bytes in @in */
	uint64_t in_due_ns;		/* the partial line in @in must be complete by then; 0: none */
	char *out;			/* reply bytes to send (malloc'd); NULL: none */
	size_t out_len;			/* bytes in @out */
	size_t out_off;			/* of them sent */
	uint64_t out_due_ns;		/* @out must be sent whole by then */
	bool fds_due;			/* the next send carries the region's fds (register) */
};

/* A `stats` reply being built, a slice per pass of the loop (serve.c). */
#define SERVE_STATS_SLICE	16	/* points per slice at most (~1 ms of map reads); fewer once the tick is due */
struct stats_job {
	struct json_t *o;		/* the reply's head; NULL: no job */
	char *points;			/* the points built so far, as JSON text */
	size_t len;			/* bytes in @points */
	size_t cap;			/* bytes allocated for @points */
	int next;			/* the next point id to build */
	struct snapshot *snap;		/* the read every point is built from (held) */
};

/* A connection whose request is not answered yet (conn.c). */
struct pending {
	int fd;				/* -1: slot free */
	pid_t pid;			/* from SO_PEERCRED */
	uid_t uid;			/* from SO_PEERCRED */
	bool ready;			/* a whole line in io.in (or a stats job) waits for its turn */
	struct stats_job job;		/* `stats` being built */
	struct conn_io io;		/* its buffers; io.in_due_ns: accept + deadline */
};

/* A guarded process registered over the control socket. */
struct session {
	int fd;				/* its connection; -1: slot free */
	pid_t pid;			/* from SO_PEERCRED */
	uid_t uid;			/* from SO_PEERCRED */
	int file;			/* guard file it holds (register.c); -1: none */
	struct conn_io io;		/* `point` lines in, replies out */
};

/* Lateness of the tick: how long after each timerfd expiry it was served. */
#define TICK_LATE_RING		4096	/* samples kept (41 s at a 10 ms tick) */
#define TICK_LATE_WINDOW_NS	10000000000ULL	/* `stats` reports the last 10 s */
struct tick_late {
	uint32_t us[TICK_LATE_RING];	/* lateness, microseconds */
	uint64_t at_ns[TICK_LATE_RING];	/* CLOCK_MONOTONIC when it was served */
	uint32_t pos;			/* next sample goes there */
	uint32_t n;			/* samples in the ring */
	uint64_t done;			/* ticks done since start (stats: tick_count) */
};

/* struct point_run, what the engine keeps per point: engine_eval.h. */

/*
 * Requests the loader refused to protect itself or other apps, by why
 * (`stats`: "refused").  Each cap is per uid and in total (docs/TRUST.md).
 */
struct refusals {
	uint64_t connections;	/* over a connection cap */
	uint64_t sessions;	/* over a session cap */
	uint64_t points;	/* over a point-id cap, or the table is full */
	uint64_t files;		/* over a guard-file cap, or the table is full */
	uint64_t denied;	/* register: not TARGET, uid not allowed, no usable file */
	uint64_t slow;		/* dropped: missed its deadline, or did not read its reply */
};

struct loader {
	char group[SDS_NAME_MAX + 1];	/* --group */
	char app[SDS_NAME_MAX + 1];	/* --app */
	const char *target;		/* TARGET as given */
	struct reg_policy reg;		/* who may register (register.c) */
	uint64_t key;			/* guard sites pass it: filters other loaders' apps */
	uint64_t epoch;			/* this run, for the guards */
	uint64_t tick_ns;		/* --tick-ms */
	uint64_t sec_offset_ns;		/* the ring's clock offset (counters_align) */
	int64_t wall_offset;		/* Unix seconds minus the ring's seconds */
	struct keep *keep;		/* the state kept across loaders (keep.c); NULL: none */
	struct probes probes;		/* BPF programs and points */
	struct counters counters;	/* sums of the BPF maps */
	struct counters_bpf counters_src;	/* @counters' source: the maps */
	struct snap_pool snaps;		/* buffers of the reads */
	struct snapshot *snap;		/* the last tick's read (held); NULL before the first */
	uint8_t drill_dirty[SDS_MAX_POINTS];	/* drill.c: evaluate the point before the next tick */
	bool drill_any_dirty;		/* drill.c: some @drill_dirty is set */
	struct flags_region flags;	/* the region the guards map */
	struct events events;		/* downgrade transitions */
	const char *strategies_path;	/* --strategies FILE, or NULL */
	struct sds_strategies *strategies;	/* in force; NULL: none */
	struct point_run run[SDS_MAX_POINTS];	/* per point id */
	struct halfopen_run halfopen[SDS_MAX_POINTS];	/* per point id: its half-open phase */
	struct exact_point exact[SDS_MAX_POINTS];	/* exact trips' marks (exact_run.c) */
	bool exact_slow;		/* the BPF side counts slow calls in the guards' cells */
	struct session sessions[SDS_MAX_PROCS];	/* slot = index */
	struct uplink *uplink;		/* heartbeat to sds-admin; NULL without --admin */
	char cache_path[512];		/* last strategies from the admin, for restarts */
	struct refusals refused;	/* what hostile or greedy clients were refused */
	struct pending pending[CONN_PENDING_MAX];	/* connections not registered */
	uint32_t pending_next;		/* where the next wakeup starts answering */
	uid_t point_uid[SDS_MAX_POINTS];	/* who created the point with `point`; 0: root or strategies */
	struct tick_late tick_late;	/* lateness of the last ticks (stats) */
	struct budget budget;		/* --max-overhead: the probes' cost (budget_run.c) */
	struct watch watch;		/* TARGET's builds across deploys (watch.c) */
	struct capture *capture;	/* traffic copy (capture.c); NULL: off */
	struct lbpub *lbpub;		/* providers' load for balancers (lbpub.c); NULL: none yet */
	struct failfast *failfast;	/* LSM fail-fast (failfast.c); NULL: no :failfast= point */
	struct metrics *metrics;	/* --metrics (metrics.h); NULL: off */
};





/* conn.c: connections until they are answered or registered */
void conn__init_all(struct loader *l);
void conn__accept(struct loader *l, int lfd);
void conn__event(struct loader *l, int i, short revents);
/*
 * Answer up to CONN_QUERY_BURST complete requests (or stats slices),
 * fewer if @tick_fd expires meanwhile; true if more wait.
 */
bool conn__serve(struct loader *l, int tick_fd);
void conn__close(struct loader *l, int i, bool slow);
void conn__close_all(struct loader *l);
/* Drop whatever missed its deadline; the next deadline in *@next_ns. */
void conn__sweep(struct loader *l, uint64_t now_ns, uint64_t *next_ns);
short conn_io__events(const struct conn_io *io);
int conn_io__queue(struct conn_io *io, char *reply, uint64_t now_ns);
int conn_io__flush(struct conn_io *io, int fd, const int *fds, int nfds);
void conn_io__free(struct conn_io *io);
/* A reply: @o as one compact JSON line (malloc'ed; NULL on failure); @o is freed. */
char *conn__reply(json_t *o);
/* A reply: {"error": printf(@fmt, ...)}. */
char *conn__error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* session.c (session__init_all and session__close_all do conn.c's table too) */
void session__init_all(struct loader *l);
void session__register(struct loader *l, struct pending *c, const char *arg);
void session__event(struct loader *l, int slot, short revents);
void session__close(struct loader *l, int slot, bool slow);
void session__close_all(struct loader *l);
void session__sweep(struct loader *l, uint64_t now_ns, uint64_t *next_ns);

/* serve.c: one-shot requests (ctl_handler_t); `stats` in slices */
char *serve_request(const char *req, void *loader);
void serve__stats_begin(struct loader *l, struct stats_job *j);
/* 1 when done (*@reply set; NULL: internal error), 0 if slices remain. */
int serve__stats_step(struct loader *l, struct stats_job *j, char **reply,
		      int tick_fd);
void serve__stats_end(struct stats_job *j);

#endif /* SDS_LOADER_H */
