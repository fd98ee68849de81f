/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A function point with several sites: the clones (.isra.N, .constprop.N,
 * .part.N) g++ left of one function that has no symbol of its own, or a
 * C function's own symbol and its clones (gcc's).  The point's own
 * fn/site/exits are its first site's; the others are
 * sub-points in p->clones, each placed and attached as its own analysis
 * says (entry.c, exits.c, nothrow.c) with the point's id as cookie, so
 * every clone's calls, errors and latency count into the one point.
 */
#ifndef SDS_CLONES_H
#define SDS_CLONES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/probes.h"

#define CLONES_MAX	8	/* clones of one function one point probes */

/*
 * Find point @p's function in @ef (p->spec set) into p->fn, and the other
 * clones into p->clones when the name finds several, each entry placed
 * (entry.c; @go: a Go TARGET) and its returns placed as @mode/@why say
 * (unwind.h).  0, or -1 with a message in @err (p->clones freed); with
 * *@where set to what failed: CLONES_FIND (the message is elfsym's) or
 * CLONES_SITE (entry__place's, of p->fn or of the clone it names).
 */
enum clones_fail {
	CLONES_FIND,
	CLONES_SITE,
};
int clones__resolve(struct elf_file *ef, struct probe_point *p, bool go,
		    enum ret_mode mode, enum ret_why why,
		    enum clones_fail *where, char *err, size_t errlen);

/* The sites are all on a 5-byte NOP (:site=nop5 asks for it). */
bool clones__all_nop5(const struct probe_point *p);

/*
 * "the compiler's .isra.0 clone", "the compiler's .isra.0 and
 * .constprop.0 clones", "... .a, .b and .c clones": what attach says of
 * the clones among @p's sites (a C function's own symbol is not one);
 * "" when none is.
 */
void clones__describe(const struct probe_point *p, char *buf, size_t len);

/* Some site of @p is a clone, whose arguments the compiler changed. */
bool clones__any(const struct probe_point *p);

/*
 * The attach cookie of the entry of @c (point @id itself or one of its
 * clones): the id, with SDS_COOKIE_PART on a .part.N piece of a point
 * that has other sites (c->part): its entry from the function's own head
 * continues a call, it does not start one (docs/PROBES.md).
 */
uint64_t clones__entry_cookie(const struct probe_point *c, int id);

/*
 * How @p's calls are seen ending, over all its sites: "pair" when every
 * site has the pair, else each mode some site has, "pair+exits",
 * "pair+entry-only" (in that order), into @buf; returns @buf.
 */
const char *clones__returns(const struct probe_point *p, char *buf, size_t len);

/* Free p->clones (their links must be detached). */
void clones__free(struct probe_point *p);

#endif /* SDS_CLONES_H */
