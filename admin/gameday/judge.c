// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * gameday/judge.c - a game day's "wait until" condition, judged over the
 * app's stored periods of the point (every host summed): the newest
 * stored period and those before it that the window covers (a 25-s
 * window: three), none before the period the wait began in.  A rate or a
 * percentile needs 10 calls, as a drill's stop condition does
 * (docs/DRILL.md): fewer judge nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "heartbeat/heartbeat.h"
#include "window.h"
#include "gameday/gameday.h"

#define JUDGE_MIN_CALLS	10
#define JUDGE_PERIODS	64	/* 600 s of window, and a late heartbeat's periods */

struct period_sum {
	int64_t start;
	uint64_t visits, exceptions, downgrades, hist[SDS_HIST_BUCKETS];
};

struct judge_scan {
	const char *point;
	int64_t from;
	int n;				/* slots up to the newest period with a row */
	struct period_sum p[JUDGE_PERIODS];
};

/* Rows come in any order (PostgreSQL's partitions): each to its period's slot. */
static int add_row(const struct store_stat_row *row, void *ctx)
{
	struct judge_scan *j = ctx;
	int64_t i = (row->period_start - j->from) / GAMEDAY_PERIOD_S;
	struct period_sum *p;
	int k;

	if (strcmp(row->point, j->point) || row->period_start < j->from || i >= JUDGE_PERIODS)
		return 0;
	p = &j->p[i];
	p->start = row->period_start;
	if (j->n < i + 1)
		j->n = (int)i + 1;
	p->visits += row->visits;
	p->exceptions += row->exceptions;
	p->downgrades += row->downgrades;
	for (k = 0; k < row->nhist && k < SDS_HIST_BUCKETS; k++)
		p->hist[k] += row->hist[k];
	return 0;
}

int gameday_judge(struct store *st, const char *g, const char *a, json_t *until,
		  double since, double *value, bool *met, char *err)
{
	struct judge_scan *j = calloc(1, sizeof(*j));
	uint32_t field = heartbeat_stop_field(json_string_value(json_object_get(until, "field")));
	json_t *above = json_object_get(until, "above");
	double bound = json_number_value(above ? above : json_object_get(until, "below"));
	double window = json_number_value(json_object_get(until, "window_s"));
	int64_t n = (int64_t)ceil(window / GAMEDAY_PERIOD_S), now = store_now_s();
	struct period_sum sum = { 0 };
	uint64_t calls = 0;
	int i, k, ret;

	*met = false;
	*value = -1;
	if (!j) {
		snprintf(err, STORE_ERR_MAX, "out of memory");
		return STORE_ERROR;
	}
	j->point = json_string_value(json_object_get(until, "point"));
	/* The window's periods before the newest, and two more a late heartbeat may hold. */
	j->from = (int64_t)since / GAMEDAY_PERIOD_S * GAMEDAY_PERIOD_S;
	if (j->from < (now / GAMEDAY_PERIOD_S - n - 2) * GAMEDAY_PERIOD_S)
		j->from = (now / GAMEDAY_PERIOD_S - n - 2) * GAMEDAY_PERIOD_S;
	ret = (st->ops->stats_scan_apart ? st->ops->stats_scan_apart :
	       st->ops->stats_scan)(st, g, a, j->point, j->from, now + GAMEDAY_PERIOD_S, add_row,
				  j, err);
	if (ret || !j->n)
		goto out;
	/* The newest period with a row, and the n - 1 before it. */
	for (i = j->n - 1; i >= 0 && i > j->n - 1 - n; i--) {
		sum.visits += j->p[i].visits;
		sum.exceptions += j->p[i].exceptions;
		sum.downgrades += j->p[i].downgrades;
		for (k = 0; k < SDS_HIST_BUCKETS; k++)
			sum.hist[k] += j->p[i].hist[k];
	}
	switch (field) {
	case SDS_STOP_EXCEPTION_RATE:
		if (sum.visits >= JUDGE_MIN_CALLS)
			*value = (double)sum.exceptions / sum.visits;
		break;
	case SDS_STOP_DOWNGRADES:
		*value = (double)sum.downgrades;
		break;
	case SDS_STOP_P99_MS:
		for (k = 0; k < SDS_HIST_BUCKETS; k++)
			calls += sum.hist[k];
		if (calls >= JUDGE_MIN_CALLS)
			*value = window_hist_percentile(sum.hist, SDS_HIST_BUCKETS, 99) / 1e6;
		break;
	}
	if (*value >= 0)
		*met = above ? *value > bound : *value < bound;
out:
	free(j);
	return ret;
}
