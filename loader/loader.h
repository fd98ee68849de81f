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
#include "chain.h"
#include "ctl.h"
#include "counters.h"
#include "drill.h"
#include "events.h"
#include "flags.h"
#include "probes.h"
#include "register.h"
#include "strategy.h"
#include "uplink.h"

/* A guarded process registered over the control socket. */
struct session {
	int fd;				/* its connection; -1: slot free */
	pid_t pid;			/* from SO_PEERCRED */
	uid_t uid;			/* from SO_PEERCRED */
	int file;			/* guard file it holds (register.c); -1: none */
	char buf[CTL_LINE_MAX];		/* partial request line */
	size_t len;			/* bytes in @buf */
};

/* What the engine keeps per point between ticks. */
struct point_run {
	struct chain_state cs;		/* trip and hold */
	uint64_t reset_sec;		/* the window starts afresh after this second; 0: never reset */
	struct sds_counts reset_base;	/* counts of @reset_sec up to the reset */
	uint64_t token_seen;		/* guard's refused_token at the last tick */
	uint64_t conc_seen;		/* guard's refused_concurrent at the last tick */
	uint32_t limit_reason;		/* token/concurrent refusals seen in the last second */
	uint64_t limit_last_ns;		/* when refusals were last seen */
	uint32_t shown_reason;		/* reason of the last "started" event; 0: none open */
	struct drill_run drill;		/* the point's drill; kind 0: none */
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

struct loader {
	char group[SDS_NAME_MAX + 1];	/* --group */
	char app[SDS_NAME_MAX + 1];	/* --app */
	const char *target;		/* TARGET as given */
	struct reg_policy reg;		/* who may register (register.c) */
	uint64_t key;			/* guard sites pass it: filters other loaders' apps */
	uint64_t epoch;			/* this run, for the guards */
	uint64_t tick_ns;		/* --tick-ms */
	struct probes probes;		/* BPF programs and points */
	struct counters counters;	/* sums of the BPF maps */
	struct flags_region flags;	/* the region the guards map */
	struct events events;		/* downgrade transitions */
	const char *strategies_path;	/* --strategies FILE, or NULL */
	struct sds_strategies *strategies;	/* in force; NULL: none */
	struct point_run run[SDS_MAX_POINTS];	/* per point id */
	struct session sessions[SDS_MAX_PROCS];	/* slot = index */
	struct uplink *uplink;		/* heartbeat to sds-admin; NULL without --admin */
	char cache_path[512];		/* last strategies from the admin, for restarts */
	struct refusals refused;	/* what hostile or greedy clients were refused */
};

/* engine.c */
int engine__point(struct loader *l, const char *name);
void engine__tick(struct loader *l);
int engine__apply(struct loader *l, struct sds_strategies *s);
int engine__reload(struct loader *l);
void engine__admin_reply(struct loader *l);
int engine__load_cache(struct loader *l, struct sds_strategies **out);
bool engine__state(struct loader *l, int id, uint32_t *reason, uint32_t *rate);

/* session.c */
void session__init_all(struct loader *l);
void session__accept(struct loader *l, int lfd);
void session__input(struct loader *l, int slot);
void session__close(struct loader *l, int slot);
void session__close_all(struct loader *l);

/* serve.c: one-shot requests (ctl_handler_t) */
char *serve_request(const char *req, void *loader);

#endif /* SDS_LOADER_H */
