// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* main.c - sds-copy: the traffic copy server and replay (docs/COPY.md). */
#include <stdio.h>
#include <string.h>

#include "replay.h"
#include "serve.h"
#include "sds_version.h"

struct copy_cmd {
	const char *name;		/* argv[1] */
	int (*run)(int argc, char **argv);	/* with argv[0] = the command */
	const char *what;		/* one line for the usage */
};

static const struct copy_cmd cmds[] = {
	{ "serve", copy_serve_main, "receive records, send each N times to shadows" },
	{ "stats", copy_stats_main, "the counters of a running server" },
	{ "replay", replay_main, "send a recording again, X times as fast, N times" },
	{ NULL },
};

static void usage(FILE *f)
{
	const struct copy_cmd *c;

	fputs("usage: sds-copy COMMAND [OPTIONS]   (sds-copy COMMAND --help; sds-copy --version)\n", f);
	for (c = cmds; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->what);
}

int main(int argc, char **argv)
{
	const struct copy_cmd *c;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("sds-copy %s\n", SDS_VERSION);
		return 0;
	}
	for (c = cmds; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->run(argc - 1, argv + 1);
	fprintf(stderr, "sds-copy: %s: unknown command (serve, stats, replay)\n", argv[1]);
	return 2;
}
