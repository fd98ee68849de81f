// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* api/aggregate.c - statistics of one app over a time range, summed across hosts. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "api/aggregate.h"
#include "heartbeat/heartbeat.h"
#include "window.h"

int aggregate_range(int64_t *from, int64_t *to, int64_t *step, char *err, size_t errlen)
{
	static const int64_t nice[] = {
		10, 20, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800,
		21600, 43200, 86400,
	};
	int64_t f = *from, t = *to, s = *step;
	size_t i;

	if (f < 0 || t <= f) {
		snprintf(err, errlen, "from/to: need 0 <= from < to");
		return -1;
	}
	if (t - f > AGGREGATE_MAX_RANGE) {
		snprintf(err, errlen, "from/to: range longer than %d days",
			 AGGREGATE_MAX_RANGE / 86400);
		return -1;
	}
	if (s == 0) {
		for (i = 0; i < sizeof(nice) / sizeof(nice[0]); i++) {
			s = nice[i];
			if ((t - f + s - 1) / s <= AGGREGATE_TARGET_STEPS)
				break;
		}
	} else if (s < 10 || s % 10 || s > 86400) {
		snprintf(err, errlen, "step must be a multiple of 10 in 10..86400");
		return -1;
	}
	f -= f % s;
	t = (t + s - 1) / s * s;
	if ((t - f) / s > AGGREGATE_MAX_STEPS) {
		snprintf(err, errlen, "step: too small for the range (at most %d steps)",
			 AGGREGATE_MAX_STEPS);
		return -1;
	}
	*from = f;
	*to = t;
	*step = s;
	return 0;
}

/* store/stat_cols.h's columns by index: where in a row, named, of what kind. */
#define COL_OFF_(f, k)	offsetof(struct store_stat_row, f),
#define COL_NAME_(f, k)	#f,
#define COL_KIND_(f, k)	k,
static const size_t col_off[] = { STORE_STAT_COLS(COL_OFF_) };
static const char *const col_name[] = { STORE_STAT_COLS(COL_NAME_) };
static const int col_kind[] = { STORE_STAT_COLS(COL_KIND_) };
#define NCOLS	STORE_STAT_NCOLS
#define LAST_S	30	/* a host's latest row counts if this close to the newest period */

/* A column of one host's latest row (STORE_STAT_LAST_*), not of every row. */
static bool col_last(int j)
{
	return col_kind[j] == STORE_STAT_LAST_SUM || col_kind[j] == STORE_STAT_LAST_MAX;
}

static uint64_t col_of(const struct store_stat_row *row, int j)
{
	return *(const uint64_t *)((const char *)row + col_off[j]);
}

/* One point in one step: its hosts' rows summed (max_concurrency: the highest). */
struct cell {
	uint64_t visits, exceptions, timeouts, downgrades, max_concurrency;	/* the counts */
	uint64_t faults, delays;	/* what drills injected, summed */
	uint64_t cols[NCOLS];		/* store/stat_cols.h's STORE_STAT_SUM columns summed, STORE_STAT_MAX the highest */
	uint64_t hist[SDS_HIST_BUCKETS];	/* the latency histograms, summed */
};

/* One host's latest row of a point, for store/stat_cols.h's STORE_STAT_LAST_* columns. */
struct last {
	char host[SDS_HB_HOST_MAX + 1];
	int64_t period;			/* of its latest row seen */
	uint64_t cols[NCOLS];		/* that row's values */
};

/* One point's steps (or, by host, one host's of one point). */
struct series {
	char name[SDS_HB_HOST_MAX + 1];	/* the point, or the host */
	struct cell *cells;		/* nsteps */
	int64_t as_of;			/* newest period of the point in range, 0: none */
	bool suspended;			/* suspended on any host in that period */
	uint64_t overhead_milli;	/* the highest host's estimate in that period */
	struct last *last;		/* hosts with a STORE_STAT_LAST_* value lately, malloc()ed */
	int nlast, maxlast;		/* entries used, allocated */
	int hint;			/* where the next host's is likely: hosts come in an order */
};

/* The aggregation of one stats query, as the scan's rows come in. */
struct agg {
	int64_t from, step;		/* the range's start and the step, seconds */
	int nsteps;			/* steps in the range */
	int n;				/* entries of @s */
	struct series s[SDS_MAX_POINTS];	/* the points seen, in the order seen */
	int last;			/* rows come grouped by point: cache */
	bool by_host;			/* a series per host (of one point), not per point */
	bool too_big;			/* points x steps passed AGGREGATE_MAX_CELLS: stop */
	bool oom;			/* out of memory: stop */
};

