// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * cli/list_symbols.c - `sds-bpf list-symbols TARGET [PATTERN]`: what can be
 * probed in TARGET, by the names its developers know, with the site each
 * point would get and what it would cost, as attach would place it.
 */
#include <fnmatch.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cmd.h"
#include "target/demangle.h"
#include "target/elfsym.h"
#include "target/entry.h"
#include "target/lang.h"
#include "kernel/probes.h"
#include "target/site.h"
#include "target/unwind.h"

static const char listsyms_usage[] =
"Usage: sds-bpf list-symbols [--json] TARGET [PATTERN]\n"
"\n"
"List the functions of TARGET a point can name, sorted by name: each as\n"
"C++ and Rust developers know it (demangled, with the symbol in the file),\n"
"the probe site attach would use, its kind and cost per call, and how the\n"
"point sees returns (pair; in programs that unwind, exits: a probe on each\n"
"ret, or entry-only where they cannot all be found; entry-only in Go).\n"
"PATTERN keeps the names that contain it, or with * ? [ the names it\n"
"matches as a glob (fnmatch).  The site is the function's own: attach may\n"
"move it past a 5-byte NOP after its fork self-test.\n"
"\n"
"Options:\n"
"      --json   one JSON object: {\"target\", \"language\", \"returns\",\n"
"               \"functions\": [{\"name\", \"symbol\", \"vaddr\", \"offset\",\n"
"               \"site\", \"instruction\", \"cost_ns\", \"returns\",\n"
"               \"returns_why\"}]}\n"
"  -h, --help   this help\n"
"\n"
"Example:\n"
"  sds-bpf list-symbols ./server 'shop::Cart::*'\n";

/* One row: a function, by its first symbol at its address. */
struct lsym {
	char *name;		/* demangled, or the symbol when not mangled */
	char *symbol;		/* as in the file */
	uint64_t vaddr;		/* st_value: aliases share it */
	uint64_t size;		/* st_size */
	bool local;		/* STB_LOCAL: a global alias replaces it */
};

struct lsyms {
	const char *pattern;	/* PATTERN, or NULL */
	struct lsym *v;		/* the functions kept */
	size_t n;		/* entries in @v */
	size_t cap;		/* room in @v */
};

static bool pattern_keeps(const char *pattern, const char *name)
{
	if (!pattern)
		return true;
	if (strpbrk(pattern, "*?["))
		return !fnmatch(pattern, name, 0);
	return strstr(name, pattern) != NULL;
}

static int lsyms_add(const struct elf_sym *s, void *ctx)
{
	struct lsyms *ls = ctx;
	struct demangled d;
	struct lsym *r;
	char *name;

	name = strdup(demangle__name(s->name, &d) ? s->name : d.full);
	demangle__free(&d);
	if (!name)
		return -1;
	if (!pattern_keeps(ls->pattern, name)) {
		free(name);
		return 0;
	}
	if (ls->n == ls->cap) {
		size_t cap = ls->cap ? 2 * ls->cap : 64;

		r = realloc(ls->v, cap * sizeof(*r));
		if (!r)
			goto nomem;
		ls->v = r;
		ls->cap = cap;
	}
	r = &ls->v[ls->n];
	r->name = name;
	r->symbol = strdup(s->name);
	if (!r->symbol)
		goto nomem;
	r->vaddr = s->vaddr;
	r->size = s->size;
	r->local = s->local;
	ls->n++;
	return 0;
nomem:
	free(name);
	return -1;
}

/* By address (aliases together, a global first), then name: for dedup. */
static int lsym_by_addr(const void *a, const void *b)
{
	const struct lsym *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	if (x->local != y->local)
		return x->local ? 1 : -1;
	return strcmp(x->symbol, y->symbol);
}

static int lsym_by_name(const void *a, const void *b)
{
	const struct lsym *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	return r ? r : strcmp(x->symbol, y->symbol);
}

/* One row per function: the aliases of an address fold into the first. */
static void lsyms_sort(struct lsyms *ls)
{
	size_t i, k = 0;

	qsort(ls->v, ls->n, sizeof(ls->v[0]), lsym_by_addr);
	for (i = 0; i < ls->n; i++) {
		if (k && ls->v[k - 1].vaddr == ls->v[i].vaddr) {
			free(ls->v[i].name);
			free(ls->v[i].symbol);
			continue;
		}
		ls->v[k++] = ls->v[i];
	}
	ls->n = k;
	qsort(ls->v, ls->n, sizeof(ls->v[0]), lsym_by_name);
}

static void lsyms_free(struct lsyms *ls)
{
	size_t i;

	for (i = 0; i < ls->n; i++) {
		free(ls->v[i].name);
		free(ls->v[i].symbol);
	}
	free(ls->v);
}

/* The site and cost attach would give @r; -1 if it has no code in the file. */
static int lsym_point(struct elf_file *ef, const struct lsym *r,
		      enum ret_mode mode, enum ret_why why,
		      struct probe_point *p)
{
	char err[256];

