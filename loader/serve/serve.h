/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * serve.h - the control socket of a running loader (docs/PROTOCOL.md):
 * connections until they are answered (conn.c), guarded processes
 * registered on it (session.c, register.c), the replies to queries
 * (serve.c), and the buffers, deadlines and reply lines they all use
 * (conn_io.c).
 *
 * None of these files sees the loader whole: what they read of it and
 * what they ask it to do is struct serve, filled by attach
 * (cli/attach_wire.c).  Calls go one way:
 *
 *   conn -> session -> register        a `register` turns a pending
 *   conn -> serve                      connection into a session, a
 *   conn -> capture (record)           query is answered by serve.c
 *   everyone -> conn_io                (buffers, reply lines, the tick's due)
 *
 * A session never calls back into conn.c: the tables are set up and
 * closed by attach, which calls conn__ and session__ in turn.
 */
#ifndef SDS_SERVE_H
#define SDS_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "sds_flags.h"
#include "sds_types.h"
#include "serve/ctl.h"

struct capture;
struct events;
struct flags_region;
struct json_t;
struct point_stats;
struct probes;
struct reg_policy;
struct snapshot;
struct watch;

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


/*
 * What the control socket asks of the rest of the loader, each answered
 * where the loader is whole (cli/attach_wire.c).  @ctx is struct
 * serve's.
 */
struct serve_ops {
	/* A guard's `point NAME`: its new id (the engine starts it), -1: the table is full. */
	int (*point)(void *ctx, const char *name);
	/* `drill ARGS` from root: the reply line (malloc'd). */
	char *(*drill)(void *ctx, const char *args);
	/* A read no older than ~1 ms for a query (held: snapshot__put it). */
	struct snapshot *(*query_snapshot)(void *ctx);
	/*
	 * `stats` and `info`: the loader-wide values of the head, an object
	 * with "strategies_version", "admin", "tick_late_ms", "tick_count",
	 * "folded_through" and "budget" (serve.c puts them in the reply's
	 * order).
	 */
	struct json_t *(*head)(void *ctx);
	/*
	 * `stats`: point @id's "state", "drill", "overhead" and, on a
	 * :failfast= point, "failfast", on a point with a cluster-wide
	 * limit, "cluster", on an adaptive point, "adaptive" (serve.c puts
	 * them in order).
	 */
	struct json_t *(*point_state)(void *ctx, int id,
				      const struct point_stats *st);
	/*
	 * `keys`: whether point @id's key of hash @hash is blocked by the
	 * point's key limits now: 1 or 0; -1: the point has no key limits.
	 */
	int (*key_blocked)(void *ctx, int id, uint64_t hash);
	/*
	 * `deps [POINT]`: each point's dependencies (docs/DEPS.md), or of
	 * point @point only (NULL: all); NULL on no memory.
	 */
	struct json_t *(*deps)(void *ctx, const char *point);
};

/* The control socket's state, and what it reads of the loader's. */
struct serve {
	struct pending pending[CONN_PENDING_MAX];	/* connections not registered */
	uint32_t pending_next;		/* where the next wakeup starts answering */
	struct refusals refused;	/* what hostile or greedy clients were refused */
	uid_t point_uid[SDS_MAX_POINTS];	/* who created the point with `point`; 0: root or strategies */
	/* The registered processes, slot = index (the engine reads which are open). */
	struct session sessions[SDS_MAX_PROCS];
	/* What it reads (attach fills it before the loop). */
	const char *app;		/* --app */
	const char *group;		/* --group */
	const char *target;		/* TARGET as given */
	uint64_t key;			/* register's reply: the guards' key */
	uint64_t epoch;			/* ... and this run's epoch */
	struct probes *probes;		/* the points; guard files (register.c) */
	struct flags_region *flags;	/* the region the sessions map */
	const struct reg_policy *reg;	/* who may register */
	const struct watch *watch;	/* old builds a process may run; `stats`' "builds" */
	struct capture *const *capture;	/* traffic copy, *NULL: off */
	struct events *events;		/* `events` */
	const struct serve_ops *ops;	/* what it asks the loader to do */
	void *ctx;			/* ... with this */
};

/* conn_io.c: a connection's buffers and deadlines, reply lines */
short conn_io__events(const struct conn_io *io);
int conn_io__queue(struct conn_io *io, char *reply, uint64_t now_ns);
int conn_io__flush(struct conn_io *io, int fd, const int *fds, int nfds);
void conn_io__free(struct conn_io *io);
/* A reply: @o as one compact JSON line (malloc'ed; NULL on failure); @o is freed. */
char *conn_io_reply(struct json_t *o);
/* A reply: {"error": printf(@fmt, ...)}. */
char *conn_io_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Has the tick timer @tick_fd expired since it was read?  Then clients wait. */
bool conn_io_tick_due(int tick_fd);

/* conn.c: connections until they are answered or registered */
void conn__init_all(struct serve *sv);
void conn__accept(struct serve *sv, int lfd);
void conn__event(struct serve *sv, int i, short revents);
/*
 * Answer up to CONN_QUERY_BURST complete requests (or stats slices),
 * fewer if @tick_fd expires meanwhile; true if more wait.
 */
bool conn__serve(struct serve *sv, int tick_fd);
void conn__close(struct serve *sv, int i, bool slow);
void conn__close_all(struct serve *sv);
/* Drop whatever missed its deadline; the next deadline in *@next_ns. */
void conn__sweep(struct serve *sv, uint64_t now_ns, uint64_t *next_ns);

/* session.c: guarded processes, in @sv->sessions */
void session__init_all(struct serve *sv);
/* `register ARG` from @c: it becomes a session, or an error is queued on it. */
void session__register(struct serve *sv, struct pending *c, const char *arg);
void session__event(struct serve *sv, int slot, short revents);
void session__close(struct serve *sv, int slot, bool slow);
void session__close_all(struct serve *sv);
void session__sweep(struct serve *sv, uint64_t now_ns, uint64_t *next_ns);

/* serve_keys.c: `keys POINT [N]`, a keyed point's heaviest keys */
struct json_t *serve__keys_json(struct serve *sv, const char *args);
/*
 * `keys-block POINT SECONDS KEY` (root): key KEY of keyed :failfast=
 * point POINT fails fast for SECONDS (0: unblocked); KEY as `stats
 * --keys` shows it (an integer, text, or 0x and hex).
 */
struct json_t *serve__keys_block(struct serve *sv, const char *args);

/* serve.c: one-shot requests; `stats` in slices */
char *serve__request(struct serve *sv, const char *req);
void serve__stats_begin(struct serve *sv, struct stats_job *j);
/* 1 when done (*@reply set; NULL: internal error), 0 if slices remain. */
int serve__stats_step(struct serve *sv, struct stats_job *j, char **reply,
		      int tick_fd);
void serve__stats_end(struct stats_job *j);

#endif /* SDS_SERVE_H */
