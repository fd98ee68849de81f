// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * attach_table.c - the table `attach` prints once every probe is
 * attached: per function point its symbol, offset, site, cost and
 * instruction, then what the operator should know of it (the demangled
 * name, the hint for a cheaper site or the fork-safe placement, how
 * returns are seen), and the libsds guard points.
 */
#include <stdio.h>
#include "cli/attach_table.h"
#include "point/clones.h"
#include "target/demangle.h"

void attach_table__print(const struct probes *pr, const struct sds_sites *sites,
			 bool needs_libsds, const struct attach_table *t)
{
	char guard_cost[16], path[192];
	int i, k, pairs = 0;

	if (t->fork_line[0])
		printf("%s\n", t->fork_line);
	if (t->costs_line[0])
		printf("%s\n", t->costs_line);
	if (t->syms_line && t->syms_line[0])
		printf("symbols: %s\n", t->syms_line);
	printf("%-16s %-24s %-10s %-8s %-9s %s\n", "POINT", "SYMBOL", "OFFSET",
	       "SITE", "COST", "INSTRUCTION");
	for (i = 0; i < pr->npoints; i++) {
		const struct probe_point *p = &pr->pts[i];
		char off[32], cost[16], hint[512], shown[2 * ELF_FUNC_NAME_MAX];
		char at[24];

		if (p->kind != POINT_FUNCTION)
			continue;
		site_hint(&p->site, t->src, hint, sizeof(hint));

		snprintf(off, sizeof(off), "0x%llx", (unsigned long long)p->attach_off);
		snprintf(cost, sizeof(cost), "~%u ns", probes__point_cost_ns(p));
		/*
		 * What was stepped over: endbr64 (4), the NOP (5), or both
		 * (9); or where entry.c moved the probe to.
		 */
		if (p->site.moved)
			snprintf(at, sizeof(at), "+0x%x: ", p->site.skip);
		else
			snprintf(at, sizeof(at), "%s", p->site.skip == 4 ? "endbr64; " :
				 p->site.skip == 5 ? "nopl; " : p->site.skip == 9 ?
				 "endbr64; nopl; " : "");
		printf("%-16s %-24s %-10s %-8s %-9s %s%s\n", p->spec.name,
		       p->spec.symbol, off, site_kind_name(p->site.kind), cost,
		       at, p->site.insn);
		if (!demangle__shown(p->fn.name, shown, sizeof(shown)))
			printf("%16s symbol: %s\n", "", shown);
		if (p->fn.clone[0]) {
			char what[512];

			clones__describe(p, what, sizeof(what));
			printf("%16s clone%s: %s (no symbol of %s's own)\n", "",
			       p->nclones ? "s" : "", what, p->spec.symbol);
		} else if (p->nclones) {
			char what[512];

			/* A C function's own symbol and gcc's clones of it. */
			clones__describe(p, what, sizeof(what));
			printf("%16s clone%s: its own symbol and %s, one point\n",
			       "", p->nclones > 1 ? "s" : "", what);
		}
		/* The other clones, counted as this point (point/clones.h). */
		for (k = 0; k < p->nclones; k++) {
			const struct probe_point *c = &p->clones[k];

			printf("%16s also: %s at 0x%llx, %s, returns: %s%s%s\n", "",
			       c->fn.name,
			       (unsigned long long)(c->fn.offset + c->site.skip),
			       site_kind_name(c->site.kind),
			       unwind_ret_mode_name(c->ret_mode),
			       c->ret_mode == RET_EXITS ? " (a probe on each ret)" : "",
			       c->part ? "; entered from the function's own head it goes on with that call, not a new one" : "");
		}
		if (p->site.why[0])
			printf("%16s site: %s\n", "", p->site.why);
		/* Past the NOP: the cheap site is there, the hint is moot. */
		if (!p->site.moved && (p->site.skip == 5 || p->site.skip == 9))
			printf("%16s note: fork-safe: probed past the 5-byte NOP, ~%u ns a call instead of ~%u (%s)\n",
			       "", site_cost_ns(p->site.kind),
			       site_cost_ns(SITE_NOP5), t->fork_safe_by);
		else if (*hint)
			printf("%16s hint: %s\n", "", hint);
		if (p->ret_mode == RET_ENTRY_ONLY)
			printf("%16s returns: entry-only (%s%s%s); visits counted, no latency, no exits\n",
			       "", unwind_ret_why_text(p->ret_why),
			       *p->exits_why ? ": " : "", p->exits_why);
		else if (p->ret_mode == RET_EXITS)
			printf("%16s returns: a probe on each of its %d ret%s (the target can unwind: no return probe%s%s); an exit not seen is an exception\n",
			       "", p->exits.n, p->exits.n == 1 ? "" : "s",
			       *p->returns_why ? "; " : "", p->returns_why);
		else if (p->ret_mode == RET_PAIR && *p->returns_why)
			printf("%16s returns: pair (%s: a return probe is safe in this target that can unwind)\n",
			       "", p->returns_why);
		else if (p->ret_mode == RET_PAIR && !p->session && pr->path.session &&
			 p->parts)
			printf("%16s returns: the pair (a .part piece's entry reads the per-thread frame stack)\n", "");
		else if (p->ret_mode == RET_PAIR && !p->session && pr->path.session)
			printf("%16s returns: the pair (failfast= reads the per-thread frame stack)\n", "");
		if (p->ret_mode == RET_PAIR)
			pairs++;
	}
	/* A guarded call fires two nop5 probes: sds__site_enter, sds__site_exit. */
	snprintf(guard_cost, sizeof(guard_cost), "~%u ns",
		 2 * site_probe_ns(SITE_NOP5));
	if (sites->found)
		printf("%-16s %-24s 0x%-8llx %-8s %-9s libsds guard points, found as the app registers them (a guarded call: entry + exit)\n",
		       "(guards)", "sds__site_enter",
		       (unsigned long long)sites->offset[SDS_SITE_ENTER], "nop5",
		       guard_cost);
	else if (needs_libsds)
		printf("%-16s %-24s %-10s %-8s %-9s libsds guard points in libsds.so, attached as the app registers (a guarded call: entry + exit)\n",
		       "(guards)", "sds__site_enter", "-", "nop5", guard_cost);
	/* How entry and return of the points with both are seen (docs/PROBES.md). */
	if (pairs)
		printf("probe path: %s\n", probes__path_text(pr, path, sizeof(path)));
	fflush(stdout);
}