/*
 * The point's probe-budget state as of the newest heartbeats that mention
 * it: a newer period replaces it, hosts of the same period combine (any
 * host suspended; the highest estimate, since each host's budget is its
 * own).  Rows may come in any order.
 */
static void budget_row(struct series *se, const struct store_stat_row *row)
{
	if (row->period_start > se->as_of) {
		se->as_of = row->period_start;
		se->suspended = false;
		se->overhead_milli = 0;
	} else if (row->period_start < se->as_of) {
		return;
	}
	se->suspended |= row->suspended;
	if (row->overhead_milli > se->overhead_milli)
		se->overhead_milli = row->overhead_milli;
}

/* Does @row carry a STORE_STAT_LAST_* value? */
static bool row_has_last(const struct store_stat_row *row)
{
	int j;

	for (j = 0; j < NCOLS; j++)
		if (col_last(j) && col_of(row, j))
			return true;
	return false;
}

/*
 * Keep each host's latest row of the point for the STORE_STAT_LAST_*
 * columns: a host counts while its latest row is within LAST_S of the
 * point's newest period (heartbeats of one period arrive over seconds:
 * the newest alone would miss the hosts not heard yet).  Older rows
 * cannot count and are not kept; a point whose rows carry none of them
 * (most) costs one test a row.  At most SDS_MAX_POINTS hosts a point:
 * more are left out of the sums.  -1 when out of memory.
 */
static int last_row(struct series *se, const struct store_stat_row *row)
{
	struct last *l = NULL;
	int i, j;

	if (!NCOLS || row->period_start <= se->as_of - LAST_S)
		return 0;
	if (!se->nlast && !row_has_last(row))
		return 0;
	for (i = 0; i < se->nlast; i++) {
		struct last *x = &se->last[(se->hint + i) % se->nlast];

		if (!strcmp(x->host, row->host)) {
			l = x;
			break;
		}
	}
	if (l) {
		se->hint = (int)(l - se->last) + 1;
		if (row->period_start < l->period)
			return 0;
	} else {
		/* A host not kept: only if it has a value (a 0 adds nothing). */
		if (!row_has_last(row))
			return 0;
		if (se->nlast == se->maxlast) {
			/* Make room from hosts fallen out of the window first. */
			for (i = j = 0; i < se->nlast; i++)
				if (se->last[i].period > se->as_of - LAST_S)
					se->last[j++] = se->last[i];
			se->nlast = j;
		}
		if (se->nlast == se->maxlast) {
			int n = se->maxlast ? se->maxlast * 2 : 8;
			struct last *nl;

			if (se->maxlast >= SDS_MAX_POINTS)
				return 0;
			nl = realloc(se->last, n * sizeof(*nl));
			if (!nl)
				return -1;
			se->last = nl;
			se->maxlast = n;
		}
		l = &se->last[se->nlast++];
		snprintf(l->host, sizeof(l->host), "%s", row->host);
	}
	l->period = row->period_start;
	for (j = 0; j < NCOLS; j++)
		l->cols[j] = col_of(row, j);
	return 0;
}

static int agg_row(const struct store_stat_row *row, void *ctx)
{
	struct agg *ag = ctx;
	const char *key = ag->by_host ? row->host : row->point;
	struct series *se = NULL;
	struct cell *c;
	int i, k;

	if (ag->n && !strcmp(ag->s[ag->last].name, key)) {
		se = &ag->s[ag->last];
	} else {
		for (i = 0; i < ag->n; i++)
			if (!strcmp(ag->s[i].name, key)) {
				se = &ag->s[i];
				ag->last = i;
				break;
			}
	}
	if (!se) {
		if (ag->n >= SDS_MAX_POINTS ||
		    (int64_t)(ag->n + 1) * ag->nsteps > AGGREGATE_MAX_CELLS) {
			ag->too_big = true;
			return 1;
		}
		se = &ag->s[ag->n];
		snprintf(se->name, sizeof(se->name), "%s", key);
		se->cells = calloc(ag->nsteps, sizeof(struct cell));
		if (!se->cells) {
			ag->too_big = true;
			return 1;
		}
		ag->last = ag->n++;
	}
	k = (int)((row->period_start - ag->from) / ag->step);
	if (k < 0 || k >= ag->nsteps)
		return 0;
	budget_row(se, row);
	if (last_row(se, row)) {
		ag->oom = true;
		return 1;
	}
	c = &se->cells[k];
	c->visits += row->visits;
	c->exceptions += row->exceptions;
	c->timeouts += row->timeouts;
	c->downgrades += row->downgrades;
	c->faults += row->faults;
	c->delays += row->delays;
	if (row->max_concurrency > c->max_concurrency)
		c->max_concurrency = row->max_concurrency;
	for (i = 0; i < row->nhist; i++)
		c->hist[i] += row->hist[i];
	for (i = 0; i < NCOLS; i++)
		if (col_kind[i] == STORE_STAT_SUM)
			c->cols[i] += col_of(row, i);
		else if (col_kind[i] == STORE_STAT_MAX && col_of(row, i) > c->cols[i])
			c->cols[i] = col_of(row, i);	/* a maximum: a sum would mean nothing */
	return 0;
}

