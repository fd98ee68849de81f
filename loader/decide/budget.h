/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The probe-cost budget (issue 9): what a point's probes take from the
 * program they watch, estimated as the site's cost per call times the
 * call rate, against `attach --max-overhead PCT` of one CPU per app.
 *
 * Pure arithmetic and the suspend/resume decisions: no BPF, no clock of
 * its own (the caller passes CLOCK_MONOTONIC ns), so that the unit tests
 * can give exact numbers.  budget_run.c applies the decisions (detaches
 * and re-attaches the probes, records the events).
 *
 * Units: CPU time in ns per second of wall time ("cpu ns/s"); 10^7 of
 * them are 1% of one CPU.  Integers throughout, so that an estimate is
 * the same number in the unit test, `stats` and the heartbeat.
 */
#ifndef SDS_BUDGET_H
#define SDS_BUDGET_H

#include <stdbool.h>
#include <stdint.h>
#include "sds_types.h"

#define BUDGET_PCT_NS		10000000ULL	/* cpu ns/s in 1% of one CPU */
#define BUDGET_DEFAULT_NS	(5 * BUDGET_PCT_NS)	/* --max-overhead 5 */
/* The call rate is taken over the last second of ticks ... */
#define BUDGET_WINDOW_NS	1000000000ULL
/* ... and judged once 300 ms of counting are in: a re-attached probe on
 * a hot function costs the target this long per try. */
#define BUDGET_MIN_SPAN_NS	300000000ULL
/* Samples closer than this to the last kept one are not kept (a 1-ms
 * tick would otherwise fill the ring in 32 ms). */
#define BUDGET_SAMPLE_GAP_NS	50000000ULL
#define BUDGET_SAMPLES		32	/* kept: >= 1.6 s at the gap above */
#define BUDGET_BACKOFF_NS	2000000000ULL	/* first wait before a try */
#define BUDGET_BACKOFF_MAX_NS	60000000000ULL	/* the wait doubles up to this */
/* A guard point's probes: libsds's nop5 sites, one pair per call. */
#define BUDGET_GUARD_COST_NS	700

enum budget_state {
	BUDGET_ON = 0,		/* probes attached, counting */
	BUDGET_SUSPENDED,	/* probes detached: over budget */
	BUDGET_TRYING,		/* re-attached after the back-off, rate being measured */
};

/* What budget_decide() asks of the caller for one point. */
enum budget_action {
	BUDGET_NONE = 0,
	BUDGET_SUSPEND,		/* detach; it was on: an event "suspended" */
	BUDGET_RESUSPEND,	/* detach; a try failed: no event, a longer wait */
	BUDGET_TRY,		/* re-attach to measure (still shown suspended) */
	BUDGET_RESUME,		/* the try fits: an event "resumed" */
};

/* One point under the budget. */
struct budget_point {
	bool used;			/* a function point: judged against the budget */
	enum budget_state state;	/* on, suspended, trying */
	unsigned int cost_ns;		/* per call: entry + return probe on its site */
	uint64_t t_ns[BUDGET_SAMPLES];	/* when each sample was taken */
	uint64_t calls[BUDGET_SAMPLES];	/* the point's count of calls then */
	int pos;			/* next sample goes there */
	int n;				/* samples kept */
	bool known;			/* @rate measured since the last (re)attach */
	uint64_t rate;			/* calls/s, last measured (0: never) */
	uint64_t cpu_ns;		/* estimated cpu ns/s, last measured */
	uint64_t backoff_ns;		/* the wait before the next try */
	uint64_t try_at_ns;		/* suspended: re-attach at this time */
	uint64_t suspensions;		/* times suspended (not counting failed tries) */
};

struct budget {
	uint64_t max_ns;		/* cpu ns/s the app's function points may take; 0: off */
	const char *target;		/* TARGET's real path: where suspended probes go back */
	int pid;			/* --pid, -1: every process (as attached) */
	struct budget_point pts[SDS_MAX_POINTS];	/* by point id */
};

/*
 * Parse --max-overhead: a percentage of one CPU, 0..100, an integer or
 * with up to 3 decimals ("5", "2.5", "0.125").  0 turns the budget off.
 * Returns 0 and the budget in cpu ns/s, or -1.
 */
int budget_parse_pct(const char *s, uint64_t *max_ns);

/* cpu ns/s that @calls in @span_ns cost at @cost_ns each (0 if @span_ns is 0). */
uint64_t budget_cpu_ns(unsigned int cost_ns, uint64_t calls, uint64_t span_ns);

/* Calls/s of @calls in @span_ns (0 if @span_ns is 0). */
uint64_t budget_rate(uint64_t calls, uint64_t span_ns);

/* @cpu_ns cpu ns/s in thousandths of a percent of one CPU, rounded. */
uint64_t budget_pct_milli(uint64_t cpu_ns);

/* Start point @bp with @cost_ns per call, attached now with @calls counted. */
void budget_point_start(struct budget_point *bp, unsigned int cost_ns,
			uint64_t now_ns, uint64_t calls);

/*
 * Record the point's count of calls @calls at @now_ns and update its rate
 * and estimate over the last BUDGET_WINDOW_NS (or since it was attached,
 * once that is BUDGET_MIN_SPAN_NS).  Only while its probes are attached.
 */
void budget_sample(struct budget_point *bp, uint64_t now_ns, uint64_t calls);

/*
 * The app's decisions at @now_ns, one per point id below @npoints into
 * @acts.  The budget is the app's (not each point's): while the points
 * attached and measured take more than max_ns together, the most
 * expensive of them is suspended, so that one hot point does not cost
 * the others theirs, and many cheap points cannot add up past the stated
 * budget either.  A suspended point is tried again after its back-off
 * (2 s, doubling to 60 s while tries fail) and resumes when it fits.
 * The states change here; the caller detaches and attaches, and calls
 * budget_try_failed() if an attach fails.
 */
void budget_decide(struct budget *b, int npoints, uint64_t now_ns,
		   enum budget_action *acts);

/* A re-attach failed: suspended again, with a longer wait. */
void budget_try_failed(struct budget_point *bp, uint64_t now_ns);
/* Point @id now runs at a site of another build (a deploy): its cost per call. */
void budget_set_cost(struct budget *b, int id, unsigned int cost_ns);

/* Is the point shown suspended (its state is not on)? */
static inline bool budget_suspended(const struct budget_point *bp)
{
	return bp->used && bp->state != BUDGET_ON;
}

#endif /* SDS_BUDGET_H */
