// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * metrics_text.c - the loader's points in the Prometheus text format
 * 0.0.4 (docs/METRICS.md), from the tick's copy (metrics.h).  Pure: the
 * unit tests link it alone.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/metrics.h"

/* Room kept free before a line is printed; a longer line grows the buffer to fit. */
#define LINE_MAX_BYTES	512

static int grow(char **buf, size_t *cap, size_t need)
{
	size_t ncap = *cap ? *cap : 65536;
	char *t;

	while (ncap < need)
		ncap *= 2;
	if (ncap == *cap)
		return 0;
	t = realloc(*buf, ncap);
	if (!t)
		return -1;
	*buf = t;
	*cap = ncap;
	return 0;
}

/*
 * printf onto the buffer, growing it; -1 when memory ran out.  A line may
 * be longer than LINE_MAX_BYTES (a histogram's last line holds three label
 * sets of 64-byte names): then it is printed again into a buffer that fits.
 */
static int __attribute__((format(printf, 4, 5)))
out(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*cap - *len < LINE_MAX_BYTES && grow(buf, cap, *cap ? *cap * 2 : 65536))
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n >= *cap - *len) {
		if (grow(buf, cap, *len + n + 1))
			return -1;
		va_start(ap, fmt);
		n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
		va_end(ap);
		if (n < 0 || (size_t)n >= *cap - *len)
			return -1;
	}
	*len += n;
	return 0;
}

/*
 * @ns as decimal seconds, exactly ("0.000000256", "68.719476736"): a
 * float's %g would print 2^k ns with rounding noise, and `le` values are
 * compared as text by dashboards.
 */
static void fmt_seconds(uint64_t ns, char *s, size_t n)
{
	char frac[16];
	int i;

	snprintf(frac, sizeof(frac), "%09" PRIu64, (uint64_t)(ns % 1000000000ULL));
	for (i = 8; i > 0 && frac[i] == '0'; i--)
		frac[i] = '\0';
	snprintf(s, n, "%" PRIu64 ".%s", (uint64_t)(ns / 1000000000ULL), frac);
}

/* The four labels of every series of @p (names are [A-Za-z0-9_-]: no escapes). */
static void fmt_labels(const struct metrics_data *d, const struct metrics_point *p,
		       char *s, size_t n)
{
	snprintf(s, n, "group=\"%s\",app=\"%s\",point=\"%s\",kind=\"%s\"",
		 d->group, d->app, p->name, p->guard ? "guard" : "function");
}

/* Counters and gauges: one family at a time, every point. */
struct family {
	const char *name;	/* the series' name */
	const char *type;	/* "counter" or "gauge" */
	const char *help;	/* its HELP text */
	uint64_t (*value)(const struct metrics_point *p);	/* a point's number */
	bool sgn;		/* @value is an int64_t (a gauge that may dip below 0) */
};

#define SINCE " since the loader started counting (a loader that adopted kept probes with --keep goes on from their counts)"

static uint64_t v_visits(const struct metrics_point *p) { return p->total.visits; }
static uint64_t v_exceptions(const struct metrics_point *p) { return p->total.exceptions; }
static uint64_t v_timeouts(const struct metrics_point *p) { return p->total.timeouts; }
static uint64_t v_downgrades(const struct metrics_point *p) { return p->total.downgrades; }
static uint64_t v_concurrency(const struct metrics_point *p) { return (uint64_t)p->concurrency; }
static uint64_t v_downgraded(const struct metrics_point *p) { return p->downgraded; }

static const struct family families[] = {
	{ "sds_point_visits_total", "counter",
	  "Calls that entered the point, downgraded ones included," SINCE ".", v_visits, false },
	{ "sds_point_exceptions_total", "counter",
	  "Calls whose return the point's err= option (or libsds's sds_exception_sign) counts as failed," SINCE ".",
	  v_exceptions, false },
	{ "sds_point_timeouts_total", "counter",
	  "Calls slower than the point's timeout (the strategy's timeout_ms, else :timeout_ms=)," SINCE ".",
	  v_timeouts, false },
	{ "sds_point_downgrades_total", "counter",
	  "Calls a guard refused (downgraded)," SINCE ".", v_downgrades, false },
	{ "sds_point_concurrency", "gauge",
	  "Calls in flight now: entered and neither returned nor given up.", v_concurrency, true },
	{ "sds_point_downgraded", "gauge",
	  "1 while the point is downgraded (a strategy tripped, a hold, a drill), else 0.",
	  v_downgraded, false },
};

static int render_families(const struct metrics_data *d, char **buf,
			   size_t *len, size_t *cap)
{
	char lab[LINE_MAX_BYTES / 2];
	size_t f;
	int i;

	for (f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		const struct family *fa = &families[f];

		if (out(buf, len, cap, "# HELP %s %s\n# TYPE %s %s\n", fa->name,
			fa->help, fa->name, fa->type))
			return -1;
		for (i = 0; i < d->npoints; i++) {
			const struct metrics_point *p = &d->pts[i];
			uint64_t v = fa->value(p);
			int r;

			fmt_labels(d, p, lab, sizeof(lab));
			if (fa->sgn)
				r = out(buf, len, cap, "%s{%s} %" PRId64 "\n", fa->name,
					lab, (int64_t)v);
			else
				r = out(buf, len, cap, "%s{%s} %" PRIu64 "\n", fa->name,
					lab, v);
			if (r)
				return -1;
		}
	}
	return 0;
}

/* One point's histogram: cumulative buckets, +Inf, _sum, _count. */
static int render_hist(const struct metrics_data *d, const struct metrics_point *p,
		       char **buf, size_t *len, size_t *cap)
{
	static const char *name = "sds_point_latency_seconds";
	char lab[LINE_MAX_BYTES / 2], le[32], sum[32];
	uint64_t cum = 0;
	int i, k;

	fmt_labels(d, p, lab, sizeof(lab));
	/* Bucket i is below 2^(i+1) ns: le=2^k holds buckets 0..k-1. */
	for (i = 0; i < METRICS_LE_MIN; i++)
		cum += p->hist[i];
	for (k = METRICS_LE_MIN; k <= METRICS_LE_MAX; k++) {
		if (k > METRICS_LE_MIN)
			cum += p->hist[k - 1];
		fmt_seconds(1ULL << k, le, sizeof(le));
		if (out(buf, len, cap, "%s_bucket{%s,le=\"%s\"} %" PRIu64 "\n",
			name, lab, le, cum))
			return -1;
	}
	for (i = METRICS_LE_MAX; i < SDS_HIST_BUCKETS; i++)
		cum += p->hist[i];
	fmt_seconds(p->total.latency_sum, sum, sizeof(sum));
	return out(buf, len, cap, "%s_bucket{%s,le=\"+Inf\"} %" PRIu64 "\n"
		   "%s_sum{%s} %s\n%s_count{%s} %" PRIu64 "\n",
		   name, lab, cum, name, lab, sum, name, lab, cum);
}

int metrics__render(const struct metrics_data *d, char **buf, size_t *len,
		    size_t *cap)
{
	int i;

	if (render_families(d, buf, len, cap))
		return -1;
	if (out(buf, len, cap, "# HELP sds_point_latency_seconds Latency of the point's completed calls (downgraded calls are not timed), by log2 buckets;" SINCE ". Entry-only points (no returns seen) have none.\n"
		"# TYPE sds_point_latency_seconds histogram\n"))
		return -1;
	for (i = 0; i < d->npoints; i++)
		if (d->pts[i].latency && render_hist(d, &d->pts[i], buf, len, cap))
			return -1;
	return 0;
}
