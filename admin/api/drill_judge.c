// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api/drill_judge.c - a drill's stop conditions judged by the admin over
 * the fleet (docs/DRILL.md, "Over the fleet"): after each heartbeat it
 * stores, every drill handed to that host with conditions is judged over
 * the stored periods of its point covering each condition's window (at
 * least the one just stored; none before the drill started), summed over
 * the hosts the drill injected something on.  Each loader judges its
 * own calls every tick; this catches what no host sees alone: many hosts
 * each with too few calls in a window, or a bound a share of the fleet
 * crosses together.  A broken one stops the drill for every host, as a
 * loader's abort does, and wakes the app's push channels.
 */
#include <stdio.h>
#include <string.h>
#include "heartbeat/heartbeat.h"
#include "watch.h"
#include "window.h"
#include "api/api.h"

#define JUDGE_MIN_CALLS	10	/* as the loader's: a rate needs this many calls */
#define JUDGE_HOSTS	256	/* hosts told apart in a reason ("of N hosts", at most) */

struct fleet_sum {
	const char *point;
	uint64_t visits, exceptions, downgrades, hist[SDS_HIST_BUCKETS];
	int hosts_seen;			/* distinct hosts summed, up to JUDGE_HOSTS */
	uint64_t host_h[JUDGE_HOSTS];	/* their names' FNV-1a */
};

static int sum_row(const struct store_stat_row *row, void *ctx)
{
	struct fleet_sum *f = ctx;
	uint64_t h;
	int i;

	/* Only the hosts the drill acted on: the others would dilute a rate. */
	if (strcmp(row->point, f->point) || !(row->faults + row->delays))
		return 0;
	f->visits += row->visits;
	f->exceptions += row->exceptions;
	f->downgrades += row->downgrades;
	for (i = 0; i < row->nhist && i < SDS_HIST_BUCKETS; i++)
		f->hist[i] += row->hist[i];
	/* Rows come by period: a host of several periods is counted once. */
	for (i = 0, h = 0xcbf29ce484222325ULL; row->host[i]; i++)
		h = (h ^ (unsigned char)row->host[i]) * 0x100000001b3ULL;
	for (i = 0; i < f->hosts_seen && f->host_h[i] != h; i++)
		;
	if (i == f->hosts_seen && f->hosts_seen < JUDGE_HOSTS)
		f->host_h[f->hosts_seen++] = h;
	return 0;
}

/* Condition @s over @f: its value, or -1 when there are too few calls. */
static double value(const struct sds_hb_stop *s, const struct fleet_sum *f)
{
	uint64_t calls = 0;
	int i;

	switch (s->field) {
	case SDS_STOP_EXCEPTION_RATE:
		return f->visits < JUDGE_MIN_CALLS ? -1 : (double)f->exceptions / f->visits;
	case SDS_STOP_DOWNGRADES:
		return (double)f->downgrades;
	case SDS_STOP_P99_MS:
		for (i = 0; i < SDS_HIST_BUCKETS; i++)
			calls += f->hist[i];
		return calls < JUDGE_MIN_CALLS ? -1 :
		       window_hist_percentile(f->hist, SDS_HIST_BUCKETS, 99) / 1e6;
	}
	return -1;
}

/* Drill @d over the periods up to @period: true with @why when one broke. */
static bool judge(struct api_route *r, const char *g, const char *a,
		  const struct sds_hb_drill *d, int64_t period, char *why, size_t len)
{
	struct store *st = r->ad->store;
	int i;

	for (i = 0; i < d->nstop; i++) {
		const struct sds_hb_stop *s = &d->stop[i];
		int64_t n = (s->window_ms + SDS_HB_PERIOD_S * 1000 - 1) / (SDS_HB_PERIOD_S * 1000);
		int64_t from = period - (n - 1) * SDS_HB_PERIOD_S;
		struct fleet_sum f;	/* 2.5 KB: the request thread's stack */
		double v;

		memset(&f, 0, sizeof(f));
		f.point = d->point;
		/* Not the periods wholly before it started. */
		if (from + SDS_HB_PERIOD_S <= d->created)
			from = d->created / SDS_HB_PERIOD_S * SDS_HB_PERIOD_S;
		if (from > period)
			continue;
		if (st->ops->stats_scan(st, g, a, d->point, from, period + SDS_HB_PERIOD_S,
					sum_row, &f, r->err))
			return false;
		v = value(s, &f);
		if (v < 0 || v <= s->above)
			continue;
		snprintf(why, len, "fleet: %s %.3f above %g over %lld s of %d host%s",
			 heartbeat_stop_field_name(s->field), v, s->above,
			 (long long)(period + SDS_HB_PERIOD_S - from), f.hosts_seen,
			 f.hosts_seen == 1 ? "" : "s");
		return true;
	}
	return false;
}

void api_drill_judge(struct api_route *r, const struct sds_heartbeat *hb,
		     struct store_hb_result *res)
{
	struct store *st = r->ad->store;
	char why[SDS_HB_STOP_REASON_MAX], tid[24];
	bool stopped = false;
	int i, kept = 0;

	for (i = 0; i < res->ndrills; i++) {
		const struct sds_hb_drill *d = &res->drills[i];

		if (!d->nstop || !judge(r, hb->group, hb->app, d, hb->period_start, why,
					sizeof(why))) {
			res->drills[kept++] = *d;
			continue;
		}
		api_token_id(r, tid);
		/* 409: a loader's abort or an operator came first; gone either way. */
		if (!st->ops->drill_stop(st, hb->group, hb->app, d->id, "sds-admin", tid, why,
					 store_now_s(), r->err))
			stopped = true;
	}
	res->ndrills = kept;	/* this reply already says it stopped */
	/* As an API write of the app: its watchers woken, the other admins told. */
	if (stopped && r->ad->watch) {
		char path[2 * SDS_NAME_MAX + 32];

		snprintf(path, sizeof(path), "groups/%s/apps/%s/drills", hb->group, hb->app);
		watch__wrote(r->ad->watch, st, "POST", path);
	}
}
