/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * watch.h - following TARGET across deploys (docs/DEPLOY.md): a new file
 * moved or written to TARGET's path (a new inode) gets the function
 * points attached with the same ids, its symbols resolved afresh; the
 * old build's probes stay while some process maps it.
 */
#ifndef SDS_WATCH_H
#define SDS_WATCH_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "target/buildid.h"
#include "target/exits.h"

struct bpf_link;
struct budget;
struct events;
struct keep;
struct probe_point;
struct probes;
struct reg_policy;
struct sds_heartbeat;

/*
 * What a deploy changes outside watch.c, each through its owner's
 * function (attach fills it, once): the table of points (the current
 * build's: probes__swap_build), the budget's cost per call of each
 * point (budget_set_cost), who may register (register__set_target), the
 * TARGET a next loader adopts (keep__set_target), and the events.
 */
struct watch_env {
	struct probes *probes;		/* the loader's points */
	struct budget *budget;		/* the probe-cost budget */
	struct reg_policy *reg;		/* who may register: TARGET's inode */
	struct keep *keep;		/* the kept state; NULL: none */
	struct events *events;		/* deploy events */
};

/*
 * Builds of one TARGET with probes at once: the current one and up to 3
 * older ones that processes still run.  A fourth deploy while all three
 * still run detaches the oldest (an event says so): a host that deploys
 * faster than its processes drain is not followed into unbounded probes.
 */
#define WATCH_BUILDS_MAX	4
/* Old builds whose links are being detached off the loop at once; more wait in it. */
#define WATCH_DETACH_MAX	8
/* How often old builds are checked for processes (a /proc scan), only while there are some. */
#define WATCH_SCAN_NS		2000000000ULL

/* One build of TARGET: an inode the points are attached to. */
struct watch_build {
	bool used;			/* slot taken */
	dev_t dev;			/* the inode ... */
	ino_t ino;			/* ... its probes sit on */
	int64_t mtime_ns;		/* its mtime when resolved: a rewrite in place changes it */
	char id[BUILDID_HEX_MAX + 1];	/* its GNU build-id, "" if none */
	uint64_t since_ms;		/* wall clock, Unix ms: attached (the first: attach) */
	int attached;			/* function points attached in it */
	int npts;			/* entries of @pts */
	/*
	 * An old build: its points (their links) and catch sites, moved out
	 * of the loader's table when a newer one took their place.  NULL
	 * for the current build, whose points are the loader's own.
	 */
	struct probe_point *pts;
	struct catch_sites catches;	/* an old build's catch sites */
	struct bpf_link *catch_links[EXITS_CATCH_MAX];	/* ... and their links */
};

struct watch {
	int fd;				/* inotify on TARGET's directory; -1: not following */
	char path[PATH_MAX];		/* TARGET's real path */
	const char *base;		/* its name in the directory (in @path) */
	const char *run_dir;		/* the fork check's cache (forkcheck.h) */
	bool fork_safe;			/* attach --fork-safe */
	uid_t owner;			/* TARGET's owner at attach: a new build must be its or root's */
	int cur;			/* the current build's slot in @builds */
	uint32_t deploys;		/* new builds followed since attach */
	uint32_t rejected;		/* files at the path not followed (not ELF, ...) */
	dev_t rej_dev;			/* the last file rejected ... */
	ino_t rej_ino;			/* ... by inode ... */
	int64_t rej_mtime_ns;		/* ... and mtime: said once, not per event */
	uint64_t next_scan_ns;		/* CLOCK_MONOTONIC of the next check of old builds */
	pthread_t detaching[WATCH_DETACH_MAX];	/* threads detaching old builds (watch_detach.c) */
	int ndetaching;			/* ... running or not yet joined */
	struct watch_build builds[WATCH_BUILDS_MAX];	/* slot @cur: the current one */
	struct watch_env env;		/* what a deploy changes outside (watch__open) */
};

/*
 * Start following TARGET (@path, real; @pid: attach --pid, for which a
 * new build is no concern: that process runs the old one).  The current
 * build is what the points were attached to.  0, or -1 with a message.
 */
int watch__open(struct watch *w, const struct watch_env *env, const char *path,
		pid_t pid, bool fork_safe, const char *run_dir, char *err,
		size_t errlen);

/*
 * Slot @i holds an old build still probed: its inode in @dev/@ino, 1;
 * else 0.  register.c lets a process of one register (a fork of an old
 * build's server, after the deploy).
 */
int watch__held(const struct watch *w, int i, dev_t *dev, ino_t *ino);

/* The inotify fd for the loop's poll set, or -1. */
int watch__fd(const struct watch *w);

/* The fd is readable: follow what appeared at the path. */
void watch__event(struct watch *w);

/* Each tick: detach old builds no process maps any more (every WATCH_SCAN_NS). */
void watch__tick(struct watch *w);

/* `stats`: {"current": id, "deploys": N, "rejected": N, "list": [...]}. */
json_t *watch__json(const struct watch *w);

/* The heartbeat's "build": the current build-id and deploys, once a deploy was followed. */
void watch__heartbeat(const struct watch *w, struct sds_heartbeat *hb);

/*
 * watch_proc.c: does a process use inode @dev/@ino?  One stat of
 * /proc/PID/exe per process first, then, only if none runs it, the maps
 * of each (a shared library).  True when /proc cannot be read (keep).
 */
bool watch_proc__uses(dev_t dev, ino_t ino);

/*
 * watch_detach.c: hand old build @b's links to a thread that detaches
 * and frees them, and free its slot now (in the loop when no thread can
 * be had); reap the threads done, returning how many are not; wait for
 * them all (at exit).
 */
void watch_detach__start(struct watch *w, struct watch_build *b);
int watch_detach__reap(struct watch *w);
void watch_detach__join(struct watch *w);

/* Detach every old build and stop watching. */
void watch__close(struct watch *w);

#endif /* SDS_WATCH_H */