static json_t *pcts(json_t *o, const uint64_t *hist)
{
	json_object_set_new(o, "p50_ns", json_integer(window_hist_percentile(hist, SDS_HIST_BUCKETS, 50)));
	json_object_set_new(o, "p90_ns", json_integer(window_hist_percentile(hist, SDS_HIST_BUCKETS, 90)));
	json_object_set_new(o, "p99_ns", json_integer(window_hist_percentile(hist, SDS_HIST_BUCKETS, 99)));
	return o;
}

/*
 * store/stat_cols.h's columns of @se into @o and @tot: a STORE_STAT_SUM
 * column per step and in the total (a STORE_STAT_MAX column too, its
 * highest in each and over all); a STORE_STAT_LAST_* column over the
 * hosts whose latest row is recent (see last_row()) and carries it,
 * summed (with "NAME_hosts", how many) or the highest; null when no
 * host has it.
 */
static void cols_json(const struct agg *ag, const struct series *se, json_t *o, json_t *tot)
{
	int i, j, k;

	for (j = 0; j < NCOLS; j++) {
		uint64_t v = 0, sum = 0;
		int hosts = 0;
		json_t *arr;
		char name[96];

		if (!col_last(j)) {
			arr = json_array();
			for (k = 0; k < ag->nsteps; k++) {
				uint64_t x = se->cells[k].cols[j];

				json_array_append_new(arr, json_integer((json_int_t)x));
				if (col_kind[j] == STORE_STAT_SUM)
					sum += x;
				else if (x > sum)
					sum = x;
			}
			json_object_set_new(o, col_name[j], arr);
			json_object_set_new(tot, col_name[j], json_integer((json_int_t)sum));
			continue;
		}
		for (i = 0; i < se->nlast; i++) {
			const struct last *l = &se->last[i];

			if (l->period <= se->as_of - LAST_S || !l->cols[j])
				continue;
			hosts++;
			if (col_kind[j] == STORE_STAT_LAST_SUM)
				v += l->cols[j];
			else if (l->cols[j] > v)
				v = l->cols[j];
		}
		json_object_set_new(o, col_name[j], hosts ? json_integer((json_int_t)v) : json_null());
		if (col_kind[j] == STORE_STAT_LAST_SUM) {
			snprintf(name, sizeof(name), "%s_hosts", col_name[j]);
			json_object_set_new(o, name, json_integer(hosts));
		}
	}
}

