/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What probes cost on this machine (issue 9): measured once per boot by
 * timing sds-bpf's own BPF programs on a probe site of each kind in a
 * helper process (calib_run.c), cached in the run directory, and given
 * to site_costs_set() so that `attach`'s table, the budget and the
 * per-point overhead estimate in `stats` use them.  When the measurement
 * cannot be made the figures of docs/DESIGN.md §3 stay (site.c).
 */
#ifndef SDS_CALIB_H
#define SDS_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "target/site.h"

#define CALIB_FILE	".calib"	/* the cache, in the run directory */
/* SDS_PROBE_COSTS=design: no measurement, docs/DESIGN.md §3's figures. */
#define CALIB_ENV	"SDS_PROBE_COSTS"

/*
 * The timings the helper makes, one per probed function: each is set
 * beside an unprobed twin of the same code.
 */
enum calib_test {
	CALIB_NOP5_ENTRY,	/* nop5 site, entry program only */
	CALIB_NOP5_PAIR,	/* nop5 site, entry + return */
	CALIB_EMU_PAIR,		/* push %rbp (emulated), entry + return */
	CALIB_STEP_PAIR,	/* mov (single-stepped), entry + return */
	CALIB_NTESTS,
};

#define CALIB_ROUNDS	9	/* alternating rounds per test; the median counts */

/* One round of one test: N calls timed with the probe and without. */
struct calib_round {
	uint64_t with_ns;	/* N calls of the probed function */
	uint64_t without_ns;	/* N calls of its unprobed twin */
};

struct calib {
	struct site_costs costs;	/* what the loader uses (.measured: 1 when measured) */
	bool cached;			/* read from this boot's cache, not measured now */
	char detail[160];		/* unmeasured: why ("" when measured) */
};

/* The median of @v[0..n) (n >= 1), which it sorts; even n: the lower middle. */
uint64_t calib__median(uint64_t *v, int n);

/*
 * What one firing costs, in ns (rounded): the median over @n rounds of
 * (with - without) / @calls.  0 when it is not above zero (noise won).
 */
unsigned int calib__per_call(const struct calib_round *r, int n,
			     unsigned int calls);

/*
 * The site costs from the per-call figures of each test @ns (by enum
 * calib_test): the return half is NOP5_PAIR - NOP5_ENTRY, each kind's
 * probe its pair less that.  -1 when a figure is implausible (zero, a
 * return that costs nothing, a stepped site cheaper than a nop5).
 */
int calib__costs(const unsigned int ns[CALIB_NTESTS], struct site_costs *out);

/* The cache's text for @c, of boot @boot, into @buf; its length or -1. */
int calib__format(const struct site_costs *c, const char *boot, char *buf,
		  size_t len);

/*
 * Parse the cache's text @text: 0 and @out filled (measured) when it is
 * whole, ours, of boot @boot and plausible; -1 otherwise (damaged,
 * another boot's, foreign).
 */
int calib__parse(const char *text, const char *boot, struct site_costs *out);

/* One line for `attach`'s output, without newline. */
void calib__describe(const struct calib *c, const char *run_dir, char *out,
		     size_t outlen);

/*
 * This boot's costs, into @c: from @run_dir's cache, else measured now
 * (and cached), else docs/DESIGN.md §3's with one line on stderr saying why;
 * SDS_PROBE_COSTS=design asks for §3's without measuring.  Then
 * site_costs_set() with them.  Never fails; returns whether `attach`
 * should say which costs it uses (false: the user chose §3's).
 */
bool calib__get(const char *run_dir, struct calib *c);

/*
 * Measure now (calib_run.c): 0 and @out, or -1 with why in @why.
 */
int calib__measure(struct site_costs *out, char *why, size_t whylen);

#endif /* SDS_CALIB_H */
