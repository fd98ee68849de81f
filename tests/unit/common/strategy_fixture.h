/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * strategy_fixture.h - what the units of common/strategy.c share: the
 * example of docs/DESIGN.md §4, the output buffers, and the checks of a
 * refused document and of every field.
 */
#ifndef SDS_STRATEGY_FIXTURE_H
#define SDS_STRATEGY_FIXTURE_H

#include <stdlib.h>
#include <string.h>
#include "strategy.h"

#define LIMIT_MAX_S	"1099511627776"		/* 1 << 40, strategy.c's LIMIT_MAX */

/* The example of docs/DESIGN.md §4, verbatim. */
static const char __attribute__((unused)) design_example[] =
	"{\"version\": 3,\n"
	" \"points\": {\"order\": {\"visit_threshold\": 1000, \"exception_rate_threshold\": 40,\n"
	"                      \"exception_rate_start\": 20, \"timeout_ms\": 200,\n"
	"                      \"timeout_count_threshold\": 10, \"downgrade_rate\": 100}}}\n";

/* Two copies of the (large) output struct: the one parsed into, a reference. */
struct bufs {
	struct sds_strategies *out;
	struct sds_strategies *ref;
};

static inline int setup(void **state)
{
	struct bufs *b = calloc(1, sizeof(*b));

	if (!b)
		return -1;
	b->out = malloc(sizeof(*b->out));
	b->ref = malloc(sizeof(*b->ref));
	if (!b->out || !b->ref)
		return -1;
	*state = b;
	return 0;
}

static inline int teardown(void **state)
{
	struct bufs *b = *state;

	free(b->out);
	free(b->ref);
	free(b);
	return 0;
}

/* Fill @b->out with a pattern and keep a copy to compare after a failure. */
static inline void poison(struct bufs *b)
{
	memset(b->out, 0xa5, sizeof(*b->out));
	memcpy(b->ref, b->out, sizeof(*b->out));
}

static inline int parse(const char *text, struct sds_strategies *out, char *err,
		 size_t errlen)
{
	return strategy_set_parse(text, strlen(text), out, err, errlen);
}

/* @text must be refused with exactly @msg, leaving the output as it was. */
static inline void expect_invalid(struct bufs *b, const char *text, const char *msg)
{
	char err[512];

	poison(b);
	strcpy(err, "untouched");
	assert_int_equal(parse(text, b->out, err, sizeof(err)), -1);
	assert_string_equal(err, msg);
	assert_memory_equal(b->out, b->ref, sizeof(*b->out));
}

/* Every field of @st, in the order of struct sds_strategy. */
static inline void assert_fields(const struct sds_strategy *st, const char *point,
			  int64_t visit, int64_t token_rate, int64_t token_bucket,
			  int64_t concurrent, int64_t timeout_ms, int64_t timeout_count,
			  int64_t exc, int64_t exc_rate, int64_t exc_start,
			  int64_t downgrade_rate, int64_t delay, int64_t retry)
{
	assert_string_equal(st->point, point);
	assert_int_equal(st->visit_threshold, visit);
	assert_int_equal(st->token_rate, token_rate);
	assert_int_equal(st->token_bucket, token_bucket);
	assert_int_equal(st->concurrent_threshold, concurrent);
	assert_int_equal(st->timeout_ms, timeout_ms);
	assert_int_equal(st->timeout_count_threshold, timeout_count);
	assert_int_equal(st->exception_threshold, exc);
	assert_int_equal(st->exception_rate_threshold, exc_rate);
	assert_int_equal(st->exception_rate_start, exc_start);
	assert_int_equal(st->downgrade_rate, downgrade_rate);
	assert_int_equal(st->delay_ms, delay);
	assert_int_equal(st->retry_interval_ms, retry);
}

/* A document with one point "order" whose strategy is @pt. */
#define DOC(pt)	"{\"version\": 1, \"points\": {\"order\": " pt "}}"

#endif /* SDS_STRATEGY_FIXTURE_H */
