// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * cli/ext.c - `sds-bpf ext list [--json]`: the extensions this program
 * has (the balancing policies of --admin-policy), built in or named by a
 * manifest in $SDS_EXT_DIR, with where each came from and its state.
 * Loads nothing.  Exit 1 when a manifest had a problem (each said on
 * stderr, one line).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "../../libsds/ext_balancer.h"
#include "cli/cmd.h"
#include "ext/ext.h"

static const char ext_usage[] =
"Usage: sds-bpf ext list [--json]\n"
"\n"
"The extensions sds-bpf has: each interface's built-ins and what the\n"
"manifests in $SDS_EXT_DIR (default " SDS_EXT_DIR_DEFAULT ") add, with\n"
"where each came from (built-in, or manifest:line and library:symbol) and\n"
"its state (built-in, not loaded, loaded, refused).  Nothing is loaded.\n"
"Exit status 1 when a manifest has a problem (said on stderr).\n"
"\n"
"      --json     one JSON object: {\"extensions\": [...], \"problems\": [...]}\n"
"  -h, --help     this text\n";

int do_ext(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	bool json = false;
	char err[256];
	int c;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(ext_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? -1 : 0;
	}
	if (strcmp(argv[1], "list"))
		return cmd_err("ext: unknown subcommand '%s' (only: list)", argv[1]);
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(ext_usage, stdout);
			return 0;
		default:
			return -1;
		}
	}
	if (optind < argc - 1)
		return cmd_err("ext list: unexpected argument '%s'", argv[optind + 1]);
	if (sds_ext_balancer_register(err, sizeof(err)))
		return cmd_err("ext list: %s", err);
	return ext_print(stdout, json) ? -1 : 0;
}
