// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * cli/events.c - `events`: an app's downgrade transitions and deploys,
 * those kept since attach, then as they happen.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "cli/cmd.h"
#include "cli/query.h"

static const char events_usage[] =
"Usage: sds-bpf events [--group G] [--app NAME] [--json] [--count N]\n"
"\n"
"Downgrade transitions of an app's points as they happen: the point, the\n"
"reason, started or ended, and when; and TARGET's deploys (reason deploy:\n"
"build old -> new build-id, unresolved, rejected, retired; docs/DEPLOY.md)\n"
"and adaptive limits' moves of more than 10 % (reason adaptive, event limit:\n"
"from -> to; docs/ADAPTIVE.md); a drill a stop condition stopped says\n"
"why (docs/DRILL.md).  Prints the ones kept since attach,\n"
"then follows; stops after N events with --count.  --json prints one\n"
"object per line.\n";

/*
 * The rest of a line: a deploy's " OLD -> NEW: detail", an adaptive
 * limit's " FROM -> TO: detail", or " (at the call)".
 */
static void print_deploy(json_t *e)
{
	if (!strcmp(query_jstr(e, "reason"), "adaptive")) {
		printf(" %lld -> %lld: %s\n", query_jint(e, "from"),
		       query_jint(e, "to"), query_jstr(e, "detail"));
		return;
	}
	if (strcmp(query_jstr(e, "reason"), "deploy")) {
		/* A function point's trip dated by its crossing call. */
		if (json_is_true(json_object_get(e, "at_call")))
			fputs(" (at the call)", stdout);
		/* A key's, or why a drill stopped (a stop condition broke). */
		if (*query_jstr(e, "detail"))
			printf(": %s", query_jstr(e, "detail"));
		putchar('\n');
		return;
	}
	printf(" %s -> %s: %s\n", query_short_build(query_jstr(e, "old_build")),
	       query_short_build(query_jstr(e, "new_build")), query_jstr(e, "detail"));
}

int do_events(int argc, char **argv)
{
	struct query_env q = {};
	uint64_t since = 0;
	long printed = 0;
	char req[64];

	if (query_parse_options(argc, argv, &q, events_usage))
		return 1;
	if (optind < argc)
		return cmd_err("events: unexpected argument '%s'", argv[optind]), 1;
	if (!q.json) {
		printf("%-23s %-16s %-9s %s\n", "TIME", "POINT", "EVENT", "REASON");
		fflush(stdout);
	}
	for (;;) {
		json_t *r, *e;
		size_t i;

		snprintf(req, sizeof(req), "events %llu", (unsigned long long)since);
		r = query_ask(&q, req);
		if (!r)
			return 1;
		json_array_foreach(json_object_get(r, "events"), i, e) {
			if (q.json) {
				json_dumpf(e, stdout, JSON_COMPACT);
				putchar('\n');
			} else {
				long long ms = query_jint(e, "time_ms");
				time_t t = ms / 1000;
				char tbuf[32];

				strftime(tbuf, sizeof(tbuf), "%Y-%m-%d %H:%M:%S",
					 localtime(&t));
				printf("%s.%03lld %-16s %-9s %s", tbuf, ms % 1000,
				       *query_jstr(e, "point") ? query_jstr(e, "point") : "-",
				       query_jstr(e, "event"), query_jstr(e, "reason"));
				print_deploy(e);
			}
			if (q.count && ++printed >= q.count) {
				json_decref(r);
				fflush(stdout);
				return 0;
			}
		}
		fflush(stdout);
		since = query_jint(r, "next");
		json_decref(r);
		query_sleep_ms(100);
	}
}
