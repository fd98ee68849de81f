// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * cli/deps.c - `deps`: each point's dependencies, the peers its calls
 * reached, as a loader attached with --deps counted them (docs/DEPS.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>
#include "cli/cmd.h"
#include "cli/query.h"
#include "serve/ctl.h"
#include "names.h"

static const char deps_usage[] =
"Usage: sds-bpf deps [--group G] [--app NAME] [POINT] [--json]\n"
"\n"
"Each point's dependencies since attach: the peers (address, port, TCP or\n"
"UDP) that its calls connected to or sent on while inside it, with the\n"
"connects, the connects that failed (refused, reset, timed out), the sends\n"
"and the sends that failed, the established connections the peer reset,\n"
"and the class a game day gave the edge (\"unknown\" until one does).  The\n"
"app must have been attached with --deps (docs/DEPS.md).\n";

/* "127.0.0.1:7000", "[::1]:7000". */
static void peer_text(json_t *e, char *buf, size_t len)
{
	const char *a = query_jstr(e, "addr");

	snprintf(buf, len, strchr(a, ':') ? "[%s]:%lld" : "%s:%lld", a,
		 query_jint(e, "port"));
}

static void print_table(json_t *r)
{
	json_t *pt, *e;
	size_t i, j;

	printf("%-16s %-40s %-5s %9s %9s %11s %9s %9s %7s\n", "POINT", "PEER",
	       "PROTO", "CONNECTS", "CONN-ERR", "SENDS", "SEND-ERR", "RESETS",
	       "CLASS");
	json_array_foreach(json_object_get(r, "points"), i, pt)
		json_array_foreach(json_object_get(pt, "deps"), j, e) {
			char peer[80];

			peer_text(e, peer, sizeof(peer));
			printf("%-16s %-40s %-5s %9lld %9lld %11lld %9lld %9lld %7s\n",
			       j ? "" : query_jstr(pt, "point"), peer,
			       query_jstr(e, "proto"), query_jint(e, "connects"),
			       query_jint(e, "connect_errors"), query_jint(e, "sends"),
			       query_jint(e, "send_errors"), query_jint(e, "resets"),
			       query_jstr(e, "class"));
		}
	if (query_jint(r, "overflow.edges") || query_jint(r, "overflow.marks"))
		printf("(not counted: %lld events of edges beyond the table's %lld, %lld connects unmarked)\n",
		       query_jint(r, "overflow.edges"), query_jint(r, "max_edges"),
		       query_jint(r, "overflow.marks"));
}

int do_deps(int argc, char **argv)
{
	struct query_env q = {};
	char req[CTL_REQ_MAX];
	const char *point = NULL;
	json_t *r;

	if (query_parse_options(argc, argv, &q, deps_usage))
		return 1;
	if (q.interval || q.count)
		return cmd_err("deps: --interval and --count are not deps' options (see sds-bpf deps --help)"), 1;
	if (optind < argc)
		point = argv[optind++];
	if (optind < argc)
		return cmd_err("deps: unexpected argument '%s'", argv[optind]), 1;
	if (point && !sds_point_name_valid(point))
		return cmd_err("deps: bad point name '%s'", point), 1;
	if (point)
		snprintf(req, sizeof(req), "deps %s", point);
	else
		snprintf(req, sizeof(req), "deps");
	r = query_ask(&q, req);
	if (!r)
		return 1;
	if (q.json) {
		json_dumpf(r, stdout, JSON_COMPACT);
		putchar('\n');
	} else {
		print_table(r);
	}
	json_decref(r);
	return 0;
}
