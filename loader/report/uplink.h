/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * uplink.h - the loader's heartbeat to sds-admin (docs/DESIGN.md §7).
 *
 * The main loop accounts every folded second of every point into the
 * natural 10-s period it belongs to (wall clock), closes a period once all
 * its seconds are folded, and queues it.  A sender thread posts the queue
 * oldest first at this host's offset inside the period, to the admin
 * the --admin-policy picks (uplink_pick.c), then to its next picks; periods it cannot send stay queued
 * (bounded, oldest dropped first, counted).  Replies carrying new
 * strategies come back to the main loop through an eventfd.  A 200 whose
 * body cannot be used still means the admin stored the period: it is not
 * sent again, the reply is ignored, counted (admin_errors) and logged.
 *
 * A push thread (uplink_push.c) holds a long-poll open to an admin
 * (GET /api/v1/watch, docs/PUSH.md): when the admin says the app changed,
 * the sender reads the app's state at once (GET /api/v1/sync) and hands
 * it to the main loop as it hands a heartbeat's reply.  The state comes
 * only through the sender, one request after another, so a reply read
 * before a change is never applied after it.
 *
 * With a state dir the queue is also on disk (backlog.c): a period is
 * appended there before it is queued and marked done once the admin
 * stored it or the bound dropped it; uplink__backlog() queues what an
 * earlier loader left, to be sent at once, oldest first.
 */
#ifndef SDS_UPLINK_H
#define SDS_UPLINK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "report/backlog.h"
#include "heartbeat/heartbeat.h"
#include "kernel/probes.h"
#include "window.h"
#include "report/uplink_pick.h"

/*
 * Milliseconds of @clk: CLOCK_REALTIME for what the admin compares
 * (retry dates), CLOCK_MONOTONIC for durations.  The uplink's threads
 * each read the clock themselves.
 */
