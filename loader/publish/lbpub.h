/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * lbpub.h - the load of every provider point ("<dep>@<provider>"), written
 * into its flag entry each tick for libsds's balancer (docs/BALANCE.md,
 * "How the load is published"): the kernel's in-flight gauge and a recent
 * mean latency.
 */
#ifndef SDS_LBPUB_H
#define SDS_LBPUB_H

#include <stdbool.h>
#include <stdint.h>

struct point_stats;
struct probes;

/*
 * The mean is taken over the newest calls: back from the tick's read to
 * the newest sample with at least LBPUB_MIN_CALLS completed since, but
 * never further than LBPUB_SPAN_NS (when no call completed within it,
 * the last mean stands).  A busy provider's mean is thus that
 * of its last tick or two (a provider made 10x slower shows it within two
 * ticks), a quiet one's that of its last seconds (not the noise of a
 * call or two).  Samples are kept at most every LBPUB_STEP_NS, in a ring
 * that reaches a span back.
 */
#define LBPUB_SPAN_NS	2000000000ULL	/* "recent": at most the last 2 s */
#define LBPUB_MIN_CALLS	16		/* calls a mean wants before it reaches further back */
#define LBPUB_STEP_NS	50000000ULL	/* samples at most every 50 ms */
#define LBPUB_RING	(LBPUB_SPAN_NS / LBPUB_STEP_NS + 2)
/*
 * A provider that completed no call for this long publishes latency 0
 * ("not measured"): shortest_response then tries it again, so a provider
 * that was slow once is not avoided for ever (it gets no traffic to
 * show it recovered otherwise).
 */
#define LBPUB_FORGET_NS	10000000000ULL

/* One provider point's samples (cumulative counts, as the snapshot has them). */
struct lbpub_sample {
	uint64_t at_ns;		/* CLOCK_MONOTONIC of the read */
	uint64_t lat_sum;	/* total.latency_sum: ns over completed calls, since attach */
	uint64_t done;		/* completed calls since attach (the histogram's total) */
};

struct lbpub_point {
	struct lbpub_sample s[LBPUB_RING];	/* ring, oldest overwritten */
	unsigned int pos;	/* next sample goes there */
	unsigned int n;		/* samples in the ring */
	uint64_t mean_ns;	/* the last mean published */
	uint64_t last_done_ns;	/* when a completed call was last seen */
};

struct lbpub {
	int scanned;		/* point ids looked at for '@' so far */
	int nproviders;		/* of them provider points */
	struct lbpub_point *pt[];	/* by point id (SDS_MAX_POINTS); NULL: not a provider */
};

/* Does point name @name name a provider ("<dep>@<provider>")? */
bool lbpub_is_provider(const char *name);

/*
 * The tick needs the gauges (in-flight, histogram) of every point: true
 * when a provider point exists among @p's.  Looks at points added since
 * the last call (allocating their state, and *@lpp when NULL); false,
 * and publishes nothing, if memory runs out.
 */
bool lbpub__wants_gauges(struct lbpub **lpp, const struct probes *p);

struct flags_region;
struct tick;
/* Publish every provider's load into @f, from tick @t's read and time. */
void lbpub__tick(struct lbpub *lp, struct flags_region *f, const struct tick *t);

/*
 * The mean latency of @p after adding the sample of @st at @now_ns (pure:
 * the unit tests drive it).  Returns the value to publish, in ns.
 */
uint64_t lbpub_mean(struct lbpub_point *p, const struct point_stats *st,
		    uint64_t now_ns);

/* Free @lp (NULL: nothing); the caller drops its pointer. */
void lbpub__free(struct lbpub *lp);

#endif /* SDS_LBPUB_H */
