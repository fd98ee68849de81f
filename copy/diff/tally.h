/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * tally.h - what became of the compared pairs, per point: counts (same,
 * different, shadow error, timeout) and the first differences kept as
 * examples.  One tally for `replay --diff` (reported at the end, text or
 * JSON) and one per plan for a live `diff: true` plan (sent to the admin
 * per period).
 */
#ifndef COPY_DIFF_TALLY_H
#define COPY_DIFF_TALLY_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <jansson.h>

#include "diff.h"
#include "sds_types.h"

#define TALLY_POINTS_MAX	64	/* points counted apart; more: totals only */
#define TALLY_EXAMPLES_MAX	100	/* examples kept per point */

enum tally_outcome {
	TALLY_SAME,
	TALLY_DIFFERENT,
	TALLY_ERROR,		/* no usable answer: refused, cut, not HTTP */
	TALLY_TIMEOUT,		/* no whole answer in time */
};

struct tally_count {
	uint64_t pairs, same, different, shadow_errors, timeouts;
};

struct tally_example {
	uint64_t record;		/* replay: the request's number in the file */
	struct diff_result res;
};

struct tally_point {
	char app[SDS_NAME_MAX + 1], point[SDS_NAME_MAX + 1];
	struct tally_count n;
	struct tally_example *ex;	/* the first @examples differences */
	int nex;
};

struct tally {
	int examples;			/* examples kept per point, 0..100 */
	struct tally_count total;
	struct tally_point pts[TALLY_POINTS_MAX];
	int npts;
};

void tally_init(struct tally *t, int examples);
void tally_free(struct tally *t);

/* One pair of @app/@point; @res is read only when TALLY_DIFFERENT. */
void tally_add(struct tally *t, const char *app, const char *point,
	       enum tally_outcome out, uint64_t record,
	       const struct diff_result *res);

/* Forget the examples kept (the counts stay): a new period's examples. */
void tally_examples_clear(struct tally *t);

/* Every count and example zero again (the points stay). */
void tally_reset(struct tally *t);
/* Add @src's counts and examples (up to @dst's limit) to @dst. */
void tally_merge(struct tally *dst, const struct tally *src);

/* {"pairs", "same", "different", "shadow_errors", "timeouts"} */
json_t *tally_count_json(const struct tally_count *c);

/* One point's counts with "app", "point", "examples" (@record: with numbers). */
json_t *tally_point_json(const struct tally_point *p, bool record);

/* Every point's, as an array. */
json_t *tally_points_json(const struct tally *t, bool record);

/* The text report: the totals' line is the caller's, then one per point. */
void tally_print_points(const struct tally *t, FILE *out);

#endif /* COPY_DIFF_TALLY_H */
