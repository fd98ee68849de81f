// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * metrics_fleet.c - /metrics' per-app, per-point fleet sums: what every
 * host reported for the last complete 10-s period (docs/METRICS.md).
 *
 * A host sends period P at P + 10 s + its offset (2..9 s, loader/report/uplink.c),
 * so at time T the newest period every host has sent is the one that
 * began 20 s before T's period: sums of a newer one would still grow.
 *
 * They are gauges, not counters: each scrape shows one period, and a sum
 * over hosts goes down as well as up as hosts come and go, so rate()
 * over it would be wrong; the loaders' own --metrics counters are the
 * ones to rate().
 *
 * Heartbeats must not wait for a scrape: the sums are computed once per
 * period (scrapes of the same period share them, waiting on this file's
 * lock, never the store's), one app per store call, so a heartbeat waits
 * at most for one app's rows of one period.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "admin.h"
#include "metrics_fleet.h"

/* One point of one app, summed over the hosts of the period. */
struct fleet_point {
	char group[SDS_NAME_MAX + 1];	/* its app's group */
	char app[SDS_NAME_MAX + 1];	/* its app */
	char point[SDS_NAME_MAX + 1];	/* the point */
	uint64_t v[FLEET_NVALUES];	/* sums, in the order of families[] */
};

/* What one scan builds: every point of the period. */
struct fleet_scan {
	struct fleet_point *pts;	/* @n used of @cap */
	size_t n, cap;
	size_t app_first;		/* the current app's first entry */
	bool truncated;			/* FLEET_MAX_SERIES reached */
	const char *group, *app;	/* the app being scanned */
};

static const struct {
	const char *name;	/* the series */
	const char *help;	/* its HELP */
} families[FLEET_NVALUES] = {
	{ "sds_fleet_point_visits", "Calls in the last complete 10-s period (sds_fleet_period_start_seconds), summed over the hosts that reported the point; a gauge: one period per scrape, and a sum over hosts that come and go is no counter." },
	{ "sds_fleet_point_exceptions", "Failed calls in the last complete 10-s period, summed over hosts (a gauge, as sds_fleet_point_visits)." },
	{ "sds_fleet_point_timeouts", "Calls slower than the point's timeout in the last complete 10-s period, summed over hosts (a gauge)." },
	{ "sds_fleet_point_downgrades", "Calls downgraded in the last complete 10-s period, summed over hosts (a gauge)." },
	{ "sds_fleet_point_concurrency_max", "Each host's highest concurrency in the last complete 10-s period, summed over hosts: a bound on the fleet's (a gauge)." },
	{ "sds_fleet_point_hosts", "Hosts that reported the point for the last complete 10-s period." },
};

static struct {
	pthread_mutex_t lock;		/* one computation at a time; guards the rest */
	int64_t period;			/* the period @text is of; 0: none yet */
	char *text;			/* the section (malloc'd) */
	size_t len;			/* bytes in @text */
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

int64_t metrics_fleet_period(int64_t now)
{
	return now - now % SDS_HB_PERIOD_S - 2 * SDS_HB_PERIOD_S;
}

static struct fleet_point *scan_point(struct fleet_scan *sc, const char *point)
{
	struct fleet_point *p;
	size_t i;

	/* Rows come grouped by point: the last one first. */
	if (sc->n > sc->app_first && !strcmp(sc->pts[sc->n - 1].point, point))
		return &sc->pts[sc->n - 1];
	for (i = sc->app_first; i < sc->n; i++)
		if (!strcmp(sc->pts[i].point, point))
			return &sc->pts[i];
	if (sc->n >= FLEET_MAX_SERIES) {
		sc->truncated = true;
		return NULL;
	}
	if (sc->n == sc->cap) {
		size_t cap = sc->cap ? sc->cap * 2 : 256;
		struct fleet_point *t = realloc(sc->pts, cap * sizeof(*t));

		if (!t)
			return NULL;
		sc->pts = t;
		sc->cap = cap;
	}
	p = &sc->pts[sc->n++];
	memset(p, 0, sizeof(*p));
	snprintf(p->group, sizeof(p->group), "%s", sc->group);
	snprintf(p->app, sizeof(p->app), "%s", sc->app);
	snprintf(p->point, sizeof(p->point), "%s", point);
	return p;
}

static int scan_row(const struct store_stat_row *row, void *ctx)
{
	struct fleet_point *p = scan_point(ctx, row->point);

	if (!p)
		return 0;	/* over the cap, or out of memory: the rest is left out */
	p->v[0] += row->visits;
	p->v[1] += row->exceptions;
	p->v[2] += row->timeouts;
	p->v[3] += row->downgrades;
	p->v[4] += row->max_concurrency;
	p->v[5]++;
	return 0;
}

/* Every app's rows of @period into @sc; a STORE_* code. */
static int scan_all(struct store *st, int64_t period, struct fleet_scan *sc,
		    char *err)
{
	json_t *apps = NULL, *a;
	size_t i;
	int ret;

	ret = st->ops->app_list(st, NULL, &apps, err);
	if (ret)
		return ret;
	json_array_foreach(apps, i, a) {
		sc->group = json_string_value(json_object_get(a, "group"));
		sc->app = json_string_value(json_object_get(a, "name"));
		if (!sc->group || !sc->app)
			continue;
		sc->app_first = sc->n;
		ret = st->ops->stats_scan(st, sc->group, sc->app, NULL, period,
					  period + SDS_HB_PERIOD_S, scan_row, sc, err);
		/* An app deleted meanwhile has no rows: not an error. */
		if (ret == STORE_NOTFOUND)
			ret = 0;
		if (ret)
			break;
	}
	json_decref(apps);
	return ret;
}

static void render(FILE *f, const struct fleet_scan *sc, int64_t period)
{
	size_t i;
	int k;

	fprintf(f, "# HELP sds_fleet_period_start_seconds Start (Unix time) of the period the sds_fleet_point_ series sum: the last one every host has sent.\n"
		   "# TYPE sds_fleet_period_start_seconds gauge\n"
		   "sds_fleet_period_start_seconds %lld\n"
		   "# HELP sds_fleet_series_truncated 1 when the fleet has more than %d points and the rest are left out.\n"
		   "# TYPE sds_fleet_series_truncated gauge\n"
		   "sds_fleet_series_truncated %d\n",
		(long long)period, FLEET_MAX_SERIES, sc->truncated);
	for (k = 0; k < FLEET_NVALUES; k++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", families[k].name,
			families[k].help, families[k].name);
		for (i = 0; i < sc->n; i++)
			fprintf(f, "%s{group=\"%s\",app=\"%s\",point=\"%s\"} %llu\n",
				families[k].name, sc->pts[i].group, sc->pts[i].app,
				sc->pts[i].point, (unsigned long long)sc->pts[i].v[k]);
	}
}

/* The section of @period, built anew; a STORE_* code. */
static int build(struct store *st, int64_t period, char *err)
{
	struct fleet_scan sc = {};
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	ret = scan_all(st, period, &sc, err);
	if (!ret) {
		f = open_memstream(&text, &len);
		if (f) {
			render(f, &sc, period);
			if (fclose(f)) {
				free(text);
				text = NULL;
			}
		}
		if (!text) {
			snprintf(err, STORE_ERR_MAX, "out of memory");
			ret = STORE_ERROR;
		}
	}
	free(sc.pts);
	if (ret)
		return ret;
	free(cache.text);
	cache.text = text;
	cache.len = len;
	cache.period = period;
	return 0;
}

int metrics_fleet_write(struct store *st, int64_t now, FILE *f, char *err)
{
	int64_t period = metrics_fleet_period(now);
	int ret = 0;

	pthread_mutex_lock(&cache.lock);
	if (cache.period != period || !cache.text)
		ret = build(st, period, err);
	if (!ret)
		fwrite(cache.text, 1, cache.len, f);
	pthread_mutex_unlock(&cache.lock);
	return ret;
}