static json_t *series_json(const struct agg *ag, const struct series *se)
{
	static const char *const cols[] = {
		"t", "visits", "exceptions", "timeouts", "downgrades",
		"max_concurrency", "p50_ns", "p90_ns", "p99_ns", "faults", "delays",
	};
	json_t *arr[11], *o = json_object(), *tot;
	struct cell sum;
	int i, k, n;

	memset(&sum, 0, sizeof(sum));
	for (i = 0; i < 11; i++) {
		arr[i] = json_array();
		json_object_set_new(o, cols[i], arr[i]);
	}
	for (k = 0; k < ag->nsteps; k++) {
		const struct cell *c = &se->cells[k];

		json_array_append_new(arr[0], json_integer(ag->from + k * ag->step));
		json_array_append_new(arr[1], json_integer(c->visits));
		json_array_append_new(arr[2], json_integer(c->exceptions));
		json_array_append_new(arr[3], json_integer(c->timeouts));
		json_array_append_new(arr[4], json_integer(c->downgrades));
		json_array_append_new(arr[5], json_integer(c->max_concurrency));
		json_array_append_new(arr[6], json_integer(window_hist_percentile(c->hist, SDS_HIST_BUCKETS, 50)));
		json_array_append_new(arr[7], json_integer(window_hist_percentile(c->hist, SDS_HIST_BUCKETS, 90)));
		json_array_append_new(arr[8], json_integer(window_hist_percentile(c->hist, SDS_HIST_BUCKETS, 99)));
		json_array_append_new(arr[9], json_integer(c->faults));
		json_array_append_new(arr[10], json_integer(c->delays));
		sum.visits += c->visits;
		sum.faults += c->faults;
		sum.delays += c->delays;
		sum.exceptions += c->exceptions;
		sum.timeouts += c->timeouts;
		sum.downgrades += c->downgrades;
		if (c->max_concurrency > sum.max_concurrency)
			sum.max_concurrency = c->max_concurrency;
		for (i = 0; i < SDS_HIST_BUCKETS; i++)
			sum.hist[i] += c->hist[i];
	}
	tot = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"faults", (json_int_t)sum.faults,
			"delays", (json_int_t)sum.delays,
			"visits", (json_int_t)sum.visits,
			"exceptions", (json_int_t)sum.exceptions,
			"timeouts", (json_int_t)sum.timeouts,
			"downgrades", (json_int_t)sum.downgrades,
			"max_concurrency", (json_int_t)sum.max_concurrency);
	n = SDS_HIST_BUCKETS;
	while (n > 0 && !sum.hist[n - 1])
		n--;
	arr[0] = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(arr[0], json_integer(sum.hist[i]));
	json_object_set_new(tot, "latency_hist", arr[0]);
	cols_json(ag, se, o, tot);
	json_object_set_new(o, "total", pcts(tot, sum.hist));
	json_object_set_new(o, "suspended", json_boolean(se->suspended));
	json_object_set_new(o, "overhead_pct", json_real(se->overhead_milli / 1000.0));
	json_object_set_new(o, "as_of", se->as_of ? json_integer(se->as_of) : json_null());
	return o;
}

static int query(struct store *st, const char *g, const char *a, const char *point,
		 bool by_host, int64_t from, int64_t to, int64_t step, json_t **out, char *err)
{
	struct agg *ag;
	json_t *pts;
	int i, ret;

	ag = calloc(1, sizeof(*ag));
	if (!ag) {
		snprintf(err, STORE_ERR_MAX, "out of memory");
		return STORE_ERROR;
	}
	ag->from = from;
	ag->step = step;
	ag->by_host = by_host;
	ag->nsteps = (int)((to - from) / step);
	/* Apart from the heartbeats' lock when the store can: a long scan
	 * must not hold the fleet's heartbeats. */
	ret = (st->ops->stats_scan_apart ? st->ops->stats_scan_apart :
	       st->ops->stats_scan)(st, g, a, point, from, to, agg_row, ag, err);
	if (!ret && point && !by_host && !ag->n && !ag->too_big) {
		/* A point asked for by name answers with zeros, not absence. */
		snprintf(ag->s[0].name, sizeof(ag->s[0].name), "%s", point);
		ag->s[0].cells = calloc(ag->nsteps, sizeof(struct cell));
		if (ag->s[0].cells)
			ag->n = 1;
	}
	if (!ret && ag->oom) {
		snprintf(err, STORE_ERR_MAX, "out of memory");
		ret = STORE_ERROR;
	} else if (!ret && ag->too_big) {
		snprintf(err, STORE_ERR_MAX,
			 by_host ? "too many hosts x steps (at most %d): take a larger step" :
			 "too many points x steps (at most %d): name a point or take a larger step",
			 AGGREGATE_MAX_CELLS);
		ret = STORE_CONFLICT;
	}
	if (!ret) {
		pts = json_object();
		for (i = 0; i < ag->n; i++)
			json_object_set_new(pts, ag->s[i].name, series_json(ag, &ag->s[i]));
		*out = json_pack("{s:s, s:s, s:I, s:I, s:I, s:o}", "group", g, "app", a,
				 "from", (json_int_t)from, "to", (json_int_t)to,
				 "step", (json_int_t)step, by_host ? "hosts" : "points", pts);
		if (by_host)
			json_object_set_new(*out, "point", json_string(point));
	}
	for (i = 0; i < ag->n; i++) {
		free(ag->s[i].cells);
		free(ag->s[i].last);
	}
	free(ag);
	return ret;
}

int aggregate_query(struct store *st, const char *g, const char *a, const char *point,
		int64_t from, int64_t to, int64_t step, json_t **out, char *err)
{
	return query(st, g, a, point, false, from, to, step, out, err);
}

int aggregate_query_hosts(struct store *st, const char *g, const char *a, const char *point,
			  int64_t from, int64_t to, int64_t step, json_t **out, char *err)
{
	return query(st, g, a, point, true, from, to, step, out, err);
}