	memset(p, 0, sizeof(*p));
	if (elf_file__func_at(ef, r->symbol, r->vaddr, r->size, &p->fn, err,
			      sizeof(err)))
		return -1;
	entry__place(ef, &p->fn, NULL, why == RET_WHY_GO, &p->site, err,
		     sizeof(err));
	p->kind = POINT_FUNCTION;
	unwind__place(ef, p, mode, why);
	p->attach_off = p->fn.offset + p->site.skip;
	return 0;
}

static int lsyms_print(struct elf_file *ef, const char *target,
		       const struct lsyms *ls, bool json)
{
	struct src_info src;
	enum ret_why why;
	enum ret_mode mode = unwind_ret_mode(ef, &why);
	json_t *o = NULL, *arr = NULL;
	struct probe_point p;
	size_t i;

	lang_detect(ef, &src);
	if (json) {
		o = json_pack("{s:s, s:s, s:s, s:[]}", "target", target,
			      "language", lang_name(src.lang),
			      "returns", why == RET_WHY_UNWIND ? "exits" :
			      unwind_ret_mode_name(mode), "functions");
		arr = o ? json_object_get(o, "functions") : NULL;
		if (!arr) {
			json_decref(o);
			return cmd_err("out of memory");
		}
	} else {
		if (why == RET_WHY_UNWIND)
			printf("returns: per function: the pair where nothing it calls can throw, else exits, a probe on each ret, where they can all be found, else entry-only (%s)\n",
			       unwind_ret_why_text(why));
		else if (why != RET_WHY_NONE)
			printf("returns: %s (%s)\n", unwind_ret_mode_name(mode),
			       unwind_ret_why_text(why));
		printf("%-8s %-10s %-9s %-10s %s\n", "SITE", "COST", "OFFSET",
		       "RETURNS", "FUNCTION [SYMBOL]");
	}
	for (i = 0; i < ls->n; i++) {
		const struct lsym *r = &ls->v[i];
		char cost[16], off[24];

		if (lsym_point(ef, r, mode, why, &p))
			continue;
		if (json) {
			json_array_append_new(arr, json_pack("{s:s, s:s, s:I, s:I, s:s, s:s, s:i, s:s, s:s, s:i, s:s, s:s}",
				"name", r->name, "symbol", r->symbol,
				"vaddr", (json_int_t)r->vaddr,
				"offset", (json_int_t)p.attach_off,
				"site", site_kind_name(p.site.kind),
				"entry_site", site_kind_name(p.site.entry_kind),
				"site_at", (int)p.site.skip,
				"site_why", p.site.why,
				"instruction", p.site.insn,
				"cost_ns", (int)probes__point_cost_ns(&p),
				"returns", unwind_ret_mode_name(p.ret_mode),
				"returns_why", p.ret_mode != RET_ENTRY_ONLY ? p.returns_why :
				*p.exits_why ? p.exits_why : unwind_ret_why_text(p.ret_why)));
			continue;
		}
		snprintf(cost, sizeof(cost), "~%u ns", probes__point_cost_ns(&p));
		snprintf(off, sizeof(off), "0x%llx", (unsigned long long)p.attach_off);
		if (strcmp(r->name, r->symbol))
			printf("%-8s %-10s %-9s %-10s %s [%s]\n", site_kind_name(p.site.kind),
			       cost, off, unwind_ret_mode_name(p.ret_mode), r->name, r->symbol);
		else
			printf("%-8s %-10s %-9s %-10s %s\n", site_kind_name(p.site.kind),
			       cost, off, unwind_ret_mode_name(p.ret_mode), r->name);
		/* Where entry.c moved the probe, or why it could not. */
		if (p.site.why[0])
			printf("%8s site: %s\n", "", p.site.why);
		/* A target that can unwind: why this one has the pair, or not. */
		if (p.returns_why[0] && p.ret_mode != RET_ENTRY_ONLY)
			printf("%8s returns: %s (%s)\n", "",
			       unwind_ret_mode_name(p.ret_mode), p.returns_why);
	}
	if (json) {
		json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(o);
	}
	return 0;
}

int do_list_symbols(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct lsyms ls = { 0 };
	struct elf_file *ef;
	bool json = false;
	char err[512];
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(listsyms_usage, stdout);
			return 0;
		default:
			return cmd_err("list-symbols: bad option (see sds-bpf list-symbols --help)");
		}
	}
	if (optind >= argc)
		return cmd_err("list-symbols: missing TARGET (see sds-bpf list-symbols --help)");
	if (argc - optind > 2)
		return cmd_err("list-symbols: one TARGET and at most one PATTERN (see sds-bpf list-symbols --help)");
	ls.pattern = optind + 1 < argc ? argv[optind + 1] : NULL;
	ef = elf_file__open(argv[optind], err, sizeof(err));
	if (!ef)
		return cmd_err("%s", err);
	ret = elf_file__for_each_sym(ef, ELF_SYMS_FUNCS, lsyms_add, &ls);
	if (ret) {
		cmd_err("%s: out of memory", argv[optind]);
	} else {
		lsyms_sort(&ls);
		ret = lsyms_print(ef, argv[optind], &ls, json);
	}
	lsyms_free(&ls);
	elf_file__close(ef);
	return ret;
}
