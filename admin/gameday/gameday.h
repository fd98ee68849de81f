/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * gameday/gameday.h - game days (docs/GAMEDAY.md): a named plan of steps
 * per app run by the admin's scheduler, a thread of its own that never
 * holds a request; each run's steps timed and a report made from the
 * stored statistics.
 *
 *   run.c     the scheduler: its tick, a run's steps advanced, each done
 *             as the API's own request (so checked, audited and pushed as
 *             an operator's), what a run started stopped at its end
 *   judge.c   a wait's condition over the app's stored periods
 *   report.c  a run's report: its steps, when the fault began, the first
 *             point tripped, the scheme switched, the app recovered
 */
#ifndef SDS_ADMIN_GAMEDAY_H
#define SDS_ADMIN_GAMEDAY_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "store/store.h"

#define GAMEDAY_PERIOD_S	10	/* the stored statistics' period */
#define GAMEDAY_KEEP_DEFAULT	10	/* reports a game day keeps unless told */
#define GAMEDAY_TICK_MS		1000	/* --gameday-tick-ms's default */
#define GAMEDAY_LEASE_S		10	/* a run another admin may take over after */

struct admin;
struct gameday_runner;

enum gameday_step_kind {
	GAMEDAY_NONE,
	GAMEDAY_DRILL,		/* start a drill */
	GAMEDAY_COPY,		/* start a copy plan again, by its name */
	GAMEDAY_WAIT,		/* a duration, or until a condition (with a timeout) */
	GAMEDAY_SCHEME,		/* switch the app's active scheme */
	GAMEDAY_STOP,		/* stop what one step (or every step) started */
};

/* "drill", "copy", ...: the kind, GAMEDAY_NONE for another word. */
enum gameday_step_kind gameday_step_kind(const char *op);

/* Start the scheduler of @ad, ticking every @tick_ms; NULL with @err. */
struct gameday_runner *gameday_start(struct admin *ad, int tick_ms, char *err, size_t errlen);
/* Stop it: the tick in progress finishes, the runs stay for the next admin. */
void gameday_stop(struct gameday_runner *gr);

/* Unix seconds with their milliseconds: a step's times. */
double gameday_now(void);

/*
 * A wait's condition @until ({point, field, above | below, window_s}) over
 * app @g/@a's stored periods that cover its window, none before the one
 * holding @since: *@met, and *@value (-1: too few calls, or no period yet).
 */
int gameday_judge(struct store *st, const char *g, const char *a, json_t *until,
		  double since, double *value, bool *met, char *err);

/*
 * The report of run @run (a row of gameday_get's "runs") of app @g/@a
 * (new reference); NULL with @err when the store failed.
 */
json_t *gameday_report(struct store *st, const char *g, const char *a, json_t *run,
		       char *err);

#endif
