/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * metrics.h - `attach --metrics ADDR:PORT`: every point's counters in the
 * Prometheus text format (docs/METRICS.md).
 *
 * A scrape must never hold up the tick, and whoever can reach the port
 * is untrusted (the loader is root).  So the HTTP side runs in a thread
 * of its own (metrics_http.c) that touches none of the loader's state:
 * when a scrape arrives it raises a flag, and the next tick of the loop
 * (metrics__tick, a trylock and one copy of the points' counters) puts
 * a copy where the thread renders and sends it.  Slow or hostile clients
 * cost the thread a slot, and only until their deadline.
 */
#ifndef SDS_METRICS_H
#define SDS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sds_types.h"
#include "window.h"

struct metrics;

/* Where --metrics listens when given only a port: never every interface by surprise. */
#define METRICS_DEFAULT_HOST	"127.0.0.1"
/*
 * Histogram bounds: `le` = 2^k ns for k in [LE_MIN, LE_MAX].  Bucket i of
 * the kernel's histogram holds latencies in [2^i, 2^(i+1)) ns, all below
 * 2^(i+1), so each bound's cumulative count is exact: 256 ns (below it a
 * probe's own cost) to 2^36 ns = 68.7 s; slower calls are in +Inf only.
 */
#define METRICS_LE_MIN		8
#define METRICS_LE_MAX		36

/* One point as the tick copied it. */
struct metrics_point {
	char name[SDS_NAME_MAX + 1];	/* the point's name */
	bool guard;			/* a libsds guard point; false: a function point */
	bool latency;			/* its calls are timed (not an entry-only point) */
	bool downgraded;		/* its state now (stats: state.downgraded) */
	struct sds_counts total;	/* since the counts began (stats: total) */
	int64_t concurrency;		/* calls in flight (stats: concurrency) */
	uint64_t hist[SDS_HIST_BUCKETS];	/* latency histogram of completed calls */
};

/* Every point of the app, as one tick copied them. */
struct metrics_data {
	char group[SDS_NAME_MAX + 1];	/* --group */
	char app[SDS_NAME_MAX + 1];	/* --app */
	uint64_t gen;			/* copies so far; 0: none yet */
	int npoints;			/* entries of @pts in use */
	struct metrics_point pts[SDS_MAX_POINTS];	/* by point id */
};

/*
 * Parse @spec ("HOST:PORT", "[V6]:PORT", ":PORT" or "PORT"; the host
 * defaults to METRICS_DEFAULT_HOST), resolve it and listen.  Before
 * anything is attached, so a bad value leaves nothing behind: 0, or -1
 * with a one-line reason in @err.
 */
int metrics__open(struct metrics **out, const char *spec, char *err, size_t errlen);
/*
 * Start serving (after the loop blocked its signals); a scrape waits for
 * the next tick, so for up to @tick_ns.  0, or -1 with @err.
 */
int metrics__start(struct metrics *m, uint64_t tick_ns, char *err, size_t errlen);
struct snapshot;
struct tick;
/*
 * The loop's hook, after each tick: copy the counters if a scrape waits,
 * from tick @t's record (names, kinds, verdicts) and @snap, a read with
 * the gauges (the tick's, when it took them: engine.c does when a scrape
 * waits, metrics__waiting).
 */
void metrics__tick(struct metrics *m, const struct tick *t,
		   const struct snapshot *snap);
/* Stop the thread, close every socket; NULL is fine. */
void metrics__close(struct metrics *m);

/* metrics_text.c: the text format */
/*
 * Append the exposition of @d to @buf (malloc'd, grown; *@len bytes used,
 * *@cap allocated): 0, or -1 when memory ran out.
 */
int metrics__render(const struct metrics_data *d, char **buf, size_t *len,
		    size_t *cap);

/* metrics.c: the loop's side */
/* Fill @d from tick @t and read @snap (the loop's thread only). */
void metrics__copy(const struct tick *t, const struct snapshot *snap,
		   struct metrics_data *d);

/* metrics_http.c: the thread's half, for metrics.c */
/* A scrape waits for a copy. */
bool metrics__waiting(const struct metrics *m);
/* The buffer the tick copies into, with its lock; NULL while a scrape has not asked. */
struct metrics_data *metrics__want(struct metrics *m);
/* The copy is complete: hand it to the thread and unlock. */
void metrics__published(struct metrics *m);

#endif /* SDS_METRICS_H */
