// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * cli/drill.c - `sds-bpf drill`: start or stop a fault drill at a guard
 * point of a running app (docs/DESIGN.md §5).  The loader checks that the
 * caller is root; this checks everything it can before asking, so that
 * bad input gets its message without a loader, and it chooses the one
 * loader the drill is for before any loader is sent it.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "cli/cmd.h"
#include "serve/ctl.h"
#include "state/drill.h"
#include "errnames.h"
#include "names.h"

static const char drill_usage[] =
"Usage: sds-bpf drill [--group G] [--app NAME] POINT --error [--errno NAME]\n"
"                     [--ratio P] --for S\n"
"       sds-bpf drill [--group G] [--app NAME] POINT --delay-ms N [--ratio P] --for S\n"
"       sds-bpf drill [--group G] [--app NAME] POINT --stop\n"
"\n"
"Rehearse an outage at guard point POINT: a share P% (default 100) of its\n"
"calls fails (--error: sds_enter() returns SDS_FAULT, sds_should_downgrade()\n"
"downgrades) or sleeps N ms first (--delay-ms), for S seconds; then the\n"
"drill ends by itself.  --stop ends it now.  Needs root.\n"
"\n"
"At a function point with failfast= (docs/FAILFAST.md), --error fails a\n"
"share P% of the operations failfast= names made inside the function, with\n"
"the point's errno= or --errno NAME (ECONNREFUSED, ETIMEDOUT, EIO, ...).\n"
"At a function point with failfast=connect, --delay-ms N delays the packets\n"
"of a share P% of the sockets connected inside the function by N ms (chosen\n"
"per socket at its connect; fq on the interfaces attach --drill-dev names,\n"
"docs/DELAY.md): each exchange after the handshake is N ms late.\n";

/* What the options ask for, before it becomes a request line. */
struct drill_opts {
	long delay_ms;		/* -1: no --delay-ms */
	long ratio;
	long for_s;		/* -1: no --for */
	const char *errno_name;	/* --errno NAME, checked; NULL: the point's */
	bool error, stop, ratio_set;
};

/* The control socket's request for @o at @point; -1 after a message. */
static int drill_req(const struct drill_opts *o, const char *point,
		     char *req, size_t len)
{
	if (!sds_point_name_valid(point))
		return cmd_err("drill: bad point name '%s': use 1-64 of [A-Za-z0-9_-]", point);
	if (o->stop) {
		if (o->error || o->delay_ms >= 0 || o->ratio_set || o->for_s >= 0 ||
		    o->errno_name)
			return cmd_err("drill: --stop takes no --error, --errno, --delay-ms, --ratio or --for");
		snprintf(req, len, "drill %s stop", point);
		return 0;
	}
	if (o->error && o->delay_ms >= 0)
		return cmd_err("drill: --error and --delay-ms exclude each other: give one");
	if (!o->error && o->delay_ms < 0)
		return cmd_err("drill: give --error or --delay-ms N (or --stop)");
	if (o->errno_name && !o->error)
		return cmd_err("drill: --errno is for --error drills (at function points with failfast=)");
	if (o->for_s < 0)
		return cmd_err("drill: --for S is required: a drill always ends by itself");
	snprintf(req, len, "drill %s %s %ld %ld %ld%s%s", point,
		 o->error ? "error" : "delay", o->ratio,
		 o->error ? 0 : o->delay_ms, o->for_s,
		 o->errno_name ? " " : "", o->errno_name ? o->errno_name : "");
	return 0;
}

int do_drill(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "group", required_argument, NULL, 'g' },
		{ "app", required_argument, NULL, 'a' },
		{ "error", no_argument, NULL, 'e' },
		{ "errno", required_argument, NULL, 'E' },
		{ "delay-ms", required_argument, NULL, 'd' },
		{ "ratio", required_argument, NULL, 'r' },
		{ "for", required_argument, NULL, 'f' },
		{ "stop", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct drill_opts o = { .delay_ms = -1, .ratio = 100, .for_s = -1 };
	const char *group = NULL, *app = NULL;
	char req[CTL_REQ_MAX];
	struct ctl_app one;
	const char *dev;
	json_t *r;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "g:a:eE:d:r:f:sh", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			if (!sds_name_valid(optarg))
				return cmd_err("bad --group '%s': use 1-64 of [A-Za-z0-9_-]", optarg), 1;
			group = optarg;
			break;
		case 'a':
			if (!sds_name_valid(optarg))
				return cmd_err("bad --app '%s': use 1-64 of [A-Za-z0-9_-]", optarg), 1;
			app = optarg;
			break;
		case 'e':
			o.error = true;
			break;
		case 'E':
			if (!errnames_parse(optarg)) {
				char names[512];

				errnames_list(names, sizeof(names));
				return cmd_err("drill: unknown --errno '%s' (%s)", optarg,
					       names);
			}
			o.errno_name = optarg;
			break;
		case 'd':
			if (cmd_parse_long(optarg, 1, DRILL_MAX_DELAY_MS, &o.delay_ms))
				return cmd_err("drill: bad --delay-ms '%s': expected milliseconds 1..%d",
					       optarg, DRILL_MAX_DELAY_MS), 1;
			break;
		case 'r':
			if (cmd_parse_long(optarg, 0, 100, &o.ratio))
				return cmd_err("drill: bad --ratio '%s': expected a percentage 0..100",
					       optarg), 1;
			o.ratio_set = true;
			break;
		case 'f':
			if (cmd_parse_long(optarg, 1, DRILL_MAX_S, &o.for_s))
				return cmd_err("drill: bad --for '%s': expected seconds 1..%d",
					       optarg, DRILL_MAX_S), 1;
			break;
		case 's':
			o.stop = true;
			break;
		case 'h':
			fputs(drill_usage, stdout);
			return 0;
		default:
			return cmd_err("drill: bad option (see sds-bpf drill --help)"), 1;
		}
	}
	if (optind >= argc)
		return cmd_err("drill: missing POINT (see sds-bpf drill --help)"), 1;
	if (optind + 1 < argc)
		return cmd_err("drill: unexpected argument '%s'", argv[optind + 1]), 1;
	if (drill_req(&o, argv[optind], req, sizeof(req)))
		return 1;
	if (cmd_resolve("drill", group, app, &one))
		return 1;
	r = cmd_request(&one, req);
	if (!r)
		return 1;
	/* A function point's delay drill says where it holds the packets. */
	dev = json_string_value(json_object_get(json_object_get(r, "drill"),
						"devices"));
	if (dev)
		printf("delay drill on '%s': tc egress on %s\n", argv[optind], dev);
	json_decref(r);
	return 0;
}
