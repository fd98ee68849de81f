// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * ext_print.c - `sds-bpf ext list` and `sds-admin --ext-list`: what the
 * registry holds, where each came from and its state, as a table or JSON.
 * Listing reads the manifests but loads nothing: a listing never runs a
 * plugin's code.
 */
#include <jansson.h>
#include <stdio.h>
#include "ext/ext.h"

static void add_json(const struct sds_ext_info *e, void *ctx)
{
	json_t *o = json_pack("{s:s, s:s, s:b, s:s, s:s, s:s}",
			      "interface", e->iface, "name", e->name,
			      "default", e->is_default,
			      "origin", e->builtin ? "built-in" : "manifest",
			      "state", e->state, "why", e->why);

	if (!e->builtin) {
		json_object_set_new(o, "file", json_string(e->file));
		json_object_set_new(o, "line", json_integer(e->line));
		json_object_set_new(o, "lib", json_string(e->lib));
		json_object_set_new(o, "symbol", json_string(e->sym));
	}
	json_array_append_new(ctx, o);
}

static void add_row(const struct sds_ext_info *e, void *ctx)
{
	char origin[2 * SDS_EXT_PATH_MAX + SDS_EXT_SYM_MAX + 32];

	if (e->builtin)
		snprintf(origin, sizeof(origin), "built-in%s",
			 e->is_default ? " (default)" : "");
	else
		snprintf(origin, sizeof(origin), "%s:%d %s:%s", e->file, e->line,
			 e->lib, e->sym);
	fprintf(ctx, "%-10s %-20s %-12s %s%s%s\n", e->iface, e->name, e->state,
		origin, e->why[0] ? ": " : "", e->why);
}

int ext_print(FILE *f, bool json)
{
	json_t *all, *probs, *doc;
	int i;

	if (!json) {
		fprintf(f, "%-10s %-20s %-12s %s\n", "INTERFACE", "NAME", "STATE",
			"ORIGIN");
		sds_ext_list(add_row, f);
		for (i = 0; sds_ext_problem(i); i++)
			;
		return i;
	}
	all = json_array();
	probs = json_array();
	sds_ext_list(add_json, all);
	for (i = 0; sds_ext_problem(i); i++)
		json_array_append_new(probs, json_string(sds_ext_problem(i)));
	doc = json_pack("{s:o, s:o}", "extensions", all, "problems", probs);
	json_dumpf(doc, f, JSON_COMPACT);
	fputc('\n', f);
	json_decref(doc);
	return i;
}
