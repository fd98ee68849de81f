/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * store/stat_cols.h - the per-point heartbeat counts the store keeps as
 * they came, one column of the stats table each, listed once.
 *
 * Each X(name, kind) is a uint64_t field of struct sds_hb_point
 * (common/heartbeat/heartbeat.h), of struct store_stat_row (store.h) and
 * a column of stats, all three named alike.  From this list both engines
 * insert them (SQLite row by row, PostgreSQL as one more unnest()ed
 * array each), both scans read them back and store_stat_row carries
 * them.  Rows stored before a column existed read it as 0.
 *
 * @kind says what a statistics query (api/aggregate.c) makes of it
 * across hosts and periods:
 *   STORE_STAT_SUM       a count: summed into each step and the total
 *                        ("NAME": [...], "total": {"NAME"}), as visits
 *   STORE_STAT_LAST_SUM  a state: each host's latest value, summed over
 *                        the hosts that report it ("NAME", "NAME_hosts")
 *   STORE_STAT_LAST_MAX  a state: each host's latest, the highest ("NAME")
 *   STORE_STAT_MAX       a maximum over the period (or a flag, 0/1): the
 *                        highest of the step's rows and of the range
 *                        ("NAME": [...], "total": {"NAME"}), never summed
 *
 * A new field: one X() line here (anywhere: every statement's column
 * list, and the order the scans read, come from this list), one
 * migration per engine adding its column (NOT NULL DEFAULT 0,
 * store/sqlite/schema.c and store/pg/schema.c), STORE_EXT_ABI bumped
 * (store.h: the row a store plugin fills changed), its lines in
 * admin/API.md, and the dashboard's (admin/web/app.js).
 */
#ifndef SDS_ADMIN_STORE_STAT_COLS_H
#define SDS_ADMIN_STORE_STAT_COLS_H

#define STORE_STAT_SUM		0
#define STORE_STAT_LAST_SUM	1
#define STORE_STAT_LAST_MAX	2
#define STORE_STAT_MAX		3

#define STORE_STAT_COLS(X)						\
	/* an adaptive point's limit at the period's end (docs/ADAPTIVE.md) */ \
	X(adaptive_limit, STORE_STAT_LAST_SUM)				\
	/* the latency it steered by then */				\
	X(adaptive_latency_ns, STORE_STAT_LAST_MAX)			\
	/* the period's split calls and where their time went (docs/SPLIT.md) */ \
	X(split_calls, STORE_STAT_SUM)					\
	X(split_on_cpu_ns, STORE_STAT_SUM)				\
	X(split_runqueue_ns, STORE_STAT_SUM)				\
	X(split_blocked_ns, STORE_STAT_SUM)				\
	/* the most calls stuck past their timeout at once (docs/LIMITS.md) */ \
	X(max_stuck, STORE_STAT_MAX)					\
	/* 1: a host pressure rule shed the point (docs/PRESSURE.md) */	\
	X(overload, STORE_STAT_MAX)

/* How many. */
#define STORE_STAT_ONE_(f, k)	+ 1
#define STORE_STAT_NCOLS	(0 STORE_STAT_COLS(STORE_STAT_ONE_))

/*
 * SQL fragments, each a string literal: ", adaptive_limit, ..." (the
 * column names), ", s.adaptive_limit, ..." (with the scans' alias),
 * ", u.adaptive_limit, ..." (PostgreSQL's unnest() alias), ", ?, ?"
 * (parameters numbered on from the last: SQLite's rule, which store/pg/
 * follows) and ", ?::bigint[], ..." (PostgreSQL's arrays).
 */
#define STORE_STAT_NAME_(f, k)	", " #f
#define STORE_STAT_S_(f, k)	", s." #f
#define STORE_STAT_U_(f, k)	", u." #f
#define STORE_STAT_PARAM_(f, k)	", ?"
#define STORE_STAT_ARRAY_(f, k)	", ?::bigint[]"
#define STORE_STAT_SQL_NAMES	STORE_STAT_COLS(STORE_STAT_NAME_)
#define STORE_STAT_SQL_S	STORE_STAT_COLS(STORE_STAT_S_)
#define STORE_STAT_SQL_U	STORE_STAT_COLS(STORE_STAT_U_)
#define STORE_STAT_SQL_PARAMS	STORE_STAT_COLS(STORE_STAT_PARAM_)
#define STORE_STAT_SQL_ARRAYS	STORE_STAT_COLS(STORE_STAT_ARRAY_)

/* The fields themselves, in a struct: uint64_t adaptive_limit; ... */
#define STORE_STAT_FIELD_(f, k)	uint64_t f;
#define STORE_STAT_FIELDS	STORE_STAT_COLS(STORE_STAT_FIELD_)

#endif /* SDS_ADMIN_STORE_STAT_COLS_H */