static inline uint64_t uplink__ms(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define UPLINK_MAX_URLS		8	/* --admin URL,URL,... */
#define UPLINK_URL_MAX		512	/* bytes of one of them */
#define UPLINK_BACKLOG		360	/* periods kept while the admin is away: 1 hour */
#define UPLINK_OPEN		4	/* periods being accounted at once */
/* This host's offset inside the period: 2000 + a hash of its name % 7000. */
#define UPLINK_OFFSET_MIN_MS	2000
#define UPLINK_OFFSET_MAX_MS	9000	/* SDS_HB_OFFSET_MS may say 9000 itself */
/* Test-only: a fixed offset, the same on every machine (sds-bpf(8)). */
#define UPLINK_OFFSET_ENV	"SDS_HB_OFFSET_MS"

/* A period being accounted. */
struct uplink_period {
	int64_t start;			/* Unix seconds, multiple of 10; 0: unused */
	struct sds_heartbeat *hb;	/* its points so far */
};

/* A closed period waiting to be sent. */
struct uplink_msg {
	int64_t period_start;		/* which period */
	uint64_t send_at_ms;		/* wall clock: not before this host's offset */
	char *body;			/* the heartbeat JSON */
};

/* The push channel's state (uplink_push.c), for `stats`. */
enum uplink_push_state {
	PUSH_OFF,			/* --no-push, or not started */
	PUSH_CONNECTING,		/* a watch request is on its way */
	PUSH_WAITING,			/* the admin holds our watch: changes come at once */
	PUSH_RETRYING,			/* the last watch failed: heartbeats alone until it is back */
};

struct uplink_push {
	enum uplink_push_state state;
	int url;			/* the admin watched (index in urls) */
	uint64_t wakes;			/* changes the admin announced */
	uint64_t reconnects;		/* watches sent after a failed one */
	uint64_t failures;		/* watches that failed */
	uint64_t retry_at_ms;		/* wall clock of the next try while retrying */
	char last_error[256];		/* why the last watch failed, "" if it went */
};

/*
 * Cluster-wide limits (uplink_share.c, docs/CLUSTER.md): what the engine
 * reports of a point with a cluster field, and what the admin granted it.
 */
struct uplink_share_report {
	bool want;			/* the point has a cluster field: report it */
	int64_t used;			/* passes in its window */
	int64_t wants;			/* calls tried in its window */
	int64_t rate_wants;		/* calls tried in its last second */
	int64_t visits;			/* its visit share in force, -1: none */
	int64_t token_rate;		/* its token-rate share in force, -1: none */
};

struct uplink_share_grant {
	int64_t visits;			/* visit share, -1: none (no cluster visit limit) */
	int64_t token_rate;		/* token-rate share, -1: none */
	int64_t token_bucket;		/* token-bucket share, -1: none */
};

#define UPLINK_SHARE_MS		500	/* a report this often */
#define UPLINK_ABORTS		16	/* drill stops waiting to be told */
#define UPLINK_SHARE_LEASE_MS	1500	/* a grant stands this long after its reply */

/* Where this host's identity is read (machine-id(5)). */
#define UPLINK_MACHINE_ID	"/etc/machine-id"

/*
 * A point's split sums since attach (kernel/snapshot.h) as the first tick
 * of a period saw them: a period's split is the difference of two.
 */
struct uplink_split {
	bool known;			/* the split was read then */
	uint64_t calls, on_cpu_ns, runq_ns, blocked_ns;
};

struct uplink {
	/* set up once */
	char *urls[UPLINK_MAX_URLS];	/* admin base URLs, as given */
	int nurls;			/* URLs in @urls */
	struct uplink_pick *pick;	/* --admin-policy (uplink_pick.c); NULL: the order given */
	char token[512];		/* bearer token */
	char group[SDS_NAME_MAX + 1];	/* the app's group */
	char app[SDS_NAME_MAX + 1];	/* the app */
	char host[SDS_HB_HOST_MAX + 1];	/* this host's heartbeat name, "NAME_ID" (hostid.c) */
	char plain_host[SDS_HB_HOST_MAX + 1];	/* NAME alone, as loaders before the id sent */
	char ip[SDS_HB_IP_MAX + 1];	/* this host's address, or "" */
	int64_t wall_offset;		/* Unix seconds minus the ring's seconds */
	uint32_t offset_ms;		/* this host's offset inside the period */
	int64_t first_period;		/* the period counting began in: the first sent */
	int event_fd;			/* readable when a reply brought strategies */
	const struct probes *probes;	/* the loader's points, for their names */
	/*
	 * attach --deps: adds each point's dependencies, counted since
	 * attach, to a period's heartbeat as it closes (docs/DEPS.md); NULL:
	 * none.  Set before the loop.
	 */
	void (*deps_fill)(void *ctx, struct sds_heartbeat *hb);
	void *deps_ctx;

	/* the main loop's */
	struct uplink_period open[UPLINK_OPEN];	/* periods being accounted */
	/*
	 * The kernel keeps one latency histogram per point since attach, not
	 * one per second: a period's is the difference of the histograms
	 * taken at the first tick of the period and of the next (@hist_base
	 * at the start of period @closed_upto, @hist_mark at the start of
	 * period @mark_at), up to a tick after each boundary.
	 */
	uint64_t hist_base[SDS_MAX_POINTS][SDS_HIST_BUCKETS];
	uint64_t hist_mark[SDS_MAX_POINTS][SDS_HIST_BUCKETS];
	/* The split's sums, marked as the histograms are (uplink_split.c). */
	struct uplink_split split_base[SDS_MAX_POINTS];
	struct uplink_split split_mark[SDS_MAX_POINTS];
	int64_t mark_at;		/* the period @hist_mark was taken in */
	int64_t closed_upto;		/* periods before this are closed */
	uint64_t drill_seen[SDS_MAX_POINTS][2];	/* entries' drill_faults, drill_delays at the last tick */

	/* shared with the sender, under @lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* the sender's: a period queued, a sync due, stop */
	pthread_cond_t idle_cond;	/* the push and share threads' sleeps: stop */
	struct uplink_msg queue[UPLINK_BACKLOG];	/* ring, oldest at @head */
	int head, count;		/* ring position and size */
	bool head_busy;			/* the sender is posting the head */
	uint64_t sent, dropped, failures;	/* periods delivered, dropped, failed posts */
	uint64_t admin_errors;		/* 200 replies that could not be used */
	int64_t last_sent;		/* the period stored last, 0: none yet */
	uint64_t last_sent_ms;		/* wall clock when its reply came */
	struct backlog *backlog;	/* the queue on disk; NULL: none */
	uint64_t restored;		/* periods an earlier loader left, queued at start */
	bool backlog_said;		/* a backlog write failed and was said (once) */
	char last_error[256];		/* why the last post failed or its reply was
					 * unusable, "" if it went */
	/* the sender's: its log of unusable replies, a line a minute at most */
	uint64_t log_at_ms;		/* wall clock of the last line, 0: none yet */
	unsigned int log_skipped;	/* unusable replies since, not logged */
	struct sds_strategies *reply;	/* new strategies for the main loop, or NULL */
	bool drills_new;		/* @drills came with a reply the main loop has not taken */
	int ndrills;			/* the app's active drills, as of the last reply */
	struct sds_hb_drill drills[SDS_HB_MAX_DRILLS];
	int64_t drills_seq;		/* the admin's counter of @drills (heartbeat_drills_newer) */
	uint64_t drills_seq_ms;		/* wall clock they were taken at */
	uint64_t drills_stale;		/* replies whose older drills were not taken */
	bool copy_new;			/* @copy came with a reply the main loop has not taken */
	struct sds_hb_copy copy;	/* the app's copy plans and servers, as of the last reply that had them */
	bool stop;			/* the sender (and the push thread) must exit */
	pthread_t thread;		/* the sender */
	bool started;			/* @thread runs */
	/* the push channel's (uplink_push.c), under @lock */
	bool push_off;			/* --no-push: heartbeats alone */
	struct uplink_push push;	/* the long-poll's state */
	bool sync_due;			/* a change was announced: the sender reads the state */
	uint64_t sync_at_ms;		/* ... not before then (after a failed read) */
	uint64_t syncs, sync_failures;	/* state reads that went, that failed */
	void *push_multi;		/* its CURLM, woken at stop; NULL: no push thread */
	pthread_t push_thread;		/* the push thread */
	bool push_started;		/* @push_thread runs */
	/* the main loop's, read by the sender (atomic) */
	int64_t version_now;		/* strategies version in force at the last tick */
	/* cluster shares (uplink_share.c), under @lock */
	struct uplink_share_report share_in[SDS_MAX_POINTS];	/* per point id, the engine's */
	int share_npoints;		/* point ids in @share_in */
	struct uplink_share_grant share_out[SDS_MAX_POINTS];	/* per point id, the last reply's */
	bool share_new;			/* @share_out came since the main loop took it */
	int share_hosts;		/* live hosts of the app, as of the last reply; 0: none yet */
	uint64_t share_reports, share_failures;	/* reports answered, failed */
	char share_error[256];		/* why the last report failed, "" if it went */
	pthread_t share_thread;		/* the share thread */
	bool share_started;		/* @share_thread runs */

	/* drills stopped here by a stop condition (uplink_abort.c), under @lock */
	struct uplink_abort_msg {
		int64_t id;			/* the admin's drill id */
		char why[SDS_HB_STOP_REASON_MAX];	/* which condition broke, by what */
	} aborts[UPLINK_ABORTS];	/* to tell the admin, oldest first */
	int naborts;			/* entries of @aborts */
	uint64_t aborts_sent, abort_failures;	/* told; given up or dropped */
	pthread_cond_t abort_cond;	/* a notice queued, or stop */
	pthread_t abort_thread;
	bool abort_started;		/* @abort_thread runs */
};

/*
 * Set up from --admin URL[,URL...] and --token-file; @err names what is
 * wrong (an unreadable token file, a bad URL, an SDS_HB_OFFSET_MS that is
 * not a number of ms in UPLINK_OFFSET_MIN_MS..UPLINK_OFFSET_MAX_MS).
 */
/* @wall_offset: Unix seconds minus the ring's seconds (counters_now_sec). */
int uplink__init(struct uplink *u, const char *urls, const char *token_file,
		 const char *group, const char *app, int64_t wall_offset,
		 char *err, size_t errlen);
/*
 * Counting begins at ring second @first_sec (counters__init's): the first
 * period is the one it falls in, @wall_offset maps ring seconds to Unix
 * seconds.  Before the loop's first tick; an adopted loader's kept state
 * (keep.c) then puts back the periods it was accounting.
 */
void uplink__begin(struct uplink *u, int64_t wall_offset, uint64_t first_sec);
/* The sender, and the push thread unless @u->push_off. */
int uplink__start(struct uplink *u);
/*
 * uplink_push.c: start and stop the push thread (uplink__start and
 * uplink__stop call them); its state as `stats` shows it.
 */
int uplink_push__start(struct uplink *u);
void uplink_push__stop(struct uplink *u);
json_t *uplink_push__json(struct uplink *u);
/*
 * uplink_share.c: the cluster shares' thread (started with the sender,
 * stopped with it); the engine's reports of points 0..@npoints-1 (every
 * tick that has a point with a cluster field; @r[id].want false for a
 * point without one);
 * the grants of the last reply, if new since the last call (copied into
 * @out, room for SDS_MAX_POINTS; returns the app's live hosts), else -1.
 */
int uplink_share__start(struct uplink *u);
void uplink_share__stop(struct uplink *u);
void uplink_share__report(struct uplink *u, const struct uplink_share_report *r,
			  int npoints);
int uplink_share__take(struct uplink *u, struct uplink_share_grant *out);
json_t *uplink_share__json(struct uplink *u);
/*
 * uplink_abort.c: the thread that tells the admin of drills a stop
 * condition stopped here (started and stopped with the sender), and the
 * main loop's notice of one (never blocks on the network).
 */
int uplink_abort__start(struct uplink *u);
void uplink_abort__stop(struct uplink *u);
void uplink_abort__note(struct uplink *u, int64_t id, const char *why);

/*
 * Keep the queue in <@state_dir>/<group>.<app>.backlog, and queue the
 * periods an earlier loader left there (before uplink__start).  What was
 * wrong with the file is said in @msg (one line, "" if nothing), never
 * fatal.  -1 with @err: the path is too long, or out of memory.
 */
int uplink__backlog(struct uplink *u, const char *state_dir, char *msg,
		    size_t msglen, char *err, size_t errlen);

/*
 * The sender's: the head was stored (or its reply was unusable), pop it.
 * Under @u->lock; returns its period, for uplink__acked() after unlocking.
 */
int64_t uplink__pop_head(struct uplink *u);
/* Period @start is stored at the admin: done in the backlog.  Not under the lock. */
void uplink__acked(struct uplink *u, int64_t start);
void uplink__stop(struct uplink *u);

/* counters' on_second hook: second @sec of point @id counted @c. */
void uplink__on_second(void *u, int id, uint64_t sec, const struct sds_counts *c);

/*
 * Open period @start's heartbeat (its points so far), opened if it is
 * not: a loader adopting kept state puts the sums back (uplink__restore).
 */
struct sds_heartbeat *uplink__open_period(struct uplink *u, int64_t start);

/*
 * What the crash-only keep (keep.c) holds of the uplink, in its pinned
 * copies: the layout is keep's (KEEP_LAYOUT), the contents the uplink's.
 */
/* One open heartbeat point's sums (struct sds_hb_point's counts). */
struct uplink_psum {
	char name[SDS_NAME_MAX + 1];	/* the point; "" past the period's last */
	uint64_t visits;		/* its counts so far in the period ... */
	uint64_t exceptions;
	uint64_t timeouts;
	uint64_t downgrades;
	uint64_t max_concurrency;	/* ... its gauge's maximum ... */
	uint64_t faults;		/* ... and what drills injected */
	uint64_t delays;
};
/* The app's part. */
struct uplink_kept {
	int64_t closed_upto;		/* periods before this are closed */
	int64_t mark_at;		/* the period hist_mark was taken in */
	int64_t open_start[UPLINK_OPEN];	/* the open periods; 0: unused */
	uint32_t open_n[UPLINK_OPEN];	/* points of each, in the records' @open[k] */
};
/* One record's part: point id @i's marks, the @i-th point of each open period. */
struct uplink_kept_point {
	uint64_t hist_base[SDS_HIST_BUCKETS];	/* the histogram at the closed period's start */
	uint64_t hist_mark[SDS_HIST_BUCKETS];	/* ... at the open period's start */
	uint64_t drill_seen[2];		/* drill faults, delays at the last tick */
	struct uplink_psum open[UPLINK_OPEN];	/* heartbeat point of this index, per open period */
};
/*
 * Save @u's state of @npoints points into @a and the records at @kp, the
 * next record @stride bytes after each (keep's per-point records hold
 * more than ours); restore it into a new @u (its open periods reopened,
 * their sums back), a loader adopting the kept state.
 */
void uplink__save(const struct uplink *u, int npoints, struct uplink_kept *a,
		  struct uplink_kept_point *kp, size_t stride);
void uplink__restore(struct uplink *u, int npoints,
		     const struct uplink_kept *a,
		     const struct uplink_kept_point *kp, size_t stride);

struct tick;
/*
 * Does the tick at ring second @now_sec close a period (its last second
 * folded)?  Then the engine has the owners fill the tick's heartbeat
 * extras (struct tick_point.hb, tick.build) before uplink__tick.
 */
bool uplink__closing(const struct uplink *u, uint64_t now_sec);
/* Every tick, from its record: concurrency maxima, drills, closing finished periods. */
void uplink__tick(struct uplink *u, const struct tick *t);

/* New strategies from the admin (the caller owns them), or NULL. */
struct sds_strategies *uplink__take_reply(struct uplink *u);

/*
 * The drills of the last reply, if one came since the last call: copies
 * them into @out (room for SDS_HB_MAX_DRILLS) and returns how many; -1
 * when no reply came.
 */
int uplink__take_drills(struct uplink *u, struct sds_hb_drill *out);

/*
 * The copy plans and servers of the last reply that carried them (an
 * older admin sends none), if one came since the last call: copies them
 * into @out and returns 1; 0 when nothing new.
 */
int uplink__take_copy(struct uplink *u, struct sds_hb_copy *out);

/*
 * {"urls", "host", "offset_ms", "first_period", "open_period", "sent",
 * "last_sent", "pending", "queue", "dropped", "failures", "admin_errors",
 * "last_error", "backlog", "restored", "push"}: "backlog" is the file ("" without
 * one), "restored" the periods queued from it at start; "open_period" the
 * oldest period not closed yet, "queue" the queued periods oldest first,
 * each {"period", "send_at_ms"}; "last_sent" {"period", "at_ms"} or null;
 * "push" the channel's {"state", "url", "wakes", "syncs", "sync_failures",
 * "reconnects", "failures", "last_error"} (+ "retry_at_ms" while retrying).
 */
json_t *uplink__json(struct uplink *u);

/*
 * uplink_split.c: at a period's first tick, every point's split sums
 * (beside the histograms); at its close, point @id's split of the period
 * into @hp (nothing when either end was not read).
 */
struct point_stats;
void uplink_split__mark(struct uplink *u, int id, const struct point_stats *st);
void uplink_split__close(struct uplink *u, int id, struct sds_hb_point *hp);

#endif /* SDS_UPLINK_H */
