// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * clones.c - a point on every clone g++ left of one function, or on a C
 * function and gcc's clones of it (clones.h): found by the name users
 * know, each clone's entry and returns placed as for any function, kept
 * beside the point so that probes.c attaches, pins, suspends and
 * detaches them with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "point/clones.h"
#include "target/entry.h"
#include "target/exits.h"
#include "target/unwind.h"

void clones__free(struct probe_point *p)
{
	free(p->clones);
	p->clones = NULL;
	p->nclones = 0;
	p->part = false;
	p->parts = false;
}

/* A .part.N piece: the rest of the function, split from its head. */
static bool is_part(const struct elf_func *fn)
{
	return strstr(fn->clone, ".part.") != NULL;
}

/* Place @c's entry and returns (c->fn, c->spec set). */
static int clone_place(struct elf_file *ef, struct probe_point *c, bool go,
		       enum ret_mode mode, enum ret_why why, char *err,
		       size_t errlen)
{
	if (entry__place(ef, &c->fn, &c->spec, go, &c->site, err, errlen))
		return -1;
	unwind__place(ef, c, mode, why);
	return 0;
}

int clones__resolve(struct elf_file *ef, struct probe_point *p, bool go,
		    enum ret_mode mode, enum ret_why why,
		    enum clones_fail *where, char *err, size_t errlen)
{
	struct elf_func fns[CLONES_MAX];
	int n, i;

	clones__free(p);
	*where = CLONES_FIND;
	n = elf_file__find_funcs(ef, p->spec.symbol, fns, CLONES_MAX, err,
				 errlen);
	if (n < 0)
		return -1;
	p->fn = fns[0];
	*where = CLONES_SITE;
	if (clone_place(ef, p, go, mode, why, err, errlen))
		return -1;
	if (n == 1)
		return 0;
	p->clones = calloc((size_t)n - 1, sizeof(*p->clones));
	if (!p->clones) {
		snprintf(err, errlen, "%s: out of memory", p->spec.symbol);
		return -1;
	}
	p->nclones = n - 1;
	p->part = is_part(&p->fn);
	for (i = 1; i < n; i++) {
		struct probe_point *c = &p->clones[i - 1];

		c->kind = POINT_FUNCTION;
		c->spec = p->spec;
		c->fn = fns[i];
		if (clone_place(ef, c, go, mode, why, err, errlen)) {
			char why_[256];

			snprintf(why_, sizeof(why_), "%s", err);
			snprintf(err, errlen, "%s (its clone %s)", why_, c->fn.name);
			clones__free(p);
			return -1;
		}
		c->part = is_part(&c->fn);
	}
	/* Pieces beside whole sites: their entries tell the two apart. */
	for (i = 0; i < p->nclones; i++)
		if (p->clones[i].part != p->part)
			p->parts = true;
	if (!p->parts) {
		p->part = false;
		for (i = 0; i < p->nclones; i++)
			p->clones[i].part = false;
	}
	return 0;
}

bool clones__all_nop5(const struct probe_point *p)
{
	int i;

	if (p->site.kind != SITE_NOP5)
		return false;
	for (i = 0; i < p->nclones; i++)
		if (p->clones[i].site.kind != SITE_NOP5)
			return false;
	return true;
}

void clones__describe(const struct probe_point *p, char *buf, size_t len)
{
	const struct probe_point *first = p;
	size_t at;
	int i = 0, n = p->nclones;

	buf[0] = '\0';
	/* A C function's own symbol, then its clones: only theirs named. */
	if (!p->fn.clone[0]) {
		if (!p->nclones)
			return;
		first = &p->clones[0];
		i = 1;
		n--;
	}
	at = (size_t)snprintf(buf, len, "the compiler's %s", first->fn.clone);
	for (; i < p->nclones && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       i == p->nclones - 1 ? " and " : ", ",
				       p->clones[i].fn.clone);
	if (at < len)
		snprintf(buf + at, len - at, " clone%s", n ? "s" : "");
}

bool clones__any(const struct probe_point *p)
{
	return p->fn.clone[0] || p->nclones;
}

uint64_t clones__entry_cookie(const struct probe_point *c, int id)
{
	return (uint64_t)(unsigned int)id | (c->part ? SDS_COOKIE_PART : 0);
}

const char *clones__returns(const struct probe_point *p, char *buf, size_t len)
{
	static const enum ret_mode order[] = { RET_PAIR, RET_EXITS, RET_ENTRY_ONLY };
	size_t at = 0, k;
	int i;

	buf[0] = '\0';
	for (k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		bool has = p->ret_mode == order[k];

		for (i = 0; i < p->nclones && !has; i++)
			has = p->clones[i].ret_mode == order[k];
		if (has && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%s",
					       at ? "+" : "",
					       unwind_ret_mode_name(order[k]));
	}
	return buf;
}
